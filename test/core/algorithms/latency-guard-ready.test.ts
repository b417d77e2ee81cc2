/**
 * What the latency guard's "at least one more replica" counts from: the
 * desired count (current + 1), not the replicas serving now (ready + 1).
 * The ready + 1 reading was built and measured with `npm run bench:quality`
 * and rejected: it cut the GPU-hours on the conversation and Mooncake traces
 * but dropped the Azure code trace at the shipped defaults from 99.71 % to
 * 91.00 % attainment (docs/quality.md, "The latency guard's reading,
 * measured"). These tests pin the kept reading, so changing it takes the
 * table, not just a test edit.
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

describe.each(algorithms)("$name: the latency guard counts from the desired count", ({ s }) => {
  it("ready 3, current 5, breach 1.5: 6, while two replicas are still starting", () => {
    expect(recommend(s, 5, breaching(3))).toEqual({
      replicas: 6,
      reason: "LatencyGuardScaleUp",
      hold: "LatencyGuardScaleUp",
    });
  });

  it("ready 5, current 5, breach 1.5: 6", () => {
    expect(recommend(s, 5, breaching(5))).toEqual({
      replicas: 6,
      reason: "LatencyGuardScaleUp",
      hold: "LatencyGuardScaleUp",
    });
  });

  it("a breach at or under 1.2 × with replicas starting only holds", () => {
    expect(recommend(s, 5, breaching(3, { ttftMilliseconds: 550 }))).toEqual({
      replicas: 5,
      reason: "LatencyGuardHold",
      hold: "LatencyGuardHold",
    });
  });

  it("throughput-driven growth above current + 1 passes, with the guard's hold", () => {
    // ceil(13000 / 2000) = 7; under the panic threshold of 2 × 4 ready × 2000.
    const heavy = breaching(4, { promptTokensPerSecond: 13000, panicPromptTokensPerSecond: 13000 });
    const got = recommend(s, 5, heavy);
    expect(got.replicas).toBe(7);
    expect(got.hold).toBe("LatencyGuardScaleUp");
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

  it("adds one replica every pass, whether or not the earlier ones are ready", () => {
    for (const pass of passes) expect(pass.recommendation.replicas).toBe(pass.currentReplicas + 1);
    // Replicas were requested while others were still starting: the cost the ready + 1 reading avoided.
    expect(passes.some((p) => p.readyReplicas < p.currentReplicas)).toBe(true);
    expect(passes.at(-1)?.recommendation.replicas).toBe(22);
  });
});
