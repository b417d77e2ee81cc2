/**
 * Coverage: which fresh pods the role's observation fully stands for. A pod
 * counts only when its stable window is established and it reports every
 * field the role's algorithm reads; a pod missing one (its request failed or
 * came back partial, its series absent) makes coverage incomplete, which holds
 * scale-down in the planner, while the fields it does report still add to the
 * role's figures and may justify growth.
 */
import type { RoleKind } from "../api/model-deployment.js";
import { absentSeriesIsMeasuredZero } from "./absent-series.js";
import { familyOfField, podHasField, type PodField } from "./pod-fields.js";
import type { HistogramWindow, PodSample, PodWindowRates, SignalFamily } from "./types.js";

const noObservations: HistogramWindow = { buckets: [], count: 0, sum: 0 };

/** The zero a field takes when `absentSeriesIsMeasuredZero` says its absence is a measurement. */
function zeroRates(field: PodField, window: PodWindowRates): PodWindowRates {
  if (!window.established) return window;
  switch (field) {
    case "promptTokens":
      return { ...window, promptTokensPerSecond: 0 };
    case "generationTokens":
      return { ...window, generationTokensPerSecond: 0 };
    case "ttft":
      return { ...window, ttftSeconds: noObservations };
    case "itl":
      return { ...window, itlSeconds: noObservations };
    default:
      return window;
  }
}

function zeroField(pod: PodSample, field: PodField): PodSample {
  if (field === "runningRequests") return { ...pod, runningRequests: 0 };
  if (field === "waitingRequests") return { ...pod, waitingRequests: 0 };
  return {
    ...pod,
    windows: { stable: zeroRates(field, pod.windows.stable), panic: zeroRates(field, pod.windows.panic) },
  };
}

/**
 * The pod with the absent fields the engine-signals rule calls measured zeros
 * filled in. Asked only for a pod whose stable window is established and for
 * fields whose request was answered in full.
 */
export function withMeasuredZeros(
  pod: PodSample,
  reads: readonly PodField[],
  kind: RoleKind,
  unknownFamilies: ReadonlySet<SignalFamily>,
): PodSample {
  if (!pod.windows.stable.established) return pod;
  let out = pod;
  for (const field of reads) {
    if (unknownFamilies.has(familyOfField[field])) continue;
    if (podHasField(out, field, kind, out.windows.stable)) continue;
    if (absentSeriesIsMeasuredZero(pod, field)) out = zeroField(out, field);
  }
  return out;
}

/** Whether the pod counts toward coverage: established stable window and every field read present. */
export function coversPod(pod: PodSample, reads: readonly PodField[], kind: RoleKind): boolean {
  const stable = pod.windows.stable;
  return stable.established && reads.every((field) => podHasField(pod, field, kind, stable));
}
