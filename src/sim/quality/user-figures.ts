/**
 * The per-replica figure and latency targets the benchmark assumes a user
 * writes into a token-algorithm scaler, as `mds-scaler calibrate` would give
 * them (docs/quality.md, "What the user supplies"): the trace's first 15
 * minutes are a training slice the evaluated replay leaves out. The user
 * serves that slice with static fleets, from the one that carries its peak
 * down by a third at a time, as a load test does, until the targets break;
 * calibrate's own banding rule (`calibrateRole`) reads the pooled minutes. The
 * TTFT target is the SLO's, the p95 of the training slice's per-request TTFT
 * targets; the ITL target is the SLO's; `maxReplicas` follows the benchmark's
 * rule on the training slice. Nothing here reads the evaluated replay.
 */
import {
  calibrateRole,
  type CalibrationAnswer,
  type LatencyTargets,
  type RoleCalibration,
} from "../../core/calibrate/bands.js";
import type { LatencyGuardReading } from "../../core/algorithms/ttft-reading.js";
import type { CalibrationMinute, SkipReason } from "../../core/calibrate/minute.js";
import type { EngineCapacity } from "../engines/model.js";
import { fluidNeed } from "./oracle.js";
import { staticPolicy } from "./policies/static.js";
import { doubling, smallestHolding } from "./smallest-fleet.js";
import { defaultSlo, runPolicy, type RunOptions } from "./run.js";
import { firstSeconds, fromSecond, type Trace } from "./traces.js";

/** The training slice: the trace's first 15 minutes, as a user calibrates on the first 15 minutes of their own traffic. */
export const trainingSeconds = 900;

/**
 * The scale-down window docs/quality.md's third calibrated run tries beside the specification's
 * 300 s default ("Amendments for a shorter scale-down window"): two minutes, inside the 60–180 s
 * a replica takes to start, so a fleet gives back a replica only after demand has stayed lower for
 * about as long as a new one would take to come back. Chosen on azure-conv × 3, a scale the
 * benchmark does not run, before the run that judged it.
 */
export const shorterScaleDownWindowSeconds = 120;

/** The first load-test fleet carries this many times the slice's 60 s peak fluid need: comfortably within the targets. */
export const loadTestHeadroom = 2;

/** Each load-test fleet has this share of the previous one's replicas (rounded down, at least one fewer). */
export const loadTestStep = 2 / 3;

/**
 * When the first fleet already breaks the targets in its lowest judged band, the slice's bursts are more than
 * twice its 60 s peak need asks for: the load test grows by the inverse step (rounded up, at least one more),
 * at most this many times, until a band holds below the one that broke.
 */
export const loadTestGrowths = 4;

/**
 * Once the load test has an answer, the fleets between its last two sizes that it stepped over (at most this
 * many, evenly spaced) when `fill` is asked: a step of a third leaves a gap in load per replica where the
 * figure's band and the one that broke are decided by a few minutes or none (docs/quality.md, sixteenth run).
 */
export const loadTestFillFleets = 3;

/** The fleets strictly between `a` and `b` replicas, at most `loadTestFillFleets`, evenly spaced, largest first. */
export function fillFleets(a: number, b: number): number[] {
  const [low, high] = a < b ? [a, b] : [b, a];
  const sizes = new Set<number>();
  for (let k = loadTestFillFleets; k >= 1; k--) {
    const n = Math.round(low + ((high - low) * k) / (loadTestFillFleets + 1));
    if (n > low && n < high) sizes.add(n);
  }
  return [...sizes];
}

/** The `maxReplicas` the benchmark writes for a trace whose peak 60 s fluid need is `peakNeed` replicas: ample, never tuned. */
export function userMaxReplicas(peakNeed: number): number {
  return Math.min(1024, Math.ceil(8 * peakNeed) + 4);
}

/** The share of a slice's requests a fixed fleet must keep within the SLO to be the training fleet: every table's 99 %. */
export const trainingFleetAttainment = 0.99;

/**
 * The smallest static fleet keeping `trainingFleetAttainment` of the slice's requests within the SLO:
 * a fixed fleet sized as fixed fleets are, on past traffic (docs/quality.md, "Amendments for a cap
 * sized on the training slice").
 */
export function trainingFleet(slice: Trace, runOptions: RunOptions): number {
  const holds = (replicas: number): boolean =>
    runPolicy(slice, staticPolicy(replicas, "training fleet"), runOptions).attainment.both >= trainingFleetAttainment;
  const fleet = smallestHolding(holds, { from: 1, limit: 1024, grow: doubling });
  if (fleet === undefined)
    throw new Error(`no static fleet up to 1024 replicas keeps ${100 * trainingFleetAttainment} % of ${slice.name}`);
  return fleet;
}

export interface TrainingSplit {
  /** The first `trainingSeconds`: what calibrate reads. */
  readonly training: Trace;
  /** The rest, shifted to start at zero: what every policy of the benchmark is judged on. */
  readonly evaluated: Trace;
}

/** The trace cut at `seconds`: a training slice before it and the evaluated replay after it. */
export function splitTraining(trace: Trace, seconds = trainingSeconds): TrainingSplit {
  return { training: firstSeconds(trace, seconds), evaluated: fromSecond(trace, seconds) };
}

/** The p95 of the per-request TTFT targets, in ms: what a user writes as `ttftTargetMilliseconds` for this SLO. */
export function sloTtftMilliseconds(trace: Trace, capacity: EngineCapacity, ttftBaseSeconds = 1): number {
  const targets = trace.requests.map((r) => ttftBaseSeconds + r.promptTokens / capacity.prefillTokensPerSecond);
  targets.sort((a, b) => a - b);
  return Math.round(1000 * (targets[Math.floor(0.95 * (targets.length - 1))] ?? ttftBaseSeconds));
}

export interface CalibratedFigures {
  /** The latency guard reading calibrate judged TTFT by, and the calibrated rows run with. */
  readonly reading: LatencyGuardReading;
  /** The user's SLO as scaler targets: p95 of the training slice's per-request TTFT targets, and the SLO's ITL. */
  readonly ttftTargetMilliseconds: number;
  readonly itlTargetMilliseconds: number;
  /**
   * `queueTimeTargetMilliseconds`: the SLO's waiting budget, its TTFT base (what every per-request TTFT target
   * leaves beside the prompt's prefill); written since the thirtieth run (docs/quality.md).
   */
  readonly queueTimeTargetMilliseconds: number;
  /** `maxReplicas`: the benchmark's rule (8 × the peak 60 s fluid need + 4) on the training slice. */
  readonly maxReplicas: number;
  /** Replicas of each static fleet the training slice was served by, in order. */
  readonly loadTestReplicas: readonly number[];
  /** calibrate's banding of the pooled minutes of those runs. */
  readonly calibration: RoleCalibration;
  /**
   * `serverTargetTokensPerSecond`: calibrate's figure, or when every judged band held even on
   * one replica, the throughput it held up to (a lower bound; stated in docs/quality.md).
   * Undefined when calibrate gives neither (the targets never held).
   */
  readonly tokensPerSecondPerReplica?: number;
  /** calibrate's capacity (where the targets broke), Predictive's forecast capacity; only with a calibrated figure. */
  readonly capacityTokensPerSecondPerReplica?: number;
  /** The smallest static fleet keeping 99 % of the training slice's requests (`trainingFleet`); only with a figure. */
  readonly trainingFleetReplicas?: number;
  /** Where the figure comes from, in words, for the table. */
  readonly why: string;
}

/** What a load test gave: the static fleets it ran, their pooled minutes and calibrate's reading of them. */
export interface LoadTest {
  /** Replicas of each static fleet the slice was served by, in order. */
  readonly loadTestReplicas: readonly number[];
  /** The slice's peak 60 s fluid need, in replicas. */
  readonly peakNeed: number;
  /** Every Server minute of those runs, pooled in run order, and the minutes that were no evidence, by reason. */
  readonly minutes: readonly CalibrationMinute[];
  readonly skipped: Readonly<Partial<Record<SkipReason, number>>>;
  readonly calibration: RoleCalibration;
}

/**
 * A load test on `slice`, judged against `targets` as the guard with `reading` does: static fleets from the one that
 * carries the slice's 60 s peak fluid need `loadTestHeadroom` times down by `loadTestStep`, stopping at the
 * first whose pooled minutes give calibrate an answer other than "not enough evidence", or at one replica.
 * Where the first fleets' pooled minutes say "targets never held", larger fleets first (`loadTestGrowths`):
 * a load test that found no load kept within targets has not yet found where the targets break.
 * With `fill`, once calibrated, the fleets it stepped over between its last two are served too and pooled.
 */
export function runLoadTest(
  slice: Trace,
  capacity: EngineCapacity,
  runOptions: RunOptions,
  targets: LatencyTargets,
  reading: LatencyGuardReading,
  /** Run the fleets stepped over between the last two sizes once there is an answer (`fillFleets`). */
  fill = false,
): LoadTest {
  const pooled: CalibrationMinute[] = [];
  const skipped: Partial<Record<SkipReason, number>> = {};
  const loadTestReplicas: number[] = [];
  const serve = (replicas: number): RoleCalibration => {
    const run = runPolicy(slice, staticPolicy(replicas, "load test"), runOptions);
    loadTestReplicas.push(replicas);
    for (const r of run.minutes.filter((m) => m.kind === "Server")) {
      pooled.push(...r.minutes);
      for (const [reason, n] of Object.entries(r.skipped) as [SkipReason, number][])
        skipped[reason] = (skipped[reason] ?? 0) + n;
    }
    return calibrateRole("Server", pooled, targets, reading);
  };
  const peakNeed = Math.max(0, ...fluidNeed(slice, capacity));
  let calibration = serve(Math.max(1, Math.ceil(loadTestHeadroom * peakNeed)));
  for (;;) {
    const next = nextLoadTestFleet(loadTestReplicas, calibration.answer.kind);
    if (next === undefined) break;
    calibration = serve(next);
  }
  const [before, last] = loadTestReplicas.slice(-2);
  if (fill && calibration.answer.kind === "calibrated" && before !== undefined && last !== undefined)
    for (const replicas of fillFleets(before, last)) calibration = serve(replicas);
  return { loadTestReplicas, peakNeed, minutes: pooled, skipped, calibration };
}

/**
 * The fleet the load test runs after `fleets` (in the order run), given calibrate's answer on their pooled
 * minutes, or undefined to stop: larger while every fleet so far was larger than the one before and the
 * targets never held, smaller while there is not enough evidence.
 */
function nextLoadTestFleet(fleets: readonly number[], answer: CalibrationAnswer["kind"]): number | undefined {
  const last = fleets.at(-1) as number;
  if (answer === "targets never held") {
    const onlyGrown = fleets.every((n, i) => i === 0 || n > (fleets[i - 1] as number));
    return onlyGrown && fleets.length <= loadTestGrowths
      ? Math.max(last + 1, Math.ceil(last / loadTestStep))
      : undefined;
  }
  if (answer === "calibrated" || last === 1) return undefined;
  return Math.max(1, Math.min(last - 1, Math.floor(last * loadTestStep)));
}

/** Calibrates on the training slice alone, judging TTFT as the guard with `reading` does (`runLoadTest`). */
export function calibrateOnTraining(
  training: Trace,
  capacity: EngineCapacity,
  options: RunOptions,
  reading: LatencyGuardReading,
  /** The load test fills the fleets it stepped over (`runLoadTest`'s `fill`). */
  fill = false,
): CalibratedFigures {
  const slo = options.slo ?? defaultSlo;
  const targets = {
    ttftMilliseconds: sloTtftMilliseconds(training, capacity, slo.ttftBaseSeconds),
    itlMilliseconds: Math.round(1000 * slo.itlSeconds),
  };
  const runOptions: RunOptions = { ...options, fleet: { ...options.fleet, capacity } };
  const { loadTestReplicas, peakNeed, calibration } = runLoadTest(
    training,
    capacity,
    runOptions,
    targets,
    reading,
    fill,
  );
  const answer = calibration.answer;
  const base = {
    reading,
    ttftTargetMilliseconds: targets.ttftMilliseconds,
    itlTargetMilliseconds: targets.itlMilliseconds,
    queueTimeTargetMilliseconds: Math.round(1000 * slo.ttftBaseSeconds),
    maxReplicas: userMaxReplicas(peakNeed),
    loadTestReplicas,
    calibration,
  };
  if (answer.kind === "calibrated")
    return {
      ...base,
      trainingFleetReplicas: trainingFleet(training, runOptions),
      tokensPerSecondPerReplica: answer.tokensPerSecondPerReplica,
      capacityTokensPerSecondPerReplica: answer.capacityTokensPerSecondPerReplica,
      why: answer.why,
    };
  if (answer.kind === "targets never held") return { ...base, why: `targets never held: ${answer.why}` };
  return answer.heldUpToTokensPerSecondPerReplica === undefined
    ? { ...base, why: `not enough evidence: ${answer.why}` }
    : {
        ...base,
        trainingFleetReplicas: trainingFleet(training, runOptions),
        tokensPerSecondPerReplica: answer.heldUpToTokensPerSecondPerReplica,
        why: `held up to (one replica never broke the targets): ${answer.why}`,
      };
}
