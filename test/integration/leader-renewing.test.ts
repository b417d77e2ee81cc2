/**
 * `leaderRenewing()`, the Lease half of the external metrics freshness rule,
 * against a real API server: a follower sees a renewing leader, and stops
 * trusting it once the Lease record has not changed for a lease duration by
 * the follower's own monotonic clock (stepped here, so no wait decides it).
 */
import { CoreV1Api } from "@kubernetes/client-node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { LeaderElector } from "../../src/adapters/kubernetes/leader.js";
import { createLogger } from "../../src/adapters/telemetry/logger.js";
import { startControlPlane, type ControlPlane } from "../../harness/kube/index.js";

const namespace = "mds-system";
const leaseName = "renewing";
const logger = createLogger({ level: "error", write: () => undefined });
let controlPlane: ControlPlane;

beforeAll(async () => {
  controlPlane = await startControlPlane();
  await controlPlane.kubeConfig.makeApiClient(CoreV1Api).createNamespace({ body: { metadata: { name: namespace } } });
}, 120_000);

afterAll(async () => {
  await controlPlane?.stop();
});

describe("LeaderElector.leaderRenewing", () => {
  it("is true while the leader renews, and false once its record is older than the lease", async () => {
    const options = { kubeConfig: controlPlane.kubeConfig, namespace, name: leaseName, timeoutMs: 2_000, logger };
    const leader = new LeaderElector({ ...options, identity: "a", leaseDurationSeconds: 10, retryPeriodMs: 200 });
    // A whole number: a fractional start would make "start + 10,000 − start" land a hair above 10,000.
    let followerNowMs = Math.floor(performance.now());
    const follower = new LeaderElector({
      ...options,
      identity: "b",
      leaseDurationSeconds: 10,
      retryPeriodMs: 200,
      monotonicMs: () => followerNowMs,
    });
    // Before it has read the Lease, a follower knows of no leader.
    expect(follower.leaderRenewing()).toBe(false);
    await leader.round();
    expect(leader.isLeader).toBe(true);
    expect(leader.leaderRenewing()).toBe(true);

    await follower.round();
    expect(follower.isLeader).toBe(false);
    expect(follower.leaderRenewing()).toBe(true);

    // The leader goes silent; by the follower's clock the record is just within, then past, the lease.
    followerNowMs += 10_000;
    expect(follower.leaderRenewing()).toBe(true);
    followerNowMs += 1;
    expect(follower.leaderRenewing()).toBe(false);

    // A renewal changes the record: the follower trusts the leader again from its next read.
    await leader.round();
    await follower.round();
    expect(follower.isLeader).toBe(false);
    expect(follower.leaderRenewing()).toBe(true);
    await leader.stop({ release: false });
    await follower.stop({ release: false });
  }, 60_000);
});
