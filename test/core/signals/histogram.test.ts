import { describe, expect, it } from "vitest";
import { mergeHistograms, p95Bracket, p95Milliseconds } from "../../../src/core/signals/histogram.js";
import { eightOfTenUnder100ms, histogram } from "./pods.js";

describe("p95Milliseconds", () => {
  it.each([
    {
      name: "the smallest boundary whose cumulative count reaches 95%",
      h: histogram(
        [
          [0.1, 60],
          [0.25, 90],
          [0.5, 98],
          [Infinity, 100],
        ],
        20,
      ),
      want: 500,
    },
    {
      name: "exactly 95% at a boundary selects that boundary",
      h: histogram(
        [
          [0.1, 50],
          [0.2, 95],
          [0.4, 100],
          [Infinity, 100],
        ],
        15,
      ),
      want: 200,
    },
    {
      name: "the percentile in +Inf falls back to the mean",
      h: histogram(
        [
          [0.1, 50],
          [0.2, 90],
          [Infinity, 100],
        ],
        40,
      ),
      want: 400,
    },
    {
      name: "no buckets: the mean",
      h: { buckets: [], count: 4, sum: 0.2 },
      want: 50,
    },
    {
      name: "a boundary that float arithmetic would blur stays exact (0.15 s → 150 ms)",
      h: histogram(
        [
          [0.15, 100],
          [Infinity, 100],
        ],
        10,
      ),
      want: 150,
    },
    {
      name: "fractional counts from an extrapolated increase(): 95% of 19.99 is 18.99",
      h: histogram(
        [
          [0.05, 18.5],
          [0.1, 19.99],
          [Infinity, 19.99],
        ],
        1,
      ),
      want: 100,
    },
  ])("$name", ({ h, want }) => {
    expect(p95Milliseconds(mergeHistograms([h]))).toBe(want);
  });

  it("has no value without observations: no latency is not zero latency", () => {
    expect(
      p95Milliseconds(
        mergeHistograms([
          histogram(
            [
              [0.1, 0],
              [Infinity, 0],
            ],
            0,
          ),
        ]),
      ),
    ).toBeUndefined();
    expect(p95Milliseconds(mergeHistograms([]))).toBeUndefined();
  });
});

describe("mergeHistograms", () => {
  it("sums bucket counts across pods before taking the percentile", () => {
    // Pod a is fast, pod b slow: alone, a's p95 is 0.1 s; together 95% of 200 = 190 is reached at 0.4 s.
    const a = histogram(
      [
        [0.1, 100],
        [0.2, 100],
        [0.4, 100],
        [Infinity, 100],
      ],
      5,
    );
    const b = histogram(
      [
        [0.1, 0],
        [0.2, 50],
        [0.4, 100],
        [Infinity, 100],
      ],
      30,
    );
    expect(p95Milliseconds(mergeHistograms([a]))).toBe(100);
    expect(mergeHistograms([a, b])).toEqual({
      buckets: [
        { upperBound: 0.1, count: 100 },
        { upperBound: 0.2, count: 150 },
        { upperBound: 0.4, count: 200 },
        { upperBound: Infinity, count: 200 },
      ],
      count: 200,
      sum: 35,
    });
    expect(p95Milliseconds(mergeHistograms([a, b]))).toBe(400);
  });

  it("merges different bucket layouts by undercounting, which can only raise the percentile", () => {
    const fine = histogram(
      [
        [0.1, 10],
        [0.15, 20],
        [0.2, 20],
        [Infinity, 20],
      ],
      2,
    );
    const coarse = histogram(
      [
        [0.2, 20],
        [Infinity, 20],
      ],
      2,
    );
    // At 0.15 the coarse pod contributes its count at 0.1 or below: 0.
    expect(mergeHistograms([fine, coarse])?.buckets).toEqual([
      { upperBound: 0.1, count: 10 },
      { upperBound: 0.15, count: 20 },
      { upperBound: 0.2, count: 40 },
      { upperBound: Infinity, count: 40 },
    ]);
    expect(p95Milliseconds(mergeHistograms([fine, coarse]))).toBe(200);
  });

  it("uses the mean when any pod has no buckets", () => {
    const withBuckets = histogram(
      [
        [0.1, 10],
        [Infinity, 10],
      ],
      0.5,
    );
    const merged = mergeHistograms([withBuckets, { buckets: [], count: 10, sum: 1.5 }]);
    expect(merged?.buckets).toEqual([]);
    expect(p95Milliseconds(merged)).toBe(100);
  });

  it("ignores a histogram with a NaN or negative delta", () => {
    const good = histogram(
      [
        [0.1, 10],
        [Infinity, 10],
      ],
      0.5,
    );
    expect(mergeHistograms([good, { buckets: [], count: Number.NaN, sum: 1 }])).toEqual(mergeHistograms([good]));
    expect(mergeHistograms([{ buckets: [], count: -3, sum: 1 }])).toBeUndefined();
  });
});

describe("histogram edges: empty, merged layouts, exact 95%", () => {
  it("a histogram without observations is usable; one with a negative count or sum is not", () => {
    expect(mergeHistograms([{ buckets: [], count: 0, sum: 0 }])).toEqual({ buckets: [], count: 0, sum: 0 });
    expect(mergeHistograms([{ buckets: [], count: -1, sum: 0 }])).toBeUndefined();
    expect(mergeHistograms([{ buckets: [], count: 1, sum: -1 }])).toBeUndefined();
  });

  it("a pod whose sum was not asked is usable by its count; the merge then has no sum, and no mean", () => {
    const noSum = {
      buckets: [
        { upperBound: 0.1, count: 1 },
        { upperBound: Infinity, count: 2 },
      ],
      count: 2,
    };
    const merged = mergeHistograms([noSum, eightOfTenUnder100ms]);
    expect(merged).toEqual({
      buckets: [
        { upperBound: 0.1, count: 9 },
        { upperBound: Infinity, count: 12 },
      ],
      count: 12,
    });
    // 95 % of 12 falls in +Inf: the mean would be read, and no sum is known.
    expect(p95Milliseconds(merged)).toBeUndefined();
    expect(p95Bracket(merged)).toBeUndefined();
    expect(mergeHistograms([{ buckets: [], count: Number.NaN }])).toBeUndefined();
    // A boundary reaching 95 % needs no sum.
    expect(p95Milliseconds(mergeHistograms([{ ...noSum, buckets: [{ upperBound: 0.1, count: 2 }] }]))).toBe(100);
  });

  it("a pod without observations and without buckets still withholds the bucket merge", () => {
    const merged = mergeHistograms([{ buckets: [], count: 0, sum: 0 }, eightOfTenUnder100ms]);
    expect(merged).toEqual({ buckets: [], count: 10, sum: 0.9 });
  });

  it("merges different layouts in ascending boundary order", () => {
    const a = histogram(
      [
        [0.1, 1],
        [0.5, 2],
        [Infinity, 2],
      ],
      0.5,
    );
    const b = histogram(
      [
        [0.25, 1],
        [Infinity, 1],
      ],
      0.2,
    );
    expect(mergeHistograms([a, b])?.buckets.map((bucket) => bucket.upperBound)).toEqual([0.1, 0.25, 0.5, Infinity]);
  });

  it("no histogram has no percentile", () => {
    expect(p95Milliseconds(undefined)).toBeUndefined();
    expect(p95Bracket(undefined)).toBeUndefined();
  });

  it("p95Bracket needs buckets", () => {
    expect(p95Bracket({ buckets: [], count: 10, sum: 1 })).toBeUndefined();
  });

  it("a bucket holding exactly 95% of the observations is the percentile's bucket", () => {
    const exact = histogram(
      [
        [0.1, 95],
        [0.2, 100],
        [Infinity, 100],
      ],
      10,
    );
    expect(p95Milliseconds(exact)).toBe(100);
    expect(p95Bracket(exact)).toEqual({ lowerMilliseconds: 0, upperMilliseconds: 100, estimateMilliseconds: 100 });
  });

  it("an infinite bucket short of the count leaves the last finite boundary as the lower end", () => {
    // Extrapolated window counts need not agree: the buckets end at 90 of 100 observations.
    const short = {
      buckets: [
        { upperBound: 0.1, count: 50 },
        { upperBound: Infinity, count: 90 },
      ],
      count: 100,
      sum: 5,
    };
    expect(p95Bracket(short)).toEqual({
      lowerMilliseconds: 100,
      upperMilliseconds: Infinity,
      estimateMilliseconds: 100,
    });
  });
});
