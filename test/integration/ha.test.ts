/**
 * High availability against a real API server, with each controller replica
 * in its own process behind a loopback forwarder that plays the webhook
 * Service. Every write the replicas make to a target passes the product's
 * fence webhook, served by whichever replica is alive.
 *
 * Commits are counted from the target itself (a watch on its decision
 * annotation) and from each replica's `mds_commits_total`.
 */
import { startControlPlaneWithCrds } from "../support/control-plane.js";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import {
  CoordinationV1Api,
  CoreV1Api,
  CustomObjectsApi,
  PatchStrategy,
  setHeaderOptions,
  Watch,
} from "@kubernetes/client-node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { eventually as waitFor } from "../support/eventually.js";
import {
  ControllerProcesses,
  electedReplicaEnv,
  metricSum,
  type ControllerProcess,
} from "../support/controller-processes.js";
import { bindingAnnotation, decisionAnnotation } from "../../src/core/api/model-deployment.js";
import type { ControlPlane } from "../../harness/kube/index.js";
import { freeLoopbackPort } from "../../harness/kube/net.js";
import {
  controllerKubeConfig,
  installWebhookConfigurations,
  releaseNamespace,
  waitForProductWebhooks,
} from "../../harness/product-webhooks.js";
import { QueueWorld } from "../support/queue-world.js";
import { TcpBalancer } from "../support/tcp-balancer.js";

const group = "worker.gpustack.ai";
const version = "v1";
const ns = "team";
const leaseName = "mds-mds-scaler";
const leaseDurationSeconds = 6;
const leaseRetryMs = 300;
const maxReplicas = 6;

let controlPlane: ControlPlane;
let admin: CustomObjectsApi;
let balancer: TcpBalancer;
let world: QueueWorld;
let workDir: string;
let kubeconfigPath: string;
const processes = new ControllerProcesses(20_000);
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
      `--lease-retry-ms=${leaseRetryMs}`,
      // Renew deadline + call timeout within the lease: at most one writer.
      "--lease-renew-deadline-ms=3000",
      "--kube-timeout-ms=2000",
      "--log-level=warn",
    ],
    {
      ...electedReplicaEnv(name, leaseName),
      MDS_TEST_MAX_REPLICAS: String(maxReplicas),
    },
  );
  const replica: Replica = Object.assign(started, { metricsPort, webhookPort });
  replicas.push(replica);
  return replica;
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

interface Commit {
  readonly decisionID: string;
  readonly term: number;
  readonly vector: Record<string, number>;
  readonly replicas: number;
}

/** Every decision annotation the target ever carried, in order, from a watch. */
async function watchCommits(name: string): Promise<{ commits: Commit[]; stop: () => void }> {
  const commits: Commit[] = [];
  const watch = new Watch(controlPlane.kubeConfig);
  const controller = await watch.watch(
    `/apis/${group}/${version}/namespaces/${ns}/modeldeployments`,
    { fieldSelector: `metadata.name=${name}` },
    (
      _phase,
      object: { metadata?: { annotations?: Record<string, string> }; spec?: { roles?: { replicas: number }[] } },
    ) => {
      const text = object.metadata?.annotations?.[decisionAnnotation];
      if (text === undefined) return;
      const decision = JSON.parse(text) as Omit<Commit, "replicas">;
      if (commits[commits.length - 1]?.decisionID === decision.decisionID) return;
      commits.push({ ...decision, replicas: object.spec?.roles?.[0]?.replicas ?? -1 });
    },
    () => undefined,
  );
  return { commits, stop: () => controller.abort() };
}

async function createPair(name: string): Promise<void> {
  await world.createPair(ns, name);
}

async function scalerLastCommit(name: string): Promise<string | undefined> {
  const scaler = (await admin.getNamespacedCustomObject({
    group,
    version,
    namespace: ns,
    plural: "modeldeploymentscalers",
    name,
  })) as { status?: { lastCommit?: { decisionID: string } } };
  return scaler.status?.lastCommit?.decisionID;
}

/** One commit per replica added, no step skipped or repeated, all under one term. */
function expectUnbrokenSequence(commits: readonly Commit[]): void {
  expect(new Set(commits.map((c) => c.decisionID)).size).toBe(commits.length);
  expect(commits.map((c) => c.replicas)).toEqual(Array.from({ length: maxReplicas - 1 }, (_, i) => i + 2));
  for (const c of commits) expect(c.vector["server"]).toBe(c.replicas);
  expect(new Set(commits.map((c) => c.term))).toEqual(new Set([1]));
}

beforeAll(async () => {
  controlPlane = await startControlPlaneWithCrds();
  const core = controlPlane.kubeConfig.makeApiClient(CoreV1Api);
  for (const name of [releaseNamespace, ns]) await core.createNamespace({ body: { metadata: { name } } });
  admin = controlPlane.kubeConfig.makeApiClient(CustomObjectsApi);
  world = new QueueWorld(controlPlane.kubeConfig);
  workDir = await mkdtemp(join(tmpdir(), "mds-ha-"));
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

describe("two replicas with a short lease", () => {
  it("a killed leader is replaced within the lease duration, and commits continue from status with none lost or repeated", async () => {
    const a = await startReplica("replica-a");
    const lease = controlPlane.kubeConfig.makeApiClient(CoordinationV1Api);
    await eventually(
      "replica-a to lead",
      async () => ((await metric(a, "mds_leader")) === 1 ? true : undefined),
      20_000,
    );
    const b = await startReplica("replica-b");
    balancer.setBackends([a.webhookPort, b.webhookPort]);
    await waitForProductWebhooks(controlPlane.kubeConfig, ns);
    expect(await metric(b, "mds_leader")).toBe(0);

    const watched = await watchCommits("llm");
    await createPair("llm");
    // Kill between passes once a few commits landed and the status caught up with the target.
    const commitsBeforeKill = await eventually(
      "three commits by replica-a",
      async () => {
        const counted = await metric(a, "mds_commits_total");
        const last = watched.commits[watched.commits.length - 1];
        return counted >= 3 &&
          counted === watched.commits.length &&
          last !== undefined &&
          (await scalerLastCommit("llm")) === last.decisionID
          ? counted
          : undefined;
      },
      60_000,
      50,
    );
    // Only the leader reports scalers: the follower exports no per-scaler series, so no query sees a scaler twice.
    const followerMetrics = await (
      await fetch(`http://127.0.0.1:${b.metricsPort}/metrics`, { signal: AbortSignal.timeout(2_000) })
    ).text();
    expect(followerMetrics).not.toMatch(/^mds_(scaler|role)_[a-z_]+\{/m);
    expect(followerMetrics).not.toMatch(/^mds_last_pass_timestamp_seconds /m);
    expect(await metric(a, "mds_last_pass_timestamp_seconds")).toBeGreaterThan(0);
    a.child.kill("SIGKILL");
    const killedAt = Date.now();
    await eventually(
      "replica-b to take over",
      async () => ((await metric(b, "mds_leader")) === 1 ? true : undefined),
      30_000,
      50,
    );
    const takeoverMs = Date.now() - killedAt;
    const held = await lease.readNamespacedLease({ namespace: releaseNamespace, name: leaseName });
    expect(held.spec?.holderIdentity).toBe("replica-b");
    console.info(
      `takeover after SIGKILL of the leader: ${takeoverMs} ms (lease ${leaseDurationSeconds} s, retry ${leaseRetryMs} ms)`,
    );
    // The follower waits a lease duration from its last sight of a renewal, then one retry period at most.
    expect(takeoverMs).toBeLessThanOrEqual(leaseDurationSeconds * 1000 + 2 * leaseRetryMs + 1_000);

    await eventually(
      `the target to reach ${maxReplicas} replicas`,
      async () => (watched.commits.length >= maxReplicas - 1 ? true : undefined),
      90_000,
      100,
    );
    await eventually(
      "the scaler status to record the last commit",
      async () =>
        (await scalerLastCommit("llm")) === watched.commits[watched.commits.length - 1]?.decisionID ? true : undefined,
      20_000,
    );
    watched.stop();

    expectUnbrokenSequence(watched.commits);
    // Every commit on the target is counted by exactly one replica.
    expect(commitsBeforeKill + (await metric(b, "mds_commits_total"))).toBe(watched.commits.length);
    const target = (await admin.getNamespacedCustomObject({
      group,
      version,
      namespace: ns,
      plural: "modeldeployments",
      name: "llm",
    })) as { metadata: { annotations: Record<string, string> } };
    expect(JSON.parse(target.metadata.annotations[bindingAnnotation] ?? "{}")).toMatchObject({
      scalerName: "llm",
      term: 1,
    });
  }, 240_000);

  it("with no webhook server answering, writes fail and change nothing; the scaler retries and recovers", async () => {
    const b = replicas.find((r) => r.name === "replica-b");
    if (b === undefined) throw new Error("replica-b is not running");
    const watched = await watchCommits("llm2");
    await createPair("llm2");
    await eventually("the first commit on llm2", async () => (watched.commits.length >= 1 ? true : undefined), 30_000);

    balancer.down();
    const errorsBefore = await metric(b, "mds_errors_total");
    // Spec and annotations: the status mirror may still write status, which no webhook guards.
    const fenced = async (): Promise<string> => {
      const t = (await admin.getNamespacedCustomObject({
        group,
        version,
        namespace: ns,
        plural: "modeldeployments",
        name: "llm2",
      })) as { metadata: { annotations?: unknown }; spec: unknown };
      return JSON.stringify([t.spec, t.metadata.annotations]);
    };
    const before = await fenced();
    // A user's write that the fence must see is refused (failurePolicy Fail), not let through.
    let refusal = "";
    try {
      await admin.patchNamespacedCustomObject(
        {
          group,
          version,
          namespace: ns,
          plural: "modeldeployments",
          name: "llm2",
          body: [{ op: "replace", path: "/spec/roles/0/replicas", value: 1 }],
        },
        setHeaderOptions("Content-Type", PatchStrategy.JsonPatch),
      );
    } catch (error) {
      refusal = String((error as { body?: unknown }).body ?? error);
    }
    expect(refusal).toContain("failed calling webhook");
    // The leader keeps trying to commit and fails, for at least one sampling interval.
    await eventually(
      "the leader's commit to fail",
      async () => ((await metric(b, "mds_errors_total")) > errorsBefore ? true : undefined),
      30_000,
      200,
    );
    expect(await fenced()).toBe(before);
    const commitsWhileDown = watched.commits.length;

    balancer.up();
    await eventually(
      `llm2 to reach ${maxReplicas} replicas after recovery`,
      async () => (watched.commits.length >= maxReplicas - 1 ? true : undefined),
      90_000,
      100,
    );
    watched.stop();
    expect(watched.commits.length).toBeGreaterThan(commitsWhileDown);
    expectUnbrokenSequence(watched.commits);
  }, 240_000);
});
