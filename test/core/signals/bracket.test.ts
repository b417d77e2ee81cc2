import { describe, expect, it } from "vitest";
import { p95Bracket, type MergedHistogram } from "../../../src/core/signals/histogram.js";

function merged(pairs: readonly (readonly [number, number])[], sum: number): MergedHistogram {
  const buckets = pairs.map(([upperBound, count]) => ({ upperBound, count }));
  return { buckets, count: buckets.at(-1)?.count ?? 0, sum };
}

describe("p95Bracket", () => {
  it.each([
    {
      name: "inside (0.4, 0.6]: 1 of the bucket's 5 observations → 440 ms",
      h: merged(
        [
          [0.2, 50],
          [0.4, 94],
          [0.6, 99],
          [Infinity, 100],
        ],
        30,
      ),
      want: { lowerMilliseconds: 400, upperMilliseconds: 600, estimateMilliseconds: 440 },
    },
    {
      name: "first bucket: lower bound 0",
      h: merged(
        [
          [0.1, 100],
          [Infinity, 100],
        ],
        3,
      ),
      want: { lowerMilliseconds: 0, upperMilliseconds: 100, estimateMilliseconds: 95 },
    },
    {
      name: "in +Inf: above the last boundary, estimate the larger of mean and that boundary",
      h: merged(
        [
          [0.5, 50],
          [Infinity, 100],
        ],
        80,
      ),
      want: { lowerMilliseconds: 500, upperMilliseconds: Infinity, estimateMilliseconds: 800 },
    },
  ])("$name", ({ h, want }) => {
    expect(p95Bracket(h)).toEqual(want);
  });

  it("is undefined without buckets or observations", () => {
    expect(p95Bracket({ buckets: [], count: 10, sum: 1 })).toBeUndefined();
    expect(
      p95Bracket(
        merged(
          [
            [0.1, 0],
            [Infinity, 0],
          ],
          0,
        ),
      ),
    ).toBeUndefined();
  });
});
