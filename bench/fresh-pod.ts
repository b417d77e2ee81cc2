/**
 * What the sampling benchmarks count as a Fresh pod: a gauge sample current at the pass's evaluation time
 * (within the staleness limit of the scaler's interval) and both windows established. Every pod of the
 * benchmarks' fleets must be Fresh for a pass to have read everything it asks for.
 */
import { staleAfterSeconds } from "../src/core/signals/observe.js";
import type { PodSample } from "../src/core/signals/types.js";

export function isFreshPod(pod: PodSample, atUnixSeconds: number, intervalSeconds: number): boolean {
  return (
    atUnixSeconds - pod.lastSampleUnixSeconds <= staleAfterSeconds(intervalSeconds) &&
    pod.windows.stable.established &&
    pod.windows.panic.established
  );
}
