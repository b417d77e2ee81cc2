/**
 * The oracle's search (docs/quality.md, Definitions): clairvoyant schedules of the headroom family
 * (oracle.ts) per rounding slack, the plateau edges of the cheapest passing one trimmed, then the
 * fixed fleets from the mean need up. The oracle is the cheapest run of them all reaching the goal.
 * The benchmark's matrix and `mds-scaler simulate --oracle` both search this way.
 */
import { replicaCapacity } from "./cluster.js";
import { fluidNeed, oracleSchedule, plateauEdges, schedulePolicy } from "./oracle.js";
import { staticPolicy } from "./policies/static.js";
import type { Policy } from "./policy.js";
import { runPolicy, type Attainment, type RunOptions, type RunResult } from "./run.js";
import { smallestHolding } from "./smallest-fleet.js";
import type { Trace } from "./traces.js";
import { userMaxReplicas } from "./user-figures.js";

/** The share of requests within the SLO that a run must reach: the goal of every table. */
export const attainmentGoal = 0.99;

/** What the search reads of a run. */
export interface SearchedRow {
  readonly policy: string;
  readonly attainment: Attainment;
  readonly gpuHours: number;
}

/** Whether a run reached the goal (the tables' 99 % unless another share is given). */
export const reaches = (row: SearchedRow, goal = attainmentGoal): boolean => row.attainment.both >= goal;

/** The cheapest row reaching the goal, or undefined. */
export function cheapestAtGoal<R extends SearchedRow>(rows: readonly R[], goal = attainmentGoal): R | undefined {
  return rows.filter((r) => reaches(r, goal)).sort((a, b) => a.gpuHours - b.gpuHours)[0];
}

/** Runs one policy on the trace and returns its row. */
export type RowRunner<R extends SearchedRow> = (policy: Policy) => R;

/** What the oracle's search ran and found. */
export interface OracleSearch<R extends SearchedRow> {
  /** The headroom family's rows and the plateau trims, in the order they ran. */
  readonly scheduleRows: R[];
  /** The fixed fleets tried, by size. */
  readonly staticRows: Map<number, R>;
  /** The headroom of the cheapest schedule at slack 0 that reached the goal (undefined when none did). */
  readonly high: number | undefined;
  /** The cheapest row of both reaching the goal: the oracle (undefined when none did). */
  readonly best: R | undefined;
}

/**
 * Searches the oracle on a trace whose fluid need per interval is `need` (`fluidNeed`): the
 * schedules, then the fixed fleets up to `maxReplicas`, each run through `run` (which may record
 * it), each judged by `goal` (the share of requests within the SLO). At most about 40 runs.
 */
export function searchOracle<R extends SearchedRow>(
  run: RowRunner<R>,
  need: readonly number[],
  maxReplicas: number,
  goal = attainmentGoal,
): OracleSearch<R> {
  const meanNeed = need.reduce((a, b) => a + b, 0) / Math.max(1, need.length);
  const peakNeed = Math.max(...need);
  const { rows: scheduleRows, high, schedules } = searchHeadroom(run, goal, need, peakNeed);
  trimPlateaus(run, goal, scheduleRows, schedules, peakNeed);
  const staticRows = searchStatic(run, goal, meanNeed, maxReplicas);
  const best = cheapestAtGoal([...scheduleRows, ...staticRows.values()], goal);
  return { scheduleRows, staticRows, high, best };
}

/** Per rounding slack, a headroom search on a geometric grid, then bisection. */
function searchHeadroom<R extends SearchedRow>(
  run: RowRunner<R>,
  goal: number,
  need: readonly number[],
  peakNeed: number,
): { readonly rows: R[]; readonly high: number | undefined; readonly schedules: Map<R, number[]> } {
  const rows: R[] = [];
  const schedules = new Map<R, number[]>();
  const oracleRun = (h: number, slack: number): R => {
    const label = `oracle-search h=${h.toFixed(3)} slack=${slack}`;
    const schedule = oracleSchedule(need, h, slack);
    const row = run(schedulePolicy(schedule, label, "oracle-search"));
    rows.push(row);
    schedules.set(row, schedule);
    return row;
  };
  let high: number | undefined;
  // Rounding matters only while the fleet is small.
  const slacks = peakNeed < 12 ? [0, 0.25, 0.5] : [0];
  for (const slack of slacks) {
    let low = 0;
    let passing: number | undefined;
    for (const h of [1, 1.25, 1.5, 2, 3, 4, 6, 8]) {
      if (reaches(oracleRun(h, slack), goal)) {
        passing = h;
        break;
      }
      low = h;
    }
    if (passing !== undefined && low > 0) {
      for (let i = 0; i < 3; i++) {
        const mid: number = (low + passing) / 2;
        if (reaches(oracleRun(mid, slack), goal)) passing = mid;
        else low = mid;
      }
    }
    if (slack === 0) high = passing;
  }
  return { rows, high, schedules };
}

/**
 * Spends the allowed 1 % where it is cheapest: from the cheapest passing schedule, lowers the
 * edge of a plateau (start a replica a minute later, or retire it a minute earlier), keeping
 * each step that still reaches the goal and costs less. Only for small fleets, where one
 * replica is a large share of the cost; at most 16 trials. Appends its rows to `scheduleRows`.
 */
function trimPlateaus<R extends SearchedRow>(
  run: RowRunner<R>,
  goal: number,
  scheduleRows: R[],
  schedules: ReadonlyMap<R, number[]>,
  peakNeed: number,
): void {
  const bestSearch = cheapestAtGoal(scheduleRows, goal);
  let schedule = bestSearch === undefined ? undefined : schedules.get(bestSearch);
  if (schedule === undefined || bestSearch === undefined || peakNeed >= 12) return;
  let cost = bestSearch.gpuHours;
  const tried = new Set<string>();
  for (let trials = 0; trials < 16;) {
    const current: number[] = schedule;
    const edge = plateauEdges(current).find((i) => !tried.has(`${i}:${current[i]}`));
    if (edge === undefined) break;
    tried.add(`${edge}:${current[edge]}`);
    const trial = [...current];
    trial[edge] = (trial[edge] ?? 1) - 1;
    trials++;
    const row = run(schedulePolicy(trial, `oracle-search edge ${edge}`, "oracle-search"));
    scheduleRows.push(row);
    if (reaches(row, goal) && row.gpuHours < cost) {
      schedule = trial;
      cost = row.gpuHours;
    }
  }
}

/**
 * Static fleets: the mean-load fleet, then sizes growing by half until one reaches the goal
 * (peak provisioning in hindsight), then bisection down to the smallest that does.
 */
function searchStatic<R extends SearchedRow>(
  run: RowRunner<R>,
  goal: number,
  meanNeed: number,
  maxReplicas: number,
): Map<number, R> {
  const staticRows = new Map<number, R>();
  const runStatic = (n: number): R => {
    const seen = staticRows.get(n);
    if (seen !== undefined) return seen;
    const row = run(staticPolicy(n));
    staticRows.set(n, row);
    return row;
  };
  smallestHolding((n) => reaches(runStatic(n), goal), {
    from: Math.max(1, Math.ceil(meanNeed)),
    limit: maxReplicas,
    grow: (n) => Math.max(n + 1, Math.ceil(n * 1.5)),
  });
  return staticRows;
}

/** The oracle replayed on a trace (`mds-scaler simulate --oracle`), with what its search ran. */
export interface OracleReplay {
  /** The oracle's own run, its policy named `oracle (<the schedule or fleet>)`; undefined when nothing reached the goal. */
  readonly result: RunResult | undefined;
  /** Schedules of the headroom family (with plateau trims) and fixed fleets the search ran. */
  readonly schedulesRun: number;
  readonly fleetsRun: number;
  /** The largest fixed fleet the search may try: the benchmark's `maxReplicas` for this trace. */
  readonly maxReplicas: number;
  /** The cheapest fixed fleet reaching the goal, as the search found it (undefined when none did). */
  readonly smallestFleet: { readonly replicas: number; readonly gpuHours: number } | undefined;
}

/**
 * Searches the oracle on one trace with one fleet's options (one Server role), then replays the
 * cheapest run reaching the goal once more to return it whole (runs are deterministic for a seed).
 */
export function replayOracle(trace: Trace, options: RunOptions, goal = attainmentGoal): OracleReplay {
  const need = fluidNeed(trace, replicaCapacity(options.fleet ?? {}));
  const maxReplicas = userMaxReplicas(Math.max(...need));
  const policies = new Map<SearchedRow, Policy>();
  const search = searchOracle(
    (policy) => {
      const { policy: name, attainment, gpuHours } = runPolicy(trace, policy, options);
      const row = { policy: name, attainment, gpuHours };
      policies.set(row, policy);
      return row;
    },
    need,
    maxReplicas,
    goal,
  );
  const fleets = [...search.staticRows.entries()].map(([replicas, row]) => ({ ...row, replicas }));
  const fleet = cheapestAtGoal(fleets, goal);
  const chosen = search.best === undefined ? undefined : policies.get(search.best);
  const result = chosen === undefined ? undefined : runPolicy(trace, chosen, options);
  return {
    result: result === undefined ? undefined : { ...result, policy: `oracle (${result.policy})` },
    schedulesRun: search.scheduleRows.length,
    fleetsRun: search.staticRows.size,
    maxReplicas,
    smallestFleet: fleet === undefined ? undefined : { replicas: fleet.replicas, gpuHours: fleet.gpuHours },
  };
}
