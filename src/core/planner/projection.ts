/**
 * The projection of one ratio component onto its bands.
 *
 * For one component the planner knows, per role, an allowed integer interval
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
import { bandSatisfied, floatSlack, highFactor, lowFactor, type RatioBand } from "./ratios.js";

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

/**
 * Node budget of one projection. Most projections need no search or a few
 * dozen nodes. The rare hard one (10 tightly coupled roles of up to 1024
 * replicas with conflicting wishes) finds its best vector early and spends
 * the rest proving it; 4 000 nodes keep it near 10 ms, and the vector
 * returned at the limit is the best found. Against a 400 000-node search on
 * such cases it matched the optimum every time we checked (bench/planner.ts).
 */
export const defaultProjectionNodeLimit = 4_000;

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
      if (narrowByLow(b, lo, hi)) changed = true;
      if (narrowByHigh(b, lo, hi)) changed = true;
      if ((lo[b.n] ?? 0) > (hi[b.n] ?? 0) || (lo[b.d] ?? 0) > (hi[b.d] ?? 0)) return false;
    }
    if (!changed) return true;
  }
  return true;
}

/** x_n >= low * x_d: raises the numerator's floor, lowers the denominator's ceiling. True when it narrowed. */
function narrowByLow(b: CompiledBand, lo: Int32Array, hi: Int32Array): boolean {
  if (b.low === undefined) return false;
  let changed = false;
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
  return changed;
}

/** x_n <= high * x_d: lowers the numerator's ceiling, raises the denominator's floor. True when it narrowed. */
function narrowByHigh(b: CompiledBand, lo: Int32Array, hi: Int32Array): boolean {
  if (b.high === undefined) return false;
  let changed = false;
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
  return changed;
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
  const index = new Map(roles.map((role, i) => [role.name, i] as const));
  const bands: CompiledBand[] = [];
  for (const band of ratioBandsOfComponent) {
    const n = index.get(band.numerator);
    const d = index.get(band.denominator);
    if (n === undefined || d === undefined) continue;
    bands.push({ n, d, low: lowFactor(band), high: highFactor(band), target: band.target, band });
  }
  const state: SearchState = {
    size: roles.length,
    bands,
    targets: roles.map((role) => role.target),
    currents: roles.map((role) => role.current),
    point: new Array<number>(roles.length).fill(0),
    best: undefined,
    nodes: 0,
    nodeLimit,
    limitReached: false,
  };
  const rootLo = Int32Array.from(roles, (role) => role.lo);
  const rootHi = Int32Array.from(roles, (role) => role.hi);
  if (!propagate(bands, rootLo, rootHi)) return { nodes: 0, limitReached: false };

  // Fast path: the clamped targets are the unique vector of least distance to the box.
  const clamped = clampInto(state.targets, rootLo, rootHi);
  if (satisfiesAll(bands, clamped)) return { vector: clamped, nodes: 0, limitReached: false };

  // The current vector is feasible whenever the caller checked it: a first bound for free.
  let inBox = true;
  for (let i = 0; i < state.size; i++) {
    const c = state.currents[i] ?? 0;
    if (c < (rootLo[i] ?? 0) || c > (rootHi[i] ?? 0)) inBox = false;
  }
  if (inBox && satisfiesAll(bands, state.currents))
    consider(state, descend(state, [...state.currents], rootLo, rootHi));

  search(state, rootLo, rootHi);
  const best = state.best;
  if (best === undefined) return { nodes: state.nodes, limitReached: state.limitReached };
  return { vector: best.vector, nodes: state.nodes, limitReached: state.limitReached };
}

/**
 * Coordinate descent from a feasible vector: each role in turn moves to the
 * value closest to its target that its neighbours' counts allow, until no
 * role moves. Cheap, never worse than its start, and a good first bound for
 * the search (which then only has to prove or improve it).
 */
function descend(state: SearchState, start: number[], lo: Int32Array, hi: Int32Array): number[] {
  const x = start;
  for (let round = 0; round < 64; round++) {
    let moved = false;
    for (let i = 0; i < state.size; i++) {
      const [low, high] = neighbourRange(state.bands, x, i, lo[i] ?? 0, hi[i] ?? 0);
      if (low > high) continue;
      const wanted = Math.min(Math.max(state.targets[i] ?? 0, low), high);
      if (wanted === x[i]) continue;
      const before = x[i] ?? 0;
      x[i] = wanted;
      if (
        satisfiesAll(state.bands, x) &&
        Math.abs(wanted - (state.targets[i] ?? 0)) < Math.abs(before - (state.targets[i] ?? 0))
      )
        moved = true;
      else x[i] = before;
    }
    if (!moved) break;
  }
  return x;
}

interface Candidate {
  readonly primary: number;
  readonly secondary: number;
  readonly tertiary: number;
  readonly vector: number[];
}

interface SearchState {
  readonly size: number;
  readonly bands: readonly CompiledBand[];
  readonly targets: readonly number[];
  readonly currents: readonly number[];
  /** Scratch: the clamped targets of the box being visited. */
  readonly point: number[];
  best: Candidate | undefined;
  nodes: number;
  readonly nodeLimit: number;
  limitReached: boolean;
}

function clampInto(values: readonly number[], lo: Int32Array, hi: Int32Array): number[] {
  const out = new Array<number>(values.length);
  for (let i = 0; i < values.length; i++) out[i] = Math.min(Math.max(values[i] ?? 0, lo[i] ?? 0), hi[i] ?? 0);
  return out;
}

function satisfiesAll(bands: readonly CompiledBand[], x: ArrayLike<number>): boolean {
  for (const b of bands) if (!bandSatisfied(b.band, x[b.n] ?? 0, x[b.d] ?? 0)) return false;
  return true;
}

function distanceBetween(x: ArrayLike<number>, from: readonly number[]): number {
  let sum = 0;
  for (let i = 0; i < from.length; i++) sum += Math.abs((x[i] ?? 0) - (from[i] ?? 0));
  return sum;
}

function ratioDeviation(bands: readonly CompiledBand[], x: ArrayLike<number>): number {
  let sum = 0;
  for (const b of bands) if (b.target !== undefined) sum += Math.abs((x[b.n] ?? 0) / (x[b.d] ?? 1) - b.target);
  return sum;
}

/** Keeps `vector` when it ranks before the best so far (see the ranking at the top of this file). */
function consider(state: SearchState, vector: number[]): void {
  const primary = distanceBetween(vector, state.targets);
  const secondary = ratioDeviation(state.bands, vector);
  const tertiary = distanceBetween(vector, state.currents);
  const best = state.best;
  if (best !== undefined) {
    if (primary !== best.primary) {
      if (primary > best.primary) return;
    } else if (Math.abs(secondary - best.secondary) > deviationSlack) {
      if (secondary > best.secondary) return;
    } else if (tertiary !== best.tertiary) {
      if (tertiary > best.tertiary) return;
    } else if (!lexicographicallySmaller(vector, best.vector)) return;
  }
  state.best = { primary, secondary, tertiary, vector };
}

/** The values role `i` may take with every other role at its count in `x`. */
function neighbourRange(
  bands: readonly CompiledBand[],
  x: readonly number[],
  i: number,
  lowStart: number,
  highStart: number,
): [number, number] {
  let low = lowStart;
  let high = highStart;
  for (const b of bands) {
    if (b.n === i) {
      const other = x[b.d] ?? 0;
      if (b.low !== undefined) low = Math.max(low, Math.ceil(b.low * other - floatSlack));
      if (b.high !== undefined) high = Math.min(high, Math.floor(b.high * other + floatSlack));
    } else if (b.d === i) {
      const other = x[b.n] ?? 0;
      if (b.low !== undefined && b.low > 0) high = Math.min(high, Math.floor((other + floatSlack) / b.low));
      if (b.high !== undefined) low = Math.max(low, Math.ceil((other - floatSlack) / b.high));
    }
  }
  return [low, high];
}

/** The widest role of a band the point violates (lowest index on ties); role -1 when it violates none. */
function branchRole(
  bands: readonly CompiledBand[],
  point: readonly number[],
  lo: Int32Array,
  hi: Int32Array,
): { role: number; width: number } {
  let role = -1;
  let width = -1;
  for (const b of bands) {
    if (bandSatisfied(b.band, point[b.n] ?? 0, point[b.d] ?? 0)) continue;
    for (const r of [b.n, b.d]) {
      const w = (hi[r] ?? 0) - (lo[r] ?? 0);
      if (w > width || (w === width && r < role)) {
        role = r;
        width = w;
      }
    }
  }
  return { role, width };
}

/** Depth-first branch and bound over boxes; each box is already propagated. */
function search(state: SearchState, lo: Int32Array, hi: Int32Array): void {
  if (state.limitReached) return;
  if (++state.nodes > state.nodeLimit) {
    state.limitReached = true;
    return;
  }
  const { bands, targets, point } = state;
  for (let i = 0; i < state.size; i++) point[i] = Math.min(Math.max(targets[i] ?? 0, lo[i] ?? 0), hi[i] ?? 0);
  const bound = lowerBound(bands, targets, lo, hi, point);
  if (state.best !== undefined && bound > state.best.primary) return;
  // Branch on the widest role of a violated band.
  const { role, width: roleWidth } = branchRole(bands, point, lo, hi);
  // The clamped point is the box's unique closest vector: when it is feasible it wins the box.
  if (role < 0) {
    consider(state, point.slice());
    return;
  }
  if (roleWidth <= 0) return; // the violated bands' roles are all fixed: nothing here satisfies them
  const mid = Math.floor(((lo[role] ?? 0) + (hi[role] ?? 0)) / 2);
  const lowerFirst = (point[role] ?? 0) <= mid;
  for (let half = 0; half < 2; half++) {
    const takeLower = (half === 0) === lowerFirst;
    const nextLo = lo.slice();
    const nextHi = hi.slice();
    if (takeLower) nextHi[role] = mid;
    else nextLo[role] = mid + 1;
    if (propagate(bands, nextLo, nextHi)) search(state, nextLo, nextHi);
  }
}

const deviationSlack = 1e-9;

function lexicographicallySmaller(a: readonly number[], b: readonly number[]): boolean {
  for (let i = 0; i < a.length; i++) {
    if ((a[i] ?? 0) !== (b[i] ?? 0)) return (a[i] ?? 0) < (b[i] ?? 0);
  }
  return false;
}

/**
 * The least distance to the targets any vector in the box can have, for a
 * branch-and-bound cut. Each role costs at least its distance to its
 * interval; a violated band costs at least the least distance of its two
 * roles to the band's edge line inside the box (a continuous relaxation, so
 * never more than the integer cost). Bands are taken greedily, largest extra
 * cost first, without sharing a role, so no role is counted twice.
 */
function lowerBound(
  bands: readonly CompiledBand[],
  targets: readonly number[],
  lo: Int32Array,
  hi: Int32Array,
  point: readonly number[],
): number {
  let total = 0;
  for (let i = 0; i < targets.length; i++) total += Math.abs((point[i] ?? 0) - (targets[i] ?? 0));
  let extras: { extra: number; n: number; d: number }[] | undefined;
  for (const b of bands) {
    const extra = bandExtra(b, targets, lo, hi, point);
    if (extra !== undefined) (extras ??= []).push({ extra, n: b.n, d: b.d });
  }
  if (extras !== undefined) {
    extras.sort(byExtraDescending);
    const used: number[] = [];
    for (const e of extras) {
      if (used.includes(e.n) || used.includes(e.d)) continue;
      used.push(e.n, e.d);
      total += e.extra;
    }
  }
  // Costs are integers: a bound of 93.7 means at least 94.
  return Number.isFinite(total) ? Math.ceil(total - 1e-6) : total;
}

/** The least extra distance a band the point violates adds over its two roles; undefined when it holds. */
function bandExtra(
  b: CompiledBand,
  targets: readonly number[],
  lo: Int32Array,
  hi: Int32Array,
  point: readonly number[],
): number | undefined {
  const a = point[b.n] ?? 0;
  const c = point[b.d] ?? 0;
  let slope: number | undefined;
  if (b.low !== undefined && a < b.low * c - floatSlack) slope = b.low;
  else if (b.high !== undefined && a > b.high * c + floatSlack) slope = b.high;
  if (slope === undefined) return undefined;
  const tn = targets[b.n] ?? 0;
  const td = targets[b.d] ?? 0;
  const pair = edgeLineDistance(slope, tn, td, lo[b.n] ?? 0, hi[b.n] ?? 0, lo[b.d] ?? 0, hi[b.d] ?? 0);
  return pair - (Math.abs(a - tn) + Math.abs(c - td));
}

/**
 * min |x - tn| + |y - td| over real x = slope * y inside the box: the
 * function is convex and piecewise linear in y, so its minimum is at a
 * breakpoint (y = tn / slope or y = td) or at an end of the feasible range.
 */
function edgeLineDistance(
  slope: number,
  tn: number,
  td: number,
  nLo: number,
  nHi: number,
  dLo: number,
  dHi: number,
): number {
  const yLo = Math.max(dLo, nLo / slope);
  const yHi = Math.min(dHi, nHi / slope);
  if (yLo > yHi + floatSlack) return Infinity;
  const yN = Math.min(Math.max(tn / slope, yLo), yHi);
  const yD = Math.min(Math.max(td, yLo), yHi);
  return Math.min(
    lineCost(slope, tn, td, yLo),
    lineCost(slope, tn, td, yHi),
    lineCost(slope, tn, td, yN),
    lineCost(slope, tn, td, yD),
  );
}

function lineCost(slope: number, tn: number, td: number, y: number): number {
  return Math.abs(slope * y - tn) + Math.abs(y - td);
}

function byExtraDescending(x: { extra: number }, y: { extra: number }): number {
  return y.extra - x.extra;
}
