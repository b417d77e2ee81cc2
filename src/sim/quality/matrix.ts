/**
 * One trace at one scale through every policy of the comparison: static
 * fleets (swept), HPA on queue depth (swept), Knative-style (swept),
 * mds-scaler with each algorithm, and the oracle search. Returns one row per
 * run plus each family's frontier and its cheapest point at 99 % attainment.
 */
import type { AlgorithmType } from "../../core/api/scaler.js";
import type { EngineCapacity } from "../engines/model.js";
import { defaultPresetName, replicaPresets } from "./presets.js";
import { fluidNeed, oracleSchedule, plateauEdges, schedulePolicy } from "./oracle.js";
import { hpaPolicy } from "./policies/hpa.js";
import { knativePolicy } from "./policies/knative.js";
import type { ScalerSpec } from "../../core/api/scaler.js";
import { mdsPolicy } from "./policies/mds.js";
import { defaultLatencyGuardReading, type LatencyGuardReading } from "../../core/algorithms/ttft-reading.js";
import { staticPolicy } from "./policies/static.js";
import { smallestHolding } from "./smallest-fleet.js";
import type { Policy } from "./policy.js";
import { runPolicy, type Attainment, type RunOptions, type RunResult } from "./run.js";
import { defaultScaler, replicaFigures, targetUtilisation, type ReplicaFigures } from "./scalers.js";
import type { Trace } from "./traces.js";
import {
  calibrateOnTraining,
  shorterScaleDownWindowSeconds,
  sloTtftMilliseconds,
  userMaxReplicas,
  type CalibratedFigures,
} from "./user-figures.js";

export { sloTtftMilliseconds };

export const attainmentGoal = 0.99;

/**
 * The traces of `npm run bench:quality`, each run at native rate and with this
 * many overlaid copies (tens of replicas at the engine simulator's default
 * capacity). The oracle tests run the same slices.
 */
export const benchScaleCopies: Readonly<Record<string, number>> = {
  "azure-conv": 10,
  "azure-code": 10,
  "mooncake-conversation": 4,
  "servegen-m-large-day": 10,
};

/** A row at the goal that spends fewer GPU-hours than the oracle: the oracle's definition failed there. */
export function rowsBeatingOracle(result: MatrixResult): Row[] {
  return result.rows.filter((r) => r.attainment.both >= attainmentGoal && r.gpuHours < result.oracle.gpuHours);
}

export interface Row {
  readonly policy: string;
  readonly family: string;
  readonly attainment: Attainment;
  readonly gpuHours: number;
  readonly scaleEvents: number;
  readonly maxBacklog: number;
  readonly maxReplicas: number;
  readonly unfinished: number;
  readonly wallSeconds: number;
  readonly requests: number;
  readonly notes?: string;
}

export interface MatrixResult {
  readonly trace: string;
  readonly requests: number;
  readonly spanSeconds: number;
  readonly rows: readonly Row[];
  readonly oracle: Row;
  readonly wallSeconds: number;
  /** The figures of the calibrated rows, from the training slice, one per guard reading; absent without one. */
  readonly calibrated?: readonly CalibratedFigures[];
  /** The figures of today's rows: 80 % of the fluid capacity at the evaluated trace's mean request, and its SLO p95. */
  readonly ruleOfThumb: { readonly tokensPerSecondPerReplica: number; readonly ttftTargetMilliseconds: number };
}

export interface MatrixOptions {
  readonly seed: number;
  readonly capacity?: EngineCapacity;
  /** Sweep points per baseline (3 in the quick matrix, 5 in the full one). */
  readonly sweepPoints?: number;
  readonly run?: Omit<RunOptions, "seed">;
  /** Receives every finished run (progress output). */
  readonly onRow?: (row: Row) => void;
  /**
   * The training slice the calibrated rows' figures come from (user-figures.ts): a part of the
   * trace that `trace` does not include. Without it the matrix runs no calibrated row.
   */
  readonly training?: Trace;
  /**
   * The latency guard's readings each token-algorithm variant runs with, side by side
   * (the default reading alone when absent). With more than one, each row's label names its reading.
   */
  readonly latencyGuardReadings?: readonly LatencyGuardReading[];
}

/**
 * The token-algorithm variants, once per latency guard reading: the label unchanged with
 * one reading, suffixed `; <reading> guard` inside its parentheses with more.
 */
export function perGuardReading(
  label: string,
  readings: readonly LatencyGuardReading[],
  make: (reading: LatencyGuardReading, label: string) => Policy,
): Policy[] {
  if (readings.length <= 1) return [make(readings[0] ?? defaultLatencyGuardReading, label)];
  return readings.map((reading) => make(reading, label.replace(/\)$/, `; ${reading} guard)`)));
}

function rowOf(r: RunResult): Row {
  return {
    policy: r.policy,
    family: r.family,
    attainment: r.attainment,
    gpuHours: r.gpuHours,
    scaleEvents: r.scaleEvents,
    maxBacklog: r.maxBacklog,
    maxReplicas: r.maxReplicas,
    unfinished: r.unfinished,
    wallSeconds: r.wallSeconds,
    requests: r.requests,
    ...(r.notes === undefined ? {} : { notes: r.notes }),
  };
}

const reaches = (row: Row): boolean => row.attainment.both >= attainmentGoal;

/** The cheapest row reaching the goal, or undefined. */
export function cheapestAtGoal(rows: readonly Row[]): Row | undefined {
  return rows.filter(reaches).sort((a, b) => a.gpuHours - b.gpuHours)[0];
}

/** Rows no other row of the set dominates (at least as much attainment for at most the GPU-hours). */
export function frontier(rows: readonly Row[]): Row[] {
  return rows
    .filter(
      (r) =>
        !rows.some(
          (o) =>
            o !== r &&
            o.gpuHours <= r.gpuHours &&
            o.attainment.both >= r.attainment.both &&
            (o.gpuHours < r.gpuHours || o.attainment.both > r.attainment.both),
        ),
    )
    .sort((a, b) => a.gpuHours - b.gpuHours);
}

/** The mds-scaler variants of the comparison: each algorithm at the shipped defaults, and with latency targets set to the SLO. */
export function mdsVariants(
  trace: Trace,
  capacity: EngineCapacity,
  initialReplicas: number,
  maxReplicas: number,
  sloTtftMilliseconds: number,
  readings: readonly LatencyGuardReading[] = [defaultLatencyGuardReading],
): Policy[] {
  const figures = replicaFigures(trace, capacity);
  const out: Policy[] = [];
  for (const algorithm of ["Proportional", "TokenThroughput", "Predictive"] as AlgorithmType[]) {
    const spec = defaultScaler({ algorithm, figures, maxReplicas });
    if (algorithm === "Proportional") {
      // Proportional has no latency guard: one row whatever the reading.
      out.push(mdsPolicy({ spec, initialReplicas, label: `mds-scaler ${algorithm} (defaults)` }));
      continue;
    }
    const tuned = defaultScaler({ algorithm, figures, maxReplicas, ttftTargetMilliseconds: sloTtftMilliseconds });
    for (const [s, variant] of [
      [spec, "defaults"],
      [tuned, "ttft target = SLO"],
    ] as const) {
      out.push(
        ...perGuardReading(`mds-scaler ${algorithm} (${variant})`, readings, (latencyGuardReading, label) =>
          mdsPolicy({ spec: s, initialReplicas, label, latencyGuardReading }),
        ),
      );
    }
  }
  return out;
}

/** The label of a calibrated row: the algorithm at the figures `calibrate` gives on the training slice. */
export const calibratedLabel = (algorithm: AlgorithmType): string => `mds-scaler ${algorithm} (calibrated)`;

/**
 * TokenThroughput and Predictive at the calibrated figures and the SLO's targets, with the guard
 * reading calibrate judged by; none when calibrate gave no figure. `labelled` adds the reading to
 * the label (when the run compares readings).
 */
export function calibratedVariants(
  figures: CalibratedFigures,
  trace: Trace,
  capacity: EngineCapacity,
  initialReplicas: number,
  labelled = false,
): Policy[] {
  const { maxReplicas } = figures;
  const tokensPerSecondPerReplica = figures.tokensPerSecondPerReplica;
  if (tokensPerSecondPerReplica === undefined) return [];
  return (["TokenThroughput", "Predictive"] as const).flatMap((algorithm) => {
    const options = {
      algorithm,
      // Only Proportional's queue depth reads these; the token algorithms get the calibrated figure.
      figures: replicaFigures(trace, capacity),
      maxReplicas,
      tokensPerSecondPerReplica,
      ttftTargetMilliseconds: figures.ttftTargetMilliseconds,
      itlTargetMilliseconds: figures.itlTargetMilliseconds,
    };
    const base = labelled
      ? calibratedLabel(algorithm).replace(/\)$/, `; ${figures.reading} guard)`)
      : calibratedLabel(algorithm);
    // One row; a variant's label ends with what it changes.
    const row = (spec: ScalerSpec, variant?: string): Policy =>
      mdsPolicy({
        spec,
        initialReplicas,
        label: variant === undefined ? base : base.replace(/\)$/, `; ${variant})`),
        latencyGuardReading: figures.reading,
      });
    const brokeFrom = figures.capacityTokensPerSecondPerReplica;
    const noise = figures.calibration.demandNoise?.varianceTokensPerSecondSquared;
    // The training fleet as the ceiling, never above the benchmark's own (seventh calibrated run).
    const capped =
      figures.trainingFleetReplicas === undefined ? undefined : Math.min(maxReplicas, figures.trainingFleetReplicas);
    const cappedVariant = "capped at the training fleet";
    return [
      row(defaultScaler(options)),
      // A shorter scale-down window (docs/quality.md, third calibrated run).
      row(
        defaultScaler({ ...options, scaleDownStabilizationSeconds: shorterScaleDownWindowSeconds }),
        `scale-down ${shorterScaleDownWindowSeconds} s`,
      ),
      // Predictive with calibrate's capacity as its forecast capacity (fourth calibrated run).
      ...(algorithm === "Predictive" && brokeFrom !== undefined
        ? [row(defaultScaler({ ...options, forecastCapacityPerReplica: brokeFrom }), "capacity where targets broke")]
        : []),
      // Predictive with the demand noise calibrate measured as its filter's measurement noise (sixth run).
      ...(algorithm === "Predictive" && noise !== undefined
        ? [row(defaultScaler({ ...options, measurementNoise: noise }), "measured noise")]
        : []),
      // Predictive with both: the measured noise and calibrate's capacity (eighth calibrated run).
      ...(algorithm === "Predictive" && noise !== undefined && brokeFrom !== undefined
        ? [
            row(
              defaultScaler({ ...options, measurementNoise: noise, forecastCapacityPerReplica: brokeFrom }),
              "measured noise; capacity where targets broke",
            ),
          ]
        : []),
      ...(algorithm === "TokenThroughput" && capped !== undefined
        ? [row(defaultScaler({ ...options, maxReplicas: capped }), cappedVariant)]
        : []),
      ...(algorithm === "Predictive" && noise !== undefined && capped !== undefined
        ? [
            row(
              defaultScaler({ ...options, measurementNoise: noise, maxReplicas: capped }),
              `measured noise; ${cappedVariant}`,
            ),
          ]
        : []),
    ];
  });
}

function spread(center: number, points: number): number[] {
  const factors = points >= 5 ? [0.25, 0.5, 1, 2, 4] : [0.5, 1, 2];
  return [...new Set(factors.map((f) => Math.max(1, Math.round(center * f))))];
}

/** Runs one policy on the table's trace, records its row and reports it. */
type RowRunner = (policy: Policy) => Row;

/** The oracle family's rows, and the headroom of the cheapest schedule at slack 0 (undefined when none passed). */
interface OracleSearch {
  readonly rows: Row[];
  readonly high: number | undefined;
}

/** Per rounding slack, a headroom search on a geometric grid, then bisection. */
function searchOracle(
  run: RowRunner,
  need: readonly number[],
  peakNeed: number,
): OracleSearch & {
  readonly schedules: Map<Row, number[]>;
} {
  const rows: Row[] = [];
  const schedules = new Map<Row, number[]>();
  const oracleRun = (h: number, slack: number): Row => {
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
      if (reaches(oracleRun(h, slack))) {
        passing = h;
        break;
      }
      low = h;
    }
    if (passing !== undefined && low > 0) {
      for (let i = 0; i < 3; i++) {
        const mid: number = (low + passing) / 2;
        if (reaches(oracleRun(mid, slack))) passing = mid;
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
 * replica is a large share of the cost; at most 16 trials. Appends its rows to `oracleRows`.
 */
function trimOraclePlateaus(
  run: RowRunner,
  oracleRows: Row[],
  schedules: ReadonlyMap<Row, number[]>,
  peakNeed: number,
): void {
  const bestSearch = cheapestAtGoal(oracleRows);
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
    oracleRows.push(row);
    if (reaches(row) && row.gpuHours < cost) {
      schedule = trial;
      cost = row.gpuHours;
    }
  }
}

/**
 * Static fleets: the mean-load fleet, then sizes growing by half until one reaches the goal
 * (peak provisioning in hindsight), then bisection down to the smallest that does.
 */
function searchStatic(run: RowRunner, meanNeed: number, maxReplicas: number): Map<number, Row> {
  const staticRows = new Map<number, Row>();
  const runStatic = (n: number): Row => {
    const seen = staticRows.get(n);
    if (seen !== undefined) return seen;
    const row = run(staticPolicy(n));
    staticRows.set(n, row);
    return row;
  };
  smallestHolding((n) => reaches(runStatic(n)), {
    from: Math.max(1, Math.ceil(meanNeed)),
    limit: maxReplicas,
    grow: (n) => Math.max(n + 1, Math.ceil(n * 1.5)),
  });
  return staticRows;
}

/** The baselines that react (HPA, Knative), mds-scaler at today's figures, then at the user's calibrated ones. */
function runScalerRows(
  run: RowRunner,
  trace: Trace,
  options: MatrixOptions,
  table: {
    readonly capacity: EngineCapacity;
    readonly runOptions: RunOptions;
    readonly initialReplicas: number;
    readonly maxReplicas: number;
    readonly figures: ReplicaFigures;
    readonly sloTtftMilliseconds: number;
  },
): CalibratedFigures[] | undefined {
  const { capacity, runOptions, initialReplicas, maxReplicas, figures, sloTtftMilliseconds: sloTtft } = table;
  const points = options.sweepPoints ?? 3;
  for (const target of spread(figures.queueDepthAtTarget, points))
    run(hpaPolicy({ targetPerReplica: target, initialReplicas, maxReplicas }));
  for (const target of spread(figures.queueDepthAtTarget, points))
    run(knativePolicy({ targetPerReplica: target, initialReplicas, maxReplicas }));
  const readings = options.latencyGuardReadings;
  for (const policy of mdsVariants(trace, capacity, initialReplicas, maxReplicas, sloTtft, readings)) run(policy);
  // The user's figures from the training slice alone, beside today's rows in the same run.
  // One calibration per guard reading: calibrate judges TTFT as the guard the rows run with does.
  const calibrated =
    options.training === undefined
      ? undefined
      : (readings ?? [defaultLatencyGuardReading]).map((reading) =>
          calibrateOnTraining(options.training as Trace, capacity, runOptions, reading),
        );
  for (const c of calibrated ?? [])
    for (const policy of calibratedVariants(c, trace, capacity, initialReplicas, (readings?.length ?? 1) > 1))
      run(policy);
  return calibrated;
}

export function runMatrix(trace: Trace, options: MatrixOptions): MatrixResult {
  const start = performance.now();
  // The benchmark's replica: the default preset (docs/quality.md, "Replica presets").
  const capacity = options.capacity ?? replicaPresets[defaultPresetName].capacity;
  const runOptions: RunOptions = { ...options.run, seed: options.seed, fleet: { ...options.run?.fleet, capacity } };
  const rows: Row[] = [];
  const run: RowRunner = (policy) => {
    const row = rowOf(runPolicy(trace, policy, runOptions));
    rows.push(row);
    options.onRow?.(row);
    return row;
  };
  const need = fluidNeed(trace, capacity);
  const meanNeed = need.reduce((a, b) => a + b, 0) / Math.max(1, need.length);
  const peakNeed = Math.max(...need);
  const maxReplicas = userMaxReplicas(peakNeed);

  const { rows: oracleRows, high, schedules } = searchOracle(run, need, peakNeed);
  trimOraclePlateaus(run, oracleRows, schedules, peakNeed);
  const initialReplicas = oracleSchedule(need, high ?? 1)[0] ?? 1;
  const staticRows = searchStatic(run, meanNeed, maxReplicas);
  const figures = replicaFigures(trace, capacity);
  const sloTtft = sloTtftMilliseconds(trace, capacity);
  const calibrated = runScalerRows(run, trace, options, {
    capacity,
    runOptions,
    initialReplicas,
    maxReplicas,
    figures,
    sloTtftMilliseconds: sloTtft,
  });

  const candidates = [...oracleRows, ...staticRows.values()].filter(reaches);
  const best = cheapestAtGoal(candidates);
  const oracle: Row =
    best === undefined
      ? { ...(oracleRows[oracleRows.length - 1] as Row), policy: "oracle (goal not reached)", family: "oracle" }
      : { ...best, policy: `oracle (${best.policy})`, family: "oracle" };
  return {
    trace: trace.name,
    requests: trace.requests.length,
    spanSeconds: trace.spanSeconds,
    rows,
    oracle,
    wallSeconds: (performance.now() - start) / 1000,
    ...(calibrated === undefined ? {} : { calibrated }),
    ruleOfThumb: {
      tokensPerSecondPerReplica: Math.round(targetUtilisation * figures.tokensPerSecond),
      ttftTargetMilliseconds: sloTtft,
    },
  };
}
