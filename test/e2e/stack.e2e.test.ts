/**
 * mds-scaler beside a Prometheus Operator stack, end to end, with the real
 * pieces: a kube-apiserver, the Prometheus Operator (v0.85.0) rendering the
 * chart's ServiceMonitor, PodMonitor and PrometheusRule into a configuration,
 * Prometheus 3 running that configuration with Kubernetes discovery against
 * the API server, the `mds-scaler controller` binary, and simulated vLLM
 * engine pods. Pods carry addresses inside a network namespace the test
 * creates; the controller, the engines' listeners and Prometheus run inside
 * it, so Prometheus scrapes the addresses discovery hands it.
 *
 * Configuration used: operator-generated (stated again in the log and the
 * first test's name). The one change on the way: every alert's `for` is cut
 * to 5 s so firing and resolving fit in a test; everything else is the chart
 * as rendered, with 2 s scrape intervals and the engines' histograms also
 * stored as native ones (`podMonitor.convertClassicHistogramsToNHCB`, and the
 * Prometheus object's `native-histograms` feature), which the controller reads
 * with the `native` query plan (`prometheus.queries` left empty, so the chart
 * picks it from the conversion; the flag taken from the chart's Deployment). Prometheus logs its queries to a file
 * (the Prometheus object's `queryLogFile`), so the test sees what the
 * controller asked.
 *
 * The scaler lives in `team-a`, the controller in `mds-system`: a series that
 * kept the target's namespace instead of the scaler's would fail below.
 */
import { execFile } from "node:child_process";
import { readFileSync, readdirSync } from "node:fs";
import { mkdir, readFile, writeFile } from "node:fs/promises";
import { createServer, get as httpGet } from "node:http";
import { join } from "node:path";
import { promisify } from "node:util";
import {
  CoreV1Api,
  CustomObjectsApi,
  DiscoveryV1Api,
  KubernetesObjectApi,
  type KubernetesObject,
} from "@kubernetes/client-node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parseAllDocuments, stringify } from "yaml";
import { PrometheusClient } from "../../src/adapters/prometheus/client.js";
import { defaultPrometheusSignalConfig } from "../../src/adapters/prometheus/config.js";
import { PrometheusSignalSource } from "../../src/adapters/prometheus/source.js";
import { EngineFleet } from "../../src/sim/engines/engine-fleet.js";
import { FleetServer, metricsPath } from "../../src/sim/engines/server.js";
import { SyntheticWorkload } from "../../src/sim/engines/workload.js";
import { defaultFleetDeployment, EngineFleetPort, SimulatedReconciler } from "../../src/sim/reconciler/index.js";
import { startControlPlane, type ControlPlane } from "../../harness/kube/index.js";
import type { ManagedProcess } from "../../harness/kube/processes.js";
import { NetworkNamespace, type Bridge } from "../../harness/netns.js";
import { findPromBinaries, type PromBinaries } from "../../harness/prom-bin.js";
import {
  applyOperatorCrds,
  readGenerated,
  startPrometheusOperator,
  writeLocalConfig,
  type GeneratedPrometheus,
} from "../../harness/prometheus-operator.js";
import { loadModelDeploymentCrd, loadScalerCrd } from "../support/crds.js";
import { observationsOf } from "../support/plan-observations.js";
import { builtInVariables, interpolate, panelQueries, resolveVariables, type Dashboard } from "../support/grafana.js";
import { runHelm } from "../../harness/helm.js";
import { floorsCalibratedAnnotation } from "../../src/core/api/floors-calibrated.js";
import { condition, eventually, group, LoadDial, replicasOf, version, type ScalerObject } from "../support/testbed.js";

const root = join(import.meta.dirname, "..", "..");
const controllerNamespace = "mds-system";

/** The namespace a dashboard's `$namespace` selects: the controller's where the variable reads `mds_leader`. */
function namespaceOf(dashboard: Dashboard): string {
  const variable = dashboard.templating?.list?.find((v) => v.name === "namespace");
  const query = typeof variable?.query === "string" ? variable.query : (variable?.query?.query ?? "");
  return query.includes("mds_leader") ? controllerNamespace : workloadNamespace;
}
const workloadNamespace = "team-a";
const monitoringNamespace = "monitoring";
const release = "mds";
const scalerName = "chat";
const prometheusName = "k8s";
const scrapeIntervalSeconds = 2;
const controllerAddress = "10.77.0.5";
const prometheusInsidePort = 9090;
const alertForDuration = "5s";

interface Series {
  metric: Record<string, string>;
}

/**
 * The chart as a user installs it, with 2 s scrape intervals, the engines' histograms converted to native ones too,
 * and the controller reading them (install.md, "Half the Prometheus CPU with native histograms").
 */
function renderChart(): KubernetesObject[] {
  const result = runHelm([
    "template",
    release,
    join(root, "charts", "mds-scaler"),
    "--namespace",
    controllerNamespace,
    "--set",
    `serviceMonitor.interval=${scrapeIntervalSeconds}s`,
    "--set",
    `podMonitor.endpoint.interval=${scrapeIntervalSeconds}s`,
    "--set",
    "podMonitor.convertClassicHistogramsToNHCB=true",
  ]);
  if (result.status !== 0) throw new Error(`helm template failed:\n${result.stderr}`);
  return parseAllDocuments(result.stdout)
    .map((d) => d.toJS() as KubernetesObject | null)
    .filter((o): o is KubernetesObject => o !== null);
}

function only(objects: KubernetesObject[], kind: string): KubernetesObject & Record<string, unknown> {
  const found = objects.filter((o) => o.kind === kind);
  if (found.length !== 1) throw new Error(`expected one ${kind} in the chart, found ${found.length}`);
  return found[0] as KubernetesObject & Record<string, unknown>;
}

/** The test's only change to the chart's rules: alerts fire after 5 s instead of minutes. */
function withShortAlertDelays(rule: KubernetesObject & Record<string, unknown>): KubernetesObject {
  const spec = rule["spec"] as { groups: { rules: { alert?: string; for?: string }[] }[] };
  for (const g of spec.groups) for (const r of g.rules) if (r.alert !== undefined) r.for = alertForDuration;
  return rule;
}

describe("beside a Prometheus Operator stack", () => {
  let controlPlane: ControlPlane;
  let ns: NetworkNamespace;
  let bins: PromBinaries;
  let operator: ManagedProcess | undefined;
  let controller: ManagedProcess | undefined;
  let prometheus: ManagedProcess | undefined;
  let prometheusBridge: Bridge;
  let fleetServer: FleetServer;
  let reconciler: SimulatedReconciler | undefined;
  let mirrorTimer: NodeJS.Timeout | undefined;
  let generated: GeneratedPrometheus;
  let rawConfigPath = "";
  let localConfigPath = "";
  let queryLogPath = "";
  const load = new LoadDial();

  const promUrl = (): string => `http://127.0.0.1:${prometheusBridge.port}`;
  async function promApi<T>(path: string, params: Record<string, string | string[]> = {}): Promise<T> {
    const search = new URLSearchParams();
    for (const [k, v] of Object.entries(params)) for (const one of [v].flat()) search.append(k, one);
    const response = await fetch(`${promUrl()}${path}?${search.toString()}`);
    const body = (await response.json()) as { status: string; data: T; error?: string };
    if (body.status !== "success") throw new Error(`${path} ${search.toString()}: ${body.error ?? response.status}`);
    return body.data;
  }

  /** The test's scaler in the API. */
  const scalerRef = {
    group,
    version,
    namespace: workloadNamespace,
    plural: "modeldeploymentscalers",
    name: scalerName,
  };

  /** The alerts of one name Prometheus holds, pending or firing. */
  async function alertsNamed(alertname: string): Promise<{ labels: Record<string, string>; state: string }[]> {
    const { alerts } = await promApi<{ alerts: { labels: Record<string, string>; state: string }[] }>("/api/v1/alerts");
    return alerts.filter((a) => a.labels["alertname"] === alertname);
  }

  /** The firing alerts of one name, once there are any within `timeoutMs`. */
  const untilFiring = (alertname: string, timeoutMs: number) =>
    eventually(
      `${alertname} to fire`,
      async () => {
        const a = (await alertsNamed(alertname)).filter((x) => x.state === "firing");
        return a.length > 0 ? a : undefined;
      },
      timeoutMs,
      1_000,
    );

  /** Resolves once Prometheus holds no alert of that name, pending or firing, within `timeoutMs`. */
  const untilResolved = (alertname: string, timeoutMs: number) =>
    eventually(
      `${alertname} to resolve`,
      async () => (await alertsNamed(alertname)).length === 0 || undefined,
      timeoutMs,
      1_000,
    );

  const instant = async (query: string): Promise<Series[]> =>
    (await promApi<{ result: Series[] }>("/api/v1/query", { query })).result;
  const range = async (query: string, seconds: number): Promise<Series[]> => {
    const end = Date.now() / 1000;
    return (
      await promApi<{ result: Series[] }>("/api/v1/query_range", {
        query,
        start: String(end - seconds),
        end: String(end),
        step: `${scrapeIntervalSeconds}s`,
      })
    ).result;
  };

  async function logTails(): Promise<string> {
    const parts: string[] = [];
    if (prometheusBridge !== undefined) {
      const targets = await promApi<{
        activeTargets: { scrapeUrl: string; health: string; lastError: string; labels: Record<string, string> }[];
        droppedTargetCounts: Record<string, number>;
      }>("/api/v1/targets").catch((error: unknown) => String(error));
      parts.push(`--- Prometheus targets:\n${JSON.stringify(targets, null, 1)}`);
    }
    for (const p of [operator, controller, prometheus])
      if (p !== undefined) parts.push(`--- ${p.name} (${p.describeExit()}):\n${await p.logTail(15)}`);
    return parts.join("\n");
  }

  beforeAll(async () => {
    bins = findPromBinaries();
    controlPlane = await startControlPlane();
    ns = NetworkNamespace.create("mds-e2e");
    const kc = controlPlane.kubeConfig;
    const core = kc.makeApiClient(CoreV1Api);
    const objects = KubernetesObjectApi.makeApiClient(kc);
    const custom = kc.makeApiClient(CustomObjectsApi);
    const discovery = kc.makeApiClient(DiscoveryV1Api);
    const work = join(ns.dir, "work");
    await mkdir(work, { recursive: true });

    // CRDs: the scaler, the ModelDeployment, and the operator's own.
    await controlPlane.applyCrd(await loadScalerCrd());
    await controlPlane.applyCrd(await loadModelDeploymentCrd());
    await applyOperatorCrds(controlPlane, bins);
    for (const name of [controllerNamespace, workloadNamespace, monitoringNamespace])
      await core.createNamespace({ body: { metadata: { name } } });

    // The chart's monitoring objects, its metrics Service, and a Prometheus object selecting everything.
    const chart = renderChart();
    for (const kind of ["Service", "ServiceMonitor", "PodMonitor"]) await objects.create(only(chart, kind));
    await objects.create(withShortAlertDelays(only(chart, "PrometheusRule")));
    await custom.createNamespacedCustomObject({
      group: "monitoring.coreos.com",
      version: "v1",
      namespace: monitoringNamespace,
      plural: "prometheuses",
      body: {
        apiVersion: "monitoring.coreos.com/v1",
        kind: "Prometheus",
        metadata: { name: prometheusName, namespace: monitoringNamespace },
        spec: {
          // In the operator's compatibility list, and the version built: the config suits this binary.
          version: bins.prometheusVersion,
          serviceDiscoveryRole: "EndpointSlice",
          scrapeInterval: `${scrapeIntervalSeconds}s`,
          evaluationInterval: `${scrapeIntervalSeconds}s`,
          serviceMonitorSelector: {},
          serviceMonitorNamespaceSelector: {},
          podMonitorSelector: {},
          podMonitorNamespaceSelector: {},
          ruleSelector: {},
          ruleNamespaceSelector: {},
          // Prometheus 3.5 stores converted histograms only with this feature (install.md, native histograms).
          enableFeatures: ["native-histograms"],
          // In the pod's log directory (an emptyDir the operator mounts), here a directory of the test's.
          queryLogFile: "query.log",
        },
      },
    });
    operator = await startPrometheusOperator(controlPlane, bins, join(work, "operator"));
    generated = await eventually(
      "the operator to generate a configuration with the chart's monitors and rules",
      async () => {
        if (operator?.hasExited()) throw new Error(await logTails());
        const g = await readGenerated(kc, monitoringNamespace, prometheusName);
        return g !== undefined &&
          g.configYaml.includes(`serviceMonitor/${controllerNamespace}/`) &&
          g.configYaml.includes(`podMonitor/${controllerNamespace}/`) &&
          g.ruleFiles.size > 0
          ? g
          : undefined;
      },
      90_000,
      500,
    ).catch(async (error: unknown) => {
      throw new Error(`${String(error)}\n${await logTails()}`);
    });
    rawConfigPath = join(work, "generated.yaml");
    await writeFile(rawConfigPath, generated.configYaml);

    // The API server inside the namespace, for everything that runs there.
    const apiInside = await ns.bridgeIn(Number(new URL(controlPlane.serverUrl).port));
    const insideKubeconfig = join(work, "kubeconfig-inside");
    const exported = JSON.parse(kc.exportConfig()) as { clusters: { cluster: { server: string } }[] };
    for (const c of exported.clusters) c.cluster.server = `https://127.0.0.1:${apiInside.port}`;
    await writeFile(insideKubeconfig, stringify(exported), { mode: 0o600 });
    const local = await writeLocalConfig(generated, join(work, "prometheus"), insideKubeconfig, "prometheus-k8s-0");
    localConfigPath = local.configPath;
    if (local.queryLogPath === undefined) throw new Error("the generated configuration logs no queries (queryLogFile)");
    queryLogPath = local.queryLogPath;

    // Simulated engines, started and retired by the simulated ModelDeployment reconciler.
    const fleet = new EngineFleet({ startSeconds: Date.now() / 1000, stepSeconds: 0.05 });
    fleetServer = new FleetServer({ fleet, tickMs: 100 });
    const fleetAddress = await fleetServer.start();
    reconciler = new SimulatedReconciler({
      kubeConfig: kc,
      fleet: new EngineFleetPort(fleet, {
        describe: (namespace, deployment, context) => ({
          ...defaultFleetDeployment(namespace, deployment, context),
          workload: new SyntheticWorkload({
            seed: 7,
            startSeconds: Date.now() / 1000,
            requestsPerSecond: () => load.get(namespace, deployment),
            arrivals: "uniform",
            promptTokens: { kind: "fixed", tokens: 400 },
            outputTokens: { kind: "fixed", tokens: 100 },
          }),
        }),
      }),
      timings: { coldStartMs: 1_000, admitMs: 0, withdrawMs: 200, drainMs: 500, deleteMs: 200, settleMs: 200 },
    });
    const started = reconciler;
    await eventually("the reconciler to start", async () => (await started.start(), true), 30_000, 500);

    // Each engine pod becomes a Pod object with an address inside the namespace,
    // where a listener on :8000 serves that pod's /metrics.
    const podLabels = (only(chart, "PodMonitor")["spec"] as { selector: { matchLabels: Record<string, string> } })
      .selector.matchLabels;
    const mirrored = new Map<string, Bridge>();
    let nextHost = 11;
    let syncing = false;
    const syncPods = async (): Promise<void> => {
      if (syncing) return;
      syncing = true;
      try {
        const live = new Set<string>();
        for (const pod of fleet.listPods()) {
          const key = `${pod.namespace}/${pod.name}`;
          live.add(key);
          if (mirrored.has(key)) continue;
          const address = `10.77.1.${nextHost++}`;
          ns.addAddress(address);
          const server = createServer((_req, res) => {
            httpGet(`http://${fleetAddress}${metricsPath(pod.namespace, pod.name)}`, (upstream) => {
              res.writeHead(upstream.statusCode ?? 502, upstream.headers);
              upstream.pipe(res);
            }).on("error", () => res.writeHead(502).end());
          });
          mirrored.set(key, await ns.serveAt(address, 8000, server));
          const created = await core.createNamespacedPod({
            namespace: pod.namespace,
            body: {
              metadata: {
                name: pod.name,
                labels: {
                  ...podLabels,
                  "app.kubernetes.io/instance": pod.deployment,
                  "app.kubernetes.io/component": pod.role,
                },
              },
              spec: {
                containers: [
                  { name: pod.engine, image: "vllm/vllm-openai", ports: [{ name: "http", containerPort: 8000 }] },
                ],
              },
            },
          });
          // The whole object: a status write with bare metadata would drop the labels.
          await core.replaceNamespacedPodStatus({
            name: pod.name,
            namespace: pod.namespace,
            body: {
              ...created,
              status: {
                phase: "Running",
                podIP: address,
                podIPs: [{ ip: address }],
                conditions: [{ type: "Ready", status: "True" }],
              },
            },
          });
        }
        for (const [key, bridge] of mirrored) {
          if (live.has(key)) continue;
          const [namespace = "", name = ""] = key.split("/");
          await core.deleteNamespacedPod({ name, namespace }).catch(() => undefined);
          await bridge.close();
          mirrored.delete(key);
        }
      } finally {
        syncing = false;
      }
    };
    mirrorTimer = setInterval(() => void syncPods().catch(() => undefined), 500);

    // The controller: a Pod with the chart's pod labels, an EndpointSlice for the
    // chart's Service, and the real binary listening at the pod address.
    ns.addAddress(controllerAddress);
    const deployment = only(chart, "Deployment") as {
      spec?: {
        template: { metadata: { labels: Record<string, string> }; spec: { containers: { args?: string[] }[] } };
      };
    };
    // The query plan as the chart's Deployment passes it.
    const queriesFlag = deployment.spec?.template.spec.containers[0]?.args?.find((a) =>
      a.startsWith("--prometheus-queries="),
    );
    if (queriesFlag !== "--prometheus-queries=native")
      throw new Error(`the chart's Deployment passes ${String(queriesFlag)}, not --prometheus-queries=native`);
    const service = only(chart, "Service");
    const servicePorts = (service["spec"] as { ports: { name: string; port: number }[] }).ports;
    const controllerPod = `${release}-mds-scaler-0`;
    const createdController = await core.createNamespacedPod({
      namespace: controllerNamespace,
      body: {
        metadata: { name: controllerPod, labels: deployment.spec?.template.metadata.labels ?? {} },
        spec: {
          containers: [
            { name: "controller", image: "mds-scaler", ports: [{ name: "http-metrics", containerPort: 8080 }] },
          ],
        },
      },
    });
    await core.replaceNamespacedPodStatus({
      name: controllerPod,
      namespace: controllerNamespace,
      body: {
        ...createdController,
        status: {
          phase: "Running",
          podIP: controllerAddress,
          podIPs: [{ ip: controllerAddress }],
          conditions: [{ type: "Ready", status: "True" }],
        },
      },
    });
    const metricsPort = servicePorts.find((p) => p.name === "http-metrics");
    await discovery.createNamespacedEndpointSlice({
      namespace: controllerNamespace,
      body: {
        metadata: {
          name: `${service.metadata?.name ?? ""}-netns`,
          labels: { "kubernetes.io/service-name": service.metadata?.name ?? "" },
        },
        addressType: "IPv4",
        endpoints: [
          {
            addresses: [controllerAddress],
            conditions: { ready: true },
            targetRef: { kind: "Pod", name: controllerPod, namespace: controllerNamespace },
          },
        ],
        ports: [{ name: "http-metrics", port: metricsPort?.port ?? 8080, protocol: "TCP" }],
      },
    });
    controller = await ns.start({
      name: "mds-scaler-controller",
      command: process.execPath,
      args: [
        "--import",
        "tsx",
        join(root, "src", "cli", "main.ts"),
        "controller",
        `--kubeconfig=${insideKubeconfig}`,
        `--prometheus-url=http://127.0.0.1:${prometheusInsidePort}`,
        queriesFlag,
        `--metrics-address=${controllerAddress}:8080`,
        `--pod-namespace=${controllerNamespace}`,
        `--pod-name=${controllerPod}`,
        "--tick-ms=1000",
      ],
      logPath: join(work, "controller.log"),
    });

    // Prometheus 3 on the operator's configuration, inside the namespace.
    prometheus = await ns.start({
      name: "prometheus-3",
      command: bins.prometheusPath,
      args: [
        `--config.file=${localConfigPath}`,
        `--storage.tsdb.path=${join(work, "tsdb")}`,
        `--web.listen-address=127.0.0.1:${prometheusInsidePort}`,
        "--log.level=info",
        // As the operator's StatefulSet passes the Prometheus object's spec.enableFeatures.
        "--enable-feature=native-histograms",
      ],
      logPath: join(work, "prometheus.log"),
    });
    prometheusBridge = await ns.bridgeOut("127.0.0.1", prometheusInsidePort);
    await eventually(
      "Prometheus 3 to be ready",
      async () => {
        if (prometheus?.hasExited()) throw new Error(await logTails());
        const r = await fetch(`${promUrl()}/-/ready`).catch(() => undefined);
        return r?.ok === true || undefined;
      },
      60_000,
      250,
    );

    // The workload: a ModelDeployment with one vLLM server and its scaler.
    await custom.createNamespacedCustomObject({
      group,
      version,
      namespace: workloadNamespace,
      plural: "modeldeployments",
      body: {
        apiVersion: `${group}/${version}`,
        kind: "ModelDeployment",
        metadata: { name: scalerName, namespace: workloadNamespace },
        spec: { roles: [{ name: "server", kind: "Server", replicas: 1, instanceType: "h100" }] },
      },
    });
    await custom.createNamespacedCustomObject({
      group,
      version,
      namespace: workloadNamespace,
      plural: "modeldeploymentscalers",
      body: {
        apiVersion: `${group}/${version}`,
        kind: "ModelDeploymentScaler",
        metadata: { name: scalerName, namespace: workloadNamespace },
        spec: {
          targetRef: { name: scalerName },
          mode: "Active",
          sampling: { intervalSeconds: 5, pendingTimeoutSeconds: 60 },
          roles: [{ name: "server", minReplicas: 1, maxReplicas: 4 }],
          // Predictive, so the predictor panels have series too; TokenThroughput is its fallback.
          algorithm: {
            type: "Predictive",
            predictive: {
              tokenThroughput: {
                serverTargetTokensPerSecond: "1000",
                stableWindowSeconds: 30,
                panicWindowSeconds: 10,
                ttftTargetMilliseconds: "5000",
                itlTargetMilliseconds: "1000",
                // So the latency panel's queue-time target has a series too; loose enough to change no decision here.
                queueTimeTargetMilliseconds: "5000",
              },
              horizonSeconds: 30,
              serverTokenCapacityPerReplica: "1000",
              minPoints: 2,
            },
          },
          behavior: { scaleDown: { stabilizationWindowSeconds: 30, cooldownAfterAbortSeconds: 600 } },
        },
      },
    });
    // 5 requests/s of 500 tokens over 1000 tokens/s per replica: the scaler grows the target to 3.
    load.set(workloadNamespace, scalerName, 5);
    console.log(
      `stack e2e configuration: operator-generated (Prometheus Operator ${bins.operatorVersion}, ` +
        `Prometheus ${bins.prometheusVersion} = spec.version); alerts' "for" set to ${alertForDuration}`,
    );
  }, 420_000);

  afterAll(async () => {
    if (mirrorTimer !== undefined) clearInterval(mirrorTimer);
    await operator?.stop();
    await reconciler?.stop();
    await fleetServer?.stop();
    // Kills the controller, Prometheus and the relays, and deletes the namespace.
    await ns?.remove();
    await controlPlane?.stop();
  }, 120_000);

  it("uses the operator-generated configuration, which that Prometheus's promtool accepts", async () => {
    const check = async (path: string): Promise<string> => {
      const { stdout, stderr } = await promisify(execFile)(bins.promtoolPath, ["check", "config", path]);
      return `${stdout}${stderr}`;
    };
    // As generated (in-cluster discovery, rule files under /etc/prometheus), and as run here.
    expect(await check(rawConfigPath)).toMatch(/SUCCESS/);
    const local = await check(localConfigPath);
    expect(local).toMatch(/SUCCESS: .* is valid prometheus config file syntax/);
    expect(local).toMatch(/SUCCESS: \d+ rules found/);
    expect(generated.configYaml).toMatch(/honor_labels: true/);
    // The engines' job keeps the classic histogram series even where Prometheus converts histograms to NHCB.
    const config = parseAllDocuments(generated.configYaml)[0]?.toJS() as {
      scrape_configs: {
        job_name: string;
        always_scrape_classic_histograms?: boolean;
        convert_classic_histograms_to_nhcb?: boolean;
      }[];
    };
    const engines = config.scrape_configs.filter((job) =>
      job.job_name.startsWith(`podMonitor/${controllerNamespace}/`),
    );
    expect(engines.length).toBeGreaterThan(0);
    for (const job of engines) {
      expect(job.always_scrape_classic_histograms, job.job_name).toBe(true);
      // And stores them as native histograms too, from the chart's podMonitor.convertClassicHistogramsToNHCB.
      expect(job.convert_classic_histograms_to_nhcb, job.job_name).toBe(true);
    }
  });

  it("scrapes the controller and the engines at their pod addresses, keeping the scaler's namespace", async () => {
    const scalerSeries = await eventually(
      "the controller's per-scaler series in Prometheus",
      async () => {
        const r = await instant(`mds_scaler_mode{scaler="${scalerName}"}`);
        return r.length > 0 ? r : undefined;
      },
      120_000,
      1_000,
    ).catch(async (error: unknown) => {
      throw new Error(`${String(error)}\n${await logTails()}`);
    });
    for (const s of scalerSeries) {
      expect(s.metric).toMatchObject({ namespace: workloadNamespace, scaler: scalerName });
      expect(s.metric["exported_namespace"]).toBeUndefined();
    }
    // Series that belong to no scaler keep the controller pod's target labels.
    const up = await instant("up");
    const controllerUp = up.filter((s) => s.metric["job"] === `${release}-mds-scaler`);
    expect(controllerUp.map((s) => s.metric)).toEqual([
      expect.objectContaining({ namespace: controllerNamespace, instance: `${controllerAddress}:8080` }),
    ]);
    const engines = await eventually(
      "engine series with the pod labels the controller groups by",
      async () => {
        const r = await instant(`vllm:num_requests_running{namespace="${workloadNamespace}"}`);
        return r.length > 0 ? r : undefined;
      },
      60_000,
      1_000,
    );
    for (const s of engines)
      expect(s.metric).toMatchObject({
        app_kubernetes_io_instance: scalerName,
        app_kubernetes_io_component: "server",
        pod: expect.stringMatching(/^chat-server-\d+$/) as string,
      });
  }, 240_000);

  it("stores the engines' histograms as native ones too, from which the controller's native plan reads the scaler's latency sums", async () => {
    // The controller's own passes ask for the role's TTFT sum from the native histogram (the name without
    // `_bucket`); nothing else has asked this Prometheus for it yet (the test's own passes come after).
    const controllerAsked = await eventually(
      "the controller to ask Prometheus for the scaler's native TTFT sum (its query log)",
      async () => {
        const lines = (await readFile(queryLogPath, "utf8").catch(() => "")).split("\n").filter((l) => l !== "");
        const queries = lines.map((l) => (JSON.parse(l) as { params?: { query?: string } }).params?.query ?? "");
        return queries.find((q) => q.includes("increase(vllm:time_to_first_token_seconds{") && q.includes(scalerName));
      },
      60_000,
      1_000,
    );
    expect(controllerAsked).toMatch(/^sum by \(namespace, app_kubernetes_io_instance, app_kubernetes_io_component\)/);
    const scaler = {
      key: `${workloadNamespace}/${scalerName}`,
      namespace: workloadNamespace,
      deployment: scalerName,
      roles: ["server"],
      stableWindowSeconds: 30,
      panicWindowSeconds: 10,
      intervalSeconds: 5,
    };
    const sourceOf = (queryPlan: "parts" | "native"): PrometheusSignalSource =>
      new PrometheusSignalSource(new PrometheusClient({ endpoint: promUrl(), timeoutMs: 10_000 }), {
        ...defaultPrometheusSignalConfig,
        queryPlan,
      });
    // Until a pass reads the role's TTFT from its native sum in the first 36 queries, and reads as the classic
    // buckets do: a pod started inside the window reads otherwise (prometheus-signals.md, "The native plan").
    const passes = await eventually(
      "a native pass reading the server role's latency sums as the parts plan reads its pods' buckets",
      async () => {
        const at = Date.now() - 2 * scrapeIntervalSeconds * 1000;
        const [parts, native] = await Promise.all(
          [sourceOf("parts"), sourceOf("native")].map((s) => s.sample([scaler], at)),
        );
        if (parts === undefined || native === undefined) return undefined;
        const sum = native.scalers.get(scaler.key)?.get("server")?.roleHistograms?.panic?.ttftSeconds;
        const total = sum?.buckets.at(-1)?.count ?? NaN;
        const same =
          JSON.stringify([...observationsOf(parts, [scaler])]) ===
          JSON.stringify([...observationsOf(native, [scaler])]);
        return native.queries === 36 && total > 0 && same ? { parts, native } : undefined;
      },
      90_000,
      2_000,
    );
    expect(passes.native.unknownFamilies).toEqual({});
    expect(passes.native.warnings).toEqual([]);
    expect(passes.native.nativeSumsMissing).toEqual([]);
    // Nor did the controller's own passes meet a role without native sums: it would have logged it (pass-notes.ts).
    const controllerLog = await readFile(join(ns.dir, "work", "controller.log"), "utf8");
    expect(controllerLog, "the controller's log is read").toContain("serving /metrics, /healthz and /readyz");
    expect(controllerLog).not.toContain("answered no native histogram sum");
  }, 120_000);

  it("answers every dashboard panel query with data for the workload namespace", async () => {
    // The load step has grown the target, so commits exist too.
    await eventually(
      "the scaler to commit a scale-up",
      async () => {
        const t = (await controlPlane.kubeConfig.makeApiClient(CustomObjectsApi).getNamespacedCustomObject({
          group,
          version,
          namespace: workloadNamespace,
          plural: "modeldeployments",
          name: scalerName,
        })) as { spec: { roles: { name: string; replicas: number }[] } };
        return (replicasOf(t as never, "server") ?? 1) > 1 || undefined;
      },
      180_000,
      1_000,
    );
    const timing = { rangeSeconds: 300, scrapeIntervalSeconds, maxDataPoints: 1000 };
    const dashboards = readdirSync(join(root, "dashboards")).filter((f) => f.endsWith(".json"));
    expect(dashboards.length).toBeGreaterThan(0);
    const report: string[] = [];
    for (const file of dashboards) {
      const dashboard = JSON.parse(readFileSync(join(root, "dashboards", file), "utf8")) as Dashboard;
      const { values, options } = await resolveVariables(
        dashboard,
        builtInVariables(timing),
        async (label, match) =>
          await promApi<string[]>(`/api/v1/label/${label}/values`, match === undefined ? {} : { "match[]": match }),
        (name) => (name === "namespace" ? [namespaceOf(dashboard)] : name === "scaler" ? [scalerName] : undefined),
      );
      // The namespace variable offers the scaler's namespace (today's chart offered only the controller's);
      // the controller-health dashboard's offers the controller's own.
      const expectedNamespace = namespaceOf(dashboard);
      if (options.has("namespace"))
        expect(options.get("namespace"), `${file}: $namespace`).toContain(expectedNamespace);
      if (options.has("scaler")) expect(options.get("scaler"), `${file}: $scaler`).toContain(scalerName);
      for (const q of panelQueries(dashboard)) {
        const expr = interpolate(q.expr, values);
        const where = `${file} / ${q.panel} / ${q.refId}: ${expr}`;
        // This stack registers no admission webhooks, and its scaler writes no floors by the hour, so webhook
        // and floor series have no samples here: the query must still evaluate (the demo's end-to-end test draws
        // the webhook panels with data; test/observability/dashboards-live.test.ts every series).
        const absentHere = [
          "mds_webhook_",
          "mds_role_hourly_floor_replicas",
          "mds_scaler_floors_calibrated_timestamp_seconds",
        ].find((m) => q.expr.includes(m));
        if (absentHere !== undefined) {
          await (q.instant ? instant(expr) : range(expr, timing.rangeSeconds));
          report.push(`evaluated (no ${absentHere} series here)  ${file} / ${q.panel} / ${q.refId}`);
          continue;
        }
        const result = await eventually(
          `data for ${where}`,
          async () => {
            const r = q.instant ? await instant(expr) : await range(expr, timing.rangeSeconds);
            return r.length > 0 ? r : undefined;
          },
          60_000,
          1_000,
        );
        // A query filtered by $namespace answers for that namespace only.
        if (/\$\{?namespace\b/.test(q.expr))
          for (const s of result)
            if (s.metric["namespace"] !== undefined) expect(s.metric["namespace"], where).toBe(expectedNamespace);
        report.push(`${result.length} series  ${file} / ${q.panel} / ${q.refId}`);
      }
    }
    console.log(`dashboard panel queries (series returned):\n${report.join("\n")}`);
  }, 600_000);

  it("evaluates every recording rule to data, with no rule failing", async () => {
    const groups = (
      await promApi<{ groups: { rules: { type: string; name: string; health: string; lastError?: string }[] }[] }>(
        "/api/v1/rules",
      )
    ).groups;
    const rules = groups.flatMap((g) => g.rules);
    expect(rules.length).toBeGreaterThan(0);
    const records = rules.filter((r) => r.type === "recording").map((r) => r.name);
    expect(records.length).toBeGreaterThan(0);
    for (const record of records) {
      const result = await eventually(
        `data for recording rule ${record}`,
        async () => {
          const r = await instant(record);
          return r.length > 0 ? r : undefined;
        },
        60_000,
        1_000,
      );
      for (const s of result)
        if (s.metric["namespace"] !== undefined) expect(s.metric["namespace"]).toBe(workloadNamespace);
    }
    // Health after the records have data: a duplicate-series error would show here.
    const unhealthy = (
      await promApi<{ groups: { rules: { name: string; health: string; lastError?: string }[] }[] }>("/api/v1/rules")
    ).groups
      .flatMap((g) => g.rules)
      .filter((r) => r.health !== "ok");
    expect(unhealthy).toEqual([]);
  }, 300_000);

  it("fires MdsScalerBlocked with the scaler's own namespace and name while it is Blocked, and resolves it", async () => {
    const custom = controlPlane.kubeConfig.makeApiClient(CustomObjectsApi);
    const setMaxReplicas = async (maxReplicas: number): Promise<void> => {
      const s = (await custom.getNamespacedCustomObject(scalerRef)) as ScalerObject & {
        spec: { roles: { maxReplicas: number }[] };
      };
      for (const r of s.spec.roles) r.maxReplicas = maxReplicas;
      await custom.replaceNamespacedCustomObject({ ...scalerRef, body: s });
    };
    expect(await alertsNamed("MdsScalerBlocked")).toEqual([]);

    // A maximum below the current count: nothing can be planned (BoundsConflict).
    await setMaxReplicas(1);
    const blocked = await eventually(
      "the scaler to report Blocked",
      async () => {
        const s = (await custom.getNamespacedCustomObject(scalerRef)) as ScalerObject;
        return condition(s, "Blocked")?.status === "True" ? s : undefined;
      },
      60_000,
      1_000,
    );
    const reason = condition(blocked, "Blocked")?.reason;
    const firing = await untilFiring("MdsScalerBlocked", 90_000);
    expect(firing.map((a) => a.labels)).toEqual([
      expect.objectContaining({ namespace: workloadNamespace, scaler: scalerName, target: scalerName, reason }),
    ]);

    await setMaxReplicas(4);
    await eventually(
      "the scaler to leave Blocked",
      async () =>
        condition((await custom.getNamespacedCustomObject(scalerRef)) as ScalerObject, "Blocked")?.status === "False" ||
        undefined,
      60_000,
      1_000,
    );
    await untilResolved("MdsScalerBlocked", 60_000);
  }, 300_000);

  it("fires MdsScalerFloorsStale from the floors' date on the scaler, and resolves it when a refresh dates them anew", async () => {
    const custom = controlPlane.kubeConfig.makeApiClient(CustomObjectsApi);
    /** Floors of one replica at every hour (no count changes: every role runs at least one), dated `at`. */
    const dateFloors = async (at: Date): Promise<void> => {
      const s = (await custom.getNamespacedCustomObject(scalerRef)) as ScalerObject & {
        metadata: { annotations?: Record<string, string> };
        spec: { roles: { floorReplicasByUtcHour?: number[] }[] };
      };
      for (const r of s.spec.roles) r.floorReplicasByUtcHour = new Array<number>(24).fill(1);
      s.metadata.annotations = { ...s.metadata.annotations, [floorsCalibratedAnnotation]: at.toISOString() };
      await custom.replaceNamespacedCustomObject({ ...scalerRef, body: s });
    };
    expect(await alertsNamed("MdsScalerFloorsStale")).toEqual([]);

    // The last refresh 30 hours ago: the daily job has missed a day.
    await dateFloors(new Date(Date.now() - 30 * 3600_000));
    const firing = await untilFiring("MdsScalerFloorsStale", 120_000);
    expect(firing.map((a) => a.labels)).toEqual([
      expect.objectContaining({ namespace: workloadNamespace, scaler: scalerName, target: scalerName }),
    ]);

    await dateFloors(new Date());
    await untilResolved("MdsScalerFloorsStale", 120_000);
  }, 300_000);
});
