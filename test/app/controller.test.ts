/**
 * The control loop against fakes of its ports (test/fakes/controller.ts): the
 * writes it makes for a plan, conflicts, lost answers, failed status writes,
 * finalizers, the per-scaler deadline and a new leadership. The plans
 * themselves are the core's; end-to-end proof against a real API server is in
 * test/e2e and test/integration/commit-records.test.ts.
 */
import { describe, expect, it } from "vitest";
import { ScalerMetrics } from "../../src/adapters/telemetry/metrics.js";
import { createLogger } from "../../src/adapters/telemetry/logger.js";
import { Controller, finalizer } from "../../src/app/controller.js";
import { bindingAnnotation, decisionAnnotation } from "../../src/core/api/model-deployment.js";
import type { LatencyGuardReading } from "../../src/core/algorithms/ttft-reading.js";
import type { HistogramWindow } from "../../src/core/signals/types.js";
import { FakeClock, FakeSignals, FakeStore, settle } from "../fakes/controller.js";

const t0 = Date.parse("2026-11-30T12:00:00Z");
const intervalMs = 5_000;

interface World {
  readonly store: FakeStore;
  readonly clock: FakeClock;
  readonly signals: FakeSignals;
  readonly metrics: ScalerMetrics;
  readonly logs: string[];
  controller(): Controller;
}

interface WorldOptions {
  readonly algorithm?: Record<string, unknown>;
  readonly latencyGuardReading?: LatencyGuardReading;
  readonly engineScrapeIntervalSeconds?: number;
}

const proportional = {
  type: "Proportional",
  proportional: { metric: "RunningRequests", roleTargets: [{ name: "server", target: "1" }] },
};

function world(names: readonly string[] = ["chat"], options: WorldOptions = {}): World {
  const clock = new FakeClock(t0);
  const store = new FakeStore();
  const signals = new FakeSignals(clock);
  const metrics = new ScalerMetrics({ defaultMetrics: false });
  const logs: string[] = [];
  const logger = createLogger({ level: "info", write: (line) => logs.push(line) });
  for (const name of names) {
    store.addTarget({
      apiVersion: "worker.gpustack.ai/v1",
      kind: "ModelDeployment",
      metadata: { name, namespace: "llm", uid: `${name}-target`, generation: 1 },
      spec: { roles: [{ name: "server", kind: "Server", replicas: 1 }] },
      status: { roles: [{ name: "server", desired: 1, ready: 1, quotaReserved: 1 }] },
    });
    store.addScaler({
      apiVersion: "worker.gpustack.ai/v1",
      kind: "ModelDeploymentScaler",
      metadata: { name, namespace: "llm", uid: `${name}-scaler`, generation: 1 },
      spec: {
        targetRef: { name },
        mode: "Active",
        sampling: { intervalSeconds: intervalMs / 1000 },
        roles: [{ name: "server", minReplicas: 1, maxReplicas: 8 }],
        algorithm: options.algorithm ?? proportional,
      },
    });
  }
  return {
    store,
    clock,
    signals,
    metrics,
    logs,
    controller: () =>
      new Controller({
        store,
        source: signals,
        metrics,
        logger,
        nowMs: () => clock.nowMs(),
        sleep: (ms) => clock.sleep(ms),
        random: () => 0.5,
        namespace: "llm",
        ...(options.latencyGuardReading === undefined ? {} : { latencyGuardReading: options.latencyGuardReading }),
        ...(options.engineScrapeIntervalSeconds === undefined
          ? {}
          : { engineScrapeIntervalSeconds: options.engineScrapeIntervalSeconds }),
      }),
  };
}

/** One tick, letting the fake clock run any retry waits inside it. */
async function tick(w: World, controller: Controller): Promise<string[]> {
  const ticking = controller.tick();
  let done = false;
  void ticking.finally(() => (done = true));
  await settle();
  // Retry back-off waits are short; move time by small steps until the tick ends, never past one interval.
  for (let waitedMs = 0; !done && waitedMs < intervalMs - 500; waitedMs += 250) await w.clock.advance(250);
  return ticking;
}

const replicas = (w: World, name = "chat"): number | undefined =>
  (w.store.targets.get(`llm/${name}`)?.spec as { roles: { replicas: number }[] }).roles[0]?.replicas;
const annotations = (w: World, name = "chat"): Record<string, string> =>
  w.store.targets.get(`llm/${name}`)?.metadata.annotations ?? {};
const status = (w: World, name = "chat") =>
  w.store.scalers.get(`llm/${name}`)?.status as
    { lastCommit?: { decisionID: string }; pendingCohort?: { decisionID: string } } | undefined;
const counter = async (w: World, name: string): Promise<number> =>
  (await w.metrics.registry.getSingleMetric(name)?.get())?.values.reduce((sum, v) => sum + v.value, 0) ?? 0;

describe("the controller against fakes of its ports", () => {
  it("adds its finalizer, binds, commits a scale-up and records it in status", async () => {
    const w = world();
    w.signals.load = () => ({ running: 3, ready: 1 });
    const controller = w.controller();
    expect(await tick(w, controller)).toEqual(["llm/chat"]);
    expect(w.store.scalers.get("llm/chat")?.metadata.finalizers).toEqual([finalizer]);
    expect(JSON.parse(annotations(w)[bindingAnnotation] ?? "{}")).toMatchObject({ scalerName: "chat", term: 1 });
    expect(replicas(w)).toBe(3);
    const decision = JSON.parse(annotations(w)[decisionAnnotation] ?? "{}") as { decisionID: string };
    expect(status(w)?.lastCommit?.decisionID).toBe(decision.decisionID);
    expect(status(w)?.pendingCohort?.decisionID).toBe(decision.decisionID);
  });

  it("writes no status for a steady pass, and waits for the interval between passes", async () => {
    const w = world();
    const controller = w.controller();
    await tick(w, controller);
    const writes = w.store.callsOf("writeScalerStatus");
    expect(writes).toBeGreaterThan(0);
    await w.clock.advance(1_000);
    expect(await tick(w, controller)).toEqual([]);
    await w.clock.advance(intervalMs);
    expect(await tick(w, controller)).toEqual(["llm/chat"]);
    await w.clock.advance(intervalMs);
    expect(await tick(w, controller)).toEqual(["llm/chat"]);
    expect(w.store.callsOf("writeScalerStatus")).toBe(writes);
  });

  it("re-plans a commit that meets a conflict and applies it once", async () => {
    const w = world();
    const controller = w.controller();
    await tick(w, controller);
    w.signals.load = () => ({ running: 2, ready: 1 });
    w.store.inject("patchTarget", "llm/chat", "conflict");
    await w.clock.advance(intervalMs);
    expect(await tick(w, controller)).toEqual(["llm/chat"]);
    expect(replicas(w)).toBe(2);
    expect(await counter(w, "mds_commit_conflicts_total")).toBe(1);
    expect(await counter(w, "mds_commits_total")).toBe(1);
  });

  it("gives a pass up after four conflicts in a row, counted as conflict errors", async () => {
    const w = world();
    const controller = w.controller();
    await tick(w, controller);
    w.signals.load = () => ({ running: 2, ready: 1 });
    for (let i = 0; i < 4; i++) w.store.inject("patchTarget", "llm/chat", "conflict");
    await w.clock.advance(intervalMs);
    expect(await tick(w, controller)).toEqual([]);
    expect(replicas(w)).toBe(1);
    const errors = await w.metrics.registry.getSingleMetric("mds_errors_total")?.get();
    expect(errors?.values.find((v) => v.labels["kind"] === "conflict")?.value).toBe(1);
  });

  it("a commit whose answer is lost counts once the target carries its decision; its records reach status", async () => {
    const w = world();
    const controller = w.controller();
    await tick(w, controller);
    w.signals.load = () => ({ running: 2, ready: 1 });
    w.store.inject("patchTarget", "llm/chat", "applyThenFail");
    await w.clock.advance(intervalMs);
    expect(await tick(w, controller)).toEqual(["llm/chat"]);
    const decision = JSON.parse(annotations(w)[decisionAnnotation] ?? "{}") as { decisionID: string };
    expect(status(w)?.pendingCohort?.decisionID).toBe(decision.decisionID);
    expect(await counter(w, "mds_commit_failures_total")).toBe(0);
    expect(w.logs.some((l) => l.includes("the commit's answer was lost"))).toBe(true);
  });

  it("a commit whose answer is lost and whose read-back fails: the next pass rebuilds its records", async () => {
    const w = world();
    const controller = w.controller();
    await tick(w, controller);
    w.signals.load = () => ({ running: 2, ready: 1 });
    w.store.inject("patchTarget", "llm/chat", "applyThenFail");
    w.store.inject("getTargetFresh", "llm/chat", "fail");
    await w.clock.advance(intervalMs);
    expect(await tick(w, controller)).toEqual([]);
    expect(replicas(w)).toBe(2);
    expect(await counter(w, "mds_commit_failures_total")).toBe(1);
    expect(status(w)?.pendingCohort).toBeUndefined();
    await w.clock.advance(intervalMs);
    expect(await tick(w, controller)).toEqual(["llm/chat"]);
    const decision = JSON.parse(annotations(w)[decisionAnnotation] ?? "{}") as { decisionID: string };
    expect(status(w)?.lastCommit?.decisionID).toBe(decision.decisionID);
    expect(status(w)?.pendingCohort?.decisionID).toBe(decision.decisionID);
    expect(replicas(w)).toBe(2);
  });

  it("retries a status write that carries a commit record, with back-off, within the pass", async () => {
    const w = world();
    const controller = w.controller();
    await tick(w, controller);
    w.signals.load = () => ({ running: 2, ready: 1 });
    w.store.inject("writeScalerStatus", "llm/chat", "fail");
    w.store.inject("writeScalerStatus", "llm/chat", "fail");
    const before = w.store.callsOf("writeScalerStatus");
    await w.clock.advance(intervalMs);
    expect(await tick(w, controller)).toEqual(["llm/chat"]);
    expect(w.store.callsOf("writeScalerStatus") - before).toBe(3);
    expect(status(w)?.pendingCohort).toBeDefined();
  });

  it("a status write that keeps failing is written by the next pass although nothing moved", async () => {
    const w = world();
    const controller = w.controller();
    await tick(w, controller);
    w.signals.load = () => ({ running: 2, ready: 1 });
    for (let i = 0; i < 4; i++) w.store.inject("writeScalerStatus", "llm/chat", "fail");
    await w.clock.advance(intervalMs);
    expect(await tick(w, controller)).toEqual([]);
    expect(replicas(w)).toBe(2);
    expect(status(w)?.pendingCohort).toBeUndefined();
    await w.clock.advance(intervalMs);
    expect(await tick(w, controller)).toEqual(["llm/chat"]);
    expect(status(w)?.pendingCohort).toBeDefined();
    expect(await counter(w, "mds_commits_total")).toBe(1);
  });

  it("makes no new commit while an earlier commit's records are not in status", async () => {
    const w = world();
    const controller = w.controller();
    await tick(w, controller);
    w.signals.load = () => ({ running: 2, ready: 2 });
    for (let i = 0; i < 4; i++) w.store.inject("writeScalerStatus", "llm/chat", "fail");
    await w.clock.advance(intervalMs);
    await tick(w, controller);
    expect(replicas(w)).toBe(2);
    // The two replicas are admitted and the load grows again; the old records still cannot be written.
    const target = w.store.targets.get("llm/chat");
    if (target === undefined) throw new Error("no target");
    target.status = { roles: [{ name: "server", desired: 2, ready: 2, quotaReserved: 2 }] };
    w.signals.load = () => ({ running: 3, ready: 2 });
    for (let i = 0; i < 4; i++) w.store.inject("writeScalerStatus", "llm/chat", "fail");
    await w.clock.advance(intervalMs);
    expect(await tick(w, controller)).toEqual([]);
    expect(replicas(w)).toBe(2);
    await w.clock.advance(intervalMs);
    expect(await tick(w, controller)).toEqual(["llm/chat"]);
    expect(replicas(w)).toBe(3);
    const decision = JSON.parse(annotations(w)[decisionAnnotation] ?? "{}") as { decisionID: string };
    expect(status(w)?.lastCommit?.decisionID).toBe(decision.decisionID);
  });

  it("a lost status write without a commit record does not hold up the next commit", async () => {
    const w = world();
    const controller = w.controller();
    w.store.inject("writeScalerStatus", "llm/chat", "fail");
    expect(await tick(w, controller)).toEqual([]);
    expect(w.store.callsOf("writeScalerStatus")).toBe(1);
    w.signals.load = () => ({ running: 2, ready: 1 });
    await w.clock.advance(intervalMs);
    expect(await tick(w, controller)).toEqual(["llm/chat"]);
    expect(replicas(w)).toBe(2);
    expect(status(w)?.pendingCohort).toBeDefined();
  });

  it("a deleted scaler releases its binding, then its finalizer goes and the object with it", async () => {
    const w = world();
    const controller = w.controller();
    await tick(w, controller);
    expect(annotations(w)[bindingAnnotation]).toBeDefined();
    const scaler = w.store.scalers.get("llm/chat");
    if (scaler === undefined) throw new Error("no scaler");
    scaler.metadata.deletionTimestamp = new Date(t0).toISOString();
    await w.clock.advance(1_000);
    expect(await tick(w, controller)).toEqual(["llm/chat"]);
    expect(annotations(w)[bindingAnnotation]).toBeUndefined();
    expect(w.store.scalers.has("llm/chat")).toBe(false);
  });

  it("a scaler whose call hangs does not hold up the others; later ticks skip it until it ends", async () => {
    const w = world(["chat", "code"]);
    const controller = w.controller();
    w.store.inject("getTarget", "llm/chat", "hang");
    const ticking = controller.tick();
    await settle();
    let ended = false;
    void ticking.finally(() => (ended = true));
    expect(ended).toBe(false);
    expect(annotations(w, "code")[bindingAnnotation]).toBeDefined();
    // The tick waits for the hanging scaler until its deadline, one interval, and not longer.
    await w.clock.advance(intervalMs);
    expect(await ticking).toEqual(["llm/code"]);
    expect(w.logs.some((l) => l.includes("a pass outlived its interval"))).toBe(true);
    await w.clock.advance(intervalMs);
    const gets = w.store.callsOf("getTarget", "llm/chat");
    expect(await tick(w, controller)).toEqual(["llm/code"]);
    expect(w.store.callsOf("getTarget", "llm/chat")).toBe(gets);
  });

  it("a signal source that hangs costs its samples, not the pass", async () => {
    const w = world();
    w.signals.load = () => ({ running: 2, ready: 1 });
    w.signals.hang = true;
    const controller = w.controller();
    const ticking = controller.tick();
    await settle();
    await w.clock.advance(intervalMs);
    expect(await ticking).toEqual(["llm/chat"]);
    // Unknown is not zero: without samples the role holds at its count.
    expect(replicas(w)).toBe(1);
    expect(w.logs.some((l) => l.includes("sampling from Prometheus failing"))).toBe(true);
  });

  it("a new leadership passes every scaler at its first tick, from the status the last leader wrote", async () => {
    const w = world();
    w.signals.load = () => ({ running: 2, ready: 1 });
    await tick(w, w.controller());
    const committed = status(w)?.lastCommit?.decisionID;
    expect(committed).toBeDefined();
    // Leadership lost and regained a second later: a fresh controller, well inside the scaler's interval.
    await w.clock.advance(1_000);
    const next = w.controller();
    expect(await tick(w, next)).toEqual(["llm/chat"]);
    expect(status(w)?.lastCommit?.decisionID).toBe(committed);
    expect(await counter(w, "mds_commits_total")).toBe(1);
  });

  describe("passes its latency guard reading to the planner", () => {
    /** Every one of `count` observations in the bucket ending at `seconds`. */
    const histogram = (bounds: readonly number[], seconds: number, count = 20): HistogramWindow => ({
      buckets: bounds.map((upperBound) => ({ upperBound, count: upperBound >= seconds ? count : 0 })),
      count,
      sum: count * seconds,
    });
    const tokenThroughput = {
      type: "TokenThroughput",
      tokenThroughput: { serverTargetTokensPerSecond: "1000", ttftTargetMilliseconds: "500" },
    };
    // TTFT in (1, 2.5 s], well above the 500 ms target; every request's queue time in the first bucket: no waiting.
    const longPrompts = {
      promptTokensPerSecond: 500,
      generationTokensPerSecond: 100,
      ttftSeconds: histogram([0.25, 0.5, 1, 2.5, Infinity], 2.5),
      itlSeconds: histogram([0.025, 0.05, Infinity], 0.025),
      queueTimeSeconds: histogram([0.3, 0.5, 1, Infinity], 0.3),
    };
    const guard = async (reading?: LatencyGuardReading): Promise<string | undefined> => {
      const w = world(["chat"], {
        algorithm: tokenThroughput,
        ...(reading === undefined ? {} : { latencyGuardReading: reading }),
      });
      w.signals.load = () => ({ running: 2, ready: 1 });
      w.signals.windowExtras = longPrompts;
      await tick(w, w.controller());
      const roles = (w.store.scalers.get("llm/chat")?.status as { roles?: { latencyGuard?: string }[] } | undefined)
        ?.roles;
      return roles?.[0]?.latencyGuard;
    };

    it("queueing by default: the breach without waiting does not count", async () => {
      expect(await guard()).toMatch(/^queueing: .*TTFT does not count/);
    });

    it("literal when configured: the TTFT breach counts", async () => {
      expect(await guard("literal")).toMatch(/^literal: selected/);
    });
  });

  describe("the engines' scrape interval reaches the planner", () => {
    // The specification's shortest panic window, 10 s, under two scrapes of the chart's 15 s.
    const shortPanic = { ...proportional, tokenThroughput: { panicWindowSeconds: 10 } };
    const metricsReady = async (engineScrapeIntervalSeconds?: number): Promise<string | undefined> => {
      const w = world(["chat"], {
        algorithm: shortPanic,
        ...(engineScrapeIntervalSeconds === undefined ? {} : { engineScrapeIntervalSeconds }),
      });
      await tick(w, w.controller());
      const conditions = (
        w.store.scalers.get("llm/chat")?.status as { conditions?: { type: string; message: string }[] }
      )?.conditions;
      return conditions?.find((c) => c.type === "MetricsReady")?.message;
    };

    it("MetricsReady names a panic window that reads nothing at that interval", async () => {
      expect(await metricsReady(15)).toMatch(
        /; spec\.algorithm\.tokenThroughput\.panicWindowSeconds = 10: 10 s holds under two engine scrapes of 15 s, .*panic never engages/,
      );
    });

    it("says nothing of it where the window holds two scrapes, or no interval is configured", async () => {
      expect(await metricsReady(5)).not.toContain("panicWindowSeconds");
      expect(await metricsReady()).not.toContain("panicWindowSeconds");
    });
  });
});
