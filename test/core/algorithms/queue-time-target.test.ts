/**
 * The queue-time target (`queueTimeTargetMilliseconds`, `queue-time-target.ts`): the role's p95 queue
 * time is one more guarded latency, held above its target and grown above 1.2 times it, for the kinds
 * that wait for a first token; unset, or where queue time is unknown, the guard is as before.
 */
import { describe, expect, it } from "vitest";
import { algorithmFor } from "../../../src/core/algorithms/index.js";
import type { AlgorithmRoleInput } from "../../../src/core/algorithms/types.js";
import type { RoleKind } from "../../../src/core/api/model-deployment.js";
import type { ScalerSpec } from "../../../src/core/api/scaler.js";
import type { LatencyBracket, RoleObservation } from "../../../src/core/signals/types.js";
import { brief, observation, recommendationOf, role, spec, t0Ms } from "./fixtures.js";

/** vLLM's queue-time buckets around a second: (800, 1000] and (1000, 1500] ms. */
const bracket = (lower: number, upper: number, estimate: number): LatencyBracket => ({
  lowerMilliseconds: lower,
  upperMilliseconds: upper,
  estimateMilliseconds: estimate,
});

/**
 * Light demand (throughput alone asks for 1 replica of 4), TTFT 3,000 ms well within a 6,000 ms target
 * (long prompts), ITL within its target, and the p95 queue time given.
 */
function waiting(queueMs: number, queueBracket: LatencyBracket, exportedPods = 4): RoleObservation {
  return observation(
    {
      promptTokensPerSecond: 1000,
      panicPromptTokensPerSecond: 1000,
      generationTokensPerSecond: 100,
      panicGenerationTokensPerSecond: 100,
      ttftMilliseconds: 3000,
      itlMilliseconds: 20,
      queueTimeMilliseconds: queueMs,
      queueTimeBracket: queueBracket,
      queueTimeExport: { pods: exportedPods, of: 4 },
    },
    4,
  );
}

const tokenThroughputBlock = (queueTarget?: string) => ({
  serverTargetTokensPerSecond: "2000",
  prefillTargetTokensPerSecond: "2000",
  decodeTargetTokensPerSecond: "2000",
  ttftTargetMilliseconds: "6000",
  ...(queueTarget === undefined ? {} : { queueTimeTargetMilliseconds: queueTarget }),
});
const tokenThroughput = (queueTarget?: string): ScalerSpec =>
  spec({ algorithm: { type: "TokenThroughput", tokenThroughput: tokenThroughputBlock(queueTarget) } });
const predictive = (queueTarget?: string): ScalerSpec =>
  spec({
    algorithm: {
      type: "Predictive",
      predictive: {
        tokenThroughput: tokenThroughputBlock(queueTarget),
        serverTokenCapacityPerReplica: "2000",
        minPoints: 1,
      },
    },
  });

function recommend(s: ScalerSpec, obs: RoleObservation, kind: RoleKind = "Server") {
  const roles: AlgorithmRoleInput[] = [role("server", kind, 4, obs)];
  const result = algorithmFor(s.algorithm.type).recommend({ spec: s, roles, predictors: [], nowMs: t0Ms });
  return recommendationOf(result, "server");
}

const above12 = waiting(1500, bracket(1000, 1500, 1400));
const between = waiting(1500, bracket(1000, 1500, 1100));
const within = waiting(1000, bracket(800, 1000, 900));

describe.each([
  { name: "TokenThroughput", make: tokenThroughput },
  { name: "Predictive", make: predictive },
])("$name with a queue-time target of 1,000 ms", ({ make }) => {
  it("above 1.2 × the target grows one replica (4 → 5), though TTFT is within its target", () => {
    const got = recommend(make("1000"), above12);
    expect(brief(got)).toEqual({ replicas: 5, reason: "LatencyGuardScaleUp", hold: "LatencyGuardScaleUp" });
    expect(got.latencyGuard).toMatch(/; p95 queue time 1400 ms is above its target 1000 ms$/);
  });

  it("between 1 and 1.2 × the target holds (4), no growth", () => {
    expect(brief(recommend(make("1000"), between))).toEqual({
      replicas: 4,
      reason: "LatencyGuardHold",
      hold: "LatencyGuardHold",
    });
  });

  it("within the target the throughput count (1) stands", () => {
    const got = recommend(make("1000"), within);
    expect(brief(got).replicas).toBe(1);
    expect(got.scaleDownHold).toBeUndefined();
    expect(got.latencyGuard).toMatch(/; p95 queue time 900 ms is within its target 1000 ms$/);
  });

  it("without the target the same waiting is not guarded: the throughput count (1) stands", () => {
    const got = recommend(make(), above12);
    expect(brief(got).replicas).toBe(1);
    expect(got.latencyGuard).not.toMatch(/its target/);
  });

  it("where not every pod exports queue time the target is not judged (TTFT is read literally instead)", () => {
    const got = recommend(make("1000"), waiting(1500, bracket(1000, 1500, 1400), 3));
    expect(brief(got).replicas).toBe(1);
    expect(got.latencyGuard).toBe("literal: queue time from 3 of 4 pods is unknown");
  });
});

it("a Decode role waits for no first token: its queue time is not judged against the target", () => {
  expect(brief(recommend(tokenThroughput("1000"), above12, "Decode")).replicas).toBe(1);
});

it("a Prefill role is judged on it as a Server role is", () => {
  expect(brief(recommend(tokenThroughput("1000"), above12, "Prefill")).replicas).toBe(5);
});

it("admission names the field and the value of a target that is not positive", () => {
  expect(() => tokenThroughput("0")).toThrow(/queueTimeTargetMilliseconds/);
});
