/** The search every "smallest fleet that holds" of the benchmark uses: the sizes it tries, in order, and its answer. */
import { describe, expect, it } from "vitest";
import { doubling, smallestHolding } from "../../../src/sim/quality/smallest-fleet.js";

function tried(threshold: number, search: Parameters<typeof smallestHolding>[1]): { answer?: number; sizes: number[] } {
  const sizes: number[] = [];
  const answer = smallestHolding((n) => (sizes.push(n), n >= threshold), search);
  return { ...(answer === undefined ? {} : { answer }), sizes };
}

describe("smallestHolding", () => {
  it("grows until a size holds, then bisects down to the smallest, trying each size once", () => {
    expect(tried(11, { from: 1, limit: 1024, grow: doubling })).toEqual({
      answer: 11,
      sizes: [1, 2, 4, 8, 16, 12, 10, 11],
    });
    expect(tried(1, { from: 1, limit: 1024, grow: doubling })).toEqual({ answer: 1, sizes: [1] });
  });

  it("bisects below the first guess when that guess already holds", () => {
    expect(tried(3, { from: 8, limit: 100, grow: (n) => Math.max(n + 1, Math.ceil(n * 1.5)) })).toEqual({
      answer: 3,
      sizes: [8, 4, 2, 3],
    });
  });

  it("answers nothing when no size up to the limit holds", () => {
    expect(tried(2000, { from: 1, limit: 1024, grow: doubling })).toEqual({
      sizes: [1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024],
    });
  });
});
