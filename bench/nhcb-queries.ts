/**
 * The `roles` plan's queries rewritten for histograms stored as native
 * histograms with custom buckets (NHCB), for the measurement of
 * bench/sampling-nhcb.ts: the same selectors, windows, rank filters and
 * per-pod fallback between ITL names, reading the one histogram series
 * (`<name>`) where the classic plan reads `<name>_bucket`, `_count` and `_sum`.
 *
 * - bucket queries: `increase()` of the histogram, summed by role without `le`;
 *   SGLang's duplicate scheduler ranks collapse with `avg` instead of `max`
 *   (`max` ignores native histograms; the duplicates of one DP rank are copies,
 *   so both give the same histogram);
 * - per-pod `_count` and `_sum`: `histogram_count()` and `histogram_sum()` of the increase;
 * - `resets()` of a histogram's `_count` (counter family): `resets()` of the histogram;
 * - every other query unchanged.
 *
 * A variant (`nativePodHistogramText`) asks each pod's increase as a histogram,
 * which answers its count and sum together: one query in place of two.
 *
 * A rewrite of the query text, not a query plan: the source cannot read these answers.
 */
import type { QueryName } from "../src/adapters/prometheus/queries.js";

export interface IssuedQuery {
  readonly family: QueryName;
  readonly signal?: string;
  readonly text: string;
}

/** `increase(<name>_count{…}[w])` and the like: the selector of a histogram's count or sum series. */
const seriesOf = (fn: string, suffix: string): RegExp =>
  new RegExp(`${fn}\\(([A-Za-z_:][A-Za-z0-9_:]*)${suffix}\\{([^}]*)\\}\\[(\\d+s)\\]\\)`, "g");

export type NativeRewrite = "bucket" | "count" | "sum" | "resets" | "unchanged";

/** What the rewrite does to this query of the `roles` plan. */
export function nativeRewriteOf(q: IssuedQuery): NativeRewrite {
  if (q.family === "ttft" || q.family === "itl") {
    const kind = q.signal?.split("/").pop();
    if (kind === "bucket" || kind === "count" || kind === "sum") return kind;
    throw new Error(`latency query ${q.signal ?? "?"}: not a bucket, count or sum query`);
  }
  return q.family === "counters" && seriesOf("resets", "_count").test(q.text) ? "resets" : "unchanged";
}

/** The query as it reads NHCB series. */
export function nativeQueryText(q: IssuedQuery): string {
  switch (nativeRewriteOf(q)) {
    case "bucket":
      return q.text.replaceAll("_bucket{", "{").replaceAll(", le)", ")").replaceAll("max by (", "avg by (");
    case "count":
      return q.text.replace(seriesOf("increase", "_count"), "histogram_count(increase($1{$2}[$3]))");
    case "sum":
      return q.text.replace(seriesOf("increase", "_sum"), "histogram_sum(increase($1{$2}[$3]))");
    case "resets":
      return q.text.replace(seriesOf("resets", "_count"), "resets($1{$2}[$3])");
    case "unchanged":
      return q.text;
  }
}

/**
 * A per-pod count query turned into the per-pod histogram it reads: the
 * increase itself, whose answer carries the count, the sum and the buckets.
 */
export function nativePodHistogramText(q: IssuedQuery): string {
  if (nativeRewriteOf(q) !== "count") throw new Error(`${q.signal ?? q.family}: not a per-pod count query`);
  return nativeQueryText(q).replaceAll("histogram_count(increase(", "(increase(").replaceAll("max by (", "avg by (");
}
