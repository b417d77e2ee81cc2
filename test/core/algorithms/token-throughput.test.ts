import { describe, expect, it } from "vitest";
import type { RoleKind } from "../../../src/core/api/model-deployment.js";
import type { PredictorStatus } from "../../../src/core/api/scaler.js";
import { PredictorStatusSchema } from "../../../src/core/api/scaler.js";
import type { RoleObservation } from "../../../src/core/signals/types.js";
import { brief, observation, recommendationOf, role, run, spec, t0Ms } from "./fixtures.js";

const pdSpec = (extra: Record<string, string> = {}) =>
  spec(
    {
      algorithm: {
        type: "TokenThroughput",
        tokenThroughput: {
          prefillTargetTokensPerSecond: "2000",
          decodeTargetTokensPerSecond: "800",
          serverTargetTokensPerSecond: "2000",
          ...extra,
        },
      },
    },
    ["server"],
  );

function recommend(kind: RoleKind, current: number, obs: RoleObservation, extra: Record<string, string> = {}) {
  return brief(recommendationOf(run(pdSpec(extra), [role("server", kind, current, obs)]), "server"));
}

/** A prefill observation with both windows and a healthy TTFT unless overridden. */
const prefill = (stable: number, panic: number, fields: Partial<RoleObservation> = {}, ready = 2): RoleObservation =>
  observation(
    {
      promptTokensPerSecond: stable,
      panicPromptTokensPerSecond: panic,
      generationTokensPerSecond: 0,
      ttftMilliseconds: 300,
      ...fields,
    },
    ready,
  );

describe("TokenThroughput: throughput and panic (Prefill, 2000 tok/s per replica, threshold 2)", () => {
  it.each([
    {
      name: "ceil(2400 / 2000) = 2",
      obs: prefill(2400, 2600),
      want: { replicas: 2, reason: "TokenThroughput", hold: undefined },
    },
    {
      name: "shrinks when demand falls: ceil(1900 / 2000) = 1",
      obs: prefill(1900, 1900),
      want: { replicas: 1, reason: "TokenThroughput", hold: undefined },
    },
    {
      name: "grows with demand: ceil(7000 / 2000) = 4",
      obs: prefill(7000, 7500),
      want: { replicas: 4, reason: "TokenThroughput", hold: undefined },
    },
    {
      name: "panic demand just under 2 × 2 × 2000: no panic",
      obs: prefill(1000, 7999),
      want: { replicas: 1, reason: "TokenThroughput", hold: undefined },
    },
    {
      name: "panic at 2 × 2 × 2000: the larger recommendation, no scale-down",
      obs: prefill(1000, 8000),
      want: { replicas: 4, reason: "Panic", hold: "Panic" },
    },
    {
      name: "panic keeps a larger stable recommendation",
      obs: prefill(11000, 9000),
      want: { replicas: 6, reason: "Panic", hold: "Panic" },
    },
  ])("$name", ({ obs, want }) => {
    expect(recommend("Prefill", 2, obs)).toEqual(want);
  });

  it("panic never recommends below the current count", () => {
    // current 10 but only 2 ready: panic at 8000 asks for 4, and holds 10.
    expect(recommend("Prefill", 10, prefill(1000, 8000))).toEqual({ replicas: 10, reason: "Panic", hold: "Panic" });
  });

  it("a panic threshold of 1 starts panic at capacity", () => {
    expect(recommend("Prefill", 2, prefill(1000, 4000), { panicThreshold: "1" })).toEqual({
      replicas: 2,
      reason: "Panic",
      hold: "Panic",
    });
    expect(recommend("Prefill", 2, prefill(1000, 3999), { panicThreshold: "1" }).reason).toBe("TokenThroughput");
  });

  it("reports the demand figures and the panic flag", () => {
    const rec = recommendationOf(run(pdSpec(), [role("server", "Prefill", 2, prefill(1000, 8000))]), "server");
    expect(rec.panic).toBe(true);
    expect(rec.demand).toEqual({
      stableTokensPerSecond: 1000,
      panicTokensPerSecond: 8000,
      capacityPerReplicaTokensPerSecond: 2000,
    });
  });
});

describe("TokenThroughput: capacity per kind", () => {
  it("Prefill reads the cache-missed prompt rate only", () => {
    expect(recommend("Prefill", 1, prefill(4000, 4000, { generationTokensPerSecond: 99999 }), {}).replicas).toBe(2);
  });

  it("Decode reads the generation rate against the decode capacity and guards ITL", () => {
    const obs = observation({
      promptTokensPerSecond: 99999,
      generationTokensPerSecond: 1700,
      panicGenerationTokensPerSecond: 1700,
      itlMilliseconds: 40,
    });
    expect(recommend("Decode", 2, obs)).toEqual({ replicas: 3, reason: "TokenThroughput", hold: undefined });
  });

  it("Server adds prompt and generation against the server capacity", () => {
    const obs = observation({
      promptTokensPerSecond: 3000,
      generationTokensPerSecond: 1500,
      ttftMilliseconds: 100,
      itlMilliseconds: 10,
    });
    expect(recommend("Server", 2, obs)).toEqual({ replicas: 3, reason: "TokenThroughput", hold: undefined });
  });

  it("Server with one of its two rates missing waits for metrics", () => {
    const obs = observation({ promptTokensPerSecond: 3000, ttftMilliseconds: 100, itlMilliseconds: 10 });
    expect(recommend("Server", 2, obs)).toEqual({
      replicas: 2,
      reason: "WaitingForMetrics",
      hold: "WaitingForMetrics",
    });
  });
});

describe("TokenThroughput: latency guard (TTFT target 500 ms, ITL 50 ms)", () => {
  it.each([
    {
      name: "at the target: no guard",
      kind: "Prefill",
      obs: prefill(1000, 1000, { ttftMilliseconds: 500 }),
      want: { replicas: 1, reason: "TokenThroughput", hold: undefined },
    },
    {
      name: "above the target: holds scale-down",
      kind: "Prefill",
      obs: prefill(1000, 1000, { ttftMilliseconds: 550 }),
      want: { replicas: 2, reason: "LatencyGuardHold", hold: "LatencyGuardHold" },
    },
    {
      name: "at 1.2 × target: still only a hold",
      kind: "Prefill",
      obs: prefill(1000, 1000, { ttftMilliseconds: 600 }),
      want: { replicas: 2, reason: "LatencyGuardHold", hold: "LatencyGuardHold" },
    },
    {
      name: "above 1.2 × target: one more replica",
      kind: "Prefill",
      obs: prefill(1000, 1000, { ttftMilliseconds: 601 }),
      want: { replicas: 3, reason: "LatencyGuardScaleUp", hold: "LatencyGuardScaleUp" },
    },
    {
      name: "above the target with throughput growth: growth, no scale-down",
      kind: "Prefill",
      obs: prefill(7000, 7000, { ttftMilliseconds: 550 }),
      want: { replicas: 4, reason: "TokenThroughput", hold: "LatencyGuardHold" },
    },
    {
      name: "above 1.2 × with larger throughput growth: throughput decides",
      kind: "Prefill",
      obs: prefill(9000, 7000, { ttftMilliseconds: 900 }),
      want: { replicas: 5, reason: "TokenThroughput", hold: "LatencyGuardScaleUp" },
    },
    {
      name: "missing TTFT: holds scale-down",
      kind: "Prefill",
      obs: observation({ promptTokensPerSecond: 1000, panicPromptTokensPerSecond: 1000, generationTokensPerSecond: 0 }),
      want: { replicas: 2, reason: "LatencyGuardHold", hold: "LatencyGuardHold" },
    },
    {
      name: "missing TTFT: lets throughput grow the role",
      kind: "Prefill",
      obs: observation({ promptTokensPerSecond: 7000, panicPromptTokensPerSecond: 7000, generationTokensPerSecond: 0 }),
      want: { replicas: 4, reason: "TokenThroughput", hold: "LatencyGuardHold" },
    },
    {
      name: "an Idle role has no latency to miss",
      kind: "Prefill",
      obs: observation({ signalState: "Idle", promptTokensPerSecond: 0, panicPromptTokensPerSecond: 0 }),
      want: { replicas: 1, reason: "TokenThroughput", hold: undefined },
    },
    {
      name: "Decode guards ITL, not TTFT",
      kind: "Decode",
      obs: observation({
        generationTokensPerSecond: 700,
        panicGenerationTokensPerSecond: 700,
        ttftMilliseconds: 99999,
        itlMilliseconds: 61,
      }),
      want: { replicas: 3, reason: "LatencyGuardScaleUp", hold: "LatencyGuardScaleUp" },
    },
    {
      name: "Server takes the larger relative breach (ITL 65 / 50 = 1.3 over TTFT 550 / 500 = 1.1)",
      kind: "Server",
      obs: observation({
        promptTokensPerSecond: 500,
        generationTokensPerSecond: 500,
        ttftMilliseconds: 550,
        itlMilliseconds: 65,
      }),
      want: { replicas: 3, reason: "LatencyGuardScaleUp", hold: "LatencyGuardScaleUp" },
    },
    {
      name: "Server with ITL missing and TTFT healthy: hold",
      kind: "Server",
      obs: observation({ promptTokensPerSecond: 500, generationTokensPerSecond: 500, ttftMilliseconds: 100 }),
      want: { replicas: 2, reason: "LatencyGuardHold", hold: "LatencyGuardHold" },
    },
    {
      name: "Server with ITL missing and TTFT above 1.2 ×: scale up",
      kind: "Server",
      obs: observation({ promptTokensPerSecond: 500, generationTokensPerSecond: 500, ttftMilliseconds: 700 }),
      want: { replicas: 3, reason: "LatencyGuardScaleUp", hold: "LatencyGuardScaleUp" },
    },
  ] as const)("$name", ({ kind, obs, want }) => {
    expect(recommend(kind, 2, obs as RoleObservation)).toEqual(want);
  });

  it("custom targets move the guard", () => {
    expect(
      recommend("Prefill", 2, prefill(1000, 1000, { ttftMilliseconds: 550 }), { ttftTargetMilliseconds: "1000" })
        .reason,
    ).toBe("TokenThroughput");
  });
});

describe("TokenThroughput: unknown signals never shrink a role", () => {
  it.each([
    {
      name: "no ready replica",
      obs: prefill(9000, 9000, {}, 0),
      want: { replicas: 3, reason: "NoReadyReplicas", hold: "NoReadyReplicas" },
    },
    {
      name: "Missing without rates",
      obs: observation({ signalState: "Missing", runningRequests: 5 }),
      want: { replicas: 3, reason: "WaitingForMetrics", hold: "WaitingForMetrics" },
    },
    {
      name: "Stale",
      obs: { readyReplicas: 2, sampledReplicas: 0, signalState: "Stale" } as RoleObservation,
      want: { replicas: 3, reason: "WaitingForMetrics", hold: "WaitingForMetrics" },
    },
    {
      name: "Missing stable window with low panic rates: hold",
      obs: observation({ signalState: "Missing", panicPromptTokensPerSecond: 100, ttftMilliseconds: 100 }),
      want: { replicas: 3, reason: "WaitingForMetrics", hold: "WaitingForMetrics" },
    },
    {
      name: "Missing stable window with high panic rates: partial readings justify growth",
      obs: observation({ signalState: "Missing", panicPromptTokensPerSecond: 7000, ttftMilliseconds: 100 }),
      want: { replicas: 4, reason: "TokenThroughput", hold: "WaitingForMetrics" },
    },
  ])("$name", ({ obs, want }) => {
    expect(recommend("Prefill", 3, obs)).toEqual(want);
  });
});

describe("TokenThroughput: encode roles follow their ratio", () => {
  const epdSpec = (ratio: {
    numeratorRole: string;
    denominatorRole: string;
    target?: string;
    min?: string;
    max?: string;
  }) =>
    spec(
      {
        algorithm: {
          type: "TokenThroughput",
          tokenThroughput: { prefillTargetTokensPerSecond: "2000", decodeTargetTokensPerSecond: "800" },
        },
        ratios: [{ numeratorRole: "prefill", denominatorRole: "decode", target: "1", min: "0.5", max: "2" }, ratio],
      },
      ["encode", "prefill", "decode"],
    );
  const roles = (prefillObs: RoleObservation) => [
    role("encode", "Encode", 1, observation()),
    role("prefill", "Prefill", 2, prefillObs),
    role("decode", "Decode", 2, observation({ generationTokensPerSecond: 1600, itlMilliseconds: 20 })),
  ];

  it.each([
    {
      name: "encode / prefill = 0.5: ceil(0.5 × 5)",
      ratio: { numeratorRole: "encode", denominatorRole: "prefill", target: "0.5" },
      want: 3,
    },
    {
      name: "prefill / encode = 2, the same coupling written the other way",
      ratio: { numeratorRole: "prefill", denominatorRole: "encode", target: "2" },
      want: 3,
    },
    {
      name: "no target: the middle of min and max (0.25 and 0.75)",
      ratio: { numeratorRole: "encode", denominatorRole: "prefill", min: "0.25", max: "0.75" },
      want: 3,
    },
    {
      name: "only a minimum: the minimum",
      ratio: { numeratorRole: "encode", denominatorRole: "prefill", min: "0.2" },
      want: 1,
    },
  ])("$name", ({ ratio, want }) => {
    const result = run(epdSpec(ratio), roles(prefill(9000, 7000)));
    expect(brief(recommendationOf(result, "prefill"))).toEqual({
      replicas: 5,
      reason: "TokenThroughput",
      hold: undefined,
    });
    expect(brief(recommendationOf(result, "encode"))).toEqual({
      replicas: want,
      reason: "RatioCoupled",
      hold: undefined,
    });
  });

  it("a held driver holds its encode role too", () => {
    const result = run(epdSpec({ numeratorRole: "encode", denominatorRole: "prefill", target: "0.1" }), [
      role("encode", "Encode", 4, observation()),
      role("prefill", "Prefill", 2, prefill(1000, 8000)),
      role("decode", "Decode", 2, observation({ generationTokensPerSecond: 1600, itlMilliseconds: 20 })),
    ]);
    expect(brief(recommendationOf(result, "prefill"))).toEqual({ replicas: 4, reason: "Panic", hold: "Panic" });
    expect(brief(recommendationOf(result, "encode"))).toEqual({ replicas: 4, reason: "RatioCoupled", hold: "Panic" });
  });

  it("an encode role without a ratio is left unscaled", () => {
    const s = spec(
      { algorithm: { type: "TokenThroughput", tokenThroughput: { prefillTargetTokensPerSecond: "2000" } } },
      ["encode", "prefill"],
    );
    const result = run(s, [
      role("encode", "Encode", 2, observation()),
      role("prefill", "Prefill", 2, prefill(1000, 1000)),
    ]);
    expect(recommendationOf(result, "encode")).toEqual({
      role: "encode",
      scaled: false,
      replicas: 2,
      reason: "NoTarget",
    });
  });
});

describe("TokenThroughput: demand history in predictors[]", () => {
  const s = pdSpec();
  const pass = (nowMs: number, obs: RoleObservation, previous: readonly PredictorStatus[]) =>
    run(s, [role("server", "Prefill", 2, obs)], previous, nowMs).predictors;

  it("appends each usable pass's stable demand, level = newest, no filter state", () => {
    let predictors: readonly PredictorStatus[] = [];
    predictors = pass(t0Ms, prefill(2400, 2600), predictors);
    predictors = pass(t0Ms + 15_000, prefill(2500.123456789, 2600), predictors);
    expect(predictors).toEqual([
      {
        name: "server",
        level: "2500.123456789",
        trend: "0",
        covariance: { p00: "0", p01: "0", p10: "0", p11: "0" },
        sampleCount: 0,
        lastUpdateTime: "2026-11-29T12:00:15.000Z",
        history: [
          { timestamp: "2026-11-29T12:00:00.000Z", tokensPerSecond: "2400" },
          { timestamp: "2026-11-29T12:00:15.000Z", tokensPerSecond: "2500.123456789" },
        ],
      },
    ]);
    expect(() => PredictorStatusSchema.array().parse(predictors)).not.toThrow();
  });

  it("appends nothing for Missing or Stale passes: unknown is not zero", () => {
    const first = pass(t0Ms, prefill(2400, 2600), []);
    const after = pass(t0Ms + 15_000, observation({ signalState: "Missing" }), first);
    expect(after[0]?.history).toEqual(first[0]?.history);
  });

  it("keeps only samples inside the stable window (180 s by default)", () => {
    let predictors: readonly PredictorStatus[] = [];
    for (let i = 0; i <= 20; i++) predictors = pass(t0Ms + i * 15_000, prefill(1000 + i, 1000), predictors);
    const history = predictors[0]?.history ?? [];
    // At 300 s the window (120 s, 300 s] holds the passes at 135 … 300 s: 12 samples.
    expect(history).toHaveLength(12);
    expect(history[0]).toEqual({ timestamp: "2026-11-29T12:02:15.000Z", tokensPerSecond: "1009" });
  });

  it("keeps at most 256 samples", () => {
    const wide = spec({
      algorithm: {
        type: "TokenThroughput",
        tokenThroughput: { prefillTargetTokensPerSecond: "2000", stableWindowSeconds: 600 },
      },
    });
    let predictors: readonly PredictorStatus[] = [];
    for (let i = 0; i < 300; i++)
      predictors = run(wide, [role("server", "Prefill", 2, prefill(i, i))], predictors, t0Ms + i * 1000).predictors;
    const history = predictors[0]?.history ?? [];
    expect(history).toHaveLength(256);
    expect(history.at(-1)?.tokensPerSecond).toBe("299");
    expect(history[0]?.tokensPerSecond).toBe("44");
  });
});
