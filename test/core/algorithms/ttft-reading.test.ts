/**
 * The latency guard on queueing (design call 14, `ttft-reading.ts`): a TTFT
 * breach holds and grows only when the p95 queue time of the same pods and
 * window is above half the TTFT target; without queue time from every pod, or
 * with the literal reading selected, TTFT is read as the specification says.
 * ITL is guarded as before.
 */
import { describe, expect, it } from "vitest";
import { algorithmFor } from "../../../src/core/algorithms/index.js";
import { ttftReading, type LatencyGuardReading } from "../../../src/core/algorithms/ttft-reading.js";
import type { AlgorithmRoleInput } from "../../../src/core/algorithms/types.js";
import type { ScalerSpec } from "../../../src/core/api/scaler.js";
import type { RoleKind } from "../../../src/core/api/model-deployment.js";
import type { LatencyBracket, RoleObservation } from "../../../src/core/signals/types.js";
import { brief, observation, recommendationOf, role, spec, t0Ms } from "./fixtures.js";

/** vLLM's first queue-time bucket is (0, 300 ms]: a p95 there is known only to be at most 300 ms. */
const vllmFirstBucket: LatencyBracket = { lowerMilliseconds: 0, upperMilliseconds: 300, estimateMilliseconds: 285 };
/** A p95 in vLLM's (300, 500 ms] bucket. */
const vllmSecondBucket: LatencyBracket = { lowerMilliseconds: 300, upperMilliseconds: 500, estimateMilliseconds: 420 };

/** Light demand (throughput alone asks for 1 replica), p95 TTFT 900 ms against the 500 ms default. */
function breaching(queue: Partial<RoleObservation>, ready = 4, fields: Partial<RoleObservation> = {}): RoleObservation {
  return observation(
    {
      promptTokensPerSecond: 1000,
      panicPromptTokensPerSecond: 1000,
      generationTokensPerSecond: 100,
      panicGenerationTokensPerSecond: 100,
      ttftMilliseconds: 900,
      itlMilliseconds: 20,
      ...queue,
      ...fields,
    },
    ready,
  );
}

const exported = (pods: number, of = pods) => ({ queueTimeExport: { pods, of } });
const compute = { ...exported(4), queueTimeMilliseconds: 300, queueTimeBracket: vllmFirstBucket };
const waiting = { ...exported(4), queueTimeMilliseconds: 500, queueTimeBracket: vllmSecondBucket };

describe("ttftReading", () => {
  it("the literal reading selected: TTFT counts, whatever the queue shows", () => {
    expect(ttftReading(breaching(compute), 500, "literal")).toEqual({
      reading: "literal",
      counts: true,
      message: "literal: selected",
    });
  });

  it("no pod exports queue time: literal, and status says so", () => {
    const got = ttftReading(breaching(exported(0, 4)), 500, "queueing");
    expect(got).toEqual({ reading: "literal", counts: true, message: "literal: no pod exports queue time" });
  });

  it("some pods export it: partial is unknown, so literal", () => {
    const got = ttftReading(breaching({ ...waiting, ...exported(3, 4) }), 500, "queueing");
    expect(got.reading).toBe("literal");
    expect(got.counts).toBe(true);
    expect(got.message).toBe("literal: queue time from 3 of 4 pods is unknown");
  });

  it("exported but no queue observation in the window (vLLM observes at finish): literal", () => {
    expect(ttftReading(breaching(exported(4)), 500, "queueing").message).toBe(
      "literal: no queue-time observation in the window",
    );
  });

  it("no established pod to count: literal", () => {
    expect(ttftReading(breaching({}), 500, "queueing").reading).toBe("literal");
  });

  it("a p95 in vLLM's first bucket shows no waiting: TTFT does not count", () => {
    const got = ttftReading(breaching(compute), 500, "queueing");
    expect(got.reading).toBe("queueing");
    expect(got.counts).toBe(false);
    expect(got.message).toContain("at most 300 ms is not above 250 ms");
  });

  it("a p95 in (300, 500 ms] is above half of 500 ms: TTFT counts", () => {
    const got = ttftReading(breaching(waiting), 500, "queueing");
    expect(got).toMatchObject({ reading: "queueing", counts: true });
    expect(got.message).toContain("420 ms is above 250 ms");
  });

  it("the threshold follows the target: the same 420 ms does not count against 1000 ms", () => {
    expect(ttftReading(breaching(waiting), 1000, "queueing").counts).toBe(false);
    expect(ttftReading(breaching(waiting), 838, "queueing").counts).toBe(true);
    expect(ttftReading(breaching(waiting), 840, "queueing").counts).toBe(false);
  });

  it("without buckets the mean decides", () => {
    const mean = { ...exported(2), queueTimeMilliseconds: 260 };
    expect(ttftReading(breaching(mean), 500, "queueing").counts).toBe(true);
    expect(ttftReading(breaching({ ...mean, queueTimeMilliseconds: 240 }), 500, "queueing").counts).toBe(false);
  });

  it("SGLang's fine buckets: a p95 estimated at 150 ms in (100, 200 ms] does not count, at 260 ms in (200, 500] does", () => {
    const sglang = (estimate: number, lower: number, upper: number) => ({
      ...exported(2),
      queueTimeMilliseconds: upper,
      queueTimeBracket: { lowerMilliseconds: lower, upperMilliseconds: upper, estimateMilliseconds: estimate },
    });
    expect(ttftReading(breaching(sglang(150, 100, 200)), 500, "queueing").counts).toBe(false);
    expect(ttftReading(breaching(sglang(260, 200, 500)), 500, "queueing").counts).toBe(true);
  });
});

const tokenThroughput: ScalerSpec = spec(
  { algorithm: { type: "TokenThroughput", tokenThroughput: { serverTargetTokensPerSecond: "2000" } } },
  ["server"],
);
const predictive: ScalerSpec = spec(
  {
    algorithm: {
      type: "Predictive",
      predictive: {
        tokenThroughput: { serverTargetTokensPerSecond: "2000" },
        serverTokenCapacityPerReplica: "2000",
        minPoints: 1,
      },
    },
  },
  ["server"],
);

/** Read on queueing unless the test names a reading (`"omitted"`: the input leaves it out). */
function recommend(
  s: ScalerSpec,
  obs: RoleObservation,
  reading: LatencyGuardReading | "omitted" = "queueing",
  kind: RoleKind = "Server",
) {
  const roles: AlgorithmRoleInput[] = [role("server", kind, 4, obs)];
  const result = algorithmFor(s.algorithm.type).recommend({
    spec: s,
    roles,
    predictors: [],
    nowMs: t0Ms,
    ...(reading === "omitted" ? {} : { latencyGuardReading: reading }),
  });
  return recommendationOf(result, "server");
}

describe.each([
  { name: "TokenThroughput", s: tokenThroughput },
  { name: "Predictive", s: predictive },
])("$name: the guard on queueing", ({ s }) => {
  it("a TTFT breach that is compute neither grows nor holds: the throughput count (1) stands", () => {
    const got = recommend(s, breaching(compute));
    expect(brief(got).replicas).toBe(1);
    expect(got.scaleDownHold).toBeUndefined();
    expect(got.latencyGuard).toMatch(/^queueing: .*TTFT does not count$/);
  });

  it("the default, with no reading in the input, is queueing: the compute-bound breach does not grow", () => {
    const got = recommend(s, breaching(compute), "omitted");
    expect(brief(got).replicas).toBe(1);
    expect(got.latencyGuard).toMatch(/^queueing: .*TTFT does not count$/);
  });

  it("the same pass with the literal reading selected grows (4 → 5)", () => {
    const got = recommend(s, breaching(compute), "literal");
    expect(brief(got)).toEqual({ replicas: 5, reason: "LatencyGuardScaleUp", hold: "LatencyGuardScaleUp" });
    expect(got.latencyGuard).toBe("literal: selected");
  });

  it("a TTFT breach with material waiting grows as before", () => {
    const got = recommend(s, breaching(waiting));
    expect(brief(got)).toEqual({ replicas: 5, reason: "LatencyGuardScaleUp", hold: "LatencyGuardScaleUp" });
    expect(got.latencyGuard).toMatch(/^queueing: .*TTFT counts$/);
  });

  it("between 1 and 1.2 × the target with material waiting: a hold, no growth", () => {
    const got = recommend(s, breaching(waiting, 4, { ttftMilliseconds: 550 }));
    expect(brief(got)).toEqual({ replicas: 4, reason: "LatencyGuardHold", hold: "LatencyGuardHold" });
  });

  it("ITL is guarded as before: an ITL breach grows though TTFT does not count", () => {
    const got = recommend(s, breaching(compute, 4, { itlMilliseconds: 70 }));
    expect(brief(got)).toEqual({ replicas: 5, reason: "LatencyGuardScaleUp", hold: "LatencyGuardScaleUp" });
  });

  it("where no pod exports queue time the reading is literal: the breach grows", () => {
    const got = recommend(s, breaching(exported(0, 4)));
    expect(brief(got).replicas).toBe(5);
    expect(got.latencyGuard).toBe("literal: no pod exports queue time");
  });

  it("a missing TTFT still holds: a TTFT that does not count is measured, not missing", () => {
    const { ttftMilliseconds: _measured, ...withoutTtft } = breaching(compute);
    const missing = recommend(s, withoutTtft);
    expect(brief(missing)).toMatchObject({ replicas: 4, hold: "LatencyGuardHold" });
    expect(missing.latencyGuard).toBeUndefined();
  });
});

it("a Decode role reads no TTFT and says nothing about it", () => {
  const decode: ScalerSpec = spec(
    { algorithm: { type: "TokenThroughput", tokenThroughput: { decodeTargetTokensPerSecond: "2000" } } },
    ["server"],
  );
  expect(recommend(decode, breaching(compute), "queueing", "Decode").latencyGuard).toBeUndefined();
});
