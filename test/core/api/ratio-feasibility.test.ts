/**
 * Invariants: "feasible" comes with a witness inside the bounds that meets
 * every band; "infeasible" is confirmed by brute force on small bounds; the
 * search never answers "undecided" for small bounds at the default limit.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  checkRatioFeasibility,
  satisfiesBands,
  type BoundedRole,
  type RatioBand,
} from "../../../src/core/api/ratio-feasibility.js";
import { rational } from "../../../src/core/api/rational.js";

const r = (num: number, den = 1) => rational(BigInt(num), BigInt(den));

describe("checkRatioFeasibility", () => {
  it.each([
    {
      name: "the spec's prefill/decode band over 2..16 is feasible",
      roles: [
        { name: "p", minReplicas: 2, maxReplicas: 16 },
        { name: "d", minReplicas: 2, maxReplicas: 16 },
      ],
      bands: [{ index: 0, numeratorRole: "p", denominatorRole: "d", min: r(1, 2), max: r(2) }],
      verdict: "feasible",
    },
    {
      name: "a ratio of 3/2 exactly needs p=3k, d=2k: impossible when d is at most 1",
      roles: [
        { name: "p", minReplicas: 1, maxReplicas: 16 },
        { name: "d", minReplicas: 1, maxReplicas: 1 },
      ],
      bands: [{ index: 0, numeratorRole: "p", denominatorRole: "d", min: r(3, 2), max: r(3, 2) }],
      verdict: "infeasible",
    },
    {
      name: "a narrow band between integers with small counts",
      roles: [
        { name: "p", minReplicas: 1, maxReplicas: 2 },
        { name: "d", minReplicas: 1, maxReplicas: 2 },
      ],
      bands: [{ index: 0, numeratorRole: "p", denominatorRole: "d", min: r(14, 10), max: r(16, 10) }],
      verdict: "infeasible",
    },
    {
      name: "a cycle of bands that multiplies above 1 cannot close",
      roles: ["a", "b", "c"].map((name) => ({ name, minReplicas: 1, maxReplicas: 64 })),
      bands: [
        { index: 0, numeratorRole: "a", denominatorRole: "b", min: r(2) },
        { index: 1, numeratorRole: "b", denominatorRole: "c", min: r(2) },
        { index: 2, numeratorRole: "c", denominatorRole: "a", min: r(1, 3) },
      ],
      verdict: "infeasible",
    },
    {
      name: "the same cycle closes when the last band allows 1/4",
      roles: ["a", "b", "c"].map((name) => ({ name, minReplicas: 1, maxReplicas: 64 })),
      bands: [
        { index: 0, numeratorRole: "a", denominatorRole: "b", min: r(2) },
        { index: 1, numeratorRole: "b", denominatorRole: "c", min: r(2) },
        { index: 2, numeratorRole: "c", denominatorRole: "a", min: r(1, 4) },
      ],
      verdict: "feasible",
    },
  ] as const)("$name", ({ roles, bands, verdict }) => {
    const [group] = checkRatioFeasibility(roles, bands);
    expect(group?.verdict).toBe(verdict);
  });

  it("treats a target-only ratio as no constraint", () => {
    expect(
      checkRatioFeasibility(
        [
          { name: "p", minReplicas: 1, maxReplicas: 1 },
          { name: "d", minReplicas: 5, maxReplicas: 5 },
        ],
        [{ index: 0, numeratorRole: "p", denominatorRole: "d" }],
      ),
    ).toEqual([]);
  });

  it("decides independent groups separately", () => {
    const roles = ["a", "b", "c", "d"].map((name) => ({ name, minReplicas: 1, maxReplicas: 2 }));
    const verdicts = checkRatioFeasibility(roles, [
      { index: 0, numeratorRole: "a", denominatorRole: "b", min: r(3) },
      { index: 1, numeratorRole: "c", denominatorRole: "d", max: r(1) },
    ]).map((g) => [g.ratios, g.verdict]);
    expect(verdicts).toEqual([
      [[0], "infeasible"],
      [[1], "feasible"],
    ]);
  });

  it("reports undecided, not infeasible, when the work limit runs out", () => {
    const roles = [
      { name: "a", minReplicas: 1, maxReplicas: 1024 },
      { name: "b", minReplicas: 1, maxReplicas: 1024 },
    ];
    expect(
      checkRatioFeasibility(roles, [{ index: 0, numeratorRole: "a", denominatorRole: "b", min: r(1), max: r(1) }], 1)[0]
        ?.verdict,
    ).toBe("undecided");
  });
});

/** Every vector inside the bounds, for brute-force confirmation on small cases. */
function* vectors(
  roles: readonly BoundedRole[],
  i = 0,
  acc: Record<string, number> = {},
): Generator<Record<string, number>> {
  const role = roles[i];
  if (role === undefined) {
    yield { ...acc };
    return;
  }
  for (let n = role.minReplicas; n <= role.maxReplicas; n++) yield* vectors(roles, i + 1, { ...acc, [role.name]: n });
}

const names = ["a", "b", "c"];
const roleArb = fc
  .tuple(fc.integer({ min: 1, max: 6 }), fc.integer({ min: 0, max: 5 }))
  .map(([lo, span]) => ({ lo, hi: lo + span }));
const boundArb = fc.option(fc.tuple(fc.integer({ min: 1, max: 12 }), fc.integer({ min: 1, max: 6 })), {
  nil: undefined,
});
const bandArb = fc.record({
  pair: fc.constantFrom([0, 1], [1, 0], [1, 2], [2, 1], [0, 2], [2, 0]),
  min: boundArb,
  max: boundArb,
});

describe("checkRatioFeasibility properties", () => {
  it("agrees with brute force on small bounds, with valid witnesses", () => {
    fc.assert(
      fc.property(fc.tuple(roleArb, roleArb, roleArb), fc.array(bandArb, { maxLength: 3 }), (ranges, rawBands) => {
        const roles = ranges.map((x, i) => ({ name: names[i] as string, minReplicas: x.lo, maxReplicas: x.hi }));
        const bands: RatioBand[] = rawBands.map((b, index) => ({
          index,
          numeratorRole: names[b.pair[0] as number] as string,
          denominatorRole: names[b.pair[1] as number] as string,
          ...(b.min === undefined ? {} : { min: r(b.min[0], b.min[1]) }),
          ...(b.max === undefined ? {} : { max: r(b.max[0], b.max[1]) }),
        }));
        for (const group of checkRatioFeasibility(roles, bands)) {
          const groupBands = bands.filter((b) => group.ratios.includes(b.index));
          const groupRoles = roles.filter((x) => group.roles.includes(x.name));
          expect(group.verdict).not.toBe("undecided");
          if (group.verdict === "feasible") {
            expect(satisfiesBands(group.witness, groupBands)).toBe(true);
            for (const x of groupRoles) expect(group.witness[x.name]).toBeGreaterThanOrEqual(x.minReplicas);
            for (const x of groupRoles) expect(group.witness[x.name]).toBeLessThanOrEqual(x.maxReplicas);
          } else {
            for (const v of vectors(groupRoles)) expect(satisfiesBands(v, groupBands)).toBe(false);
          }
        }
      }),
      { numRuns: 300 },
    );
  });
});
