/**
 * At most one writer, against a real API server with two controller replicas
 * as real processes (docs/controller.md, Leadership). The leader is paused
 * with SIGSTOP for longer than the lease, in the middle of a pass (between its
 * reads and its writes: its sampling is slow, as a slow Prometheus would be);
 * the follower takes over
 * and commits. The follower is then paused in turn, so that nothing but the
 * old leader runs, and the old leader is resumed: the API server must see no
 * write to the target's spec or annotations, to the target's `mds-scaler`
 * managed fields, or to the scaler. Then the real fence webhook refuses a
 * commit carrying an older leader token than the one stored on the target.
 */
import { startControlPlaneWithCrds } from "../support/control-plane.js";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { CoreV1Api, CustomObjectsApi, PatchStrategy, setHeaderOptions, Watch } from "@kubernetes/client-node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { eventually as waitFor } from "../support/eventually.js";
import {
  ControllerProcesses,
  electedReplicaEnv,
  metricSum,
  type ControllerProcess,
} from "../support/controller-processes.js";
import { decisionAnnotation, type DecisionPayload } from "../../src/core/api/model-deployment.js";
import { pointerKey } from "../../src/core/binding/patch.js";
import type { ControlPlane } from "../../harness/kube/index.js";
import { freeLoopbackPort } from "../../harness/kube/net.js";
import {
  controllerKubeConfig,
  installWebhookConfigurations,
  releaseNamespace,
  waitForProductWebhooks,
} from "../../harness/product-webhooks.js";
import { ConflictError, KubeResources } from "../../src/adapters/kubernetes/resources.js";
import { QueueWorld } from "../support/queue-world.js";
import { TcpBalancer } from "../support/tcp-balancer.js";

const group = "worker.gpustack.ai";
const version = "v1";
const ns = "fenced";
const leaseName = "mds-fencing";
const leaseDurationSeconds = 6;
// 3000 ms + 2000 ms < 6 s: the timing the controller refuses to start without. Renewals every 300 ms
// leave a loaded machine about 2.7 s for a read and a write before the leader steps down.
const renewDeadlineMs = 3_000;
const kubeTimeoutMs = 2_000;
// Most of each 5 s pass is spent sampling, before the writes.
const sampleDelayMs = 4_000;
const maxReplicas = 8;

let controlPlane: ControlPlane;
let admin: CustomObjectsApi;
let balancer: TcpBalancer;
let world: QueueWorld;
let workDir: string;
let kubeconfigPath: string;
const processes = new ControllerProcesses();
const replicas: Replica[] = [];

interface Replica extends ControllerProcess {
  readonly metricsPort: number;
  readonly webhookPort: number;
}

async function startReplica(name: string): Promise<Replica> {
  const [metricsPort, webhookPort] = [await freeLoopbackPort(), await freeLoopbackPort()];
  const started = await processes.start(
    name,
    [
      "--prometheus-url=http://127.0.0.1:9",
      `--kubeconfig=${kubeconfigPath}`,
      `--metrics-address=127.0.0.1:${metricsPort}`,
      `--webhook-address=127.0.0.1:${webhookPort}`,
      "--webhook-cert-hosts=127.0.0.1",
      "--tick-ms=200",
      `--lease-duration-seconds=${leaseDurationSeconds}`,
      "--lease-retry-ms=300",
      `--lease-renew-deadline-ms=${renewDeadlineMs}`,
      `--kube-timeout-ms=${kubeTimeoutMs}`,
      "--log-level=warn",
    ],
    {
      ...electedReplicaEnv(name, leaseName),
      MDS_TEST_MAX_REPLICAS: String(maxReplicas),
      MDS_TEST_SAMPLE_DELAY_MS: String(sampleDelayMs),
    },
  );
  const replica: Replica = Object.assign(started, { metricsPort, webhookPort });
  replicas.push(replica);
  return replica;
}

/** How many passes the replica has started (it prints a line as each one samples). */
function samplings(replica: Replica): number {
  return replica.output.split("\n").filter((line) => line.startsWith('{"sampling"')).length;
}

/** Points the webhook Service at these replicas; open connections (the API server keeps them) are cut. */
function route(to: readonly Replica[]): void {
  balancer.setBackends(to.map((r) => r.webhookPort));
  balancer.down();
  balancer.up();
}

function metric(replica: Replica, name: string): Promise<number> {
  return metricSum(replica.metricsPort, name);
}

/** Waits with the started processes' output in the error, so a timeout shows what they did. */
function eventually<T>(
  what: string,
  check: () => Promise<T | undefined>,
  timeoutMs: number,
  intervalMs = 100,
): Promise<T> {
  return waitFor(what, check, timeoutMs, intervalMs, () => processes.context(3_000));
}

interface Seen {
  readonly kind: "target" | "scaler";
  readonly atMs: number;
  readonly resourceVersion: string;
  readonly decision?: DecisionPayload;
  /** For the target: what only the controller writes (`controllerView`). */
  readonly view?: string;
}

interface TargetObject {
  metadata: {
    resourceVersion: string;
    annotations?: Record<string, string>;
    managedFields?: { manager?: string; time?: string; operation?: string; subresource?: string }[];
  };
  spec: { roles: { name: string; replicas: number }[] };
}

/** Every version of the target and the scaler the API server announces, with the test's clock. */
async function watchBoth(name: string): Promise<{ seen: Seen[]; stop: () => void }> {
  const seen: Seen[] = [];
  const watch = new Watch(controlPlane.kubeConfig);
  const watchOne = (kind: Seen["kind"], plural: string) =>
    watch.watch(
      `/apis/${group}/${version}/namespaces/${ns}/${plural}`,
      { fieldSelector: `metadata.name=${name}` },
      (_phase, object: TargetObject) => {
        const text = object.metadata.annotations?.[decisionAnnotation];
        seen.push({
          kind,
          atMs: Date.now(),
          resourceVersion: object.metadata.resourceVersion,
          ...(kind === "target" && text !== undefined ? { decision: JSON.parse(text) as DecisionPayload } : {}),
          ...(kind === "target" ? { view: controllerView(object) } : {}),
        });
      },
      () => undefined,
    );
  const controllers = [
    await watchOne("target", "modeldeployments"),
    await watchOne("scaler", "modeldeploymentscalers"),
  ];
  return { seen, stop: () => controllers.forEach((c) => c.abort()) };
}

/** Distinct decisions on the target, in order. */
function decisions(seen: readonly Seen[]): DecisionPayload[] {
  const out: DecisionPayload[] = [];
  for (const s of seen) {
    if (s.decision !== undefined && out[out.length - 1]?.decisionID !== s.decision.decisionID) out.push(s.decision);
  }
  return out;
}

async function getTarget(name: string): Promise<TargetObject> {
  return (await admin.getNamespacedCustomObject({
    group,
    version,
    namespace: ns,
    plural: "modeldeployments",
    name,
  })) as TargetObject;
}

async function getScaler(name: string): Promise<{ metadata: { resourceVersion: string }; status?: unknown }> {
  return (await admin.getNamespacedCustomObject({
    group,
    version,
    namespace: ns,
    plural: "modeldeploymentscalers",
    name,
  })) as { metadata: { resourceVersion: string }; status?: unknown };
}

/** What only the controller writes on the target: counts, annotations, and its managed-fields entries. */
function controllerView(target: TargetObject): string {
  return JSON.stringify([
    target.spec.roles.map((r) => r.replicas),
    target.metadata.annotations,
    (target.metadata.managedFields ?? []).filter((f) => f.manager === "mds-scaler"),
  ]);
}

async function createPair(name: string): Promise<void> {
  await world.createPair(ns, name);
}

beforeAll(async () => {
  controlPlane = await startControlPlaneWithCrds();
  const core = controlPlane.kubeConfig.makeApiClient(CoreV1Api);
  for (const name of [releaseNamespace, ns]) await core.createNamespace({ body: { metadata: { name } } });
  admin = controlPlane.kubeConfig.makeApiClient(CustomObjectsApi);
  world = new QueueWorld(controlPlane.kubeConfig);
  workDir = await mkdtemp(join(tmpdir(), "mds-fencing-"));
  kubeconfigPath = join(workDir, "controller.kubeconfig");
  await writeFile(kubeconfigPath, (await controllerKubeConfig(controlPlane)).exportConfig(), { mode: 0o600 });
  balancer = await TcpBalancer.start([]);
  await installWebhookConfigurations(controlPlane.kubeConfig, balancer.port);
}, 180_000);

afterAll(async () => {
  world?.stop();
  await processes.killAll();
  await balancer?.close();
  await controlPlane?.stop();
  if (workDir !== undefined) await rm(workDir, { recursive: true, force: true });
});

describe("a leader paused for longer than its lease", () => {
  it("is replaced, and once resumed writes nothing: not to the target, not to status", async () => {
    const a = await startReplica("replica-a");
    await eventually(
      "replica-a to lead",
      async () => ((await metric(a, "mds_leader")) === 1 ? true : undefined),
      20_000,
    );
    const b = await startReplica("replica-b");
    balancer.setBackends([a.webhookPort, b.webhookPort]);
    await waitForProductWebhooks(controlPlane.kubeConfig, ns);

    const watched = await watchBoth("paused");
    await createPair("paused");
    await eventually(
      "two commits by replica-a",
      async () =>
        decisions(watched.seen).filter((d) => d.leader?.holder === "replica-a").length >= 2 ? true : undefined,
      60_000,
    );
    const tokenA = decisions(watched.seen).at(-1)?.leader;

    // Pause the leader in the middle of a pass (it has read, it is sampling, its writes are next);
    // the webhook Service now reaches only the follower.
    const samplingBefore = samplings(a);
    await eventually(
      "replica-a to start a pass",
      async () => (samplings(a) > samplingBefore ? true : undefined),
      30_000,
      10,
    );
    a.child.kill("SIGSTOP");
    const pausedAt = Date.now();
    route([b]);
    await eventually(
      "replica-b to lead",
      async () => ((await metric(b, "mds_leader")) === 1 ? true : undefined),
      30_000,
      50,
    );
    const firstByB = await eventually(
      "a commit by replica-b",
      async () => decisions(watched.seen).find((d) => d.leader?.holder === "replica-b"),
      30_000,
      50,
    );
    expect(Date.now() - pausedAt).toBeGreaterThan(leaseDurationSeconds * 1000);
    expect(firstByB.leader?.transitions).toBeGreaterThan(tokenA?.transitions ?? Number.MAX_SAFE_INTEGER);

    // Pause the new leader too: from here on, any write comes from the resumed old leader.
    b.child.kill("SIGSTOP");
    route([a]);
    const targetBefore = await getTarget("paused");
    const scalerBefore = await getScaler("paused");
    const mark = watched.seen.length;
    a.child.kill("SIGCONT");
    const resumedAt = Date.now();
    // The resumed replica finishes the pass it was paused in: its writes are refused before they are sent.
    await eventually(
      "replica-a to reach the writes of its interrupted pass",
      async () => (a.output.includes("leadership lost during the pass") ? true : undefined),
      10_000,
      20,
    );
    expect(await metric(a, "mds_leader")).toBe(0);
    const targetAfter = await getTarget("paused");
    const scalerAfter = await getScaler("paused");
    const elapsedMs = Date.now() - resumedAt;
    console.info(
      `replica-a paused ${resumedAt - pausedAt} ms; its interrupted pass ended ${elapsedMs} ms after SIGCONT`,
    );
    // Before a lease has passed since the resume nobody may lawfully write (b is paused, a cannot take over yet):
    // any change is the deposed leader's.
    expect(elapsedMs).toBeLessThan(leaseDurationSeconds * 1000);
    expect(controllerView(targetAfter)).toBe(controllerView(targetBefore));
    expect(scalerAfter.metadata.resourceVersion).toBe(scalerBefore.metadata.resourceVersion);
    // The watch saw no version of the scaler, and no target version that the controller wrote (the test's
    // status mirror may still record the last commit's pods).
    const since = watched.seen.slice(mark);
    expect(since.filter((v) => v.kind === "scaler")).toEqual([]);
    expect(since.filter((v) => v.kind === "target" && v.view !== controllerView(targetBefore))).toEqual([]);

    // Both run again: commits continue to the cap, and leader tokens never go back.
    b.child.kill("SIGCONT");
    route([a, b]);
    await eventually(
      `the target to reach ${maxReplicas} replicas`,
      async () => ((await getTarget("paused")).spec.roles[0]?.replicas === maxReplicas ? true : undefined),
      120_000,
      200,
    );
    watched.stop();
    const all = decisions(watched.seen);
    expect(new Set(all.map((d) => d.decisionID)).size).toBe(all.length);
    const transitions = all.map((d) => d.leader?.transitions ?? -1);
    expect(transitions).toEqual([...transitions].sort((x, y) => x - y));
    const counts = all.map((d) => d.vector["server"]);
    expect(counts).toEqual([...counts].sort((x, y) => (x ?? 0) - (y ?? 0)));
  }, 300_000);

  it("the fence webhook refuses a commit whose leader token is older than the stored one", async () => {
    const target = await getTarget("paused");
    const stored = JSON.parse(target.metadata.annotations?.[decisionAnnotation] ?? "{}") as DecisionPayload;
    expect(stored.leader).toBeDefined();
    const controller = (await controllerKubeConfig(controlPlane)).makeApiClient(CustomObjectsApi);
    const commit = (leader: DecisionPayload["leader"], dryRun: boolean) => {
      const replicasNow = target.spec.roles[0]?.replicas ?? 0;
      const decision: DecisionPayload = {
        decisionID: `d-test-${leader?.transitions ?? "none"}`,
        term: stored.term,
        vector: { server: replicasNow - 1 },
        ...(leader === undefined ? {} : { leader }),
      };
      return controller.patchNamespacedCustomObject(
        {
          group,
          version,
          namespace: ns,
          plural: "modeldeployments",
          name: "paused",
          // No resourceVersion guard: the status mirror keeps moving the target, and the fence, not
          // optimistic concurrency, is what this test asks to refuse the commit.
          body: [
            { op: "test", path: "/spec/roles/0/name", value: "server" },
            { op: "replace", path: "/spec/roles/0/replicas", value: replicasNow - 1 },
            {
              op: "add",
              path: `/metadata/annotations/${pointerKey(decisionAnnotation)}`,
              value: JSON.stringify(decision),
            },
          ],
          fieldManager: "mds-scaler",
          ...(dryRun ? { dryRun: "All" } : {}),
        },
        setHeaderOptions("Content-Type", PatchStrategy.JsonPatch),
      );
    };
    const refusal = async (leader: DecisionPayload["leader"]): Promise<string> => {
      try {
        await commit(leader, false);
        return "";
      } catch (error) {
        return String((error as { body?: unknown }).body ?? error);
      }
    };
    const holder = stored.leader?.holder ?? "";
    const transitions = stored.leader?.transitions ?? 0;
    const older = await refusal({ holder: "replica-a", transitions: transitions - 1 });
    expect(older).toContain("older than the");
    expect(older).toContain(`Lease transition ${transitions}`);
    // Same count, another holder: two leaderships cannot share a count, the later writer loses.
    expect(await refusal({ holder: `${holder}-impostor`, transitions })).toContain("older than the");
    // No token at all is the oldest.
    expect(await refusal(undefined)).toContain("no leader token");
    expect(controllerView(await getTarget("paused"))).toBe(controllerView(target));
    // A newer leadership passes the same fence (dry run: nothing is stored).
    await expect(commit({ holder: "replica-c", transitions: transitions + 1 }, true)).resolves.toBeDefined();
  }, 60_000);

  it("a status write planned from an older read of the scaler is refused, never forced", async () => {
    const resources = new KubeResources(await controllerKubeConfig(controlPlane), { timeoutMs: 5_000 });
    const read = await getScaler("paused");
    // Someone else moves the scaler after this replica read it (here: a label).
    await admin.patchNamespacedCustomObject(
      {
        group,
        version,
        namespace: ns,
        plural: "modeldeploymentscalers",
        name: "paused",
        body: [{ op: "add", path: "/metadata/labels", value: { touched: "yes" } }],
      },
      setHeaderOptions("Content-Type", PatchStrategy.JsonPatch),
    );
    const moved = await getScaler("paused");
    await expect(
      resources.writeScalerStatus(
        ns,
        "paused",
        { observedGeneration: 99 },
        { resourceVersion: read.metadata.resourceVersion },
      ),
    ).rejects.toBeInstanceOf(ConflictError);
    expect(await getScaler("paused")).toEqual(moved);
    // With the version it read last, the same write applies.
    const current = (await getScaler("paused")) as {
      metadata: { resourceVersion: string };
      status?: Record<string, unknown>;
    };
    await resources.writeScalerStatus(ns, "paused", current.status ?? {}, {
      resourceVersion: current.metadata.resourceVersion,
    });
  }, 60_000);
});
