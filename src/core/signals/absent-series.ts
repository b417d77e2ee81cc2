/**
 * The one place that decides whether a field a pod does not report is a
 * measured zero rather than unknown.
 *
 * Some engines create a series on first use (SGLang's tokenizer counters and
 * its TTFT, ITL and queue-time histograms appear with the first request), so on a fresh
 * pod with an established window an absent series can mean "nothing happened
 * yet". The absent-counter rule (`absent-counter.ts`) decides from the
 * window's `counterPresence` when the engine's other series say so; everywhere
 * else absent is unknown: the pod does not count toward coverage and
 * scale-down holds.
 *
 * It is only asked about a fresh pod, for a window that is established and a
 * field whose request was answered in full; a failed or partial request is
 * never a measured zero.
 */
import { absentCounterReading } from "./absent-counter.js";
import type { PodSample, PodWindowRates } from "./types.js";

/** The fields whose series an engine may create on first use; gauges exist from start-up. */
export type FirstUseField = "promptTokens" | "generationTokens" | "ttft" | "itl" | "queueTime";
export const firstUseFields: readonly FirstUseField[] = [
  "promptTokens",
  "generationTokens",
  "ttft",
  "itl",
  "queueTime",
];

/**
 * Whether a first-use series the pod does not report in `window` is a measured
 * zero. The evidence is the window's, so the answer is the same for every
 * first-use field.
 */
export function absentSeriesIsMeasuredZero(pod: PodSample, window: PodWindowRates): boolean {
  // An adapter that did not say which counters it saw gives no evidence of absence.
  const presence = window.counterPresence;
  if (presence === undefined) return false;
  const reading = absentCounterReading({
    engine: pod.engine,
    // Only fresh pods are asked: staleness is decided before any field is read.
    podFresh: true,
    windowEstablished: window.established,
    firstUseFamilySeen: presence.firstUseFamily,
    startupCounterSeen: presence.startupCounter,
  });
  return reading.kind === "zero";
}
