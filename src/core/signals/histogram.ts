/**
 * Latency from engine histograms: the 95th percentile as a bucket boundary,
 * or the histogram mean when that boundary cannot be named.
 */
import type { HistogramWindow, LatencyBracket } from "./types.js";

/** The quantile the latency guard reads. */
export const latencyQuantile = 0.95;

/**
 * A histogram merged over the role's sampled pods; `buckets` is empty when any pod had none, `sum` absent when
 * a pod's sum was not asked (its role's sum carries it: observe.ts puts that in).
 */
export interface MergedHistogram {
  readonly buckets: readonly { readonly upperBound: number; readonly count: number }[];
  readonly count: number;
  readonly sum?: number;
}

/** A count or sum the merge adds: finite and not negative. */
export function isAddable(value: number): boolean {
  return Number.isFinite(value) && value >= 0;
}

/** Finite, non-negative count and sum (the sum where it was asked): a histogram the merge adds. */
export function isUsable(histogram: HistogramWindow): boolean {
  return isAddable(histogram.count) && (histogram.sum === undefined || isAddable(histogram.sum));
}

/**
 * The cumulative count of one pod at `upperBound`: the count of its largest own
 * boundary at or below it. When pods use different bucket layouts this can only
 * undercount, which moves the percentile up: the guard errs towards holding.
 */
function cumulativeAt(histogram: HistogramWindow, upperBound: number): number {
  let count = 0;
  for (const bucket of histogram.buckets) {
    if (bucket.upperBound > upperBound) break;
    count = bucket.count;
  }
  return count;
}

/**
 * Sums the window deltas of several pods. Returns undefined when no pod gave a
 * usable histogram. Buckets are merged only when every pod reported buckets.
 */
export function mergeHistograms(histograms: readonly HistogramWindow[]): MergedHistogram | undefined {
  const usable = histograms.filter(isUsable);
  if (usable.length === 0) return undefined;
  const count = usable.reduce((total, h) => total + h.count, 0);
  // One pod without a sum (not asked: its role's sum carries it) leaves the merge without one.
  const sums = usable.every((h) => h.sum !== undefined)
    ? { sum: usable.reduce((total, h) => total + (h.sum ?? 0), 0) }
    : {};
  if (usable.some((h) => h.buckets.length === 0)) return { buckets: [], count, ...sums };
  const bounds = [...new Set(usable.flatMap((h) => h.buckets.map((b) => b.upperBound)))].sort((a, b) => a - b);
  const buckets = bounds.map((upperBound) => ({
    upperBound,
    count: usable.reduce((total, h) => total + cumulativeAt(h, upperBound), 0),
  }));
  return { buckets, count, ...sums };
}

/**
 * The smallest finite boundary whose cumulative count reaches 95% of the
 * window's observations, else the mean (buckets absent, or the percentile in
 * `+Inf`). Seconds in, milliseconds out; undefined without observations, and
 * where the mean is needed but no sum is known.
 *
 * Example: buckets 0.1 → 60, 0.25 → 90, 0.5 → 98, +Inf → 100 with count 100:
 * 95% of 100 is 95, first reached at 0.5 s, so 500 ms.
 */
export function p95Milliseconds(histogram: MergedHistogram | undefined): number | undefined {
  if (histogram === undefined || !(histogram.count > 0)) return undefined;
  // Prometheus `increase()` extrapolates, so counts can be fractional: compare with a small slack.
  const needed = latencyQuantile * histogram.count * (1 - 1e-12);
  // Stryker disable next-line EqualityOperator: `>` differs only for a count equal to `needed` with its slack, not a scraped one
  const boundary = histogram.buckets.find((b) => Number.isFinite(b.upperBound) && b.count >= needed);
  if (boundary !== undefined) return roundMilliseconds(boundary.upperBound * 1000);
  return histogram.sum === undefined ? undefined : roundMilliseconds((histogram.sum / histogram.count) * 1000);
}

/**
 * Rounds to a nanosecond so a boundary like 0.15 s reads as 150 ms and not as
 * 150.00000000000003 ms, which would breach a 150 ms target by float noise.
 */
function roundMilliseconds(milliseconds: number): number {
  return Math.round(milliseconds * 1e6) / 1e6;
}

/**
 * What the buckets say about the 95th percentile: it lies above `lower` and at
 * most at `upper` (the boundary the status reports), and `estimate` places it
 * inside that bucket by linear interpolation of the counts, the assumption
 * Prometheus' `histogram_quantile` makes. In the `+Inf` bucket `upper` is
 * Infinity and the estimate is the larger of the mean and `lower`. Undefined
 * without observations or without buckets (then only the mean is known), and
 * in `+Inf` where no sum is known.
 *
 * Example: buckets 0.4 → 94, 0.6 → 99, +Inf → 100 with count 100: 95 falls in
 * (0.4, 0.6], 1 of its 5 observations in: 400 + 200 × 1/5 = 440 ms.
 */
export function p95Bracket(histogram: MergedHistogram | undefined): LatencyBracket | undefined {
  if (histogram === undefined || !(histogram.count > 0) || histogram.buckets.length === 0) return undefined;
  const needed = latencyQuantile * histogram.count * (1 - 1e-12);
  let lowerBound = 0;
  let lowerCount = 0;
  for (const bucket of histogram.buckets) {
    // Stryker disable next-line EqualityOperator: `>` differs only for a count equal to `needed` with its slack, not a scraped one
    if (bucket.count >= needed) {
      if (!Number.isFinite(bucket.upperBound)) break;
      // lowerCount < needed <= bucket.count (the previous finite bucket did not reach `needed`), so 0 < share <= 1.
      const share = (needed - lowerCount) / (bucket.count - lowerCount);
      const estimate = lowerBound + (bucket.upperBound - lowerBound) * share;
      return {
        lowerMilliseconds: roundMilliseconds(lowerBound * 1000),
        upperMilliseconds: roundMilliseconds(bucket.upperBound * 1000),
        estimateMilliseconds: roundMilliseconds(estimate * 1000),
      };
    }
    if (Number.isFinite(bucket.upperBound)) {
      lowerBound = bucket.upperBound;
      lowerCount = bucket.count;
    }
  }
  if (histogram.sum === undefined) return undefined;
  const mean = histogram.sum / histogram.count;
  return {
    lowerMilliseconds: roundMilliseconds(lowerBound * 1000),
    upperMilliseconds: Infinity,
    estimateMilliseconds: roundMilliseconds(Math.max(mean, lowerBound) * 1000),
  };
}
