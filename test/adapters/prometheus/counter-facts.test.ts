import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { decodeCounterFacts, presenceBit, resetsFactor } from "../../../src/adapters/prometheus/counter-facts.js";
import { resetCounters } from "../../../src/adapters/prometheus/queries.js";

/** What Prometheus answers for a pod: each present counter's term, `resets × 2^n + 2^i`, added up. */
function fold(counters: readonly string[], resets: ReadonlyMap<string, number>): number {
  let value = 0;
  counters.forEach((counter, i) => {
    const r = resets.get(counter);
    if (r !== undefined) value += r * resetsFactor(counters) + presenceBit(i);
  });
  return value;
}

describe("a pod's counter facts folded into one series", () => {
  it.each(Object.entries(resetCounters))(
    "reads back the %s counters with a sample and their resets summed, whichever are present",
    (_engine, list) => {
      const counters: readonly string[] = list;
      fc.assert(
        fc.property(
          fc.subarray([...counters], { minLength: 1 }),
          fc.array(fc.nat({ max: 100_000 }), { minLength: counters.length, maxLength: counters.length }),
          (present, counts) => {
            const resets = new Map(present.map((c) => [c, counts[counters.indexOf(c)] ?? 0]));
            const total = [...resets.values()].reduce((a, b) => a + b, 0);
            expect(decodeCounterFacts(fold(counters, resets), counters)).toEqual({ resets: total, present });
          },
        ),
      );
    },
  );

  it("reads the SGLang example: prompt and generation counters present, the generation counter reset twice", () => {
    const counters = resetCounters.sglang;
    // 2 × 2^7 + 2^0 (prompt_tokens_total) + 2^1 (generation_tokens_total)
    expect(decodeCounterFacts(259, counters)).toEqual({
      resets: 2,
      present: ["prompt_tokens_total", "generation_tokens_total"],
    });
  });

  it.each([
    ["a fraction", 3.5],
    ["a negative value", -1],
    ["resets with no counter present", 128],
    ["zero: no counter present", 0],
    ["past float64's exact integers", 2 ** 60],
  ])("reads %s as no facts, never as a reading", (_what, value) => {
    expect(decodeCounterFacts(value, resetCounters.sglang)).toBeUndefined();
  });
});
