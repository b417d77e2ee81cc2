import { describe, expect, it } from "vitest";
import { nativeCumulativeCounts } from "../../../src/adapters/prometheus/native-histogram.js";
import { p95Bracket } from "../../../src/core/signals/histogram.js";
import { nativeHistogramRead } from "../../support/native-histogram.js";

describe("a native histogram with custom buckets, as cumulative counts at bounds", () => {
  // Classic buckets 0.01, 0.05, 0.1, 0.5, 1, +Inf with 2, 0, 4, 0, 0, 1 observations: the answer names three.
  const histogram = nativeHistogramRead;

  it("writes each named bucket's upper bound, its lower bound where the bucket below was empty, and +Inf at the count", () => {
    expect(nativeCumulativeCounts(histogram)).toEqual([
      [0.01, 2],
      [0.05, 2],
      [0.1, 6],
      [1, 6],
      [Infinity, 7],
    ]);
  });

  it("places a percentile where the classic buckets place it: the bound below the bucket it falls in is there", () => {
    const classic = [
      [0.01, 2],
      [0.05, 2],
      [0.1, 6],
      [0.5, 6],
      [1, 6],
      [Infinity, 7],
    ];
    const asBuckets = (list: readonly (readonly number[])[]) =>
      list.map(([upperBound = NaN, count = NaN]) => ({ upperBound, count }));
    for (const count of [7, 6.5, 3]) {
      const scaled = (list: readonly (readonly number[])[]) =>
        asBuckets(list.map(([b = NaN, c = NaN]) => [b, (c * count) / 7]));
      expect(
        p95Bracket({ buckets: scaled(nativeCumulativeCounts(histogram)), count, sum: 1.25 }),
        `count ${count}`,
      ).toEqual(p95Bracket({ buckets: scaled(classic), count, sum: 1.25 }));
    }
    // A rank inside (0.05, 0.1]: the estimate interpolates from 0.05, not from 0.01.
    expect(
      p95Bracket({
        buckets: asBuckets(nativeCumulativeCounts({ ...histogram, count: 6, buckets: histogram.buckets.slice(0, 2) })),
        count: 6,
        sum: 1,
      }),
    ).toEqual({
      lowerMilliseconds: 50,
      upperMilliseconds: 100,
      estimateMilliseconds: 96.25,
    });
  });

  it("reads a histogram with every bucket empty as +Inf at its count", () => {
    expect(nativeCumulativeCounts({ count: 0, sum: 0, buckets: [] })).toEqual([[Infinity, 0]]);
  });
});
