/**
 * The per-pod fields an algorithm can read, the family of requests each comes
 * from, and how to read one from a pod sample. Coverage (`coverage.ts`) counts
 * a pod only when it has every field its role's algorithm reads.
 */
import type { RoleKind } from "../api/model-deployment.js";
import { sumDefined } from "./defined.js";
import { isUsable } from "./histogram.js";
import { measured, promptDemandTokensPerSecond } from "./prompt-demand.js";
import type { HistogramWindow, PodSample, PodWindowRates, SignalFamily } from "./types.js";

export const podFields = [
  "runningRequests",
  "waitingRequests",
  "promptTokens",
  "generationTokens",
  "ttft",
  "itl",
  "queueTime",
] as const;
export type PodField = (typeof podFields)[number];

/** Where each field comes from: a failed or partial request of that family leaves the field unknown. */
export const familyOfField: Readonly<Record<PodField, SignalFamily>> = {
  runningRequests: "gauges",
  waitingRequests: "gauges",
  promptTokens: "counters",
  generationTokens: "counters",
  ttft: "ttft",
  itl: "itl",
  // The TTFT request carries queue time too: the guard reads both of the same pods and window.
  queueTime: "ttft",
};

/**
 * Waiting requests. SGLang's disaggregation queues are waiting work too, as
 * vLLM's waiting count is: a Decode role adds the prealloc queue (waiting for a
 * decode KV slot) and the transfer queue (waiting for its cache to arrive); a
 * Prefill role adds the bootstrap queue (waiting for the KV handshake before prefill).
 */
export function podWaitingRequests(pod: PodSample, kind: RoleKind): number | undefined {
  const waiting = measured(pod.waitingRequests);
  if (kind === "Decode") {
    return sumDefined([waiting, measured(pod.decodeTransferQueueRequests), measured(pod.decodePreallocQueueRequests)]);
  }
  if (kind === "Prefill") return sumDefined([waiting, measured(pod.prefillBootstrapQueueRequests)]);
  return waiting;
}

function usableHistogram(histogram: HistogramWindow | undefined): boolean {
  return histogram !== undefined && isUsable(histogram);
}

/**
 * Whether the pod reports the field: gauges as the pod's current value, rates
 * and histograms over `window` (the stable window for coverage). A NaN, ±Inf
 * or negative reading is not a report.
 */
export function podHasField(pod: PodSample, field: PodField, kind: RoleKind, window: PodWindowRates): boolean {
  switch (field) {
    case "runningRequests":
      return measured(pod.runningRequests) !== undefined;
    case "waitingRequests":
      return podWaitingRequests(pod, kind) !== undefined;
    case "promptTokens":
      return promptDemandTokensPerSecond(pod.engine, window) !== undefined;
    case "generationTokens":
      return measured(window.generationTokensPerSecond) !== undefined;
    case "ttft":
      return usableHistogram(window.ttftSeconds);
    case "itl":
      return usableHistogram(window.itlSeconds);
    case "queueTime":
      return usableHistogram(window.queueTimeSeconds);
  }
}
