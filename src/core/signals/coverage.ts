/**
 * Coverage: which fresh pods the role's observation fully stands for. A pod
 * counts only when its stable window is established and it reports every
 * field the role's algorithm reads; a pod missing one (its request failed or
 * came back partial, its series absent) makes coverage incomplete, which holds
 * scale-down in the planner, while the fields it does report still add to the
 * role's figures and may justify growth.
 */
import type { RoleKind } from "../api/model-deployment.js";
import { absentSeriesIsMeasuredZero, firstUseFields, type FirstUseField } from "./absent-series.js";
import { familyOfField, podHasField, type PodField } from "./pod-fields.js";
import type { HistogramWindow, PodSample, PodWindowRates, SignalFamily } from "./types.js";

const noObservations: HistogramWindow = { buckets: [], count: 0, sum: 0 };

/** The zero a field takes when `absentSeriesIsMeasuredZero` says its absence is a measurement. */
function zeroRates(field: FirstUseField, window: PodWindowRates): PodWindowRates {
  switch (field) {
    case "promptTokens":
      return { ...window, promptTokensPerSecond: 0 };
    case "generationTokens":
      return { ...window, generationTokensPerSecond: 0 };
    case "ttft":
      return { ...window, ttftSeconds: noObservations };
    case "itl":
      return { ...window, itlSeconds: noObservations };
    case "queueTime":
      return { ...window, queueTimeSeconds: noObservations };
  }
}

function windowWithZeros(
  pod: PodSample,
  window: PodWindowRates,
  kind: RoleKind,
  unknownFamilies: ReadonlySet<SignalFamily>,
): PodWindowRates {
  // The rule asks for an established window, so a window with a reset is returned as it is.
  if (!absentSeriesIsMeasuredZero(pod, window)) return window;
  let out = window;
  for (const field of firstUseFields) {
    if (unknownFamilies.has(familyOfField[field])) continue;
    if (podHasField(pod, field, kind, out)) continue;
    out = zeroRates(field, out);
  }
  return out;
}

/**
 * The pod with the absent fields the engine-signals rule calls measured zeros
 * filled in, in each established window, for every field whose series an
 * engine may create on first use (whether or not the algorithm reads it: the
 * figures are the same for every reader), never for a family whose request
 * failed or came back partial. The one place such zeros are made.
 */
export function withMeasuredZeros(
  pod: PodSample,
  kind: RoleKind,
  unknownFamilies: ReadonlySet<SignalFamily>,
): PodSample {
  return {
    ...pod,
    windows: {
      stable: windowWithZeros(pod, pod.windows.stable, kind, unknownFamilies),
      panic: windowWithZeros(pod, pod.windows.panic, kind, unknownFamilies),
    },
  };
}

/** Whether the pod counts toward coverage: established stable window and every field read present. */
export function coversPod(pod: PodSample, reads: readonly PodField[], kind: RoleKind): boolean {
  const stable = pod.windows.stable;
  return stable.established && reads.every((field) => podHasField(pod, field, kind, stable));
}
