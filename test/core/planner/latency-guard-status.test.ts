/**
 * The latency guard's reading reaches status: `plan()` takes it as an input
 * (`latencyGuardReading`, the controller's `--latency-guard-reading`, queueing
 * when absent), and each role guarded on TTFT says in `latencyGuard` which
 * reading applied and why.
 */
import { describe, expect, it } from "vitest";
import { plan } from "../../../src/core/planner/plan.js";
import type { PlanInput } from "../../../src/core/planner/types.js";
import type { RoleObservation } from "../../../src/core/signals/types.js";
import { inputOf, roleOf, specOf, targetOf } from "./fixtures.js";

const spec = specOf({
  roles: [{ name: "server", minReplicas: 1, maxReplicas: 10 }],
  algorithm: { type: "TokenThroughput", tokenThroughput: { serverTargetTokensPerSecond: "2000" } },
});

/** Light demand (1 replica's worth), TTFT 900 ms against 500 ms, queue p95 in vLLM's first bucket. */
const computeBound: RoleObservation = {
  readyReplicas: 4,
  sampledReplicas: 4,
  signalState: "Fresh",
  promptTokensPerSecond: 1000,
  panicPromptTokensPerSecond: 1000,
  generationTokensPerSecond: 100,
  panicGenerationTokensPerSecond: 100,
  ttftMilliseconds: 1000,
  ttftBracket: { lowerMilliseconds: 750, upperMilliseconds: 1000, estimateMilliseconds: 900 },
  itlMilliseconds: 20,
  queueTimeMilliseconds: 300,
  queueTimeBracket: { lowerMilliseconds: 0, upperMilliseconds: 300, estimateMilliseconds: 285 },
  queueTimeExport: { pods: 4, of: 4 },
};

function input(extra: Partial<PlanInput> = {}): PlanInput {
  const { algorithm: _echo, ...rest } = inputOf({
    spec,
    target: targetOf([{ name: "server", replicas: 4 }]),
    observations: { server: computeBound },
  });
  return { ...rest, ...extra };
}

describe("the latency guard's reading in status", () => {
  it.each([{ latencyGuardReading: "queueing" as const }, {}])(
    "read on queueing (selected, or by default: %j), the compute-bound breach does not grow, and status says why",
    (extra) => {
      const role = roleOf(plan(input(extra)), "server");
      expect(role?.rawRecommendedReplicas).toBe(1);
      expect(role?.queueTimeMilliseconds).toBe("300");
      expect(role?.latencyGuard).toBe(
        "queueing: p95 queue time at most 300 ms is not above 250 ms (half the TTFT target), TTFT does not count",
      );
    },
  );

  it("the literal reading, selected, grows on the same pass and says so", () => {
    const role = roleOf(plan(input({ latencyGuardReading: "literal" })), "server");
    expect(role?.rawRecommendedReplicas).toBe(5);
    expect(role?.reason).toBe("LatencyGuardScaleUp");
    expect(role?.latencyGuard).toBe("literal: selected");
  });
});
