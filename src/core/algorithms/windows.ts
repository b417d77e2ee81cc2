/**
 * The rate windows a scaler's pass samples: its TokenThroughput windows (Predictive's own when it is
 * Predictive), or the schema's defaults. One rule for the controller, `observe` and the simulator.
 */
import type { ScalerSpec } from "../api/scaler.js";
import { tokenThroughputParams } from "./token-throughput.js";

export interface SamplingWindows {
  readonly stableWindowSeconds: number;
  readonly panicWindowSeconds: number;
}

export function samplingWindowsOf(spec: ScalerSpec): SamplingWindows {
  const params = tokenThroughputParams(spec.algorithm.tokenThroughput ?? spec.algorithm.predictive?.tokenThroughput);
  return { stableWindowSeconds: params.stableWindowSeconds, panicWindowSeconds: params.panicWindowSeconds };
}
