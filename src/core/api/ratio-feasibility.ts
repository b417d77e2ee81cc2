/**
 * Rule `ratio-feasibility`: is there any integer replica vector inside the
 * role bounds that satisfies every ratio band (`min <= numerator/denominator
 * <= max`) at once? Arithmetic is exact: a band bound p/q is compared by
 * cross-multiplication (`q * numerator >= p * denominator`), never by floats.
 *
 * Method, per connected group of roles: bounds propagation to a fixpoint,
 * then a depth-first search that fixes one role at a time and propagates
 * again. The search is complete, so "infeasible" is a proof. It stops after
 * `feasibilityWorkLimit` band revisions; the group is then "undecided" and is
 * admitted with a warning (the planner holds such a group if it finds no
 * vector at run time).
 */
import { problem, type Problem } from "./problem.js";
import { ceilRational, compareRational, floorRational, rational, type Rational } from "./rational.js";
import type { SpecView } from "./rules/view.js";

/** Band revisions (one propagation step of one band) allowed per group before giving up. */
export const feasibilityWorkLimit = 100_000;

export interface BoundedRole {
  readonly name: string;
  readonly minReplicas: number;
  readonly maxReplicas: number;
}

export interface RatioBand {
  /** Index in `spec.ratios`, for messages. */
  readonly index: number;
  readonly numeratorRole: string;
  readonly denominatorRole: string;
  readonly min?: Rational;
  readonly max?: Rational;
}

export type GroupVerdict =
  | {
      readonly verdict: "feasible";
      readonly roles: readonly string[];
      readonly ratios: readonly number[];
      readonly witness: Readonly<Record<string, number>>;
    }
  | { readonly verdict: "infeasible"; readonly roles: readonly string[]; readonly ratios: readonly number[] }
  | { readonly verdict: "undecided"; readonly roles: readonly string[]; readonly ratios: readonly number[] };

interface Domain {
  lo: bigint;
  hi: bigint;
}

/** A band over variable indices: `min <= d[a] / d[b] <= max`. */
interface Constraint {
  readonly a: number;
  readonly b: number;
  readonly min?: Rational;
  readonly max?: Rational;
}

interface Budget {
  remaining: number;
}

/** Tightens domains of one band; returns whether anything changed. Pre: domains non-empty. */
function revise(c: Constraint, d: Domain[]): boolean {
  const a = d[c.a] as Domain;
  const b = d[c.b] as Domain;
  const before = [a.lo, a.hi, b.lo, b.hi];
  if (c.min !== undefined) {
    // a >= min * b, so a >= min * b.lo and b <= a.hi / min.
    a.lo = maxBig(a.lo, ceilRational(rational(c.min.num * b.lo, c.min.den)));
    b.hi = minBig(b.hi, floorRational(rational(a.hi * c.min.den, c.min.num)));
  }
  if (c.max !== undefined) {
    // a <= max * b, so a <= max * b.hi and b >= a.lo / max.
    a.hi = minBig(a.hi, floorRational(rational(c.max.num * b.hi, c.max.den)));
    b.lo = maxBig(b.lo, ceilRational(rational(a.lo * c.max.den, c.max.num)));
  }
  return a.lo !== before[0] || a.hi !== before[1] || b.lo !== before[2] || b.hi !== before[3];
}

// Stryker disable next-line EqualityOperator: on equal values either one is the answer
const maxBig = (x: bigint, y: bigint): bigint => (x > y ? x : y);
// Stryker disable next-line EqualityOperator: on equal values either one is the answer
const minBig = (x: bigint, y: bigint): bigint => (x < y ? x : y);

/** Propagates to a fixpoint: false when a domain empties, undefined when the budget ran out. */
function propagate(constraints: readonly Constraint[], d: Domain[], budget: Budget): boolean | undefined {
  let changed = true;
  while (changed) {
    changed = false;
    for (const c of constraints) {
      if (--budget.remaining < 0) return undefined;
      if (revise(c, d)) changed = true;
      if (d.some((x) => x.lo > x.hi)) return false;
    }
  }
  return true;
}

/** Depth-first search; returns a witness, "none" when proven impossible, undefined on budget exhaustion. */
function search(constraints: readonly Constraint[], d: Domain[], budget: Budget): bigint[] | "none" | undefined {
  const ok = propagate(constraints, d, budget);
  if (ok === undefined) return undefined;
  if (!ok) return "none";
  let pick = -1;
  for (let i = 0; i < d.length; i++) {
    const x = d[i] as Domain;
    if (x.lo !== x.hi && (pick < 0 || x.hi - x.lo < (d[pick] as Domain).hi - (d[pick] as Domain).lo)) pick = i;
  }
  if (pick < 0) return d.map((x) => x.lo);
  const chosen = d[pick] as Domain;
  for (let v = chosen.lo; v <= chosen.hi; v++) {
    const copy = d.map((x) => ({ ...x }));
    copy[pick] = { lo: v, hi: v };
    const found = search(constraints, copy, budget);
    if (found === undefined) return undefined;
    if (found !== "none") return found;
  }
  return "none";
}

/** Groups roles linked by banded ratios (a ratio with only a target links nothing). */
function groups(bands: readonly RatioBand[]): RatioBand[][] {
  const parent = new Map<string, string>();
  const find = (x: string): string => {
    let root = x;
    for (let next = parent.get(root); next !== undefined && next !== root; next = parent.get(root)) root = next;
    return root;
  };
  for (const band of bands) {
    for (const r of [band.numeratorRole, band.denominatorRole]) if (!parent.has(r)) parent.set(r, r);
    parent.set(find(band.numeratorRole), find(band.denominatorRole));
  }
  const byRoot = new Map<string, RatioBand[]>();
  for (const band of bands) {
    const root = find(band.numeratorRole);
    byRoot.set(root, [...(byRoot.get(root) ?? []), band]);
  }
  return [...byRoot.values()];
}

/**
 * Decides each group of banded roles. Bands must name distinct roles present
 * in `roles` with `minReplicas <= maxReplicas`; callers drop the others.
 */
export function checkRatioFeasibility(
  roles: readonly BoundedRole[],
  bands: readonly RatioBand[],
  workLimit = feasibilityWorkLimit,
): GroupVerdict[] {
  const bounds = new Map(roles.map((r) => [r.name, r]));
  const usable = bands.filter(
    (b) => (b.min !== undefined || b.max !== undefined) && bounds.has(b.numeratorRole) && bounds.has(b.denominatorRole),
  );
  return groups(usable).map((group) => {
    const names = [...new Set(group.flatMap((b) => [b.numeratorRole, b.denominatorRole]))];
    const indexOf = new Map(names.map((n, i) => [n, i]));
    const domains = names.map((n) => {
      const r = bounds.get(n) as BoundedRole;
      return { lo: BigInt(r.minReplicas), hi: BigInt(r.maxReplicas) };
    });
    const constraints = group.map((b) => ({
      a: indexOf.get(b.numeratorRole) as number,
      b: indexOf.get(b.denominatorRole) as number,
      // Stryker disable next-line ConditionalExpression: `revise` reads a min key holding undefined as absent
      ...(b.min === undefined ? {} : { min: b.min }),
      // Stryker disable next-line ConditionalExpression: `revise` reads a max key holding undefined as absent
      ...(b.max === undefined ? {} : { max: b.max }),
    }));
    const ratios = group.map((b) => b.index);
    const found = search(constraints, domains, { remaining: workLimit });
    if (found === undefined) return { verdict: "undecided", roles: names, ratios };
    if (found === "none") return { verdict: "infeasible", roles: names, ratios };
    return {
      verdict: "feasible",
      roles: names,
      ratios,
      witness: Object.fromEntries(names.map((n, i) => [n, Number(found[i])])),
    };
  });
}

/** Whether a vector satisfies every band exactly (used by tests and by callers checking a witness). */
export function satisfiesBands(vector: Readonly<Record<string, number>>, bands: readonly RatioBand[]): boolean {
  return bands.every((b) => {
    const a = vector[b.numeratorRole];
    const d = vector[b.denominatorRole];
    if (a === undefined || d === undefined) return true;
    const [na, nd] = [BigInt(a), BigInt(d)];
    return (
      (b.min === undefined || na * b.min.den >= b.min.num * nd) &&
      (b.max === undefined || na * b.max.den <= b.max.num * nd)
    );
  });
}

/** Roles with consistent bounds, first entry per name. */
function boundedRoles(spec: SpecView): BoundedRole[] {
  // Stryker disable next-line ArrayDeclaration: a stray entry has no name, and no band names it
  const roles: BoundedRole[] = [];
  const seen = new Set<string>();
  for (const r of spec.roles) {
    if (r.name === undefined || seen.has(r.name)) continue;
    seen.add(r.name);
    if (r.minReplicas !== undefined && r.maxReplicas !== undefined && r.minReplicas <= r.maxReplicas) {
      roles.push({ name: r.name, minReplicas: r.minReplicas, maxReplicas: r.maxReplicas });
    }
  }
  return roles;
}

/** Ratios between two different named roles whose band is not inverted. */
function searchableBands(spec: SpecView): RatioBand[] {
  // Stryker disable next-line ArrayDeclaration: a stray entry has neither min nor max, so it constrains nothing
  const bands: RatioBand[] = [];
  for (const r of spec.ratios) {
    // A ratio of a role to itself is the ratio-distinct-roles rule's to report.
    if (r.numeratorRole === r.denominatorRole) continue;
    // Stryker disable next-line ConditionalExpression,LogicalOperator: checkRatioFeasibility drops bands naming a role without bounds
    if (r.numeratorRole === undefined || r.denominatorRole === undefined) continue;
    // An inverted band is reported by the ratio-band rule; searching it would only repeat that.
    if (r.min !== undefined && r.max !== undefined && compareRational(r.min.value, r.max.value) > 0) continue;
    bands.push({
      index: r.index,
      numeratorRole: r.numeratorRole,
      denominatorRole: r.denominatorRole,
      ...(r.min === undefined ? {} : { min: r.min.value }),
      ...(r.max === undefined ? {} : { max: r.max.value }),
    });
  }
  return bands;
}

/** The feasibility findings for a spec: errors for proven conflicts, warnings for undecided groups. */
export function ratioFeasibilityFindings(
  spec: SpecView,
  workLimit = feasibilityWorkLimit,
): { problems: Problem[]; warnings: Problem[] } {
  const roles = boundedRoles(spec);
  const bands = searchableBands(spec);
  const problems: Problem[] = [];
  const warnings: Problem[] = [];
  for (const g of checkRatioFeasibility(roles, bands, workLimit)) {
    const first = g.ratios[0] ?? 0;
    const list = g.ratios.map((i) => `spec.ratios[${i}]`).join(", ");
    const roleList = g.roles.join(", ");
    if (g.verdict === "infeasible") {
      problems.push(
        problem(
          "ratio-feasibility",
          ["spec", "ratios", first],
          g.ratios,
          `no replica counts within the bounds of roles ${roleList} satisfy ${list} together`,
        ),
      );
    } else if (g.verdict === "undecided") {
      warnings.push(
        problem(
          "ratio-feasibility",
          ["spec", "ratios", first],
          g.ratios,
          `feasibility of ${list} over roles ${roleList} is undecided after ${workLimit} search steps; admitted, but planning may find no vector`,
        ),
      );
    }
  }
  return { problems, warnings };
}
