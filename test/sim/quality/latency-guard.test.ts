/**
 * Acceptance of the guard on queueing (design call 14): a trace whose every
 * prompt takes longer than the TTFT target to prefill, at low load. Every TTFT
 * breaches the 500 ms target by its own compute, which no replica shortens;
 * the engines' queue time shows no waiting. Read on queueing, the fleet stays
 * at the count its demand asks for; read literally (the specification's words,
 * the default), the same run climbs to `maxReplicas`.
 */
import { describe, expect, it } from "vitest";
import type { LatencyGuardReading } from "../../../src/core/algorithms/ttft-reading.js";
import type { AlgorithmType } from "../../../src/core/api/scaler.js";
import { defaultCapacity } from "../../../src/sim/engines/model.js";
import { mdsPolicy } from "../../../src/sim/quality/policies/mds.js";
import { runPolicy } from "../../../src/sim/quality/run.js";
import { defaultScaler, replicaFigures } from "../../../src/sim/quality/scalers.js";
import type { Trace } from "../../../src/sim/quality/traces.js";

/** 6,000-token prompts (0.75 s of prefill at 8,000 tokens/s) every 2 s for 30 minutes, 100 output tokens each. */
const longPrompts: Trace = {
  name: "long-prompts",
  requests: Array.from({ length: 900 }, (_, i) => ({
    arrivalSeconds: 1 + 2 * i,
    promptTokens: 6000,
    outputTokens: 100,
  })),
  spanSeconds: 1800,
  notes: [],
};
const maxReplicas = 16;

function run(algorithm: AlgorithmType, reading: LatencyGuardReading) {
  const spec = defaultScaler({ algorithm, figures: replicaFigures(longPrompts, defaultCapacity), maxReplicas });
  const guards: string[] = [];
  const desired: number[] = [];
  const policy = mdsPolicy({
    spec,
    initialReplicas: 1,
    latencyGuardReading: reading,
    onPass: (result) => {
      const role = result.status.roles?.[0];
      if (role?.latencyGuard !== undefined) guards.push(role.latencyGuard);
      desired.push(role?.constrainedReplicas ?? NaN);
    },
  });
  const result = runPolicy(longPrompts, policy, { seed: 1 });
  return { result, guards, desired };
}

describe.each<AlgorithmType>(["TokenThroughput", "Predictive"])(
  "%s, prompts longer than the TTFT target",
  (algorithm) => {
    it("read on queueing, ends at the demand-driven count (1); read literally, reaches maxReplicas", () => {
      // Demand: 3,000 prompt + 50 output tokens/s against 80 % of a replica's 8,133 tokens/s → 1 replica.
      const queueing = run(algorithm, "queueing");
      const literal = run(algorithm, "literal");

      expect(queueing.desired.at(-1)).toBe(1);
      expect(queueing.result.maxReplicas).toBeLessThanOrEqual(2);
      // Every pass read TTFT on queueing and found no waiting worth a replica.
      expect(queueing.guards.length).toBeGreaterThan(100);
      for (const guard of queueing.guards) expect(guard).toMatch(/^queueing: .*TTFT does not count$/);

      expect(Math.max(...literal.desired)).toBe(maxReplicas);
      expect(literal.desired.at(-1)).toBe(maxReplicas);
      expect(literal.guards.every((g) => g === "literal: selected")).toBe(true);

      // The same SLO either way: the prompts' own compute is the TTFT, replicas do not change it.
      expect(queueing.result.attainment.both).toBeGreaterThanOrEqual(literal.result.attainment.both - 0.001);
      expect(queueing.result.gpuHours * 8).toBeLessThan(literal.result.gpuHours);
    });
  },
);
