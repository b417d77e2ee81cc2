/**
 * The rewrite of the `roles` plan's queries for native histograms with custom
 * buckets (bench/nhcb-queries.ts), on the queries the source builds: which
 * queries it touches, and that no rewritten query still names a classic series.
 * bench:sampling-nhcb compares the answers against a real Prometheus; this
 * keeps the rewrite in step with the source's query shapes.
 */
import { describe, expect, it } from "vitest";
import { defaultPrometheusSignalConfig } from "../../src/adapters/prometheus/config.js";
import { PrometheusSignalSource } from "../../src/adapters/prometheus/source.js";
import { samplingInputs } from "../../bench/engine-tsdb.js";
import { nativePodHistogramText, nativeQueryText, nativeRewriteOf } from "../../bench/nhcb-queries.js";

const issued = new PrometheusSignalSource(
  { instantQuery: () => Promise.reject(new Error("not sent")) },
  { ...defaultPrometheusSignalConfig, queryPlan: "roles" },
).issuedFor(samplingInputs(2, { stableWindowSeconds: 180, panicWindowSeconds: 60 }));

const histogramNames = /(time_to_first_token|inter_token_latency|time_per_output_token|queue_time)_seconds/;

describe("the roles plan rewritten for NHCB", () => {
  it("rewrites the 18 latency queries and the resets query holding a histogram count (SGLang's TTFT), and leaves the other 23 as they are", () => {
    const kinds = issued.map(nativeRewriteOf);
    expect(issued).toHaveLength(42);
    expect(kinds.filter((k) => k === "bucket")).toHaveLength(6);
    expect(kinds.filter((k) => k === "count")).toHaveLength(6);
    expect(kinds.filter((k) => k === "sum")).toHaveLength(6);
    expect(kinds.filter((k) => k === "resets")).toHaveLength(1);
    for (const q of issued.filter((x) => nativeRewriteOf(x) === "unchanged")) {
      expect(nativeQueryText(q)).toBe(q.text);
      expect(q.text).not.toMatch(new RegExp(`${histogramNames.source}_(bucket|count|sum)`));
    }
  });

  it("reads no classic histogram series in a rewritten query, and no le label", () => {
    for (const q of issued.filter((x) => nativeRewriteOf(x) !== "unchanged")) {
      const text = nativeQueryText(q);
      expect(text, q.signal).not.toMatch(/_bucket\{|_count\{|_sum\{/);
      expect(text, q.signal).not.toMatch(/\ble\b/);
      expect(text, q.signal).toMatch(histogramNames);
    }
  });

  it("takes counts and sums from the histogram, and collapses SGLang's ranks with avg, which reads histograms", () => {
    const byKind = (kind: string): string[] =>
      issued.filter((q) => nativeRewriteOf(q) === kind).map((q) => nativeQueryText(q));
    for (const text of byKind("count")) expect(text).toContain("histogram_count(increase(");
    for (const text of byKind("sum")) expect(text).toContain("histogram_sum(increase(");
    for (const text of byKind("bucket")) expect(text).not.toContain("max by (");
    const sglangQueue = issued.find((q) => q.signal === "sglang/queue/bucket");
    expect(sglangQueue?.text).toContain("max by (");
    expect(sglangQueue && nativeQueryText(sglangQueue)).toContain("avg by (");
  });

  it("asks a per-pod histogram in place of a count query, and refuses any other query", () => {
    const count = issued.find((q) => q.signal === "sglang/queue/count");
    if (!count) throw new Error("no sglang/queue/count query");
    const text = nativePodHistogramText(count);
    expect(text).not.toMatch(/histogram_count|max by \(/);
    expect(text).toContain("(increase(sglang:queue_time_seconds{");
    const bucket = issued.find((q) => q.signal === "vllm/bucket");
    if (!bucket) throw new Error("no vllm/bucket query");
    expect(() => nativePodHistogramText(bucket)).toThrow(/not a per-pod count query/);
  });
});
