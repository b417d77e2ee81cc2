/**
 * The search's own figures, pinned: its witness and the band revisions it
 * spends (what the work limit counts), so a propagation that tightens less or
 * a search that picks differently shows here; and which spec entries the
 * admission findings read.
 */
import { describe, expect, it } from "vitest";
import {
  checkRatioFeasibility,
  ratioFeasibilityFindings,
  satisfiesBands,
  type BoundedRole,
  type RatioBand,
} from "../../../src/core/api/ratio-feasibility.js";
import { rational } from "../../../src/core/api/rational.js";
import { readSpecView } from "../../../src/core/api/rules/view.js";

const r = (num: number, den = 1) => rational(BigInt(num), BigInt(den));

/** The smallest work limit that decides every group, and the verdicts it gives. */
function leastWork(roles: readonly BoundedRole[], bands: readonly RatioBand[]) {
  for (let limit = 1; limit < 1000; limit++) {
    const verdicts = checkRatioFeasibility(roles, bands, limit);
    if (verdicts.every((g) => g.verdict !== "undecided")) return { limit, verdicts };
  }
  throw new Error("undecided at 1000 revisions");
}

describe("search figures", () => {
  it("one band against a fixed role: one revision fixes the numerator, a second sees the fixpoint", () => {
    const { limit, verdicts } = leastWork(
      [
        { name: "a", minReplicas: 1, maxReplicas: 10 },
        { name: "b", minReplicas: 4, maxReplicas: 4 },
      ],
      [{ index: 0, numeratorRole: "a", denominatorRole: "b", min: r(3, 2), max: r(3, 2) }],
    );
    expect(limit).toBe(2);
    expect(verdicts).toEqual([{ verdict: "feasible", roles: ["a", "b"], ratios: [0], witness: { a: 6, b: 4 } }]);
  });

  it("a chain: three passes to the fixpoint, then the narrower role is fixed first, two revisions per step", () => {
    // a >= 2b, b >= 3c, c = 5: propagation gives b in [15, 50] and a in [30, 100] in 6 revisions;
    // fixing b = 15 and then a = 30 costs 2 revisions each.
    const { limit, verdicts } = leastWork(
      [
        { name: "a", minReplicas: 1, maxReplicas: 100 },
        { name: "b", minReplicas: 1, maxReplicas: 100 },
        { name: "c", minReplicas: 5, maxReplicas: 5 },
      ],
      [
        { index: 0, numeratorRole: "a", denominatorRole: "b", min: r(2) },
        { index: 1, numeratorRole: "b", denominatorRole: "c", min: r(3) },
      ],
    );
    expect(limit).toBe(10);
    expect(verdicts[0]).toMatchObject({ verdict: "feasible", witness: { a: 30, b: 15, c: 5 } });
  });

  it("an exact ratio and a band sharing a role: the smallest vector, found in ten revisions", () => {
    const { limit, verdicts } = leastWork(
      [
        { name: "p", minReplicas: 1, maxReplicas: 9 },
        { name: "d", minReplicas: 1, maxReplicas: 9 },
        { name: "e", minReplicas: 2, maxReplicas: 6 },
      ],
      [
        { index: 0, numeratorRole: "p", denominatorRole: "d", min: r(3, 2), max: r(3, 2) },
        { index: 1, numeratorRole: "e", denominatorRole: "d", min: r(1, 2), max: r(1) },
      ],
    );
    expect(limit).toBe(10);
    expect(verdicts[0]).toMatchObject({ verdict: "feasible", witness: { p: 3, d: 2, e: 2 } });
  });

  it("a proof of infeasibility by propagation alone takes one revision", () => {
    const { limit, verdicts } = leastWork(
      [
        { name: "p", minReplicas: 1, maxReplicas: 9 },
        { name: "d", minReplicas: 1, maxReplicas: 1 },
      ],
      [{ index: 0, numeratorRole: "p", denominatorRole: "d", min: r(3, 2), max: r(3, 2) }],
    );
    expect(limit).toBe(1);
    expect(verdicts[0]?.verdict).toBe("infeasible");
  });

  it("tries every value of the picked role, up to its upper bound", () => {
    // p/d = 3/2 with d in [1, 2]: only d = 2 works, the last value of its domain.
    const verdicts = checkRatioFeasibility(
      [
        { name: "p", minReplicas: 1, maxReplicas: 3 },
        { name: "d", minReplicas: 1, maxReplicas: 2 },
      ],
      [{ index: 0, numeratorRole: "p", denominatorRole: "d", min: r(3, 2), max: r(3, 2) }],
    );
    expect(verdicts[0]).toMatchObject({ verdict: "feasible", witness: { p: 3, d: 2 } });
  });
});

describe("satisfiesBands", () => {
  it("a band whose role the vector lacks constrains nothing", () => {
    const band: RatioBand = { index: 0, numeratorRole: "a", denominatorRole: "b", min: r(2) };
    expect(satisfiesBands({ a: 1 }, [band])).toBe(true);
    expect(satisfiesBands({ b: 1 }, [band])).toBe(true);
    expect(satisfiesBands({ a: 1, b: 1 }, [band])).toBe(false);
  });
});

describe("ratioFeasibilityFindings", () => {
  const findings = (spec: unknown) => ratioFeasibilityFindings(readSpecView(spec));
  const roles = [
    { name: "p", minReplicas: 5, maxReplicas: 5 },
    { name: "d", minReplicas: 5, maxReplicas: 5 },
  ];

  it("names the group's first ratio, every ratio and every role", () => {
    const result = findings({
      roles: [
        { name: "x", minReplicas: 1, maxReplicas: 2 },
        { name: "y", minReplicas: 1, maxReplicas: 2 },
        ...roles,
        { name: "e", minReplicas: 1, maxReplicas: 1 },
      ],
      ratios: [
        { numeratorRole: "x", denominatorRole: "y", max: "1" },
        { numeratorRole: "p", denominatorRole: "d", min: "2" },
        { numeratorRole: "d", denominatorRole: "e", max: "4" },
      ],
    });
    expect(result.problems).toEqual([
      {
        rule: "ratio-feasibility",
        path: "spec.ratios[1]",
        value: [1, 2],
        reason: "no replica counts within the bounds of roles p, d, e satisfy spec.ratios[1], spec.ratios[2] together",
      },
    ]);
    expect(result.warnings).toEqual([]);
  });

  it("reads a band's max alone", () => {
    const result = findings({ roles, ratios: [{ numeratorRole: "p", denominatorRole: "d", max: "0.5" }] });
    expect(result.problems.map((p) => p.path)).toEqual(["spec.ratios[0]"]);
  });

  it("leaves to other rules a ratio of a role to itself, an inverted band and roles without usable bounds", () => {
    expect(findings({ roles, ratios: [{ numeratorRole: "p", denominatorRole: "p", min: "2" }] }).problems).toEqual([]);
    expect(
      findings({ roles, ratios: [{ numeratorRole: "p", denominatorRole: "d", min: "3", max: "2" }] }).problems,
    ).toEqual([]);
    const inverted = [
      { name: "p", minReplicas: 5, maxReplicas: 2 },
      { name: "d", minReplicas: 5, maxReplicas: 5 },
    ];
    expect(
      findings({ roles: inverted, ratios: [{ numeratorRole: "p", denominatorRole: "d", min: "2" }] }).problems,
    ).toEqual([]);
    const unbounded = [{ name: "p", minReplicas: 5 }, roles[1]];
    expect(
      findings({ roles: unbounded, ratios: [{ numeratorRole: "p", denominatorRole: "d", min: "2" }] }).problems,
    ).toEqual([]);
  });

  it("a repeated role name keeps its first bounds", () => {
    const repeated = [...roles, { name: "p", minReplicas: 10, maxReplicas: 10 }];
    const result = findings({ roles: repeated, ratios: [{ numeratorRole: "p", denominatorRole: "d", min: "2" }] });
    expect(result.problems.map((p) => p.path)).toEqual(["spec.ratios[0]"]);
  });

  it("warns, naming the limit, when the search runs out of work", () => {
    const wide = [
      { name: "p", minReplicas: 1, maxReplicas: 1000 },
      { name: "d", minReplicas: 1, maxReplicas: 1000 },
    ];
    const result = ratioFeasibilityFindings(
      readSpecView({ roles: wide, ratios: [{ numeratorRole: "p", denominatorRole: "d", min: "1", max: "1" }] }),
      1,
    );
    expect(result.warnings).toEqual([
      {
        rule: "ratio-feasibility",
        path: "spec.ratios[0]",
        value: [0],
        reason:
          "feasibility of spec.ratios[0] over roles p, d is undecided after 1 search steps; admitted, but planning may find no vector",
      },
    ]);
  });
});
