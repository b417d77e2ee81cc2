/**
 * One trace at one scale through every policy of the comparison: static
 * fleets (swept), HPA on queue depth (swept), Knative-style (swept),
 * mds-scaler with each algorithm, and the oracle search. Returns one row per
 * run plus each family's frontier and its cheapest point at 99 % attainment.
 */
import type { AlgorithmType } from "../../core/api/scaler.js";
import type { EngineCapacity } from "../engines/model.js";
import { defaultPresetName, replicaPresets } from "./presets.js";
import { fluidNeed, oracleSchedule } from "./oracle.js";
import { attainmentGoal, cheapestAtGoal, searchOracle, type RowRunner as OracleRowRunner } from "./oracle-search.js";
import { hpaPolicy } from "./policies/hpa.js";
import { knativePolicy } from "./policies/knative.js";
import type { ScalerSpec } from "../../core/api/scaler.js";
import { mdsPolicy } from "./policies/mds.js";
import { defaultLatencyGuardReading, type LatencyGuardReading } from "../../core/algorithms/ttft-reading.js";
import type { Policy } from "./policy.js";
import { defaultSlo, runPolicy, type Attainment, type RunOptions, type RunResult, type SloTargets } from "./run.js";
import { errorBudget, twelfthRunBudget } from "./policies/error-budget.js";
import {
  defaultScaler,
  replicaFigures,
  targetUtilisation,
  type ReplicaFigures,
  type ScalerOptions,
} from "./scalers.js";
import type { Trace } from "./traces.js";
import {
  calibrateOnTraining,
  shorterScaleDownWindowSeconds,
  sloTtftMilliseconds,
  userMaxReplicas,
  type CalibratedFigures,
} from "./user-figures.js";

export { sloTtftMilliseconds };

export { attainmentGoal, cheapestAtGoal };

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
  /** The same from a load test that filled the fleets it stepped over (the "load test filled" rows), one per reading. */
  readonly filled?: readonly CalibratedFigures[];
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
  /**
   * With it, the calibrated rows of `queueTimeTargetVariants` run again: TokenThroughput as calibrated and
   * Predictive as calibrated and at its best, with this queue-time target in place of the SLO's, or with
   * none (`"none"`: the thirtieth run's other side, docs/quality.md).
   */
  readonly comparedQueueTimeTarget?: ComparedQueueTimeTarget;
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

/**
 * The variant whose panic window acts from calibrate's figure on (`panicThreshold` 1): measured beside the
 * default threshold in docs/quality.md's fifteenth run, and not kept.
 */
export const panicAtFigureVariant = "panic at the figure";

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
  /** The run's SLO, which the error budget row judges requests by (the benchmark's default when absent). */
  slo: SloTargets = defaultSlo,
): Policy[] {
  const { maxReplicas } = figures;
  return (["TokenThroughput", "Predictive"] as const).flatMap((algorithm) => {
    const options = calibratedOptions(figures, trace, capacity, algorithm);
    if (options === undefined) return [];
    const base = calibratedBase(algorithm, figures.reading, labelled);
    const row = (spec: ScalerSpec, variant?: string): Policy =>
      mdsPolicy({ spec, initialReplicas, label: withVariant(base, variant), latencyGuardReading: figures.reading });
    const brokeFrom = figures.capacityTokensPerSecondPerReplica;
    const noise = figures.calibration.demandNoise?.varianceTokensPerSecondSquared;
    // The training fleet as the ceiling, never above the benchmark's own (seventh calibrated run).
    const capped =
      figures.trainingFleetReplicas === undefined ? undefined : Math.min(maxReplicas, figures.trainingFleetReplicas);
    const cappedVariant = "capped at the training fleet";
    const predictiveBest = algorithm === "Predictive" ? predictiveBestOf(options, noise, brokeFrom) : undefined;
    // The row the fifteenth run's panic threshold is tried on: TokenThroughput as calibrated, Predictive's best.
    const panicBase = algorithm === "TokenThroughput" ? { options, variant: undefined } : predictiveBest;
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
      ...(predictiveBest === undefined ? [] : [row(defaultScaler(predictiveBest.options), predictiveBest.variant)]),
      ...(algorithm === "TokenThroughput" && capped !== undefined
        ? [row(defaultScaler({ ...options, maxReplicas: capped }), cappedVariant)]
        : []),
      // The target times the error budget's factor, read from every request's outcome (twelfth run).
      ...(algorithm === "TokenThroughput"
        ? [budgetedRow(options, base, figures.reading, initialReplicas, slo, capacity.prefillTokensPerSecond)]
        : []),
      // Panic from calibrate's figure on (fifteenth calibrated run).
      ...(panicBase === undefined
        ? []
        : [
            row(
              defaultScaler({ ...panicBase.options, panicThreshold: 1 }),
              panicBase.variant === undefined ? panicAtFigureVariant : `${panicBase.variant}; ${panicAtFigureVariant}`,
            ),
          ]),
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

/** A calibrated row's label before its variant, naming the guard reading when the run compares readings. */
function calibratedBase(algorithm: AlgorithmType, reading: LatencyGuardReading, labelled: boolean): string {
  return withVariant(calibratedLabel(algorithm), labelled ? `${reading} guard` : undefined);
}

/** A label that ends with what its row changes: `mds-scaler X (calibrated)` becomes `… (calibrated; variant)`. */
function withVariant(label: string, variant: string | undefined): string {
  return variant === undefined ? label : label.replace(/\)$/, `; ${variant})`);
}

/** A token algorithm's options at the calibrated figures and the SLO's targets; none without a figure. */
function calibratedOptions(
  figures: CalibratedFigures,
  trace: Trace,
  capacity: EngineCapacity,
  algorithm: "TokenThroughput" | "Predictive",
): (ScalerOptions & { readonly tokensPerSecondPerReplica: number }) | undefined {
  const tokensPerSecondPerReplica = figures.tokensPerSecondPerReplica;
  if (tokensPerSecondPerReplica === undefined) return undefined;
  return {
    algorithm,
    // Only Proportional's queue depth reads these; the token algorithms get the calibrated figure.
    figures: replicaFigures(trace, capacity),
    maxReplicas: figures.maxReplicas,
    tokensPerSecondPerReplica,
    ttftTargetMilliseconds: figures.ttftTargetMilliseconds,
    itlTargetMilliseconds: figures.itlTargetMilliseconds,
    queueTimeTargetMilliseconds: figures.queueTimeTargetMilliseconds,
  };
}

/** TokenThroughput's and Predictive's options at calibrated figures, and Predictive's best row's; each none without a figure. */
function calibratedRowOptions(figures: CalibratedFigures, trace: Trace, capacity: EngineCapacity) {
  const tt = calibratedOptions(figures, trace, capacity, "TokenThroughput");
  const predictive = calibratedOptions(figures, trace, capacity, "Predictive");
  const best =
    predictive === undefined
      ? undefined
      : predictiveBestOf(
          predictive,
          figures.calibration.demandNoise?.varianceTokensPerSecondSquared,
          figures.capacityTokensPerSecondPerReplica,
        );
  return { tt, predictive, best };
}

/** The sixteenth calibrated run's variant: figures from a load test that also served the fleets it stepped over. */
export const loadTestFilledVariant = "load test filled";

/**
 * TokenThroughput as calibrated and Predictive's best row, at the figures of a load test that filled the fleets
 * it stepped over (`runLoadTest`'s `fill`): docs/quality.md's sixteenth run, beside the rows at today's figures.
 */
export function filledVariants(
  filled: CalibratedFigures,
  trace: Trace,
  capacity: EngineCapacity,
  initialReplicas: number,
  labelled = false,
): Policy[] {
  const label = (algorithm: AlgorithmType, variant?: string): string =>
    withVariant(withVariant(calibratedBase(algorithm, filled.reading, labelled), variant), loadTestFilledVariant);
  const { tt, best } = calibratedRowOptions(filled, trace, capacity);
  const row = (options: ScalerOptions, name: string): Policy =>
    mdsPolicy({ spec: defaultScaler(options), initialReplicas, label: name, latencyGuardReading: filled.reading });
  return [
    ...(tt === undefined ? [] : [row(tt, label("TokenThroughput"))]),
    ...(best === undefined ? [] : [row(best.options, label("Predictive", best.variant))]),
  ];
}

/** A queue-time target compared with the SLO's in the calibrated rows, in ms, or none at all. */
export type ComparedQueueTimeTarget = number | "none";

/** The thirtieth calibrated run's variant: the calibrated rows with another queue-time target, or none. */
export const queueTimeTargetVariant = (compared: ComparedQueueTimeTarget): string =>
  compared === "none" ? "no queue-time target" : `queue-time target ${compared} ms`;

/**
 * TokenThroughput as calibrated, Predictive as calibrated and Predictive's best row, each with `compared` in
 * place of the SLO's queue-time target (none for `"none"`): docs/quality.md's thirtieth run, beside the same rows.
 */
export function queueTimeTargetVariants(
  figures: CalibratedFigures,
  trace: Trace,
  capacity: EngineCapacity,
  initialReplicas: number,
  compared: ComparedQueueTimeTarget,
  labelled = false,
): Policy[] {
  const variant = queueTimeTargetVariant(compared);
  const withCompared = ({ queueTimeTargetMilliseconds: _slo, ...rest }: ScalerOptions): ScalerOptions =>
    compared === "none" ? rest : { ...rest, queueTimeTargetMilliseconds: compared };
  const row = (algorithm: AlgorithmType, options: ScalerOptions, before?: string): Policy =>
    mdsPolicy({
      spec: defaultScaler(withCompared(options)),
      initialReplicas,
      label: withVariant(withVariant(calibratedBase(algorithm, figures.reading, labelled), before), variant),
      latencyGuardReading: figures.reading,
    });
  const { tt, predictive, best } = calibratedRowOptions(figures, trace, capacity);
  return [
    ...(tt === undefined ? [] : [row("TokenThroughput", tt)]),
    ...(predictive === undefined ? [] : [row("Predictive", predictive)]),
    ...(best === undefined ? [] : [row("Predictive", best.options, best.variant)]),
  ];
}

/** The variant of Predictive's best calibrated row (`predictiveBestOf`), as its label names it. */
export const predictiveBestVariant = "measured noise; capacity where targets broke";
/** That row's label with one guard reading (a run comparing readings names the reading too). */
export const predictiveBestLabel = withVariant(calibratedLabel("Predictive"), predictiveBestVariant);

/**
 * Predictive's best row since the eighth calibrated run: the demand noise calibrate measured and its capacity
 * where the targets broke; none unless calibrate measured both.
 */
function predictiveBestOf(
  options: ScalerOptions,
  noise: number | undefined,
  brokeFrom: number | undefined,
): { readonly options: ScalerOptions; readonly variant: string } | undefined {
  if (noise === undefined || brokeFrom === undefined) return undefined;
  return {
    options: { ...options, measurementNoise: noise, forecastCapacityPerReplica: brokeFrom },
    variant: predictiveBestVariant,
  };
}

/**
 * TokenThroughput at the calibrated figure times the error budget's factor, each pass
 * (`policies/error-budget.ts`): a measurement of what spending the budget could give, not a rule of the product.
 */
function budgetedRow(
  options: Parameters<typeof defaultScaler>[0] & { readonly tokensPerSecondPerReplica: number },
  base: string,
  reading: LatencyGuardReading,
  initialReplicas: number,
  slo: SloTargets,
  prefillTokensPerSecond: number,
): Policy {
  const budget = errorBudget({
    ...twelfthRunBudget,
    slo,
    prefillTokensPerSecond,
    goal: attainmentGoal,
  });
  // The factor moves in 1 % steps to at most 1.1, so a pass mostly plans with a spec it already built and checked.
  const specs = new Map<number, ScalerSpec>();
  const specOf = (tokens: number): ScalerSpec => {
    let spec = specs.get(tokens);
    if (spec === undefined)
      specs.set(tokens, (spec = defaultScaler({ ...options, tokensPerSecondPerReplica: tokens })));
    return spec;
  };
  return mdsPolicy({
    spec: specOf(options.tokensPerSecondPerReplica),
    initialReplicas,
    label: base.replace(/\)$/, "; error budget, exact attainment)"),
    latencyGuardReading: reading,
    specAt: {
      at: (ctx) => specOf(Math.round(options.tokensPerSecondPerReplica * budget.factorAt(ctx.fleet.records))),
      notes: () => budget.notes(),
    },
  });
}

function spread(center: number, points: number): number[] {
  const factors = points >= 5 ? [0.25, 0.5, 1, 2, 4] : [0.5, 1, 2];
  return [...new Set(factors.map((f) => Math.max(1, Math.round(center * f))))];
}

/** Runs one policy on the table's trace, records its row and reports it. */
type RowRunner = OracleRowRunner<Row>;

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
): { readonly calibrated: CalibratedFigures[]; readonly filled: CalibratedFigures[] } | undefined {
  const { capacity, runOptions, initialReplicas, maxReplicas, figures, sloTtftMilliseconds: sloTtft } = table;
  const points = options.sweepPoints ?? 3;
  for (const target of spread(figures.queueDepthAtTarget, points))
    run(hpaPolicy({ targetPerReplica: target, initialReplicas, maxReplicas }));
  for (const target of spread(figures.queueDepthAtTarget, points))
    run(knativePolicy({ targetPerReplica: target, initialReplicas, maxReplicas }));
  const readings = options.latencyGuardReadings;
  // With more than one reading, each calibrated row's label names its own.
  const labelled = (readings?.length ?? 1) > 1;
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
    for (const policy of calibratedVariants(c, trace, capacity, initialReplicas, labelled, runOptions.slo)) run(policy);
  if (calibrated === undefined) return undefined;
  const compared = options.comparedQueueTimeTarget;
  if (compared !== undefined)
    for (const c of calibrated)
      for (const policy of queueTimeTargetVariants(c, trace, capacity, initialReplicas, compared, labelled))
        run(policy);
  // The sixteenth run: the same training slice, the load test filling the fleets it stepped over.
  const filled = calibrated.map((c) =>
    calibrateOnTraining(options.training as Trace, capacity, runOptions, c.reading, true),
  );
  for (const f of filled)
    for (const policy of filledVariants(f, trace, capacity, initialReplicas, labelled)) run(policy);
  return { calibrated, filled };
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
  const maxReplicas = userMaxReplicas(Math.max(...need));
  const search = searchOracle(run, need, maxReplicas);
  const initialReplicas = oracleSchedule(need, search.high ?? 1)[0] ?? 1;
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

  const best = search.best;
  const oracle: Row =
    best === undefined
      ? {
          ...(search.scheduleRows[search.scheduleRows.length - 1] as Row),
          policy: "oracle (goal not reached)",
          family: "oracle",
        }
      : { ...best, policy: `oracle (${best.policy})`, family: "oracle" };
  return {
    trace: trace.name,
    requests: trace.requests.length,
    spanSeconds: trace.spanSeconds,
    rows,
    oracle,
    wallSeconds: (performance.now() - start) / 1000,
    ...(calibrated === undefined ? {} : calibrated),
    ruleOfThumb: {
      tokensPerSecondPerReplica: Math.round(targetUtilisation * figures.tokensPerSecond),
      ttftTargetMilliseconds: sloTtft,
    },
  };
}
