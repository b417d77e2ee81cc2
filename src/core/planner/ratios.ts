/**
 * Ratio bands and the projection onto them.
 *
 * Roles joined by ratios form connected components that move together. For
 * one component the planner knows, per role, an allowed integer interval
 * (bounds, pacing, guards, direction) and a target (the stabilized
 * recommendation). `projectComponent` returns the integer vector inside the
 * intervals that satisfies every band and is closest to the targets, ranked by
 *
 *   1. the sum of |x - target| over the roles,
 *   2. the sum of |x_n / x_d - ratio target| over the ratios with a target,
 *   3. the sum of |x - current| (fewer replicas moved),
 *   4. the lexicographically smallest vector in the spec's role order.
 *
 * The search is a depth-first branch and bound with interval propagation:
 * fixing one role narrows its neighbours' intervals through the bands, and a
 * branch is cut as soon as the distance it must at least cost exceeds the best
 * vector found. When the clamped targets already satisfy every band (the
 * common case) no search runs at all.
 */
import { quantityValue } from "../api/quantity.js";
import type { ScalerSpec } from "../api/scaler.js";

/** One `ratios[]` entry with its quantities read as numbers. */
export interface RatioBand {
  readonly numerator: string;
  readonly denominator: string;
  readonly min?: number;
  readonly max?: number;
  readonly target?: number;
}

/**
 * Allowed slack at a band edge. Ratios are written as decimals ("0.333" for
 * one in three), so a written edge can be off the intended fraction by half a
 * unit in the third decimal: 1/3 - 0.333 = 0.00033. The slack is that half
 * unit, shrunk for small ratios so it never exceeds 0.2% of the edge. With at
 * most 1024 replicas it never admits a whole extra replica.
 */
export function ratioTolerance(edge: number): number {
  return Math.min(5e-4, 2e-3 * edge);
}

/** Float noise allowed when comparing products of counts and factors. */
const floatSlack = 1e-9;

function lowFactor(band: RatioBand): number | undefined {
  return band.min === undefined ? undefined : band.min - ratioTolerance(band.min);
}

function highFactor(band: RatioBand): number | undefined {
  return band.max === undefined ? undefined : band.max + ratioTolerance(band.max);
}

/** The spec's ratios between planned roles; a ratio naming another role constrains nothing. */
export function ratioBands(spec: ScalerSpec, plannedRoles: ReadonlySet<string>): RatioBand[] {
  const bands: RatioBand[] = [];
  for (const ratio of spec.ratios ?? []) {
    if (!plannedRoles.has(ratio.numeratorRole) || !plannedRoles.has(ratio.denominatorRole)) continue;
    if (ratio.numeratorRole === ratio.denominatorRole) continue;
    bands.push({
      numerator: ratio.numeratorRole,
      denominator: ratio.denominatorRole,
      ...(ratio.min === undefined ? {} : { min: quantityValue(ratio.min) }),
      ...(ratio.max === undefined ? {} : { max: quantityValue(ratio.max) }),
      ...(ratio.target === undefined ? {} : { target: quantityValue(ratio.target) }),
    });
  }
  return bands;
}

/** Whether `numerator / denominator` lies in the band, with the edge tolerance. */
export function bandSatisfied(band: RatioBand, numerator: number, denominator: number): boolean {
  if (denominator <= 0) return false;
  const low = lowFactor(band);
  if (low !== undefined && numerator < low * denominator - floatSlack) return false;
  const high = highFactor(band);
  if (high !== undefined && numerator > high * denominator + floatSlack) return false;
  return true;
}

/** Bands the vector violates (a role absent from the vector counts as 0). */
export function violatedBands(vector: Readonly<Record<string, number>>, bands: readonly RatioBand[]): RatioBand[] {
  return bands.filter((band) => !bandSatisfied(band, vector[band.numerator] ?? 0, vector[band.denominator] ?? 0));
}

/** `prefill/decode in [0.5, 2]` style text for messages. */
export function describeBand(band: RatioBand): string {
  const low = band.min === undefined ? "" : `>= ${band.min}`;
  const high = band.max === undefined ? "" : `<= ${band.max}`;
  return `${band.numerator}/${band.denominator} ${[low, high].filter((s) => s !== "").join(" and ")}`.trim();
}

/**
 * Connected components of the ratio graph, each listed in `roleNames` order,
 * components ordered by their first role. A role without ratios is alone.
 */
export function ratioComponents(roleNames: readonly string[], bands: readonly RatioBand[]): string[][] {
  const parent = new Map(roleNames.map((name) => [name, name] as const));
  const find = (name: string): string => {
    let root = name;
    while (parent.get(root) !== root) root = parent.get(root) ?? root;
    parent.set(name, root);
    return root;
  };
  for (const band of bands) {
    if (!parent.has(band.numerator) || !parent.has(band.denominator)) continue;
    const a = find(band.numerator);
    const b = find(band.denominator);
    if (a !== b) parent.set(b, a);
  }
  const groups = new Map<string, string[]>();
  for (const name of roleNames) {
    const root = find(name);
    const group = groups.get(root);
    if (group === undefined) groups.set(root, [name]);
    else group.push(name);
  }
  return [...groups.values()];
}

/** One role of a component as the projection sees it. */
export interface ProjectionRole {
  readonly name: string;
  /** Allowed interval, inclusive. */
  readonly lo: number;
  readonly hi: number;
  /** The count the planner would like. */
  readonly target: number;
  /** The count on the target now (third ranking key). */
  readonly current: number;
}

export interface ProjectionResult {
  /** Counts aligned with the input roles, or undefined when no vector satisfies every band. */
  readonly vector?: readonly number[];
  /** Search nodes visited (0 when the clamped targets were feasible). */
  readonly nodes: number;
  /** The search stopped at its node limit: the vector is the best found, not proven best. */
  readonly limitReached: boolean;
}

interface CompiledBand {
  readonly n: number;
  readonly d: number;
  readonly low: number | undefined;
  readonly high: number | undefined;
  readonly target: number | undefined;
  readonly band: RatioBand;
}

/** Default node budget; enough for 10 tightly coupled roles of 1024 replicas (see bench/planner.ts). */
export const defaultProjectionNodeLimit = 200_000;

/** Propagation rounds are capped; a capped pass stays sound because leaves are checked exactly. */
const maxPropagationRounds = 2048;

/**
 * Narrows `lo`/`hi` in place to bounds consistency with every band. Returns
 * false when some interval becomes empty (no vector in the box satisfies the
 * bands). It never removes a value that belongs to a satisfying vector.
 */
function propagate(bands: readonly CompiledBand[], lo: Int32Array, hi: Int32Array): boolean {
  for (let round = 0; round < maxPropagationRounds; round++) {
    let changed = false;
    for (const b of bands) {
      if (b.low !== undefined) {
        // x_n >= low * x_d: raise the numerator's floor, lower the denominator's ceiling.
        const nLo = Math.ceil(b.low * (lo[b.d] ?? 0) - floatSlack);
        if (nLo > (lo[b.n] ?? 0)) {
          lo[b.n] = nLo;
          changed = true;
        }
        if (b.low > 0) {
          const dHi = Math.floor(((hi[b.n] ?? 0) + floatSlack) / b.low + floatSlack);
          if (dHi < (hi[b.d] ?? 0)) {
            hi[b.d] = dHi;
            changed = true;
          }
        }
      }
      if (b.high !== undefined) {
        // x_n <= high * x_d: lower the numerator's ceiling, raise the denominator's floor.
        const nHi = Math.floor(b.high * (hi[b.d] ?? 0) + floatSlack);
        if (nHi < (hi[b.n] ?? 0)) {
          hi[b.n] = nHi;
          changed = true;
        }
        const dLo = Math.ceil(((lo[b.n] ?? 0) - floatSlack) / b.high - floatSlack);
        if (dLo > (lo[b.d] ?? 0)) {
          lo[b.d] = dLo;
          changed = true;
        }
      }
      if ((lo[b.n] ?? 0) > (hi[b.n] ?? 0) || (lo[b.d] ?? 0) > (hi[b.d] ?? 0)) return false;
    }
    if (!changed) return true;
  }
  return true;
}

function distanceToInterval(value: number, lo: number, hi: number): number {
  if (value < lo) return lo - value;
  if (value > hi) return value - hi;
  return 0;
}

/** Breadth-first order over the band graph from the first role, so each fixed role narrows the next. */
function searchOrder(size: number, bands: readonly CompiledBand[]): number[] {
  const neighbours: number[][] = Array.from({ length: size }, () => []);
  for (const b of bands) {
    neighbours[b.n]?.push(b.d);
    neighbours[b.d]?.push(b.n);
  }
  for (const list of neighbours) list.sort((x, y) => x - y);
  const seen = new Uint8Array(size);
  const order: number[] = [];
  for (let start = 0; start < size; start++) {
    if (seen[start] === 1) continue;
    seen[start] = 1;
    const queue = [start];
    while (queue.length > 0) {
      const next = queue.shift() as number;
      order.push(next);
      for (const other of neighbours[next] ?? []) {
        if (seen[other] === 1) continue;
        seen[other] = 1;
        queue.push(other);
      }
    }
  }
  return order;
}

/**
 * The closest integer vector satisfying every band inside the intervals (see
 * the ranking at the top of this file), or no vector when none exists or the
 * node limit ran out before one was found.
 */
export function projectComponent(
  roles: readonly ProjectionRole[],
  ratioBandsOfComponent: readonly RatioBand[],
  nodeLimit: number = defaultProjectionNodeLimit,
): ProjectionResult {
  const size = roles.length;
  const index = new Map(roles.map((role, i) => [role.name, i] as const));
  const bands: CompiledBand[] = [];
  for (const band of ratioBandsOfComponent) {
    const n = index.get(band.numerator);
    const d = index.get(band.denominator);
    if (n === undefined || d === undefined) continue;
    bands.push({ n, d, low: lowFactor(band), high: highFactor(band), target: band.target, band });
  }
  const targets = roles.map((role) => role.target);
  const currents = roles.map((role) => role.current);
  const rootLo = Int32Array.from(roles, (role) => role.lo);
  const rootHi = Int32Array.from(roles, (role) => role.hi);
  if (!propagate(bands, rootLo, rootHi)) return { nodes: 0, limitReached: false };

  const satisfiesAll = (x: ArrayLike<number>): boolean =>
    bands.every((b) => bandSatisfied(b.band, x[b.n] ?? 0, x[b.d] ?? 0));

  // Fast path: the clamped targets are the unique vector of least distance to the box.
  const clamped = targets.map((t, i) => Math.min(Math.max(t, rootLo[i] ?? 0), rootHi[i] ?? 0));
  if (satisfiesAll(clamped)) return { vector: clamped, nodes: 0, limitReached: false };

  const ratioDeviation = (x: ArrayLike<number>, fixedOnly: { lo: Int32Array; hi: Int32Array } | undefined): number => {
    let sum = 0;
    for (const b of bands) {
      if (b.target === undefined) continue;
      if (fixedOnly !== undefined && (fixedOnly.lo[b.n] !== fixedOnly.hi[b.n] || fixedOnly.lo[b.d] !== fixedOnly.hi[b.d])) continue;
      sum += Math.abs((x[b.n] ?? 0) / (x[b.d] ?? 1) - b.target);
    }
    return sum;
  };

  const order = searchOrder(size, bands);
  let best: { primary: number; secondary: number; tertiary: number; vector: number[] } | undefined;
  let nodes = 0;
  let limitReached = false;
  const devSlack = 1e-9;

  const better = (primary: number, secondary: number, tertiary: number, vector: readonly number[]): boolean => {
    if (best === undefined) return true;
    if (primary !== best.primary) return primary < best.primary;
    if (Math.abs(secondary - best.secondary) > devSlack) return secondary < best.secondary;
    if (tertiary !== best.tertiary) return tertiary < best.tertiary;
    for (let i = 0; i < size; i++) {
      const a = vector[i] ?? 0;
      const b = best.vector[i] ?? 0;
      if (a !== b) return a < b;
    }
    return false;
  };

  const search = (depth: number, lo: Int32Array, hi: Int32Array): void => {
    if (limitReached) return;
    nodes++;
    if (nodes > nodeLimit) {
      limitReached = true;
      return;
    }
    if (depth === size) {
      const vector = Array.from(lo);
      if (!satisfiesAll(vector)) return;
      let primary = 0;
      let tertiary = 0;
      for (let i = 0; i < size; i++) {
        primary += Math.abs((vector[i] ?? 0) - (targets[i] ?? 0));
        tertiary += Math.abs((vector[i] ?? 0) - (currents[i] ?? 0));
      }
      const secondary = ratioDeviation(vector, undefined);
      if (better(primary, secondary, tertiary, vector)) best = { primary, secondary, tertiary, vector };
      return;
    }
    const role = order[depth] as number;
    const t = targets[role] ?? 0;
    const c = currents[role] ?? 0;
    const roleLo = lo[role] ?? 0;
    const roleHi = hi[role] ?? 0;
    // A lower bound on the other roles' distance that holds whatever value this role takes.
    let othersDistance = 0;
    for (let j = 0; j < size; j++) if (j !== role) othersDistance += distanceToInterval(targets[j] ?? 0, lo[j] ?? 0, hi[j] ?? 0);

    const tryValue = (value: number): void => {
      const nextLo = lo.slice();
      const nextHi = hi.slice();
      nextLo[role] = value;
      nextHi[role] = value;
      if (!propagate(bands, nextLo, nextHi)) return;
      if (best !== undefined) {
        let primaryBound = 0;
        for (let j = 0; j < size; j++) primaryBound += distanceToInterval(targets[j] ?? 0, nextLo[j] ?? 0, nextHi[j] ?? 0);
        if (primaryBound > best.primary) return;
        if (primaryBound === best.primary) {
          const secondaryBound = ratioDeviation(nextLo, { lo: nextLo, hi: nextHi });
          if (secondaryBound > best.secondary + devSlack) return;
          if (Math.abs(secondaryBound - best.secondary) <= devSlack) {
            let tertiaryBound = 0;
            for (let j = 0; j < size; j++) tertiaryBound += distanceToInterval(currents[j] ?? 0, nextLo[j] ?? 0, nextHi[j] ?? 0);
            if (tertiaryBound > best.tertiary) return;
          }
        }
      }
      search(depth + 1, nextLo, nextHi);
    };

    // Values by distance to the target; at equal distance, closer to current, then smaller.
    for (let distance = distanceToInterval(t, roleLo, roleHi); ; distance++) {
      const below = t - distance;
      const above = t + distance;
      const belowIn = below >= roleLo && below <= roleHi;
      const aboveIn = distance > 0 && above >= roleLo && above <= roleHi;
      if (!belowIn && !aboveIn && below < roleLo && above > roleHi) break;
      if (best !== undefined && distance + othersDistance > best.primary) break;
      if (belowIn && aboveIn) {
        const belowFirst = Math.abs(below - c) <= Math.abs(above - c);
        tryValue(belowFirst ? below : above);
        if (limitReached) return;
        tryValue(belowFirst ? above : below);
      } else if (belowIn) tryValue(below);
      else if (aboveIn) tryValue(above);
      if (limitReached) return;
    }
  };

  search(0, rootLo, rootHi);
  if (best === undefined) return { nodes, limitReached };
  return { vector: best.vector, nodes, limitReached };
}
