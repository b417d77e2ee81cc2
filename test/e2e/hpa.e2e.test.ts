/**
 * The external metrics API with the real HorizontalPodAutoscaler controller
 * as its client: kube-controller-manager (HPA, Deployment, ReplicaSet and
 * EndpointSlice controllers only) reads `mds_role_constrained_replicas`
 * through the API server's aggregator from the mds-scaler controller process
 * itself, and scales a plain Deployment as the simulated engines' load rises
 * and falls; the process runs the `native` query plan on a Prometheus that
 * stores no native histograms, which reads as the default plan. No kubelet runs, so no pod is ever Ready: the HPA uses an
 * `AverageValue` target, which does not need ready pods.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { request, type RequestOptions } from "node:https";
import { join } from "node:path";
import { AppsV1Api, AutoscalingV2Api, RbacAuthorizationV1Api, type KubeConfig } from "@kubernetes/client-node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { ApiServiceRoute, RunningControllerManager } from "../../harness/kube/index.js";
import { freeLoopbackPort } from "../../harness/kube/net.js";
import { condition, eventually, Testbed } from "../support/testbed.js";

const root = join(import.meta.dirname, "..", "..");
const ns = "hpa";
const metricPath = (selector: string): string =>
  `/apis/external.metrics.k8s.io/v1beta1/namespaces/${ns}/mds_role_constrained_replicas?labelSelector=${encodeURIComponent(selector)}`;

interface Reply {
  status: number;
  text: string;
}

/** GET with a kubeconfig's credentials (through the API server, so through the aggregator). */
async function kubeGet(kubeConfig: KubeConfig, path: string): Promise<Reply> {
  const server = kubeConfig.getCurrentCluster()?.server ?? "";
  const options: RequestOptions = {};
  await kubeConfig.applyToHTTPSOptions(options);
  return httpsGet(new URL(path, server), options);
}

function httpsGet(url: URL, options: RequestOptions): Promise<Reply> {
  return new Promise((resolve, reject) => {
    const req = request(url, { ...options, method: "GET", timeout: 10_000 }, (res) => {
      let text = "";
      res.on("data", (chunk: Buffer) => (text += chunk.toString()));
      res.on("end", () => resolve({ status: res.statusCode ?? 0, text }));
    });
    req.on("timeout", () => req.destroy(new Error(`GET ${url.href} timed out`)));
    req.on("error", reject);
    req.end();
  });
}

function messageOf(reply: Reply): string {
  return (JSON.parse(reply.text) as { message?: string }).message ?? reply.text;
}

function valuesOf(reply: Reply): string[] {
  if (reply.status !== 200) throw new Error(`answered ${reply.status}: ${reply.text}`);
  return (JSON.parse(reply.text) as { items: { value: string }[] }).items.map((i) => i.value);
}

/** The controller process, started with the product's own CLI. */
interface ControllerProcess {
  child: ChildProcess;
  metricsPort: number;
  externalMetricsPort: number;
  /** What the process wrote, its last 500 kB: at --log-level=warn the whole run's lines. */
  output: string;
}

async function startControllerProcess(bed: Testbed, certDirPath: string): Promise<ControllerProcess> {
  const [metricsPort, externalMetricsPort] = [await freeLoopbackPort(), await freeLoopbackPort()];
  const child = spawn(
    process.execPath,
    [
      "--import",
      "tsx",
      join(root, "src", "cli", "main.ts"),
      "controller",
      `--prometheus-url=${bed.prometheus.url}`,
      `--engine-scrape-interval=${bed.prometheus.scrapeIntervalSeconds}s`,
      `--kubeconfig=${bed.controlPlane.kubeConfigPath}`,
      `--namespace=${ns}`,
      `--metrics-address=127.0.0.1:${metricsPort}`,
      `--external-metrics-address=127.0.0.1:${externalMetricsPort}`,
      `--webhook-cert-dir=${certDirPath}`,
      "--lease-name=mds-scaler",
      `--pod-namespace=${ns}`,
      "--pod-name=replica-0",
      "--tick-ms=250",
      "--log-level=warn",
      // The testbed's Prometheus (Debian's 2.42) stores no native histograms: on this plan every role is read from
      // its classic sums by role, as the default plan reads them, and the process says so once (pass-notes.ts).
      "--prometheus-queries=native",
    ],
    { cwd: root, stdio: ["ignore", "pipe", "pipe"] },
  );
  const running: ControllerProcess = { child, metricsPort, externalMetricsPort, output: "" };
  const keep = (chunk: Buffer): void => {
    running.output = (running.output + chunk.toString()).slice(-500_000);
  };
  child.stdout?.on("data", keep);
  child.stderr?.on("data", keep);
  await eventually(
    "the controller process to serve /healthz",
    async () => {
      if (child.exitCode !== null) throw new Error(`exited ${child.exitCode}:\n${running.output}`);
      const response = await fetch(`http://127.0.0.1:${metricsPort}/healthz`, { signal: AbortSignal.timeout(2_000) });
      return response.ok ? true : undefined;
    },
    60_000,
  );
  return running;
}

async function gauge(controller: ControllerProcess, name: string, labels: string): Promise<number | undefined> {
  const response = await fetch(`http://127.0.0.1:${controller.metricsPort}/metrics`, {
    signal: AbortSignal.timeout(2_000),
  });
  const line = (await response.text()).split("\n").find((l) => l.startsWith(`${name}{${labels}}`));
  return line === undefined ? undefined : Number(line.split(" ").at(-1));
}

const tokenThroughputSpec = {
  targetRef: { name: "chat" },
  mode: "Active",
  sampling: { intervalSeconds: 5, pendingTimeoutSeconds: 60 },
  roles: [{ name: "server", minReplicas: 1, maxReplicas: 4 }],
  algorithm: {
    type: "TokenThroughput",
    tokenThroughput: {
      serverTargetTokensPerSecond: "1000",
      stableWindowSeconds: 30,
      panicWindowSeconds: 10,
      ttftTargetMilliseconds: "5000",
      itlTargetMilliseconds: "1000",
    },
  },
  behavior: { scaleDown: { stabilizationWindowSeconds: 30, cooldownAfterAbortSeconds: 600 } },
};

/** What the HPA did, sampled twice a second: the Deployment's spec.replicas and the HPA's own view. */
class HpaTimeline {
  readonly points: { atSeconds: number; deploymentReplicas: number; desired: number; metric: string }[] = [];
  private readonly startedMs = Date.now();
  private readonly timer: NodeJS.Timeout;

  constructor(apps: AppsV1Api, autoscaling: AutoscalingV2Api) {
    this.timer = setInterval(() => {
      void Promise.all([
        apps.readNamespacedDeployment({ namespace: ns, name: "sidecar-pool" }),
        autoscaling.readNamespacedHorizontalPodAutoscaler({ namespace: ns, name: "sidecar-pool" }),
      ])
        .then(([deployment, hpa]) => {
          const point = {
            atSeconds: Math.round((Date.now() - this.startedMs) / 100) / 10,
            deploymentReplicas: deployment.spec?.replicas ?? -1,
            desired: hpa.status?.desiredReplicas ?? -1,
            metric: hpa.status?.currentMetrics?.[0]?.external?.current.averageValue?.toString() ?? "-",
          };
          const last = this.points.at(-1);
          if (last?.deploymentReplicas !== point.deploymentReplicas || last.desired !== point.desired)
            this.points.push(point);
        })
        .catch(() => undefined);
    }, 500);
  }

  /** The distinct successive spec.replicas values. */
  replicas(): number[] {
    const out: number[] = [];
    for (const p of this.points) if (out.at(-1) !== p.deploymentReplicas) out.push(p.deploymentReplicas);
    return out;
  }

  stop(): string {
    clearInterval(this.timer);
    return this.points
      .map(
        (p) => `${p.atSeconds.toFixed(1).padStart(6)} s  spec.replicas=${p.deploymentReplicas}  desired=${p.desired}`,
      )
      .join("\n");
  }
}

describe("HorizontalPodAutoscaler on mds-scaler's external metrics", () => {
  let bed: Testbed;
  let manager: RunningControllerManager;
  let controller: ControllerProcess;
  let route: ApiServiceRoute;
  let apps: AppsV1Api;
  let autoscaling: AutoscalingV2Api;

  beforeAll(async () => {
    bed = await Testbed.start();
    const plane = bed.controlPlane;
    apps = plane.kubeConfig.makeApiClient(AppsV1Api);
    autoscaling = plane.kubeConfig.makeApiClient(AutoscalingV2Api);
    manager = await plane.startControllerManager({
      controllers: [
        "horizontal-pod-autoscaler-controller",
        "deployment-controller",
        "replicaset-controller",
        "endpointslice-controller",
      ],
      extraArgs: ["--horizontal-pod-autoscaler-sync-period=1s"],
    });
    await bed.namespace(ns);
    await bed.createDeployment(ns, "chat", [{ name: "server", kind: "Server", replicas: 1 }]);
    await bed.createScaler(ns, "chat", tokenThroughputSpec);
    const serviceName = "mds-scaler-external-metrics";
    const certificate = await plane.servingCertificateDir([`${serviceName}.${ns}.svc`]);
    controller = await startControllerProcess(bed, certificate.dirPath);
    route = await plane.routeApiService({
      group: "external.metrics.k8s.io",
      version: "v1beta1",
      portNumber: controller.externalMetricsPort,
      caBundle: certificate.caBundle,
      serviceNamespace: ns,
      serviceName,
      groupPriorityMinimum: 100,
      versionPriority: 100,
    });
  }, 300_000);

  afterAll(async () => {
    await route?.remove().catch(() => undefined);
    if (controller !== undefined && controller.child.exitCode === null) {
      controller.child.kill("SIGTERM");
      await new Promise((resolve) => controller.child.once("exit", resolve));
    }
    await manager?.stop();
    await bed?.stop();
  }, 60_000);

  it("scales a Deployment's spec.replicas up and down with the constrained recommendation", async () => {
    const bound = await eventually(
      "the scaler to bind and plan",
      async () => {
        const s = await bed.getScaler(ns, "chat");
        return condition(s, "Active")?.status === "True" && s.status?.roles?.[0]?.constrainedReplicas !== undefined
          ? s
          : undefined;
      },
      60_000,
    );
    expect(bound.status?.roles?.[0]?.constrainedReplicas).toBe(1);
    // Its 10 s panic window holds ten of this Prometheus' scrapes, and the process was told so
    // (--engine-scrape-interval): at the default 15 s, MetricsReady would name the window as reading nothing.
    expect(condition(bound, "MetricsReady")?.message).not.toContain("panicWindowSeconds");

    await apps.createNamespacedDeployment({
      namespace: ns,
      body: {
        apiVersion: "apps/v1",
        kind: "Deployment",
        metadata: { name: "sidecar-pool", namespace: ns },
        spec: {
          replicas: 1,
          selector: { matchLabels: { app: "sidecar-pool" } },
          template: {
            metadata: { labels: { app: "sidecar-pool" } },
            // Never runs: no scheduler or kubelet here.
            spec: { containers: [{ name: "pool", image: "registry.invalid/pool:1" }] },
          },
        },
      },
    });
    await autoscaling.createNamespacedHorizontalPodAutoscaler({
      namespace: ns,
      body: {
        apiVersion: "autoscaling/v2",
        kind: "HorizontalPodAutoscaler",
        metadata: { name: "sidecar-pool", namespace: ns },
        spec: {
          scaleTargetRef: { apiVersion: "apps/v1", kind: "Deployment", name: "sidecar-pool" },
          minReplicas: 1,
          maxReplicas: 6,
          metrics: [
            {
              type: "External",
              external: {
                metric: {
                  name: "mds_role_constrained_replicas",
                  selector: { matchLabels: { scaler: "chat", role: "server" } },
                },
                // One Deployment replica per recommended server replica.
                target: { type: "AverageValue", averageValue: "1" },
              },
            },
          ],
          behavior: { scaleDown: { stabilizationWindowSeconds: 0 } },
        },
      },
    });
    const timeline = new HpaTimeline(apps, autoscaling);

    // The HPA reads the metric: ScalingActive, with the value it saw.
    const active = await eventually(
      "the HPA to read the external metric",
      async () => {
        const hpa = await autoscaling.readNamespacedHorizontalPodAutoscaler({ namespace: ns, name: "sidecar-pool" });
        const scaling = hpa.status?.conditions?.find((c) => c.type === "ScalingActive");
        return scaling?.status === "True" && hpa.status?.currentMetrics?.[0]?.external !== undefined ? hpa : undefined;
      },
      60_000,
    );
    expect(active.status?.currentMetrics?.[0]?.external?.metric.name).toBe("mds_role_constrained_replicas");

    // 5 requests/s of 400 + 100 tokens = 2500 tokens/s over 1000 tokens/s a replica: three.
    bed.load.set(ns, "chat", 5);
    await eventually(
      "the HPA to scale the Deployment to three",
      async () => {
        const d = await apps.readNamespacedDeployment({ namespace: ns, name: "sidecar-pool" });
        return d.spec?.replicas === 3 ? d : undefined;
      },
      180_000,
      500,
    );

    // A read through the aggregator returns what the controller's gauge says.
    const labels = 'namespace="hpa",scaler="chat",target="chat",role="server"';
    const agreed = await eventually(
      "the aggregator read and the gauge to agree on a steady value",
      async () => {
        const before = await gauge(controller, "mds_role_constrained_replicas", labels);
        const read = valuesOf(await kubeGet(bed.controlPlane.kubeConfig, metricPath("scaler=chat,role=server")));
        // The same read on the plain-HTTP port, where a KEDA metrics-api trigger would poll it.
        const plain = await fetch(`http://127.0.0.1:${controller.metricsPort}${metricPath("scaler=chat,role=server")}`);
        const plainValues = valuesOf({ status: plain.status, text: await plain.text() });
        const after = await gauge(controller, "mds_role_constrained_replicas", labels);
        return before !== undefined && before === after ? { gauge: before, read, plainValues } : undefined;
      },
      30_000,
    );
    expect(agreed.read).toEqual([String(agreed.gauge)]);
    expect(agreed.plainValues).toEqual(agreed.read);
    expect(agreed.gauge).toBe(3);
    // The process warned that this Prometheus answers no native sums, naming the role.
    expect(controller.output).toContain("native plan: Prometheus answered no native histogram sum for some roles");
    expect(controller.output).toContain('"roles":["hpa/chat server (ttftSeconds');

    // Load ends: the recommendation drains one replica a pass, and the HPA follows it down.
    bed.load.set(ns, "chat", 0);
    await eventually(
      "the HPA to bring the Deployment back to one",
      async () => {
        const d = await apps.readNamespacedDeployment({ namespace: ns, name: "sidecar-pool" });
        return d.spec?.replicas === 1 ? d : undefined;
      },
      240_000,
      500,
    );
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    const story = timeline.stop();
    console.log(`HPA replica timeline (seconds since the HPA was created):\n${story}`);
    const counts = timeline.replicas();
    expect(counts[0]).toBe(1);
    expect(Math.max(...counts)).toBe(3);
    expect(counts.at(-1)).toBe(1);
    // Down one step at a time, as the recommendation moves (stabilization 0 follows it at once).
    expect(counts.slice(counts.indexOf(3))).toEqual([3, 2, 1]);
  }, 600_000);

  it("refuses a caller without RBAC at the API server, and lets one with RBAC read", async () => {
    const stranger = await bed.controlPlane.kubeConfigFor({ user: "no-rbac" });
    const refused = await kubeGet(stranger, metricPath("scaler=chat"));
    expect(refused.status).toBe(403);
    expect(messageOf(refused)).toMatch(/User "no-rbac" cannot list resource "mds_role_constrained_replicas"/);

    const rbac = bed.controlPlane.kubeConfig.makeApiClient(RbacAuthorizationV1Api);
    await rbac.createNamespacedRole({
      namespace: ns,
      body: {
        metadata: { name: "read-recommendations", namespace: ns },
        rules: [
          { apiGroups: ["external.metrics.k8s.io"], resources: ["mds_role_constrained_replicas"], verbs: ["list"] },
        ],
      },
    });
    await rbac.createNamespacedRoleBinding({
      namespace: ns,
      body: {
        metadata: { name: "reader", namespace: ns },
        roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "Role", name: "read-recommendations" },
        subjects: [{ apiGroup: "rbac.authorization.k8s.io", kind: "User", name: "reader" }],
      },
    });
    const reader = await bed.controlPlane.kubeConfigFor({ user: "reader" });
    const read = await eventually(
      "the reader's RBAC to take effect",
      async () => {
        const reply = await kubeGet(reader, metricPath("scaler=chat,role=server"));
        return reply.status === 200 ? reply : undefined;
      },
      30_000,
    );
    expect(valuesOf(read)).toHaveLength(1);
    // The role names one metric: the others stay closed.
    const other = await kubeGet(reader, metricPath("scaler=chat").replace("mds_role_constrained", "mds_role_current"));
    expect(other.status).toBe(403);
  }, 60_000);

  it("asks the API server itself (SubjectAccessReview) about the user the front proxy names", async () => {
    const url = new URL(metricPath("scaler=chat,role=server"), `https://127.0.0.1:${controller.externalMetricsPort}`);
    // The front proxy's own certificate, as the aggregator presents it; the server's certificate
    // is for the Service name, so the check of the name is left to the aggregator's path.
    const asProxy = {
      cert: bed.controlPlane.frontProxyClientTls.certPem,
      key: bed.controlPlane.frontProxyClientTls.keyPem,
      rejectUnauthorized: false,
    };
    const nobody = await httpsGet(url, { ...asProxy, headers: { "X-Remote-User": "no-rbac" } });
    expect(nobody.status).toBe(403);
    // Refused by mds-scaler itself this time: the API server was never asked to proxy.
    expect(messageOf(nobody)).toMatch(/User "no-rbac" cannot list resource "mds_role_constrained_replicas"/);
    const reader = await httpsGet(url, { ...asProxy, headers: { "X-Remote-User": "reader" } });
    expect(reader.status).toBe(200);
  }, 30_000);

  it("refuses a request that does not come through the aggregator", async () => {
    const url = new URL(metricPath("scaler=chat"), `https://127.0.0.1:${controller.externalMetricsPort}`);
    // No client certificate, but the headers the proxy would set: not trusted.
    const bare = await httpsGet(url, { rejectUnauthorized: false, headers: { "X-Remote-User": "system:admin" } });
    expect(bare.status).toBe(401);
    expect(bare.text).toMatch(/only the API server's front proxy may call this server: no client certificate/);
    // A client certificate from the cluster CA (an admin's) is not the front proxy's either.
    const options: RequestOptions = {};
    await bed.controlPlane.kubeConfig.applyToHTTPSOptions(options);
    const admin = await httpsGet(url, {
      cert: options.cert,
      key: options.key,
      rejectUnauthorized: false,
      headers: { "X-Remote-User": "system:admin", "X-Remote-Group": "system:masters" },
    });
    expect(admin.status).toBe(401);
    expect(admin.text).toMatch(/not signed by the request-header CA/);
  }, 30_000);
});
