/**
 * The one place that decides whether a field a pod does not report is a
 * measured zero rather than unknown.
 *
 * Some engines create a series on first use (SGLang's tokenizer counters and
 * histograms appear with the first finished request), so on a fresh pod with
 * an established window an absent series can mean "nothing happened yet". The
 * engine-signals rule decides when the engine's other series say so. Until
 * that rule is given here, absent is unknown: the pod does not count toward
 * coverage and scale-down holds.
 *
 * It is only asked about a fresh pod whose stable window is established and
 * whose field's request was answered in full; a failed or partial request is
 * never a measured zero.
 */
import type { PodField } from "./pod-fields.js";
import type { PodSample } from "./types.js";

export function absentSeriesIsMeasuredZero(_pod: PodSample, _field: PodField): boolean {
  return false;
}
