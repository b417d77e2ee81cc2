/**
 * Invariants of the algorithms, over random inputs:
 *
 * 1. Monotone in demand: with everything else equal, more demand never lowers
 *    a role's raw recommendation (all three algorithms).
 * 2. Unknown is not zero: a Missing or Stale role never recommends below its
 *    current count, and always holds scale-down.
 * 3. Any hold comes with a recommendation at least the current count.
 * 4. The filter's trend converges to the slope of a linear demand.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { initialTrendState, updateTrend, type NoiseModel } from "../../../src/core/algorithms/kalman.js";
import type { AlgorithmRoleInput } from "../../../src/core/algorithms/types.js";
import type { PredictorStatus, ProportionalMetric, ScalerSpec } from "../../../src/core/api/scaler.js";
import { proportionalMetrics } from "../../../src/core/api/scaler.js";
import type { RoleObservation, SignalState } from "../../../src/core/signals/types.js";
import { recommendationOf, run, spec, t0Ms } from "./fixtures.js";

const tokenKinds = ["Prefill", "Decode", "Server"] as const;
type TokenKind = (typeof tokenKinds)[number];

const tokenThroughputSpec = spec({
  algorithm: {
    type: "TokenThroughput",
    tokenThroughput: {
      prefillTargetTokensPerSecond: "2000",
      decodeTargetTokensPerSecond: "800",
      serverTargetTokensPerSecond: "1500",
      panicThreshold: "1.5",
    },
  },
});
const predictiveSpec = (minPoints: number): ScalerSpec =>
  spec({
    algorithm: {
      type: "Predictive",
      predictive: {
        tokenThroughput: {
          prefillTargetTokensPerSecond: "2000",
          decodeTargetTokensPerSecond: "800",
          serverTargetTokensPerSecond: "1500",
        },
        prefillTokenCapacityPerReplica: "1800",
        decodeTokenCapacityPerReplica: "700",
        serverTokenCapacityPerReplica: "1400",
        minPoints,
      },
    },
  });
const proportionalSpec = (metric: ProportionalMetric, target: string, tolerance: string): ScalerSpec =>
  spec({
    algorithm: { type: "Proportional", proportional: { metric, tolerance, roleTargets: [{ name: "server", target }] } },
  });

/** Whole numbers spread over the range, and doubles (which fast-check crowds near zero). */
const spread = (max: number) => fc.oneof(fc.integer({ min: 0, max }), fc.double({ min: 0, max, noNaN: true }));
const rate = spread(50_000);
const extra = spread(20_000);
const optionalLatency = (max: number) =>
  fc.option(
    spread(max).map((v) => v + 1),
    { nil: undefined },
  );

interface Demand {
  readonly prompt: number;
  readonly generation: number;
  readonly panicPrompt: number;
  readonly panicGeneration: number;
  readonly running: number;
  readonly waiting: number;
}

const demandArb: fc.Arbitrary<Demand> = fc.record({
  prompt: rate,
  generation: rate,
  panicPrompt: rate,
  panicGeneration: rate,
  running: fc.integer({ min: 0, max: 500 }),
  waiting: fc.integer({ min: 0, max: 500 }),
});
const moreArb: fc.Arbitrary<Demand> = fc.record({
  prompt: extra,
  generation: extra,
  panicPrompt: extra,
  panicGeneration: extra,
  running: fc.integer({ min: 0, max: 100 }),
  waiting: fc.integer({ min: 0, max: 100 }),
});

const add = (a: Demand, b: Demand): Demand => ({
  prompt: a.prompt + b.prompt,
  generation: a.generation + b.generation,
  panicPrompt: a.panicPrompt + b.panicPrompt,
  panicGeneration: a.panicGeneration + b.panicGeneration,
  running: a.running + b.running,
  waiting: a.waiting + b.waiting,
});

interface Context {
  readonly kind: TokenKind;
  readonly current: number;
  readonly ready: number;
  readonly signalState: SignalState;
  readonly ttft: number | undefined;
  readonly itl: number | undefined;
}

const contextArb: fc.Arbitrary<Context> = fc.record({
  kind: fc.constantFrom(...tokenKinds),
  current: fc.integer({ min: 1, max: 40 }),
  ready: fc.integer({ min: 0, max: 40 }),
  signalState: fc.constantFrom<SignalState>("Fresh", "Missing"),
  ttft: optionalLatency(2000),
  itl: optionalLatency(200),
});

function observationOf(ctx: Context, d: Demand): RoleObservation {
  return {
    readyReplicas: ctx.ready,
    sampledReplicas: ctx.ready,
    signalState: ctx.signalState,
    promptTokensPerSecond: d.prompt,
    generationTokensPerSecond: d.generation,
    panicPromptTokensPerSecond: d.panicPrompt,
    panicGenerationTokensPerSecond: d.panicGeneration,
    runningRequests: d.running,
    waitingRequests: d.waiting,
    ...(ctx.ttft === undefined ? {} : { ttftMilliseconds: ctx.ttft }),
    ...(ctx.itl === undefined ? {} : { itlMilliseconds: ctx.itl }),
  };
}

const roleOf = (ctx: Context, obs: RoleObservation): AlgorithmRoleInput => ({
  name: "server",
  kind: ctx.kind,
  currentReplicas: ctx.current,
  observation: obs,
});

/** Filter state after a random demand history ending 15 s before the pass under test. */
function historyState(s: ScalerSpec, kind: TokenKind, history: readonly number[]): readonly PredictorStatus[] {
  let predictors: readonly PredictorStatus[] = [];
  history.forEach((value, i) => {
    const obs = observationOf(
      { kind, current: 4, ready: 4, signalState: "Fresh", ttft: 100, itl: 10 },
      {
        prompt: value,
        generation: value / 2,
        panicPrompt: value,
        panicGeneration: value / 2,
        running: 1,
        waiting: 0,
      },
    );
    predictors = run(
      s,
      [roleOf({ kind, current: 4, ready: 4, signalState: "Fresh", ttft: 100, itl: 10 }, obs)],
      predictors,
      t0Ms - (history.length - i) * 15_000,
    ).predictors;
  });
  return predictors;
}

describe("property: more demand never lowers a recommendation", () => {
  it("TokenThroughput", () => {
    fc.assert(
      fc.property(contextArb, demandArb, moreArb, (ctx, base, more) => {
        const low = recommendationOf(run(tokenThroughputSpec, [roleOf(ctx, observationOf(ctx, base))]), "server");
        const high = recommendationOf(
          run(tokenThroughputSpec, [roleOf(ctx, observationOf(ctx, add(base, more)))]),
          "server",
        );
        expect(high.replicas).toBeGreaterThanOrEqual(low.replicas);
      }),
      { numRuns: 500 },
    );
  });

  it("Predictive, from the same filter state", () => {
    fc.assert(
      fc.property(
        contextArb,
        demandArb,
        moreArb,
        fc.array(fc.double({ min: 0, max: 30_000, noNaN: true }), { maxLength: 12 }),
        fc.integer({ min: 1, max: 8 }),
        (ctx, base, more, history, minPoints) => {
          const s = predictiveSpec(minPoints);
          const predictors = historyState(s, ctx.kind, history);
          const low = recommendationOf(run(s, [roleOf(ctx, observationOf(ctx, base))], predictors), "server");
          const high = recommendationOf(
            run(s, [roleOf(ctx, observationOf(ctx, add(base, more)))], predictors),
            "server",
          );
          expect(high.replicas).toBeGreaterThanOrEqual(low.replicas);
        },
      ),
      { numRuns: 300 },
    );
  });

  it("Proportional, for every metric", () => {
    fc.assert(
      fc.property(
        contextArb,
        demandArb,
        moreArb,
        fc.constantFrom(...proportionalMetrics),
        fc.constantFrom("1", "8", "250", "2000"),
        fc.constantFrom("0.05", "0.1", "0.5", "1"),
        (ctx, base, more, metric, target, tolerance) => {
          const s = proportionalSpec(metric, target, tolerance);
          const low = recommendationOf(run(s, [roleOf(ctx, observationOf(ctx, base))]), "server");
          const high = recommendationOf(run(s, [roleOf(ctx, observationOf(ctx, add(base, more)))]), "server");
          expect(high.replicas).toBeGreaterThanOrEqual(low.replicas);
        },
      ),
      { numRuns: 500 },
    );
  });

  it("Proportional near the deadband, while ready and current differ", () => {
    // Small counts make the band edges likely: ready 5, current 10, target 1 puts 4.5 inside (hold 10) and 5.6 outside.
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 12 }),
        fc.integer({ min: 1, max: 12 }),
        // Tenths, spread evenly: fast-check's doubles crowd near zero.
        fc.integer({ min: 0, max: 300 }).map((tenths) => tenths / 10),
        fc.integer({ min: 0, max: 50 }).map((tenths) => tenths / 10),
        fc.constantFrom("0.1", "0.3"),
        (ready, current, running, more, tolerance) => {
          const s = proportionalSpec("RunningRequests", "1", tolerance);
          const obs = (value: number): RoleObservation => ({
            readyReplicas: ready,
            sampledReplicas: ready,
            signalState: "Fresh",
            runningRequests: value,
          });
          const low = recommendationOf(
            run(s, [{ name: "server", kind: "Server", currentReplicas: current, observation: obs(running) }]),
            "server",
          );
          const high = recommendationOf(
            run(s, [{ name: "server", kind: "Server", currentReplicas: current, observation: obs(running + more) }]),
            "server",
          );
          expect(high.replicas).toBeGreaterThanOrEqual(low.replicas);
        },
      ),
      { numRuns: 1000 },
    );
  });
});

describe("property: a Missing or Stale signal never recommends below the current count", () => {
  const partialObservation = fc.record(
    {
      readyReplicas: fc.integer({ min: 0, max: 40 }),
      sampledReplicas: fc.integer({ min: 0, max: 40 }),
      signalState: fc.constantFrom<SignalState>("Missing", "Stale"),
      runningRequests: fc.integer({ min: 0, max: 500 }),
      waitingRequests: fc.integer({ min: 0, max: 500 }),
      promptTokensPerSecond: rate,
      generationTokensPerSecond: rate,
      panicPromptTokensPerSecond: rate,
      panicGenerationTokensPerSecond: rate,
      ttftMilliseconds: fc.double({ min: 1, max: 2000, noNaN: true }),
      itlMilliseconds: fc.double({ min: 1, max: 200, noNaN: true }),
    },
    { requiredKeys: ["readyReplicas", "sampledReplicas", "signalState"] },
  );
  const specs: readonly (readonly [string, ScalerSpec])[] = [
    ["TokenThroughput", tokenThroughputSpec],
    ["Predictive (warm-up)", predictiveSpec(64)],
    ["Predictive (warm)", predictiveSpec(1)],
    ["Proportional QueueDepth", proportionalSpec("QueueDepth", "8", "0.1")],
    ["Proportional TotalTokensPerSecond", proportionalSpec("TotalTokensPerSecond", "2000", "0.1")],
  ];

  it.each(specs)("%s", (_name, s) => {
    fc.assert(
      fc.property(
        partialObservation,
        fc.constantFrom(...tokenKinds),
        fc.integer({ min: 1, max: 40 }),
        fc.array(fc.double({ min: 0, max: 30_000, noNaN: true }), { maxLength: 8 }),
        (obs, kind, current, history) => {
          const predictors = s.algorithm.type === "Predictive" ? historyState(s, kind, history) : [];
          const rec = recommendationOf(
            run(s, [{ name: "server", kind, currentReplicas: current, observation: obs }], predictors),
            "server",
          );
          expect(rec.replicas).toBeGreaterThanOrEqual(current);
          expect(rec.scaleDownHold).toBeDefined();
        },
      ),
      { numRuns: 300 },
    );
  });
});

describe("property: a held role is never recommended below its current count", () => {
  it.each([
    ["TokenThroughput", tokenThroughputSpec],
    ["Predictive", predictiveSpec(2)],
  ] as const)("%s", (_name, s) => {
    fc.assert(
      fc.property(
        contextArb,
        demandArb,
        fc.array(fc.double({ min: 0, max: 30_000, noNaN: true }), { maxLength: 8 }),
        (ctx, d, history) => {
          const predictors = s.algorithm.type === "Predictive" ? historyState(s, ctx.kind, history) : [];
          const rec = recommendationOf(run(s, [roleOf(ctx, observationOf(ctx, d))], predictors), "server");
          if (rec.scaleDownHold !== undefined) expect(rec.replicas).toBeGreaterThanOrEqual(ctx.current);
          expect(rec.replicas).toBeGreaterThanOrEqual(1);
          expect(Number.isInteger(rec.replicas)).toBe(true);
        },
      ),
      { numRuns: 300 },
    );
  });
});

describe("property: the filter's trend converges to the slope of a linear demand", () => {
  it("within 1e-6 after 100 updates at irregular intervals", () => {
    fc.assert(
      fc.property(
        fc.double({ min: 0, max: 100_000, noNaN: true }),
        fc.double({ min: -50, max: 50, noNaN: true }),
        fc.array(fc.integer({ min: 5, max: 300 }), { minLength: 100, maxLength: 100 }),
        fc.record({
          qLevel: fc.double({ min: 0.1, max: 10, noNaN: true }),
          qTrend: fc.double({ min: 0.01, max: 1, noNaN: true }),
          measurementNoise: fc.double({ min: 1, max: 100, noNaN: true }),
        }),
        (intercept, slope, intervalsSeconds, noise: NoiseModel) => {
          let state = initialTrendState(intercept, 0, noise);
          let tSeconds = 0;
          for (const dt of intervalsSeconds) {
            tSeconds += dt;
            state = updateTrend(state, intercept + slope * tSeconds, tSeconds * 1000, noise);
          }
          expect(Math.abs(state.trend - slope)).toBeLessThanOrEqual(1e-6 * Math.max(1, Math.abs(slope)));
          expect(Math.abs(state.level - (intercept + slope * tSeconds))).toBeLessThanOrEqual(
            1e-6 * Math.max(1, Math.abs(intercept + slope * tSeconds)),
          );
        },
      ),
    );
  });
});
