/**
 * The projection against an exhaustive search over the whole ranking (distance
 * to the targets, ratio-target deviation, replicas moved, then the smallest
 * vector in role order), on fixed pseudo-random components whose current
 * vector is feasible, as the planner calls it. The search effort over the set
 * is pinned: propagation, the first bound from the current vector, coordinate
 * descent and the branch-and-bound cut each change it, so a change to any of
 * them must update the figure on purpose (the figures in `bench/planner.ts`
 * depend on it).
 */
import { describe, expect, it } from "vitest";
import { projectComponent, type ProjectionRole } from "../../../src/core/planner/projection.js";
import { bandSatisfied, type RatioBand } from "../../../src/core/planner/ratios.js";

/** A small linear congruential generator: the same cases on every run. */
function generator(seed: number): (n: number) => number {
  let state = seed;
  return (n) => {
    state = (state * 1103515245 + 12345) % 2147483648;
    return state % n;
  };
}

interface Case {
  readonly roles: ProjectionRole[];
  readonly bands: RatioBand[];
}

const edges = [0.25, 0.5, 1, 1.5, 2, 3];

function randomCase(next: (n: number) => number): Case {
  const size = 2 + next(3);
  const roles: ProjectionRole[] = [];
  for (let i = 0; i < size; i++) {
    const lo = 1 + next(4);
    const hi = lo + next(9);
    roles.push({ name: `r${i}`, lo, hi, target: 1 + next(14), current: lo + next(hi - lo + 1) });
  }
  const bands: RatioBand[] = [];
  for (let i = 1; i < size; i++) {
    const min = next(3) === 0 ? undefined : edges[next(4)];
    const maxRaw = next(3) === 0 ? undefined : edges[2 + next(4)];
    const max = maxRaw !== undefined && min !== undefined && maxRaw < min ? min : maxRaw;
    const target = next(2) === 0 ? undefined : edges[1 + next(4)];
    bands.push({
      numerator: `r${i}`,
      denominator: `r${next(i)}`,
      ...(min === undefined ? {} : { min }),
      ...(max === undefined ? {} : { max }),
      ...(target === undefined ? {} : { target }),
    });
  }
  return { roles, bands };
}

const index = (name: string): number => Number(name.slice(1));

function feasible(bands: readonly RatioBand[], x: readonly number[]): boolean {
  return bands.every((b) => bandSatisfied(b, x[index(b.numerator)] ?? 0, x[index(b.denominator)] ?? 0));
}

/** The best vector by the full ranking, visiting every vector of the box. */
function exhaustive({ roles, bands }: Case): number[] | undefined {
  let best: { key: number[]; x: number[] } | undefined;
  const x = roles.map(() => 0);
  const walk = (i: number): void => {
    if (i === roles.length) {
      if (!feasible(bands, x)) return;
      const cost = x.reduce((s, v, j) => s + Math.abs(v - (roles[j]?.target ?? 0)), 0);
      const dev = bands.reduce(
        (s, b) =>
          b.target === undefined
            ? s
            : s + Math.abs((x[index(b.numerator)] ?? 0) / (x[index(b.denominator)] ?? 1) - b.target),
        0,
      );
      const moved = x.reduce((s, v, j) => s + Math.abs(v - (roles[j]?.current ?? 0)), 0);
      const key = [cost, dev, moved, ...x];
      if (best === undefined || smaller(key, best.key)) best = { key, x: [...x] };
      return;
    }
    const r = roles[i] as ProjectionRole;
    for (let v = r.lo; v <= r.hi; v++) {
      x[i] = v;
      walk(i + 1);
    }
  };
  walk(0);
  return best?.x;
}

function smaller(a: readonly number[], b: readonly number[]): boolean {
  for (let i = 0; i < a.length; i++) {
    const d = (a[i] ?? 0) - (b[i] ?? 0);
    // The ratio deviation (index 1) ties within float noise.
    if (Math.abs(d) > (i === 1 ? 1e-9 : 0)) return d < 0;
  }
  return false;
}

describe("projectComponent against exhaustive search", () => {
  const next = generator(20261130);
  const cases: Case[] = [];
  while (cases.length < 200) {
    const c = randomCase(next);
    // The planner projects only from a current vector that satisfies the bands.
    if (
      feasible(
        c.bands,
        c.roles.map((r) => r.current),
      )
    )
      cases.push(c);
  }

  it("finds the best vector by the full ranking on every case", () => {
    for (const c of cases) {
      const got = projectComponent(c.roles, c.bands);
      expect(got.limitReached).toBe(false);
      expect({ roles: c.roles, bands: c.bands, vector: got.vector }).toStrictEqual({
        roles: c.roles,
        bands: c.bands,
        vector: exhaustive(c),
      });
    }
  });

  it("spends the same search effort (nodes visited over the set)", () => {
    const nodes = cases.map((c) => projectComponent(c.roles, c.bands).nodes);
    expect({ total: nodes.reduce((a, b) => a + b, 0), searched: nodes.filter((n) => n > 0).length }).toStrictEqual({
      total: 274,
      searched: 36,
    });
  });
});
