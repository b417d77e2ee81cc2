/**
 * The Lease loop against a real API server: one leader at a time, MicroTime
 * accepted, a graceful stop hands over at once, and a leader cut off from the
 * API server steps down before a follower may take over.
 */
import { CoordinationV1Api, CoreV1Api, KubeConfig } from "@kubernetes/client-node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { LeaderElector, microTime } from "../../src/adapters/kubernetes/leader.js";
import { createLogger } from "../../src/adapters/telemetry/logger.js";
import { startControlPlane, type ControlPlane } from "../../src/harness/kube/index.js";
import { TcpBalancer } from "../support/tcp-balancer.js";

const namespace = "mds-system";
const logger = createLogger({ level: "error", write: () => undefined });
let controlPlane: ControlPlane;
const electors: LeaderElector[] = [];

function elector(
  identity: string,
  name: string,
  kubeConfig: KubeConfig = controlPlane.kubeConfig,
  leaseDurationSeconds = 2,
): LeaderElector {
  const e = new LeaderElector({
    kubeConfig,
    namespace,
    name,
    identity,
    leaseDurationSeconds,
    retryPeriodMs: 200,
    timeoutMs: 500,
    logger,
  });
  electors.push(e);
  return e;
}

async function until(what: string, check: () => boolean, timeoutMs: number): Promise<number> {
  const started = Date.now();
  while (!check()) {
    if (Date.now() - started > timeoutMs) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  return Date.now() - started;
}

beforeAll(async () => {
  controlPlane = await startControlPlane();
  await controlPlane.kubeConfig.makeApiClient(CoreV1Api).createNamespace({ body: { metadata: { name: namespace } } });
}, 120_000);

afterAll(async () => {
  for (const e of electors) await e.stop({ release: false });
  await controlPlane?.stop();
});

describe("LeaderElector", () => {
  it("formats MicroTime with six fractional digits", () => {
    expect(microTime(Date.UTC(2026, 0, 2, 3, 4, 5, 678))).toBe("2026-01-02T03:04:05.678000Z");
  });

  it("elects one leader, and a graceful stop hands over well within the lease duration", async () => {
    const a = elector("a", "graceful");
    const b = elector("b", "graceful");
    a.start();
    await until("a to lead", () => a.isLeader, 10_000);
    b.start();
    // Several rounds: b keeps following while a renews.
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    expect([a.isLeader, b.isLeader]).toEqual([true, false]);
    const lease = await controlPlane.kubeConfig
      .makeApiClient(CoordinationV1Api)
      .readNamespacedLease({ namespace, name: "graceful" });
    expect(lease.spec?.holderIdentity).toBe("a");

    await a.stop();
    const handoverMs = await until("b to lead after a released", () => b.isLeader, 10_000);
    expect(handoverMs).toBeLessThan(2_000);
    const after = await controlPlane.kubeConfig
      .makeApiClient(CoordinationV1Api)
      .readNamespacedLease({ namespace, name: "graceful" });
    expect(after.spec?.holderIdentity).toBe("b");
    expect(after.spec?.leaseTransitions).toBe(1);
  });

  it("a leader that cannot reach the API server steps down before another replica takes over", async () => {
    // The partitioned replica reaches the API server through a forwarder the test can cut.
    const forwarder = await TcpBalancer.start([Number(new URL(controlPlane.serverUrl).port)]);
    const admin = controlPlane.kubeConfig;
    const cluster = admin.getCurrentCluster();
    const user = admin.getCurrentUser();
    if (cluster === null || user === null) throw new Error("the admin kubeconfig has no current cluster or user");
    const viaForwarder = new KubeConfig();
    viaForwarder.loadFromOptions({
      clusters: [{ ...cluster, server: `https://127.0.0.1:${forwarder.port}` }],
      users: [user],
      contexts: [{ name: "forwarded", cluster: cluster.name, user: user.name }],
      currentContext: "forwarded",
    });
    try {
      let steppedDownAt = 0;
      const partitioned = new LeaderElector({
        kubeConfig: viaForwarder,
        namespace,
        name: "partition",
        identity: "cut",
        leaseDurationSeconds: 2,
        retryPeriodMs: 200,
        timeoutMs: 300,
        logger,
        onStoppedLeading: () => (steppedDownAt = Date.now()),
      });
      electors.push(partitioned);
      partitioned.start();
      await until("the soon partitioned replica to lead", () => partitioned.isLeader, 10_000);
      const other = elector("other", "partition");
      other.start();
      forwarder.down();
      const cutAt = Date.now();
      await until("other to take over", () => other.isLeader, 10_000);
      const tookOverAt = Date.now();
      expect(steppedDownAt).toBeGreaterThan(0);
      // Never two leaders: the cut-off one gave up first, within its renew deadline (2/3 of 2 s) plus a round.
      expect(steppedDownAt).toBeLessThan(tookOverAt);
      expect(steppedDownAt - cutAt).toBeLessThan(partitioned.renewDeadlineMs + 1_000);
    } finally {
      await forwarder.close();
    }
  });
});
