/**
 * The reactive bound's search (docs/quality.md, twenty-seventh run): the scalers of `policies/sighted.ts`
 * over a small grid of measuring and holding windows, each with its headroom searched as the oracle's is
 * (a geometric grid, then bisection); the bound is the cheapest run of them all reaching the goal.
 */
import type { EngineCapacity } from "../engines/model.js";
import { attainmentGoal, cheapestAtGoal, reaches, type RowRunner, type SearchedRow } from "./oracle-search.js";
import { sightedPolicy } from "./policies/sighted.js";
import type { Trace } from "./traces.js";

/** Arrivals measured over the last 15 s (one decision) or the last minute (the oracle's interval). */
export const sightedMeasureSeconds = [15, 60] as const;
/** The largest need kept for one decision, or for the specification's default scale-down window. */
export const sightedHoldSeconds = [15, 300] as const;

export interface SightedSearch<R extends SearchedRow> {
  readonly rows: R[];
  /** The cheapest row reaching the goal: the bound (undefined when none did). */
  readonly best: R | undefined;
}

export function searchSighted<R extends SearchedRow>(
  run: RowRunner<R>,
  trace: Trace,
  capacity: EngineCapacity,
  fleet: { readonly initialReplicas: number; readonly maxReplicas: number },
  goal = attainmentGoal,
  /** The windows searched: the whole grid unless given (a whole day's replay is too long for all four). */
  windows: readonly { readonly measureSeconds: number; readonly holdSeconds: number }[] = sightedMeasureSeconds.flatMap(
    (measureSeconds) => sightedHoldSeconds.map((holdSeconds) => ({ measureSeconds, holdSeconds })),
  ),
): SightedSearch<R> {
  const rows: R[] = [];
  for (const { measureSeconds, holdSeconds } of windows) {
    const runAt = (headroom: number): R => {
      const row = run(sightedPolicy(trace, capacity, { headroom, measureSeconds, holdSeconds, ...fleet }));
      rows.push(row);
      return row;
    };
    let low = 0;
    let passing: number | undefined;
    for (const h of [1, 1.25, 1.5, 2, 3, 4, 6, 8]) {
      if (reaches(runAt(h), goal)) {
        passing = h;
        break;
      }
      low = h;
    }
    if (passing === undefined || low === 0) continue;
    for (let i = 0; i < 3; i++) {
      const mid: number = (low + passing) / 2;
      if (reaches(runAt(mid), goal)) passing = mid;
      else low = mid;
    }
  }
  return { rows, best: cheapestAtGoal(rows, goal) };
}
