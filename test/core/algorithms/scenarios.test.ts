/**
 * Scenarios over simulated time, one pass every 15 s, for a prefill role of
 * 2000 tok/s per replica (see simulation.ts for the idealised world).
 */
import { describe, expect, it } from "vitest";
import { PredictorStatusSchema, type ScalerSpec } from "../../../src/core/api/scaler.js";
import { spec } from "./fixtures.js";
import { firstReaching, simulate, type DemandCurve } from "./simulation.js";

const tokenThroughputSpec: ScalerSpec = spec(
  { algorithm: { type: "TokenThroughput", tokenThroughput: { prefillTargetTokensPerSecond: "2000" } } },
  ["prefill"],
);
const predictiveSpec: ScalerSpec = spec(
  {
    algorithm: {
      type: "Predictive",
      predictive: { tokenThroughput: { prefillTargetTokensPerSecond: "2000" }, prefillTokenCapacityPerReplica: "2000" },
    },
  },
  ["prefill"],
);

describe("a ramp: 2000 tok/s until 600 s, then +10 tok/s each second up to 12000", () => {
  const ramp: DemandCurve = (t) => 2000 + 10 * Math.min(1000, Math.max(0, t - 600));
  const throughput = simulate(tokenThroughputSpec, ramp, { passes: 160, startReplicas: 1 });
  const predictive = simulate(predictiveSpec, ramp, { passes: 160, startReplicas: 1 });

  it("TokenThroughput follows the 180 s average, which lags the ramp by about 90 s", () => {
    // The average passes 6000 tok/s (3 replicas' worth) at about 600 + 400 + 90 s.
    expect(firstReaching(throughput, 4)).toBe(1095);
  });

  it("Predictive asks for the fourth replica minutes earlier: trend 10 tok/s² over a 300 s horizon", () => {
    const predictiveAt = firstReaching(predictive, 4);
    const throughputAt = firstReaching(throughput, 4);
    expect(predictiveAt).toBeDefined();
    expect(throughputAt! - predictiveAt!).toBeGreaterThanOrEqual(300);
    expect(predictive.find((p) => p.tSeconds === predictiveAt)?.recommendation.reason).toBe("Predictive");
  });

  it("Predictive is never below TokenThroughput on the same observations", () => {
    for (const pass of predictive)
      expect(pass.recommendation.replicas).toBeGreaterThanOrEqual(
        Math.ceil((pass.recommendation.demand?.stableTokensPerSecond ?? 0) / 2000 - 1e-9),
      );
  });

  it("at the plateau TokenThroughput settles at 6; Predictive keeps the 8 it reached, as 7 would run at 86%", () => {
    expect(throughput.at(-1)?.recommendation).toMatchObject({ replicas: 6, reason: "TokenThroughput" });
    // 12000 tok/s on 7 replicas of 2000 is 86% > 80%: no consolidation.
    expect(predictive.at(-1)?.recommendation).toMatchObject({ replicas: 8, reason: "PredictiveConsolidationHold" });
  });

  it("the filter's trend tracks the ramp's slope", () => {
    const midRamp = predictive.find((p) => p.tSeconds === 1200);
    expect(Number(midRamp?.predictors[0]?.trend)).toBeCloseTo(10, 1);
  });
});

describe("a burst: 3000 tok/s, 12000 tok/s from 600 s to 1200 s; new replicas ready after 60 s", () => {
  const burst: DemandCurve = (t) => (t > 600 && t <= 1200 ? 12000 : 3000);
  const run = simulate(tokenThroughputSpec, burst, { passes: 140, startReplicas: 2, readyDelayPasses: 4 });
  const at = (t: number) => run.find((p) => p.tSeconds === t)!;

  it("panics once the 60 s window reaches 2 × 2 ready × 2000 = 8000 tok/s, long before the stable window would act", () => {
    // At 630 s the panic window averages 7500, at 645 s 9750: ceil(9750 / 2000) = 5.
    expect(at(630).recommendation).toMatchObject({ replicas: 3, reason: "TokenThroughput", panic: false });
    expect(at(645).recommendation).toMatchObject({
      replicas: 5,
      reason: "Panic",
      panic: true,
      scaleDownHold: { reason: "Panic" },
    });
    // The stable window alone asks for only ceil(5250 / 2000) = 3 then.
    expect(at(645).recommendation.demand?.stableTokensPerSecond).toBe(5250);
  });

  it("stays in panic, never shrinking, while the added replicas load", () => {
    const panicking = run.filter((p) => p.recommendation.panic);
    expect(panicking.map((p) => p.tSeconds)).toEqual([645, 660, 675, 690, 705]);
    for (const pass of panicking) {
      expect(pass.recommendation.replicas).toBeGreaterThanOrEqual(pass.currentReplicas);
      expect(pass.recommendation.scaleDownHold).toEqual({ reason: "Panic" });
    }
    expect(at(660).recommendation.replicas).toBe(6);
  });

  it("once the capacity is ready, throughput carries the role at 6", () => {
    expect(at(720).recommendation.panic).toBe(false);
    expect(at(1200).recommendation).toMatchObject({ replicas: 6, reason: "TokenThroughput" });
  });

  it("scales down after the burst as the stable window drains, without a hold", () => {
    expect(at(1290).recommendation.replicas).toBe(4);
    expect(run.at(-1)?.recommendation).toMatchObject({ replicas: 2, reason: "TokenThroughput" });
    expect(run.at(-1)?.recommendation.scaleDownHold).toBeUndefined();
  });
});

describe("a latency breach at steady demand (2400 tok/s, TTFT target 500 ms)", () => {
  // TTFT: 200 ms, then 550 ms from 300 s, 700 ms from 450 s, healthy again from 600 s.
  const ttft = (t: number) => (t >= 600 ? 200 : t >= 450 ? 700 : t >= 300 ? 550 : 200);
  const steady: DemandCurve = () => 2400;

  it.each([
    { name: "TokenThroughput", s: tokenThroughputSpec },
    { name: "Predictive (warm after 90 s)", s: predictiveSpec },
  ])("$name: holds above target, adds a replica per pass above 1.2 ×, releases when healthy", ({ s }) => {
    const run = simulate(s, steady, { passes: 50, startReplicas: 2, ttftMilliseconds: ttft });
    const at = (t: number) => run.find((p) => p.tSeconds === t)!.recommendation;
    const baseReason = s === tokenThroughputSpec ? "TokenThroughput" : "Predictive";
    expect(at(285)).toMatchObject({ replicas: 2, reason: baseReason });
    expect(at(300)).toMatchObject({ replicas: 2, scaleDownHold: { reason: "LatencyGuardHold" } });
    expect(at(450)).toMatchObject({ replicas: 3, reason: "LatencyGuardScaleUp" });
    expect(at(465)).toMatchObject({ replicas: 4, reason: "LatencyGuardScaleUp" });
    expect(at(600).replicas).toBeLessThanOrEqual(3);
    expect(at(600).scaleDownHold).toBeUndefined();
  });
});

describe("warm-up", () => {
  it("Predictive equals TokenThroughput, as PredictorWarmingUp, for its first minPoints − 1 passes", () => {
    const rising: DemandCurve = (t) => 2000 + 20 * t;
    const predictive = simulate(predictiveSpec, rising, { passes: 8, startReplicas: 1 });
    const throughput = simulate(tokenThroughputSpec, rising, { passes: 8, startReplicas: 1 });
    for (let i = 0; i < 5; i++) {
      expect(predictive[i]?.recommendation.reason).toBe("PredictorWarmingUp");
      expect(predictive[i]?.recommendation.replicas).toBe(throughput[i]?.recommendation.replicas);
    }
    expect(predictive[5]?.recommendation.reason).toBe("Predictive");
    expect(predictive[5]?.recommendation.replicas).toBeGreaterThan(throughput[5]!.recommendation.replicas);
  });
});

describe("restart from status", () => {
  const wave: DemandCurve = (t) => 4000 + 3000 * Math.sin(t / 400) + 7 * (t % 45);
  /** Writes the predictors as the status writer would, and reads them back after a restart. */
  const throughStatus = (state: readonly unknown[]) =>
    PredictorStatusSchema.array().parse(JSON.parse(JSON.stringify({ predictors: state })).predictors);

  it.each([
    { name: "Predictive", s: predictiveSpec },
    { name: "TokenThroughput", s: tokenThroughputSpec },
  ])("$name continues exactly where it stopped", ({ s }) => {
    const uninterrupted = simulate(s, wave, { passes: 120, startReplicas: 2 });
    const restarted = simulate(s, wave, {
      passes: 120,
      startReplicas: 2,
      restore: { beforePass: 57, transform: throughStatus },
    });
    expect(restarted).toEqual(uninterrupted);
    expect(uninterrupted[56]?.predictors.length).toBe(1);
  });

  it("a restart after an outage resumes the filter with the elapsed time, not a pass count", () => {
    const afterOutage = simulate(predictiveSpec, wave, {
      passes: 60,
      startReplicas: 2,
      restore: {
        beforePass: 30,
        transform: (state) =>
          state.map((p) => ({ ...p, lastUpdateTime: new Date(Date.parse(p.lastUpdateTime!) - 600_000).toISOString() })),
      },
    });
    const normal = simulate(predictiveSpec, wave, { passes: 60, startReplicas: 2 });
    // A 10-minute gap widens the uncertainty, so the filter follows this pass's observation more closely.
    const observed = Number(normal[30]?.predictors[0]?.history?.at(-1)?.tokensPerSecond);
    const gapError = Math.abs(Number(afterOutage[30]?.predictors[0]?.level) - observed);
    const normalError = Math.abs(Number(normal[30]?.predictors[0]?.level) - observed);
    expect(gapError).toBeLessThan(normalError);
    expect(Number(afterOutage[30]?.predictors[0]?.covariance.p11)).toBeGreaterThan(
      Number(normal[30]?.predictors[0]?.covariance.p11),
    );
    expect(afterOutage[30]?.predictors[0]?.sampleCount).toBe(31);
  });
});
