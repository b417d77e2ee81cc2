/**
 * A small simulated world for scenario tests: a demand curve, window averages
 * as Prometheus would compute them, and an idealised planner that provisions
 * the raw recommendation at once, its replicas ready after an optional delay. It isolates the
 * algorithms' timing from pacing and admission, which the planner tests cover.
 */
import { algorithmFor } from "../../../src/core/algorithms/index.js";
import type { RoleRecommendation } from "../../../src/core/algorithms/types.js";
import type { RoleKind } from "../../../src/core/api/model-deployment.js";
import type { PredictorStatus, ScalerSpec } from "../../../src/core/api/scaler.js";
import type { RoleObservation } from "../../../src/core/signals/types.js";
import { t0Ms } from "./fixtures.js";

/** Demand in tokens per second at `tSeconds` after t0. */
export type DemandCurve = (tSeconds: number) => number;

/** The mean of the curve over (end − window, end], sampled each second as a rate() over counters would see it. */
export function windowAverage(demand: DemandCurve, endSeconds: number, windowSeconds: number): number {
  let total = 0;
  for (let s = endSeconds - windowSeconds + 1; s <= endSeconds; s++) total += demand(s);
  return total / windowSeconds;
}

export interface SimulationOptions {
  readonly kind?: RoleKind;
  readonly passes: number;
  readonly intervalSeconds?: number;
  readonly startReplicas?: number;
  /** Passes a new replica takes to become ready (loading weights); 0 makes growth instant. */
  readonly readyDelayPasses?: number;
  /** p95 TTFT in ms at a time; healthy 200 ms by default. */
  readonly ttftMilliseconds?: (tSeconds: number) => number;
  /** Replaces the predictor state before pass `index` (a restart from status). */
  readonly restore?: {
    readonly beforePass: number;
    readonly transform: (state: readonly PredictorStatus[]) => readonly PredictorStatus[];
  };
}

export interface SimulatedPass {
  readonly tSeconds: number;
  readonly currentReplicas: number;
  readonly readyReplicas: number;
  readonly recommendation: RoleRecommendation;
  readonly predictors: readonly PredictorStatus[];
}

/** A Fresh prefill observation of the curve with the spec's windows (180 s and 60 s by default). */
export function observe(
  demand: DemandCurve,
  tSeconds: number,
  ready: number,
  ttftMilliseconds: number,
  windows = { stable: 180, panic: 60 },
): RoleObservation {
  return {
    readyReplicas: ready,
    sampledReplicas: ready,
    signalState: "Fresh",
    promptTokensPerSecond: windowAverage(demand, tSeconds, windows.stable),
    panicPromptTokensPerSecond: windowAverage(demand, tSeconds, windows.panic),
    generationTokensPerSecond: 0,
    panicGenerationTokensPerSecond: 0,
    ttftMilliseconds,
  };
}

/** Runs one prefill role through `passes` sampling passes. */
export function simulate(spec: ScalerSpec, demand: DemandCurve, options: SimulationOptions): SimulatedPass[] {
  const interval = options.intervalSeconds ?? 15;
  const algorithm = algorithmFor(spec.algorithm.type);
  let current = options.startReplicas ?? 1;
  const counts: number[] = [];
  let predictors: readonly PredictorStatus[] = [];
  const out: SimulatedPass[] = [];
  for (let i = 0; i < options.passes; i++) {
    if (options.restore !== undefined && options.restore.beforePass === i)
      predictors = options.restore.transform(predictors);
    const tSeconds = i * interval;
    counts.push(current);
    // Removed replicas leave at once; added ones are ready after the delay.
    const ready = Math.min(current, counts[Math.max(0, i - (options.readyDelayPasses ?? 0))] ?? current);
    const obs = observe(demand, tSeconds, ready, options.ttftMilliseconds?.(tSeconds) ?? 200);
    const result = algorithm.recommend({
      spec,
      roles: [{ name: "prefill", kind: options.kind ?? "Prefill", currentReplicas: current, observation: obs }],
      predictors,
      nowMs: t0Ms + tSeconds * 1000,
    });
    const recommendation = result.roles[0];
    if (recommendation === undefined) throw new Error("no recommendation");
    predictors = result.predictors;
    out.push({ tSeconds, currentReplicas: current, readyReplicas: ready, recommendation, predictors });
    current = Math.min(64, Math.max(1, recommendation.replicas));
  }
  return out;
}

/** The first simulated second at which the recommendation reaches `replicas`, or undefined. */
export function firstReaching(run: readonly SimulatedPass[], replicas: number): number | undefined {
  return run.find((pass) => pass.recommendation.replicas >= replicas)?.tSeconds;
}
