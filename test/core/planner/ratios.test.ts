import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { projectComponent, type ProjectionRole } from "../../../src/core/planner/projection.js";
import {
  bandSatisfied,
  describeBand,
  highFactor,
  lowFactor,
  ratioBands,
  ratioComponents,
  ratioTolerance,
  violatedBands,
  type RatioBand,
} from "../../../src/core/planner/ratios.js";
import { specOf } from "./fixtures.js";

describe("bandSatisfied", () => {
  it.each([
    // why: edges are inclusive
    { band: { numerator: "p", denominator: "d", min: 0.5, max: 2 }, n: 1, d: 2, ok: true },
    { band: { numerator: "p", denominator: "d", min: 0.5, max: 2 }, n: 4, d: 2, ok: true },
    { band: { numerator: "p", denominator: "d", min: 0.5, max: 2 }, n: 5, d: 2, ok: false },
    { band: { numerator: "p", denominator: "d", min: 0.5, max: 2 }, n: 1, d: 3, ok: false },
    // why: "0.333" written for one in three must accept 1/3 (rounding tolerance)
    { band: { numerator: "e", denominator: "p", max: 0.333 }, n: 1, d: 3, ok: true },
    { band: { numerator: "e", denominator: "p", min: 0.667 }, n: 2, d: 3, ok: true },
    // why: the tolerance never admits a whole extra replica at 1024
    { band: { numerator: "p", denominator: "d", max: 2 }, n: 2049, d: 1024, ok: false },
    { band: { numerator: "p", denominator: "d", min: 1, max: 1 }, n: 1023, d: 1024, ok: false },
    // why: a target alone is a preference, not a constraint
    { band: { numerator: "p", denominator: "d", target: 1 }, n: 9, d: 1, ok: true },
  ])("$band.numerator/$band.denominator $n/$d -> $ok", ({ band, n, d, ok }) => {
    expect(bandSatisfied(band, n, d)).toBe(ok);
  });

  it("keeps the tolerance small for small edges", () => {
    expect(ratioTolerance(0.01)).toBeCloseTo(2e-5, 10);
    expect(ratioTolerance(5)).toBe(5e-4);
  });
});

describe("ratioComponents", () => {
  it("groups connected roles in spec order and leaves unrelated roles alone", () => {
    const bands: RatioBand[] = [
      { numerator: "encode", denominator: "prefill", target: 0.5 },
      { numerator: "prefill", denominator: "decode", min: 0.5, max: 2 },
    ];
    expect(ratioComponents(["server", "encode", "prefill", "decode", "other"], bands)).toEqual([
      ["server"],
      ["encode", "prefill", "decode"],
      ["other"],
    ]);
  });
});

const role = (name: string, lo: number, hi: number, target: number, current: number): ProjectionRole => ({
  name,
  lo,
  hi,
  target,
  current,
});

describe("projectComponent", () => {
  it.each([
    {
      why: "clamped targets already satisfy the band: no search",
      roles: [role("p", 1, 10, 4, 2), role("d", 1, 10, 3, 2)],
      bands: [{ numerator: "p", denominator: "d", min: 0.5, max: 2 }],
      want: [4, 3],
    },
    {
      why: "closest by total distance: p wants 10 but d only 2; p<=2d gives (10,5) at distance 3",
      roles: [role("p", 1, 16, 10, 2), role("d", 1, 16, 2, 2)],
      bands: [{ numerator: "p", denominator: "d", max: 2 }],
      want: [10, 5],
    },
    {
      why: "a fixed 1:1 ratio with targets 10 and 2 costs 8 anywhere in [2,10]; the tie goes to the current count",
      roles: [role("p", 1, 16, 10, 4), role("d", 1, 16, 2, 4)],
      bands: [{ numerator: "p", denominator: "d", min: 1, max: 1, target: 1 }],
      want: [4, 4],
    },
    {
      why: "the band moves d up by one rather than p down by two",
      roles: [role("p", 1, 16, 3, 2), role("d", 1, 16, 1, 2)],
      bands: [{ numerator: "p", denominator: "d", min: 1, max: 1.5, target: 1 }],
      // (3,2) costs 1; (2,2) and (1,1) cost 2.
      want: [3, 2],
    },
    {
      why: "interval limits bind: p cannot pass 5, so d stays within 2x",
      roles: [role("p", 2, 5, 12, 2), role("d", 2, 16, 12, 2)],
      bands: [{ numerator: "p", denominator: "d", min: 0.5 }],
      want: [5, 10],
    },
  ])("$why", ({ roles, bands, want }) => {
    expect(projectComponent(roles, bands).vector).toEqual(want);
  });

  it("uses the ratio target when distance ties", () => {
    // p = d, wanted 3 and 1: p = d = 2 and p = d = 3 both cost 2 (e stays at 4).
    const result = projectComponent(
      [role("p", 2, 4, 3, 2), role("d", 1, 4, 1, 3), role("e", 1, 8, 4, 4)],
      [
        { numerator: "p", denominator: "d", min: 1, max: 1 },
        { numerator: "e", denominator: "p", target: 1.5 },
      ],
    );
    // e/p prefers 1.5: 4/3 is 0.17 away, 4/2 is 0.5 away, so p = d = 3.
    expect(result.vector).toEqual([3, 3, 4]);
  });

  it("reports no vector when the bands cannot be met inside the intervals", () => {
    const result = projectComponent(
      [role("p", 5, 5, 5, 5), role("d", 1, 2, 1, 1)],
      [{ numerator: "p", denominator: "d", max: 2 }],
    );
    expect(result.vector).toBeUndefined();
  });

  it("stops at the node limit with the best vector found so far", () => {
    const roles = Array.from({ length: 6 }, (_, i) => role(`r${i}`, 1, 200, i % 2 === 0 ? 200 : 1, 50));
    const bands = roles
      .slice(1)
      .map((r, i) => ({ numerator: r.name, denominator: roles[i]?.name ?? "", min: 0.5, max: 2 }));
    const result = projectComponent(roles, bands, 5);
    expect(result.limitReached).toBe(true);
  });

  it("agrees with exhaustive search on small random components (cost, then ratio target)", () => {
    const arbRole = fc.record({
      lo: fc.integer({ min: 1, max: 6 }),
      span: fc.integer({ min: 0, max: 5 }),
      target: fc.integer({ min: 1, max: 12 }),
    });
    const arbBand = fc.record({
      min: fc.option(fc.constantFrom(0.25, 0.5, 1, 1.5), { nil: undefined }),
      max: fc.option(fc.constantFrom(1, 1.5, 2, 3), { nil: undefined }),
      target: fc.option(fc.constantFrom(0.5, 1, 2), { nil: undefined }),
    });
    fc.assert(
      fc.property(
        fc.array(arbRole, { minLength: 2, maxLength: 4 }),
        fc.array(arbBand, { minLength: 3, maxLength: 3 }),
        (specs, bandSpecs) => {
          const roles = specs.map((s, i) => role(`r${i}`, s.lo, s.lo + s.span, s.target, s.lo));
          const bands: RatioBand[] = roles.slice(1).map((r, i) => {
            const b: { min?: number | undefined; max?: number | undefined; target?: number | undefined } =
              bandSpecs[i % bandSpecs.length] ?? {};
            const min = b.min;
            const max = b.max !== undefined && min !== undefined && b.max < min ? min : b.max;
            return {
              numerator: r.name,
              denominator: roles[i]?.name ?? "",
              ...(min === undefined ? {} : { min }),
              ...(max === undefined ? {} : { max }),
              ...(b.target === undefined ? {} : { target: b.target }),
            };
          });
          const got = projectComponent(roles, bands);
          // Exhaustive: every vector in the box.
          let best: { cost: number; dev: number } | undefined;
          const walk = (i: number, x: number[]): void => {
            if (i === roles.length) {
              if (
                !bands.every((b) =>
                  bandSatisfied(b, x[Number(b.numerator.slice(1))] ?? 0, x[Number(b.denominator.slice(1))] ?? 0),
                )
              )
                return;
              const cost = x.reduce((sum, v, j) => sum + Math.abs(v - (roles[j]?.target ?? 0)), 0);
              const dev = bands.reduce(
                (sum, b) =>
                  b.target === undefined
                    ? sum
                    : sum +
                      Math.abs(
                        (x[Number(b.numerator.slice(1))] ?? 0) / (x[Number(b.denominator.slice(1))] ?? 1) - b.target,
                      ),
                0,
              );
              if (best === undefined || cost < best.cost || (cost === best.cost && dev < best.dev - 1e-9))
                best = { cost, dev };
              return;
            }
            const r = roles[i] as ProjectionRole;
            for (let v = r.lo; v <= r.hi; v++) walk(i + 1, [...x, v]);
          };
          walk(0, []);
          if (best === undefined) {
            expect(got.vector).toBeUndefined();
            return;
          }
          const x = got.vector as number[];
          expect(x).toBeDefined();
          const cost = x.reduce((sum, v, j) => sum + Math.abs(v - (roles[j]?.target ?? 0)), 0);
          expect(cost).toBe(best.cost);
        },
      ),
      { numRuns: 300 },
    );
  });
});

describe("ratio bands from the spec", () => {
  const spec = specOf({
    roles: [
      { name: "p", maxReplicas: 8 },
      { name: "d", maxReplicas: 8 },
      { name: "e", maxReplicas: 8 },
    ],
    ratios: [
      { numeratorRole: "p", denominatorRole: "d", min: "0.5", max: "2", target: "1" },
      { numeratorRole: "e", denominatorRole: "p", max: "500m" },
      { numeratorRole: "p", denominatorRole: "x", min: "1" },
    ],
  });

  it("reads quantities as numbers and keeps only ratios between planned roles", () => {
    expect(ratioBands(spec, new Set(["p", "d", "e"]))).toStrictEqual([
      { numerator: "p", denominator: "d", min: 0.5, max: 2, target: 1 },
      { numerator: "e", denominator: "p", max: 0.5 },
    ]);
    expect(ratioBands(spec, new Set(["p", "e"]))).toStrictEqual([{ numerator: "e", denominator: "p", max: 0.5 }]);
    expect(ratioBands(spec, new Set(["d", "e"]))).toStrictEqual([]);
  });

  it("a ratio of a role to itself constrains nothing", () => {
    const self = { ...spec, ratios: [{ numeratorRole: "p", denominatorRole: "p", min: "1" }] } as typeof spec;
    expect(ratioBands(self, new Set(["p"]))).toStrictEqual([]);
  });

  it("describes a band by its edges", () => {
    expect(describeBand({ numerator: "p", denominator: "d", min: 0.5, max: 2 })).toBe("p/d >= 0.5 and <= 2");
    expect(describeBand({ numerator: "p", denominator: "d", min: 0.5 })).toBe("p/d >= 0.5");
    expect(describeBand({ numerator: "p", denominator: "d", max: 2 })).toBe("p/d <= 2");
    expect(describeBand({ numerator: "p", denominator: "d", target: 1 })).toBe("p/d");
  });

  it("no denominator satisfies no band; the edges carry their tolerance", () => {
    expect(bandSatisfied({ numerator: "p", denominator: "d" }, 1, 0)).toBe(false);
    expect(lowFactor({ numerator: "p", denominator: "d", min: 1 })).toBeCloseTo(1 - 5e-4, 12);
    expect(highFactor({ numerator: "p", denominator: "d", max: 1 })).toBeCloseTo(1 + 5e-4, 12);
    expect(lowFactor({ numerator: "p", denominator: "d" })).toBeUndefined();
    expect(highFactor({ numerator: "p", denominator: "d" })).toBeUndefined();
  });

  it("violatedBands lists the broken bands; a missing role counts 0", () => {
    const bands: RatioBand[] = [
      { numerator: "p", denominator: "d", min: 1 },
      { numerator: "e", denominator: "p", max: 1 },
    ];
    expect(violatedBands({ p: 1, d: 2, e: 1 }, bands)).toStrictEqual([bands[0]]);
    expect(violatedBands({ p: 2, d: 2 }, bands)).toStrictEqual([]);
    expect(violatedBands({ d: 2, e: 1 }, bands)).toStrictEqual(bands);
  });

  it("components ignore bands naming roles outside the list", () => {
    expect(ratioComponents(["a", "b"], [{ numerator: "a", denominator: "z", min: 1 }])).toStrictEqual([["a"], ["b"]]);
    expect(
      ratioComponents(
        ["a", "b", "c"],
        [
          { numerator: "c", denominator: "b", min: 1 },
          { numerator: "b", denominator: "a", min: 1 },
        ],
      ),
    ).toStrictEqual([["a", "b", "c"]]);
  });
});
