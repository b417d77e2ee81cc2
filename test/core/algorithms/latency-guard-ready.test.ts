/**
 * The latency guard's "at least one more replica" counts from the replicas
 * serving now (the role's ready replicas), not from the desired count: a
 * breach adds one replica, and the next is added only once the earlier ones
 * are ready and latency still breaches. Replicas still loading weights cannot
 * lower latency, so asking for more while they start only overshoots.
 */
import { describe, expect, it } from "vitest";
import type { ScalerSpec } from "../../../src/core/api/scaler.js";
import type { RoleObservation } from "../../../src/core/signals/types.js";
import { brief, observation, recommendationOf, role, run, spec } from "./fixtures.js";
import { simulate } from "./simulation.js";

const tokenThroughputSpec: ScalerSpec = spec(
  { algorithm: { type: "TokenThroughput", tokenThroughput: { prefillTargetTokensPerSecond: "2000" } } },
  ["prefill"],
);
/** minPoints 1: the forecast path decides from the first pass, not the warm-up fallback. */
const predictiveSpec: ScalerSpec = spec(
  {
    algorithm: {
      type: "Predictive",
      predictive: {
        tokenThroughput: { prefillTargetTokensPerSecond: "2000" },
        prefillTokenCapacityPerReplica: "2000",
        minPoints: 1,
      },
    },
  },
  ["prefill"],
);

/** Light demand (throughput alone asks for 1 replica), TTFT 750 ms against 500 ms: a breach of 1.5. */
const breaching = (ready: number, fields: Partial<RoleObservation> = {}): RoleObservation =>
  observation(
    { promptTokensPerSecond: 1000, panicPromptTokensPerSecond: 1000, ttftMilliseconds: 750, ...fields },
    ready,
  );

const algorithms = [
  { name: "TokenThroughput", s: tokenThroughputSpec },
  { name: "Predictive", s: predictiveSpec },
];

function recommend(s: ScalerSpec, current: number, obs: RoleObservation) {
  return brief(recommendationOf(run(s, [role("prefill", "Prefill", current, obs)]), "prefill"));
}

describe.each(algorithms)("$name: the latency guard counts from the ready replicas", ({ s }) => {
  it("ready 3, current 5, breach 1.5: holds at 5 while two replicas start, no growth", () => {
    expect(recommend(s, 5, breaching(3))).toEqual({
      replicas: 5,
      reason: "LatencyGuardHold",
      hold: "LatencyGuardHold",
    });
  });

  it("ready 5, current 5, breach 1.5: one more replica", () => {
    expect(recommend(s, 5, breaching(5))).toEqual({
      replicas: 6,
      reason: "LatencyGuardScaleUp",
      hold: "LatencyGuardScaleUp",
    });
  });

  it("ready 4, current 5: the one more is already starting, hold at 5", () => {
    expect(recommend(s, 5, breaching(4)).replicas).toBe(5);
  });

  it("ready above current (a scale-down not yet applied): at most current + 1", () => {
    expect(recommend(s, 5, breaching(7))).toEqual({
      replicas: 6,
      reason: "LatencyGuardScaleUp",
      hold: "LatencyGuardScaleUp",
    });
  });

  it("throughput-driven growth still passes while replicas start", () => {
    // ceil(11000 / 2000) = 6; under the panic threshold of 2 × 3 ready × 2000.
    const heavy = breaching(3, { promptTokensPerSecond: 11000, panicPromptTokensPerSecond: 11000 });
    const got = recommend(s, 5, heavy);
    expect(got.replicas).toBe(6);
    expect(got.hold).toBe("LatencyGuardHold");
  });

  it("a breach at or under 1.2 × with replicas starting still only holds", () => {
    expect(recommend(s, 5, breaching(3, { ttftMilliseconds: 550 }))).toEqual({
      replicas: 5,
      reason: "LatencyGuardHold",
      hold: "LatencyGuardHold",
    });
  });
});

describe.each(algorithms)("$name: a steady breach with a 4-pass cold start", ({ s }) => {
  // Demand 1000 tok/s (1 replica's worth), TTFT always 750 ms: the breach never clears.
  const passes = simulate(s, () => 1000, {
    passes: 20,
    startReplicas: 2,
    readyDelayPasses: 4,
    ttftMilliseconds: () => 750,
  });

  it("adds one replica, waits until it is ready, then adds the next", () => {
    const counts = passes.map((p) => p.recommendation.replicas);
    // Each step is one replica, and a new step comes only when every earlier one is ready.
    for (const [i, pass] of passes.entries()) {
      const grew = pass.recommendation.replicas > pass.currentReplicas;
      if (grew) {
        expect(pass.recommendation.replicas).toBe(pass.currentReplicas + 1);
        expect(pass.readyReplicas).toBe(pass.currentReplicas);
      } else {
        expect(pass.recommendation.replicas, `pass ${i}`).toBe(pass.currentReplicas);
      }
    }
    // 20 passes with a 4-pass start: 2 → 6 at most, where the old reading reached 22.
    expect(counts.at(-1)).toBeGreaterThanOrEqual(5);
    expect(counts.at(-1)).toBeLessThanOrEqual(6);
  });
});
