/**
 * No commit forgotten: a commit whose records never reach the scaler's status
 * (the process killed with SIGKILL between the target patch and the status
 * write, or the answers lost on the wire) is still rolled back or restored by
 * the next controller, from the decision the target carries. Each controller
 * runs in its own process against a real API server; faults are real: a
 * status write the API server refuses (RBAC without `/status`), SIGKILL, and
 * an HTTPS proxy that loses answers.
 *
 * The reconciler is played by the test: it writes the target's status once
 * (one replica admitted), so added replicas are never admitted, and it marks a
 * retirement `Aborted` when the scenario needs one.
 */
import { startControlPlaneWithCrds } from "../support/control-plane.js";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import {
  CoreV1Api,
  CustomObjectsApi,
  PatchStrategy,
  RbacAuthorizationV1Api,
  setHeaderOptions,
} from "@kubernetes/client-node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { eventually as waitFor } from "../support/eventually.js";
import { ControllerProcesses, type ControllerProcess } from "../support/controller-processes.js";
import { decisionAnnotation, type DecisionPayload } from "../../src/core/api/model-deployment.js";
import type { ControlPlane } from "../../harness/kube/index.js";
import { freeLoopbackPort } from "../../harness/kube/net.js";
import { FaultProxy } from "../support/fault-proxy.js";

const group = "worker.gpustack.ai";
const version = "v1";
const mergePatch = setHeaderOptions("Content-Type", PatchStrategy.MergePatch);
/** The shortest the specification allows. */
const pendingTimeoutSeconds = 60;

let controlPlane: ControlPlane;
let admin: CustomObjectsApi;
let proxy: FaultProxy;
let workDir: string;
/** Full rights. */
let adminConfigPath: string;
/** Everything but the scalers' status subresource: its status writes are refused. */
let noStatusConfigPath: string;
/** Full rights, through the proxy that loses answers. */
let proxiedConfigPath: string;
const processes = new ControllerProcesses(40_000);

/** A controller that starts sampling at once; the scenarios wait for what it writes, not for its start. */
async function startController(
  name: string,
  namespace: string,
  kubeconfig: string,
  queue: number,
): Promise<ControllerProcess> {
  const metricsPort = await freeLoopbackPort();
  return processes.spawn(
    name,
    [
      "--prometheus-url=http://127.0.0.1:9",
      `--kubeconfig=${kubeconfig}`,
      `--namespace=${namespace}`,
      `--metrics-address=127.0.0.1:${metricsPort}`,
      "--tick-ms=200",
      "--kube-timeout-ms=3000",
      "--log-level=info",
    ],
    { MDS_TEST_QUEUE: String(queue) },
  );
}

const kill = (controller: ControllerProcess): Promise<void> => ControllerProcesses.kill(controller);

/** Waits with the started processes' output in the error, so a timeout shows what they did. */
function eventually<T>(
  what: string,
  check: () => Promise<T | undefined>,
  timeoutMs: number,
  intervalMs = 100,
): Promise<T> {
  return waitFor(
    what,
    check,
    timeoutMs,
    intervalMs,
    () => `(the proxy received ${proxy.received} requests)\n${processes.context(12_000)}`,
  );
}

interface Target {
  metadata: { annotations?: Record<string, string> };
  spec: { roles: { name: string; replicas: number }[] };
}
interface Scaler {
  status?: {
    lastCommit?: { decisionID: string };
    pendingCohort?: unknown;
    lastScaleDown?: { outcome: string; cooldownUntil?: string };
    conditions?: { type: string; status: string; reason: string }[];
  };
}

async function target(namespace: string): Promise<Target> {
  return (await admin.getNamespacedCustomObject({
    group,
    version,
    namespace,
    plural: "modeldeployments",
    name: "chat",
  })) as Target;
}

async function scaler(namespace: string): Promise<Scaler> {
  return (await admin.getNamespacedCustomObject({
    group,
    version,
    namespace,
    plural: "modeldeploymentscalers",
    name: "chat",
  })) as Scaler;
}

const replicas = (t: Target): number | undefined => t.spec.roles[0]?.replicas;
const decisionOf = (t: Target): DecisionPayload | undefined => {
  const text = t.metadata.annotations?.[decisionAnnotation];
  return text === undefined ? undefined : (JSON.parse(text) as DecisionPayload);
};
const blocked = (s: Scaler) => s.status?.conditions?.find((c) => c.type === "Blocked");

/** The target's status as a reconciler writes it: `admitted` replicas reserved and ready. */
async function reconcilerStatus(namespace: string, admitted: number, retirement?: Record<string, unknown>) {
  const roles = [{ name: "server", desired: admitted, ready: admitted, quotaReserved: admitted }];
  await admin.patchNamespacedCustomObjectStatus(
    {
      group,
      version,
      namespace,
      plural: "modeldeployments",
      name: "chat",
      body: { status: { roles, ...(retirement === undefined ? {} : { retirement }) } },
    },
    mergePatch,
  );
}

/** A namespace with a one-role target (`replicas`, all admitted) and an Active Proportional scaler on queue depth. */
async function pair(namespace: string, count: number): Promise<void> {
  await controlPlane.kubeConfig.makeApiClient(CoreV1Api).createNamespace({ body: { metadata: { name: namespace } } });
  await admin.createNamespacedCustomObject({
    group,
    version,
    namespace,
    plural: "modeldeployments",
    body: {
      apiVersion: `${group}/${version}`,
      kind: "ModelDeployment",
      metadata: { name: "chat" },
      spec: { roles: [{ name: "server", kind: "Server", instanceType: "h100", replicas: count }] },
    },
  });
  await reconcilerStatus(namespace, count);
  await admin.createNamespacedCustomObject({
    group,
    version,
    namespace,
    plural: "modeldeploymentscalers",
    body: {
      apiVersion: `${group}/${version}`,
      kind: "ModelDeploymentScaler",
      metadata: { name: "chat" },
      spec: {
        targetRef: { name: "chat" },
        mode: "Active",
        sampling: { intervalSeconds: 5, pendingTimeoutSeconds },
        roles: [{ name: "server", minReplicas: 1, maxReplicas: 4 }],
        rebalance: { policy: "Disabled" },
        algorithm: {
          type: "Proportional",
          proportional: { metric: "QueueDepth", roleTargets: [{ name: "server", target: "8" }] },
        },
        behavior: { scaleDown: { stabilizationWindowSeconds: 5, cooldownAfterAbortSeconds: 600 } },
      },
    },
  });
}

beforeAll(async () => {
  controlPlane = await startControlPlaneWithCrds();
  admin = controlPlane.kubeConfig.makeApiClient(CustomObjectsApi);
  const rbac = controlPlane.kubeConfig.makeApiClient(RbacAuthorizationV1Api);
  await rbac.createClusterRole({
    body: {
      metadata: { name: "mds-no-status" },
      rules: [
        { apiGroups: [group], resources: ["modeldeployments", "modeldeploymentscalers"], verbs: ["*"] },
        { nonResourceURLs: ["/version"], verbs: ["get"] },
      ],
    },
  });
  await rbac.createClusterRoleBinding({
    body: {
      metadata: { name: "mds-no-status" },
      roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "ClusterRole", name: "mds-no-status" },
      subjects: [{ kind: "User", name: "mds-no-status", apiGroup: "rbac.authorization.k8s.io" }],
    },
  });
  proxy = await FaultProxy.start(controlPlane);
  workDir = await mkdtemp(join(tmpdir(), "mds-records-"));
  adminConfigPath = controlPlane.kubeConfigPath;
  noStatusConfigPath = join(workDir, "no-status.kubeconfig");
  proxiedConfigPath = join(workDir, "proxied.kubeconfig");
  await writeFile(noStatusConfigPath, (await controlPlane.kubeConfigFor({ user: "mds-no-status" })).exportConfig(), {
    mode: 0o600,
  });
  await writeFile(proxiedConfigPath, proxy.kubeConfig(controlPlane.kubeConfig), { mode: 0o600 });
}, 180_000);

afterAll(async () => {
  await processes.killAll();
  await proxy?.close();
  await controlPlane?.stop();
  if (workDir !== undefined) await rm(workDir, { recursive: true, force: true });
});

// One scenario at a time: each runs two controller processes, and the machine is shared.
describe("commit records survive a lost status write", () => {
  it("a controller killed after its scale-up patch (status never written): the next one rolls back at the pending timeout", async () => {
    const ns = "killed-scale-up";
    await pair(ns, 1);
    // Engines report a queue of 16 on the one ready replica: two are wanted; the second is never admitted.
    const first = await startController("killed-scale-up/first", ns, noStatusConfigPath, 16);
    const up = await eventually(
      "the scale-up commit",
      async () => {
        const t = await target(ns);
        return replicas(t) === 2 ? decisionOf(t) : undefined;
      },
      60_000,
      50,
    );
    // The status write carrying the commit's records is refused, retried, refused again.
    await eventually(
      "the refused status write",
      async () => (first.output.includes('"attempt":2') ? true : undefined),
      20_000,
    );
    await kill(first);
    // The fault is real: the status holds no record of the commit.
    const lost = await scaler(ns);
    expect(lost.status?.lastCommit).toBeUndefined();
    expect(lost.status?.pendingCohort).toBeUndefined();
    expect(up).toMatchObject({ reason: "Scale", baselineVector: { server: 1 }, vector: { server: 2 } });

    await startController("killed-scale-up/second", ns, adminConfigPath, 16);
    const rolledBack = await eventually(
      "the rollback to one replica",
      async () => {
        const t = await target(ns);
        return replicas(t) === 1 ? decisionOf(t) : undefined;
      },
      (pendingTimeoutSeconds + 60) * 1000,
      200,
    );
    expect(rolledBack?.reason).toBe("ResourceExhausted");
    // The timeout counted from the commit the status never recorded.
    const waitedMs = Date.parse(rolledBack?.timestamp ?? "") - Date.parse(up?.timestamp ?? "");
    expect(waitedMs).toBeGreaterThanOrEqual(pendingTimeoutSeconds * 1000);
    const after = await eventually(
      "the rollback in status",
      async () => {
        const s = await scaler(ns);
        return s.status?.lastCommit?.decisionID === rolledBack?.decisionID ? s : undefined;
      },
      20_000,
    );
    expect(blocked(after)).toMatchObject({ status: "True", reason: "ResourceExhausted" });
    expect(after.status?.pendingCohort).toBeUndefined();
  }, 240_000);

  it("a scale-up whose answer and status writes are lost on the wire: read back, retried, and rolled back after a SIGKILL", async () => {
    const ns = "lost-answers";
    await pair(ns, 1);
    // The commit reaches the API server, its answer never comes back; every later status write hangs.
    let committed = false;
    proxy.setRule((seen) => {
      if (!seen.path.includes(`/namespaces/${ns}/`) || seen.method !== "PATCH") return "pass";
      if (seen.path.includes("/modeldeployments/") && seen.body.includes("scaler-decision") && !committed) {
        committed = true;
        return "loseAnswer";
      }
      return committed && seen.path.includes("/status") ? "hold" : "pass";
    });
    const first = await startController("lost-answers/first", ns, proxiedConfigPath, 16);
    const up = await eventually(
      "the scale-up commit",
      async () => {
        const t = await target(ns);
        return replicas(t) === 2 ? decisionOf(t) : undefined;
      },
      60_000,
      50,
    );
    // The controller reads the target back, finds its decision, and retries the status write with back-off.
    await eventually(
      "two status writes lost",
      async () =>
        proxy.faults.filter((f) => f.path.includes(`/namespaces/${ns}/`) && f.fault === "hold").length >= 2
          ? true
          : undefined,
      30_000,
    );
    await kill(first);
    expect(first.output).toMatch(/the commit's answer was lost; the target carries its decision/);
    const lost = await scaler(ns);
    expect(lost.status?.pendingCohort).toBeUndefined();

    await startController("lost-answers/second", ns, adminConfigPath, 16);
    const rolledBack = await eventually(
      "the rollback to one replica",
      async () => {
        const t = await target(ns);
        return replicas(t) === 1 ? decisionOf(t) : undefined;
      },
      (pendingTimeoutSeconds + 60) * 1000,
      200,
    );
    expect(rolledBack?.reason).toBe("ResourceExhausted");
    expect(Date.parse(rolledBack?.timestamp ?? "") - Date.parse(up?.timestamp ?? "")).toBeGreaterThanOrEqual(
      pendingTimeoutSeconds * 1000,
    );
  }, 240_000);

  it("a controller killed after its scale-down patch: the next one restores the vector when the retirement aborts", async () => {
    const ns = "killed-scale-down";
    await pair(ns, 3);
    // Nearly idle engines (a queue of 1 wants one replica): the scaler shrinks once the window is spanned.
    const first = await startController("killed-scale-down/first", ns, noStatusConfigPath, 1);
    const down = await eventually(
      "the scale-down commit",
      async () => {
        const t = await target(ns);
        return (replicas(t) ?? 3) < 3 ? t : undefined;
      },
      60_000,
      50,
    );
    await kill(first);
    const shrunkTo = replicas(down) ?? 0;
    expect((await scaler(ns)).status?.lastScaleDown).toBeUndefined();
    // The reconciler gives up removing the replica at the new count's ordinal.
    await reconcilerStatus(ns, 3, {
      roleName: "server",
      replicaOrdinal: shrunkTo,
      state: "Aborted",
      startedAt: new Date().toISOString(),
    });

    const second = await startController("killed-scale-down/second", ns, adminConfigPath, 1);
    const restored = await eventually(
      "the restore to three replicas",
      async () => {
        const t = await target(ns);
        return replicas(t) === 3 ? decisionOf(t) : undefined;
      },
      60_000,
      200,
    );
    expect(restored?.reason).toBe("ScaleDownAborted");
    const after = await eventually(
      "the aborted scale-down in status",
      async () => {
        const s = await scaler(ns);
        return s.status?.lastScaleDown?.outcome === "Aborted" ? s : undefined;
      },
      20_000,
    );
    expect(after.status?.lastScaleDown?.cooldownUntil).toBeDefined();
    expect(blocked(after)?.reason).toBe("ScaleDownAborted");
    await kill(second);
  }, 240_000);
});
