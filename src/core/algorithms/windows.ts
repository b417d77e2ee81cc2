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

/** The TokenThroughput block whose windows the algorithm reads; the schema's defaults when none is given. */
const windowSource: Readonly<Record<AlgorithmType, (spec: ScalerSpec) => TokenThroughputParams | undefined>> = {
  // Proportional rates come from the same windows; a spec without a block samples the defaults.
  Proportional: (spec) => spec.algorithm.tokenThroughput,
  TokenThroughput: (spec) => spec.algorithm.tokenThroughput,
  Predictive: (spec) => spec.algorithm.tokenThroughput ?? spec.algorithm.predictive?.tokenThroughput,
};

export function samplingWindowsOf(spec: ScalerSpec): SamplingWindows {
  const params = tokenThroughputParams(windowSource[spec.algorithm.type](spec));
  return { stableWindowSeconds: params.stableWindowSeconds, panicWindowSeconds: params.panicWindowSeconds };
}
