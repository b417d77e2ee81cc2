import { describe, expect, it } from "vitest";
import { forecastDecision, writeTrendState } from "../../../src/core/algorithms/predictive.js";
import type { TokenThroughputOutcome } from "../../../src/core/algorithms/token-throughput.js";
import type { PredictorStatus, ScalerSpec } from "../../../src/core/api/scaler.js";
import type { RoleObservation } from "../../../src/core/signals/types.js";
import { brief, observation, recommendationOf, role, run, spec, t0Ms } from "./fixtures.js";

function predictiveSpec(extra: Record<string, unknown> = {}): ScalerSpec {
  return spec(
    {
      algorithm: {
        type: "Predictive",
        predictive: {
          tokenThroughput: { prefillTargetTokensPerSecond: "2000", decodeTargetTokensPerSecond: "800" },
          prefillTokenCapacityPerReplica: "2000",
          decodeTokenCapacityPerReplica: "800",
          ...extra,
        },
      },
      ratios: [{ numeratorRole: "encode", denominatorRole: "prefill", target: "0.5" }],
    },
    ["encode", "prefill"],
  );
}

const prefill = (stable: number, panic = stable, fields: Partial<RoleObservation> = {}): RoleObservation =>
  observation({ promptTokensPerSecond: stable, panicPromptTokensPerSecond: panic, ttftMilliseconds: 200, ...fields });

/** Runs passes every 15 s from t0 with the given prefill observations; returns each pass's result. */
function passes(
  s: ScalerSpec,
  observations: readonly RoleObservation[],
  current = 2,
  start: readonly PredictorStatus[] = [],
) {
  let predictors = start;
  return observations.map((obs, i) => {
    const result = run(
      s,
      [role("encode", "Encode", 1, observation()), role("prefill", "Prefill", current, obs)],
      predictors,
      t0Ms + i * 15_000,
    );
    predictors = result.predictors;
    return result;
  });
}

describe("Predictive: warm-up", () => {
  it("uses the TokenThroughput result as PredictorWarmingUp until minPoints observations", () => {
    const results = passes(
      predictiveSpec(),
      Array.from({ length: 7 }, () => prefill(2400)),
    );
    expect(results.map((r) => [recommendationOf(r, "prefill").reason, r.predictors[0]?.sampleCount])).toEqual([
      ["PredictorWarmingUp", 1],
      ["PredictorWarmingUp", 2],
      ["PredictorWarmingUp", 3],
      ["PredictorWarmingUp", 4],
      ["PredictorWarmingUp", 5],
      ["Predictive", 6],
      ["Predictive", 7],
    ]);
    expect(results.map((r) => recommendationOf(r, "prefill").replicas)).toEqual([2, 2, 2, 2, 2, 2, 2]);
  });

  it("keeps the fallback's count and hold while warming up", () => {
    const [first] = passes(predictiveSpec(), [prefill(1000, 8000)]);
    expect(brief(recommendationOf(first!, "prefill"))).toEqual({
      replicas: 4,
      reason: "PredictorWarmingUp",
      hold: "Panic",
    });
    expect(recommendationOf(first!, "prefill").panic).toBe(true);
  });

  it("minPoints 1 forecasts from the first observation", () => {
    const [first] = passes(predictiveSpec({ minPoints: 1 }), [prefill(2400)]);
    expect(recommendationOf(first!, "prefill").reason).toBe("Predictive");
  });

  it("encode roles follow the prefill result", () => {
    const results = passes(predictiveSpec({ prefillTokenCapacityPerReplica: "1000", minPoints: 1 }), [prefill(3900)]);
    expect(brief(recommendationOf(results[0]!, "prefill"))).toEqual({
      replicas: 4,
      reason: "Predictive",
      hold: undefined,
    });
    expect(brief(recommendationOf(results[0]!, "encode"))).toEqual({
      replicas: 2,
      reason: "RatioCoupled",
      hold: undefined,
    });
  });
});

describe("Predictive: the forecast", () => {
  it("divides the forecast by the forecast capacity, not the fallback target", () => {
    const results = passes(
      predictiveSpec({ prefillTokenCapacityPerReplica: "1000" }),
      Array.from({ length: 6 }, () => prefill(2400)),
    );
    const last = recommendationOf(results.at(-1)!, "prefill");
    expect(brief(last)).toEqual({ replicas: 3, reason: "Predictive", hold: undefined });
    expect(last.demand?.capacityPerReplicaTokensPerSecond).toBe(2000); // the fallback's figure
    expect(last.demand?.forecastTokensPerSecond).toBeCloseTo(2400, 6);
  });

  it("feeds the filter the panic window, falling back to the stable one", () => {
    const [panicFed] = passes(predictiveSpec(), [prefill(1000, 3000)]);
    expect(panicFed!.predictors[0]?.level).toBe("3000");
    const [stableFed] = passes(predictiveSpec(), [observation({ promptTokensPerSecond: 1000, ttftMilliseconds: 200 })]);
    expect(stableFed!.predictors[0]?.level).toBe("1000");
  });

  it("does not update the filter from a Missing or Stale role, and holds on the fallback", () => {
    const warm = passes(
      predictiveSpec(),
      Array.from({ length: 6 }, () => prefill(2400)),
    );
    const state = warm.at(-1)!.predictors;
    for (const obs of [
      observation({ signalState: "Missing", runningRequests: 1 }),
      { readyReplicas: 2, sampledReplicas: 0, signalState: "Stale" } as RoleObservation,
    ]) {
      const result = run(
        predictiveSpec(),
        [role("encode", "Encode", 1, observation()), role("prefill", "Prefill", 3, obs)],
        state,
        t0Ms + 6 * 15_000,
      );
      expect(result.predictors).toEqual(state);
      expect(brief(recommendationOf(result, "prefill"))).toEqual({
        replicas: 3,
        reason: "WaitingForMetrics",
        hold: "WaitingForMetrics",
      });
    }
  });

  it("restarts the filter from unusable or TokenThroughput state, keeping the history", () => {
    const history = [{ timestamp: new Date(t0Ms - 15_000).toISOString(), tokensPerSecond: "2000" }];
    const fromTokenThroughput: PredictorStatus = {
      name: "prefill",
      level: "2000",
      trend: "0",
      covariance: { p00: "0", p01: "0", p10: "0", p11: "0" },
      sampleCount: 0,
      lastUpdateTime: history[0]!.timestamp,
      history,
    };
    const [result] = passes(predictiveSpec(), [prefill(2400)], 2, [fromTokenThroughput]);
    expect(result!.predictors[0]).toMatchObject({ level: "2400", trend: "0", sampleCount: 1 });
    expect(result!.predictors[0]?.history).toHaveLength(2);
  });
});

describe("forecastDecision", () => {
  const base = { panic: false, latencyScaleUp: false, capacityPerReplicaTokensPerSecond: 2000 };
  const fallback = (fields: Partial<TokenThroughputOutcome>): TokenThroughputOutcome => ({
    ...base,
    decision: { replicas: 3, reason: "TokenThroughput" },
    stableTokensPerSecond: 4500,
    panicTokensPerSecond: 4500,
    ...fields,
  });
  const current4 = role("prefill", "Prefill", 4, observation({}, 4));

  it.each([
    {
      name: "a higher forecast leads",
      fb: fallback({}),
      forecast: 9000,
      want: { replicas: 5, reason: "Predictive", holdReason: undefined },
    },
    {
      name: "never below the TokenThroughput result",
      fb: fallback({ decision: { replicas: 5, reason: "TokenThroughput" } }),
      forecast: 2000,
      want: { replicas: 5, reason: "Predictive", holdReason: undefined },
    },
    {
      name: "consolidation when three replicas at 80% carry the load (4500 ≤ 4800)",
      fb: fallback({}),
      forecast: 3000,
      want: { replicas: 3, reason: "Predictive", holdReason: undefined },
    },
    {
      name: "no consolidation when they would not (5000 > 4800)",
      fb: fallback({ stableTokensPerSecond: 5000 }),
      forecast: 3000,
      want: { replicas: 4, reason: "PredictiveConsolidationHold", holdReason: "PredictiveConsolidationHold" },
    },
    {
      name: "the forecast counts as load for consolidation",
      fb: fallback({ stableTokensPerSecond: 1000, panicTokensPerSecond: 1000 }),
      forecast: 4900,
      want: { replicas: 4, reason: "PredictiveConsolidationHold", holdReason: "PredictiveConsolidationHold" },
    },
    {
      name: "panic adds at least one replica",
      fb: fallback({ panic: true, decision: { replicas: 4, reason: "Panic", holdReason: "Panic" } }),
      forecast: 2000,
      want: { replicas: 5, reason: "Panic", holdReason: "Panic" },
    },
    {
      name: "a latency breach above 1.2 × target adds at least one replica",
      fb: fallback({
        latencyScaleUp: true,
        decision: { replicas: 3, reason: "TokenThroughput", holdReason: "LatencyGuardScaleUp" },
      }),
      forecast: 2000,
      want: { replicas: 5, reason: "LatencyGuardScaleUp", holdReason: "LatencyGuardScaleUp" },
    },
    {
      name: "a latency breach with a forecast beyond current + 1 keeps the forecast",
      fb: fallback({
        latencyScaleUp: true,
        decision: { replicas: 5, reason: "LatencyGuardScaleUp", holdReason: "LatencyGuardScaleUp" },
      }),
      forecast: 14000,
      want: { replicas: 7, reason: "Predictive", holdReason: "LatencyGuardScaleUp" },
    },
    {
      name: "a latency hold keeps the count without a consolidation check",
      fb: fallback({ decision: { replicas: 4, reason: "LatencyGuardHold", holdReason: "LatencyGuardHold" } }),
      forecast: 100,
      want: { replicas: 4, reason: "LatencyGuardHold", holdReason: "LatencyGuardHold" },
    },
  ])("$name", ({ fb, forecast, want }) => {
    const got = forecastDecision({
      role: current4,
      fallback: fb,
      forecastTokensPerSecond: forecast,
      capacityPerReplica: 2000,
    });
    expect({ replicas: got.replicas, reason: got.reason, holdReason: got.holdReason }).toEqual(want);
  });

  it("a single replica has nothing to consolidate", () => {
    const one = role("prefill", "Prefill", 1, observation({}, 1));
    const got = forecastDecision({
      role: one,
      fallback: fallback({ decision: { replicas: 1, reason: "TokenThroughput" } }),
      forecastTokensPerSecond: 0,
      capacityPerReplica: 2000,
    });
    expect(got.replicas).toBe(1);
  });
});

describe("Predictive: state written to status", () => {
  it("writes the filter with full precision and the demand history", () => {
    const results = passes(predictiveSpec(), [prefill(2400), prefill(2450.5)]);
    const entry = results[1]!.predictors[0]!;
    expect(entry.name).toBe("prefill");
    expect(entry.sampleCount).toBe(2);
    expect(entry.lastUpdateTime).toBe("2026-11-29T12:00:15.000Z");
    expect(entry.history?.map((h) => h.tokensPerSecond)).toEqual(["2400", "2450.5"]);
    expect(Number(entry.level)).toBeGreaterThan(2400);
    expect(entry.level).not.toMatch(/^\d+(\.\d{1,3})?$/); // more digits than a 3-decimal quantity
    expect(entry).toEqual(
      writeTrendState(
        "prefill",
        {
          level: Number(entry.level),
          trend: Number(entry.trend),
          p00: Number(entry.covariance.p00),
          p01: Number(entry.covariance.p01),
          p10: Number(entry.covariance.p10),
          p11: Number(entry.covariance.p11),
          sampleCount: 2,
          updatedAtMs: t0Ms + 15_000,
        },
        entry.history ?? [],
      ),
    );
  });
});
