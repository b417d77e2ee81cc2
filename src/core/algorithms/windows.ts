/**
 * The rate windows a scaler's pass samples, per algorithm: one rule for the controller, `observe` and
 * the simulator. Keyed by algorithm type, so a new algorithm does not compile until it says which
 * windows it reads (docs/algorithms.md, Adding an algorithm).
 */
import type { AlgorithmType, ScalerSpec, TokenThroughputParams } from "../api/scaler.js";
import { tokenThroughputParams } from "./token-throughput.js";

export interface SamplingWindows {
  readonly stableWindowSeconds: number;
  readonly panicWindowSeconds: number;
}

export interface TokenThroughputBlock {
  readonly params: TokenThroughputParams | undefined;
  /** Where the block is written under `spec`, for messages. */
  readonly path: readonly string[];
}

const topLevelBlock = (spec: ScalerSpec): TokenThroughputBlock => ({
  params: spec.algorithm.tokenThroughput,
  path: ["algorithm", "tokenThroughput"],
});

/** The TokenThroughput block whose windows the algorithm reads; the schema's defaults when none is given. */
const windowSource: Readonly<Record<AlgorithmType, (spec: ScalerSpec) => TokenThroughputBlock>> = {
  // Proportional rates come from the same windows; a spec without a block samples the defaults.
  Proportional: topLevelBlock,
  TokenThroughput: topLevelBlock,
  Predictive: (spec) =>
    spec.algorithm.tokenThroughput === undefined && spec.algorithm.predictive?.tokenThroughput !== undefined
      ? { params: spec.algorithm.predictive.tokenThroughput, path: ["algorithm", "predictive", "tokenThroughput"] }
      : topLevelBlock(spec),
};

/**
 * The TokenThroughput block the algorithm reads (its windows, targets and latency targets) and where it is written:
 * TokenThroughput's own, or Predictive's fallback; `params` undefined where none is written.
 */
export function tokenThroughputBlockOf(spec: ScalerSpec): TokenThroughputBlock {
  return windowSource[spec.algorithm.type](spec);
}

export function samplingWindowsOf(spec: ScalerSpec): SamplingWindows {
  const params = tokenThroughputParams(tokenThroughputBlockOf(spec).params);
  return { stableWindowSeconds: params.stableWindowSeconds, panicWindowSeconds: params.panicWindowSeconds };
}

/**
 * Where the windows `samplingWindowsOf` reads are written under `spec` (the top-level TokenThroughput block's
 * place when no block is written and the defaults apply), for messages about them.
 * Example: a Predictive spec with only `predictive.tokenThroughput` → ["algorithm", "predictive", "tokenThroughput"].
 */
export function samplingWindowsPath(spec: ScalerSpec): readonly string[] {
  return tokenThroughputBlockOf(spec).path;
}
