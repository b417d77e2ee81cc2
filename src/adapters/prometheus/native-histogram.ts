/**
 * A native histogram with custom buckets (NHCB: Prometheus 3 storing a classic
 * histogram as one series) read as the cumulative counts at bounds that the
 * classic `_bucket` series give, which is what the core's percentile reads
 * (core/signals/histogram.ts: the bucket a rank falls in, and the bound below it).
 *
 * The HTTP API leaves empty buckets out, so an answer names only the bounds of
 * its non-empty buckets: each is written at its upper bound and, where the
 * bucket below it was empty, at its lower bound too (the count below it), so the
 * bucket a rank falls in always has the bound below it; `+Inf` is the count.
 * Bounds above the last non-empty bucket and below the first are not known, and
 * no percentile reads them: every observation is at or below the one, none at or
 * below the other.
 */
import type { NativeHistogram } from "./client.js";

/** `[upper bound, cumulative count]`, the bounds ascending, the last `+Inf` at the histogram's count. */
export function nativeCumulativeCounts(histogram: NativeHistogram): [number, number][] {
  const out: [number, number][] = [];
  let total = 0;
  for (const bucket of histogram.buckets) {
    const last = out.at(-1);
    if (Number.isFinite(bucket.lower) && (last === undefined || last[0] < bucket.lower))
      out.push([bucket.lower, total]);
    total += bucket.count;
    if (Number.isFinite(bucket.upper)) out.push([bucket.upper, total]);
  }
  out.push([Infinity, histogram.count]);
  return out;
}
