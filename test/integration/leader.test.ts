/**
 * The Lease loop against a real API server: one leader at a time, MicroTime
 * accepted, a graceful stop hands over at once, and a leader cut off from the
 * API server steps down before a follower may take over, even when its wall
 * clock steps back. Clocks are injected ports, stepped per replica; the
 * machine's clock, shared with the API server and etcd, is never touched.
 */
import { createServer, type Server, type Socket } from "node:net";
import { CoordinationV1Api, CoreV1Api, KubeConfig, PatchStrategy, setHeaderOptions } from "@kubernetes/client-node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { LeaderElector, microTime } from "../../src/adapters/kubernetes/leader.js";
import { NotLeaderError } from "../../src/adapters/kubernetes/not-leader.js";
import { KubeResources } from "../../src/adapters/kubernetes/resources.js";
import { createLogger } from "../../src/adapters/telemetry/logger.js";
import { startControlPlane, type ControlPlane } from "../../harness/kube/index.js";
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
      // At the cut the leader's wall clock also steps back a minute (NTP): it must not extend its leadership.
      let wallStepMs = 0;
      const partitioned = new LeaderElector({
        kubeConfig: viaForwarder,
        namespace,
        name: "partition",
        identity: "cut",
        leaseDurationSeconds: 2,
        retryPeriodMs: 200,
        timeoutMs: 300,
        logger,
        nowMs: () => Date.now() - wallStepMs,
        onStoppedLeading: () => (steppedDownAt = Date.now()),
      });
      electors.push(partitioned);
      partitioned.start();
      await until("the soon partitioned replica to lead", () => partitioned.isLeader, 10_000);
      const other = elector("other", "partition");
      other.start();
      forwarder.down();
      wallStepMs = 60_000;
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

  it("judges the lease on its monotonic clock: wall-clock steps on either replica move nothing", async () => {
    let leaderWallStep = 0;
    let followerWallStep = 0;
    let followerMono = Math.floor(performance.now());
    // The leader's monotonic clock is stepped too, so a slow machine between rounds cannot end its leadership.
    let leaderMono = Math.floor(performance.now());
    const options = {
      kubeConfig: controlPlane.kubeConfig,
      namespace,
      name: "stepped",
      retryPeriodMs: 200,
      timeoutMs: 500,
      logger,
    };
    const leader = new LeaderElector({
      ...options,
      identity: "a",
      leaseDurationSeconds: 2,
      nowMs: () => Date.now() + leaderWallStep,
      monotonicMs: () => leaderMono,
    });
    const follower = new LeaderElector({
      ...options,
      identity: "b",
      leaseDurationSeconds: 2,
      nowMs: () => Date.now() + followerWallStep,
      monotonicMs: () => followerMono,
    });
    electors.push(leader, follower);
    await leader.round();
    await follower.round();
    expect([leader.isLeader, follower.isLeader]).toEqual([true, false]);
    // The leader's clock steps back an hour, the follower's forward an hour: renewTime on the Lease jumps
    // around, but expiry is a duration on each replica's own monotonic clock.
    leaderWallStep = -3_600_000;
    followerWallStep = 3_600_000;
    for (let i = 0; i < 3; i++) {
      leaderMono += 1_000;
      await leader.round();
      followerMono += 1_000;
      await follower.round();
      expect([leader.isLeader, follower.isLeader]).toEqual([true, false]);
    }
    const renewed = await controlPlane.kubeConfig
      .makeApiClient(CoordinationV1Api)
      .readNamespacedLease({ namespace, name: "stepped" });
    expect(renewed.spec?.holderIdentity).toBe("a");
    // The leader goes silent: the follower takes over only after a full lease by its monotonic clock.
    await follower.round();
    followerMono += 2_000;
    await follower.round();
    expect(follower.isLeader).toBe(false);
    followerMono += 1;
    await follower.round();
    expect(follower.isLeader).toBe(true);
    // A new leadership: one transition above the leader's, whose decisions are now older at the fence.
    expect(follower.leaderToken()).toEqual({ holder: "b", transitions: 1 });
  });

  it("past its renew deadline by its monotonic clock a leader refuses writes, aborts the one in flight, and leads anew only with a new transition", async () => {
    // Whole milliseconds: a fractional start makes "one millisecond past the deadline" a rounding question.
    let mono = Math.floor(performance.now());
    const leader = new LeaderElector({
      kubeConfig: controlPlane.kubeConfig,
      namespace,
      name: "deadline",
      identity: "a",
      leaseDurationSeconds: 10,
      retryPeriodMs: 200,
      renewDeadlineMs: 4_000,
      timeoutMs: 2_000,
      writeTimeoutMs: 5_000,
      logger,
      monotonicMs: () => mono,
    });
    electors.push(leader);
    await leader.round();
    expect(leader.leaderToken()).toEqual({ holder: "a", transitions: 0 });

    // A write in flight: an API server that accepts the connection and never answers (a hung call).
    const sockets: Socket[] = [];
    const silent: Server = createServer((socket) => sockets.push(socket));
    await new Promise<void>((resolve) => silent.listen(0, "127.0.0.1", resolve));
    const port = (silent.address() as { port: number }).port;
    const hung = new KubeConfig();
    hung.loadFromOptions({
      clusters: [{ name: "silent", server: `https://127.0.0.1:${port}`, skipTLSVerify: true }],
      users: [{ name: "nobody", token: "x" }],
      contexts: [{ name: "silent", cluster: "silent", user: "nobody" }],
      currentContext: "silent",
    });
    const writes = new KubeResources(hung, { timeoutMs: 30_000, writeGuard: () => leader.writePermit() });
    try {
      const inFlight = writes.patchTarget("team", "llm", [{ op: "test", path: "/metadata/name", value: "llm" }]);
      const outcome = inFlight.then(
        () => "answered",
        (error: unknown) => error,
      );
      await until("the hung write to reach the server", () => sockets.length > 0, 5_000);

      // Within the deadline it still leads; one millisecond past it, it does not, before any round has run.
      mono += 3_999;
      expect(leader.isLeader).toBe(true);
      const abortedAt = Date.now();
      mono += 1;
      expect(leader.isLeader).toBe(false);
      expect(leader.leaderToken()).toBeUndefined();
      const error = await outcome;
      expect(error).toBeInstanceOf(NotLeaderError);
      expect(String((error as Error).message)).toContain("aborted");
      // Aborted at the step-down, not at the 30 s call timeout.
      expect(Date.now() - abortedAt).toBeLessThan(5_000);
      expect(() => leader.writePermit()).toThrow(NotLeaderError);
      await expect(writes.patchScaler("team", "llm", [])).rejects.toThrow(/not sent/);
    } finally {
      for (const s of sockets) s.destroy();
      await new Promise((resolve) => silent.close(resolve));
    }

    // The Lease still names it and nobody took over: it takes it anew, as a new leadership.
    await leader.round();
    expect(leader.isLeader).toBe(true);
    expect(leader.leaderToken()).toEqual({ holder: "a", transitions: 1 });
  });

  it("refuses a timing where the renew deadline leaves a write no time to land", () => {
    expect(
      () =>
        new LeaderElector({
          kubeConfig: controlPlane.kubeConfig,
          namespace,
          name: "bad",
          identity: "a",
          leaseDurationSeconds: 15,
          retryPeriodMs: 2_000,
          renewDeadlineMs: 10_000,
          timeoutMs: 2_000,
          writeTimeoutMs: 10_000,
          logger,
        }),
    ).toThrow("renewDeadlineMs (10000) + writeTimeoutMs (10000) must be less than leaseDurationSeconds (15) × 1000");
  });

  it("a leaseTransitions raised by hand (after the Lease was recreated) is carried from the next renewal", async () => {
    const leader = elector("a", "raised");
    await leader.round();
    expect(leader.leaderToken()).toEqual({ holder: "a", transitions: 0 });
    await controlPlane.kubeConfig
      .makeApiClient(CoordinationV1Api)
      .patchNamespacedLease(
        { namespace, name: "raised", body: { spec: { leaseTransitions: 7 } } },
        setHeaderOptions("Content-Type", PatchStrategy.MergePatch),
      );
    await leader.round();
    expect(leader.isLeader).toBe(true);
    expect(leader.leaderToken()).toEqual({ holder: "a", transitions: 7 });
  });
});
