/**
 * The scaler a user would write for a simulated fleet: the shipped defaults
 * for everything except the per-replica figures the user must supply
 * (docs/quality.md, Method). Two ways of getting them: calibrated on a training
 * slice (user-figures.ts, passed in), or the rule of thumb the benchmark used
 * before, kept beside it: 80 % of the replica's fluid token capacity at the
 * trace's mean request for the token algorithms, and the in-flight requests at
 * that load (Little's law) for Proportional on QueueDepth.
 */
import { defaultScalerSpec } from "../../core/api/defaulting.js";
import type { AlgorithmType, ScalerSpec } from "../../core/api/scaler.js";
import type { EngineCapacity } from "../engines/model.js";
import { disaggregatedRoles } from "./cluster.js";
import type { Trace } from "./traces.js";

/** The share of measured capacity a user configures as the per-replica target. */
export const targetUtilisation = 0.8;

export interface ReplicaFigures {
  /** Prompt + output tokens per second one replica sustains at the trace's mix. */
  readonly tokensPerSecond: number;
  readonly requestsPerSecond: number;
  /** In-flight requests per replica at `targetUtilisation` of that rate. */
  readonly queueDepthAtTarget: number;
}

export function replicaFigures(trace: Trace, capacity: EngineCapacity): ReplicaFigures {
  const n = Math.max(1, trace.requests.length);
  let prompt = 0;
  let output = 0;
  for (const r of trace.requests) {
    prompt += r.promptTokens;
    output += r.outputTokens;
  }
  const meanPrompt = prompt / n;
  const meanOutput = output / n;
  // Prefill and decode have separate budgets in the engine model: the slower one binds.
  const secondsPerRequest = Math.max(
    meanPrompt / capacity.prefillTokensPerSecond,
    meanOutput / capacity.decodeTokensPerSecond,
  );
  const requestsPerSecond = 1 / secondsPerRequest;
  const serviceSeconds =
    meanPrompt / capacity.prefillTokensPerSecond + meanOutput / capacity.maxTokensPerSecondPerRequest;
  return {
    tokensPerSecond: (meanPrompt + meanOutput) * requestsPerSecond,
    requestsPerSecond,
    queueDepthAtTarget: targetUtilisation * requestsPerSecond * serviceSeconds,
  };
}

export interface ScalerOptions {
  readonly algorithm: AlgorithmType;
  readonly figures: ReplicaFigures;
  readonly maxReplicas: number;
  readonly minReplicas?: number;
  readonly mode?: "Active" | "Shadow";
  /** Sets `ttftTargetMilliseconds` of the token algorithms; the shipped default otherwise. */
  readonly ttftTargetMilliseconds?: number;
  /** Sets `itlTargetMilliseconds` of the token algorithms; the shipped default otherwise. */
  readonly itlTargetMilliseconds?: number;
  /**
   * `serverTargetTokensPerSecond` as the user measured it (a calibrated figure, user-figures.ts);
   * `targetUtilisation` of `figures.tokensPerSecond` when absent.
   */
  readonly tokensPerSecondPerReplica?: number;
  /** Predictive's `serverTokenCapacityPerReplica` (calibrate's capacity); the target stands in when absent. */
  readonly forecastCapacityPerReplica?: number;
  /** Predictive's `measurementNoise`, (tokens/s)² (calibrate's demand noise); the specification's default (10) when absent. */
  readonly measurementNoise?: number;
  /** `behavior.scaleDown.stabilizationWindowSeconds`; the specification's default (300) when absent. */
  readonly scaleDownStabilizationSeconds?: number;
  /** The token algorithms' `panicThreshold`; the specification's default (2) when absent. */
  readonly panicThreshold?: number;
  /** The token algorithms' `queueTimeTargetMilliseconds` (an extension); unset, the guard judges TTFT and ITL only. */
  readonly queueTimeTargetMilliseconds?: number;
  /** The token algorithms' `stableWindowSeconds` and `panicWindowSeconds`; the specification's defaults (180, 60) when absent. */
  readonly windowsSeconds?: { readonly stable: number; readonly panic: number };
}

/** A defaulted scaler spec for the simulated Server role `server`. */
export function defaultScaler(options: ScalerOptions): ScalerSpec {
  const tokens = String(
    Math.round(options.tokensPerSecondPerReplica ?? targetUtilisation * options.figures.tokensPerSecond),
  );
  const depth = String(Math.max(1, Math.round(options.figures.queueDepthAtTarget)));
  const tokenThroughput = {
    serverTargetTokensPerSecond: tokens,
    ...(options.ttftTargetMilliseconds === undefined
      ? {}
      : { ttftTargetMilliseconds: String(options.ttftTargetMilliseconds) }),
    ...(options.itlTargetMilliseconds === undefined
      ? {}
      : { itlTargetMilliseconds: String(options.itlTargetMilliseconds) }),
    ...(options.panicThreshold === undefined ? {} : { panicThreshold: String(options.panicThreshold) }),
    ...(options.queueTimeTargetMilliseconds === undefined
      ? {}
      : { queueTimeTargetMilliseconds: String(options.queueTimeTargetMilliseconds) }),
    ...(options.windowsSeconds === undefined
      ? {}
      : { stableWindowSeconds: options.windowsSeconds.stable, panicWindowSeconds: options.windowsSeconds.panic }),
  };
  const algorithm =
    options.algorithm === "Proportional"
      ? {
          type: "Proportional",
          proportional: { metric: "QueueDepth", roleTargets: [{ name: "server", target: depth }] },
        }
      : options.algorithm === "TokenThroughput"
        ? { type: "TokenThroughput", tokenThroughput }
        : {
            type: "Predictive",
            predictive: {
              tokenThroughput,
              ...(options.forecastCapacityPerReplica === undefined
                ? {}
                : { serverTokenCapacityPerReplica: String(Math.round(options.forecastCapacityPerReplica)) }),
              ...(options.measurementNoise === undefined ? {} : { measurementNoise: String(options.measurementNoise) }),
            },
          };
  const result = defaultScalerSpec({
    targetRef: { name: "sim" },
    mode: options.mode ?? "Active",
    roles: [{ name: "server", minReplicas: options.minReplicas ?? 1, maxReplicas: options.maxReplicas }],
    algorithm,
    ...(options.scaleDownStabilizationSeconds === undefined
      ? {}
      : { behavior: { scaleDown: { stabilizationWindowSeconds: options.scaleDownStabilizationSeconds } } }),
  });
  if (!result.ok) throw new Error(`default scaler: ${JSON.stringify(result.problems)}`);
  return result.value;
}

export interface DisaggregatedScalerOptions {
  readonly algorithm: "TokenThroughput" | "Predictive";
  readonly capacity: EngineCapacity;
  /** Prefill replicas per decode replica the user measured for the request mix (`ratios[].target`). */
  readonly ratio: number;
  readonly maxReplicas: number;
  readonly mode?: "Active" | "Shadow";
  readonly ttftTargetMilliseconds?: number;
}

/**
 * The pd-sglang-style scaler of the specification's token-throughput example:
 * a Prefill and a Decode role, each with its own per-replica target (80 % of
 * the replica's prefill or decode token rate), coupled by a ratio band of
 * ¼ to 4 that prefers the measured ratio.
 */
export function disaggregatedScaler(options: DisaggregatedScalerOptions): ScalerSpec {
  const [prefill, decode] = disaggregatedRoles.map((r) => r.name) as [string, string];
  const tokenThroughput = {
    prefillTargetTokensPerSecond: String(Math.round(targetUtilisation * options.capacity.prefillTokensPerSecond)),
    decodeTargetTokensPerSecond: String(Math.round(targetUtilisation * options.capacity.decodeTokensPerSecond)),
    ...(options.ttftTargetMilliseconds === undefined
      ? {}
      : { ttftTargetMilliseconds: String(options.ttftTargetMilliseconds) }),
  };
  const ratio = Math.min(4, Math.max(0.25, Math.round(100 * options.ratio) / 100));
  const result = defaultScalerSpec({
    targetRef: { name: "sim" },
    mode: options.mode ?? "Active",
    roles: [
      { name: prefill, minReplicas: 1, maxReplicas: options.maxReplicas },
      { name: decode, minReplicas: 1, maxReplicas: options.maxReplicas },
    ],
    ratios: [{ numeratorRole: prefill, denominatorRole: decode, min: "0.25", max: "4", target: String(ratio) }],
    algorithm:
      options.algorithm === "TokenThroughput"
        ? { type: "TokenThroughput", tokenThroughput }
        : { type: "Predictive", predictive: { tokenThroughput } },
  });
  if (!result.ok) throw new Error(`disaggregated scaler: ${JSON.stringify(result.problems)}`);
  return result.value;
}

/** Fluid prefill and decode replicas of the whole trace at full speed: what a user's load test would give. */
export function roleNeeds(trace: Trace, capacity: EngineCapacity): { prefill: number; decode: number } {
  let prompt = 0;
  let output = 0;
  for (const r of trace.requests) {
    prompt += r.promptTokens;
    output += r.outputTokens;
  }
  const span = Math.max(1, trace.spanSeconds);
  return {
    prefill: prompt / span / capacity.prefillTokensPerSecond,
    decode: output / span / capacity.decodeTokensPerSecond,
  };
}
