/**
 * The banding rule of `mds-scaler calibrate` (docs/calibrate.md): minutes
 * binned into load bands by token throughput per ready replica; a band with
 * at least `minMinutesPerBand` minutes is judged, and holds when at least
 * `requiredShare` of its minutes kept every latency target of the role's
 * kind. The calibrated figure comes from the highest judged band below the
 * first judged band that broke; when no judged band broke, or the lowest one
 * already did, or too few minutes carry evidence, there is no figure and the
 * answer says why.
 *
 * A minute keeps its targets as the latency guard the scaler runs would see
 * it (design call 14): on the `queueing` reading a TTFT above its target
 * breaks the minute only when waiting is a material part of it, since the
 * figure is a load per replica and only waiting grows with load; a prompt's
 * own prefill time is the same at any load. Without queue time, and on the
 * `literal` reading, TTFT above its target breaks the minute.
 */
import type { RoleKind } from "../api/model-deployment.js";
import { waitingIsMaterial, type LatencyGuardReading } from "../algorithms/ttft-reading.js";
import { demandNoise, type DemandNoise } from "./demand-noise.js";
import { demandSwing, type DemandSwing } from "./demand-swing.js";
import { judgedLatencies, type CalibrationMinute } from "./minute.js";

/** Fewer minutes than this in a band say nothing about it. Below 100 minutes, 99 % means every minute. */
export const minMinutesPerBand = 5;
/** The share of a band's minutes that must keep the latency targets. */
export const requiredShare = 0.99;
/** About this many bands span zero to the highest throughput seen. */
export const bandsAcrossRange = 10;

export interface LatencyTargets {
  readonly ttftMilliseconds: number;
  readonly itlMilliseconds: number;
}

/**
 * The targets a minute broke (empty when it held): `ttft` (read literally, or on
 * queueing with material waiting) and `itl`.
 * Example (queueing, target 1,000 ms): TTFT 1,400 ms with 200 ms of waiting holds; with 600 ms it breaks.
 */
export function brokenTargets(
  kind: RoleKind,
  minute: CalibrationMinute,
  targets: LatencyTargets,
  reading: LatencyGuardReading,
): string[] {
  const judged = judgedLatencies(kind);
  const broken: string[] = [];
  const waiting = minute.queueP95Milliseconds;
  const computeOnly =
    reading === "queueing" && waiting !== undefined && !waitingIsMaterial(waiting, targets.ttftMilliseconds);
  if (judged.ttft && !computeOnly && (minute.ttftP95Milliseconds ?? Infinity) > targets.ttftMilliseconds)
    broken.push("ttft");
  if (judged.itl && (minute.itlP95Milliseconds ?? Infinity) > targets.itlMilliseconds) broken.push("itl");
  return broken;
}

/** The smallest 1, 2, 2.5 or 5 × 10^k at least `span ÷ bandsAcrossRange`. */
export function bandWidth(highestTokensPerSecond: number): number {
  const raw = Math.max(highestTokensPerSecond, 1e-9) / bandsAcrossRange;
  const decade = 10 ** Math.floor(Math.log10(raw));
  for (const step of [1, 2, 2.5, 5, 10]) if (step * decade >= raw * (1 - 1e-12)) return step * decade;
  return 10 * decade;
}

/** Nearest-rank percentile of values (not empty). */
function percentile(values: readonly number[], q: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1))] as number;
}

/** Three significant figures, rounded down: a capacity is never rounded up past the evidence. */
export function roundDownFigure(value: number): number {
  if (!(value > 0)) return 0;
  const unit = 10 ** (Math.floor(Math.log10(value)) - 2);
  return Math.floor(value / unit + 1e-9) * unit;
}

export interface LoadBand {
  readonly fromTokensPerSecond: number;
  readonly toTokensPerSecond: number;
  readonly minutes: number;
  readonly minutesWithinTargets: number;
  /** Within targets ÷ minutes. */
  readonly shareWithinTargets: number;
  /** `held` or `broke` when judged, `too few minutes` otherwise. */
  readonly verdict: "held" | "broke" | "too few minutes";
  /** Nearest-rank p95 over the band's minute p95s; absent when no minute had one. */
  readonly ttftP95Milliseconds?: number;
  readonly queueP95Milliseconds?: number;
  readonly itlP95Milliseconds?: number;
  /** Minutes that broke each target. */
  readonly broken: Readonly<Record<string, number>>;
}

export type CalibrationAnswer =
  | {
      readonly kind: "calibrated";
      /** The median throughput per replica of the chosen band's minutes, three significant figures, rounded down. */
      readonly tokensPerSecondPerReplica: number;
      /** Index of the band the figure comes from. */
      readonly band: number;
      /**
       * The lower edge of the first judged band that broke: the load per replica at which the
       * targets stop holding. Reported, not written into a scaler (docs/calibrate.md).
       */
      readonly capacityTokensPerSecondPerReplica: number;
      readonly why: string;
    }
  | {
      readonly kind: "not enough evidence" | "targets never held";
      readonly why: string;
      /** When every judged band held: the median of the highest, a lower bound on what the replicas carry. */
      readonly heldUpToTokensPerSecondPerReplica?: number;
    };

export interface RoleCalibration {
  readonly kind: RoleKind;
  readonly minutes: number;
  readonly bandWidthTokensPerSecond: number;
  readonly bands: readonly LoadBand[];
  /** Whether queue time took part: `read` when any judged minute had it; for Decode roles `not judged`. */
  readonly queueTime: "read" | "absent" | "not judged";
  /** How TTFT was judged: as the latency guard with this reading judges it. */
  readonly reading: LatencyGuardReading;
  readonly answer: CalibrationAnswer;
  /** The variance of one minute's demand reading (Predictive's `measurementNoise`); absent with too few adjacent minutes. */
  readonly demandNoise?: DemandNoise;
  /** How fast demand rose: the largest minute over the three before it; absent with too few adjacent minutes. */
  readonly demandSwing?: DemandSwing;
}

function range(band: LoadBand): string {
  return `${band.fromTokensPerSecond}–${band.toTokensPerSecond} tok/s per replica`;
}

export function calibrateRole(
  kind: RoleKind,
  minutes: readonly CalibrationMinute[],
  targets: LatencyTargets,
  reading: LatencyGuardReading,
): RoleCalibration {
  const queueTime = !judgedLatencies(kind).ttft
    ? "not judged"
    : minutes.some((m) => m.queueP95Milliseconds !== undefined)
      ? "read"
      : "absent";
  const highest = minutes.reduce((m, x) => Math.max(m, x.tokensPerSecondPerReplica), 0);
  const width = bandWidth(highest);
  const byBand = new Map<number, CalibrationMinute[]>();
  for (const m of minutes) {
    const i = Math.floor(m.tokensPerSecondPerReplica / width + 1e-9);
    byBand.set(i, [...(byBand.get(i) ?? []), m]);
  }
  const indexes = [...byBand.keys()].sort((a, b) => a - b);
  const bands: LoadBand[] = indexes.map((i) => {
    const inBand = byBand.get(i) as CalibrationMinute[];
    const broken: Record<string, number> = {};
    let within = 0;
    for (const m of inBand) {
      const b = brokenTargets(kind, m, targets, reading);
      if (b.length === 0) within++;
      for (const t of b) broken[t] = (broken[t] ?? 0) + 1;
    }
    const p95 = (pick: (m: CalibrationMinute) => number | undefined): number | undefined => {
      const values = inBand.map(pick).filter((v): v is number => v !== undefined);
      return values.length === 0 ? undefined : percentile(values, 0.95);
    };
    const share = within / inBand.length;
    const ttft = p95((m) => m.ttftP95Milliseconds);
    const queue = p95((m) => m.queueP95Milliseconds);
    const itl = p95((m) => m.itlP95Milliseconds);
    return {
      fromTokensPerSecond: roundBandEdge(i * width),
      toTokensPerSecond: roundBandEdge((i + 1) * width),
      minutes: inBand.length,
      minutesWithinTargets: within,
      shareWithinTargets: share,
      verdict: inBand.length < minMinutesPerBand ? "too few minutes" : share >= requiredShare ? "held" : "broke",
      ...(ttft === undefined ? {} : { ttftP95Milliseconds: ttft }),
      ...(queue === undefined ? {} : { queueP95Milliseconds: queue }),
      ...(itl === undefined ? {} : { itlP95Milliseconds: itl }),
      broken,
    };
  });
  const base = { kind, minutes: minutes.length, bandWidthTokensPerSecond: width, bands, queueTime, reading } as const;
  const noise = demandNoise(minutes);
  const swing = demandSwing(minutes);
  return {
    ...base,
    answer: answerOf(bands, byBand, indexes, minutes.length),
    ...(noise === undefined ? {} : { demandNoise: noise }),
    ...(swing === undefined ? {} : { demandSwing: swing }),
  };
}

/** Band edges are multiples of a round width: strip float noise (0.1 × 3 = 0.30000000000000004). */
function roundBandEdge(value: number): number {
  return Number(value.toPrecision(12));
}

function medianThroughput(minutes: readonly CalibrationMinute[]): number {
  return roundDownFigure(
    percentile(
      minutes.map((m) => m.tokensPerSecondPerReplica),
      0.5,
    ),
  );
}

function answerOf(
  bands: readonly LoadBand[],
  byBand: ReadonlyMap<number, CalibrationMinute[]>,
  indexes: readonly number[],
  total: number,
): CalibrationAnswer {
  const judged = bands.map((b, i) => ({ b, i })).filter(({ b }) => b.verdict !== "too few minutes");
  if (judged.length === 0)
    return {
      kind: "not enough evidence",
      why:
        total < minMinutesPerBand
          ? `${total} minute(s) with traffic and every judged latency observed; at least ${minMinutesPerBand} are needed`
          : `no load band holds ${minMinutesPerBand} minutes (${total} minutes spread over ${bands.length} bands)`,
    };
  const firstBroke = judged.findIndex(({ b }) => b.verdict === "broke");
  if (firstBroke === 0) {
    const { b } = judged[0] as { b: LoadBand };
    return {
      kind: "targets never held",
      why: `the lowest judged band (${range(b)}) kept the targets in ${(100 * b.shareWithinTargets).toFixed(1)} % of its ${b.minutes} minutes, under ${100 * requiredShare} %: no throughput per replica seen here kept them (${describeBroken(b)})`,
    };
  }
  const chosen = judged[(firstBroke === -1 ? judged.length : firstBroke) - 1] as { b: LoadBand; i: number };
  const figure = medianThroughput(byBand.get(indexes[chosen.i] as number) as CalibrationMinute[]);
  if (firstBroke === -1)
    return {
      kind: "not enough evidence",
      why: `every judged band held, up to ${range(chosen.b)}: the replicas were never loaded to where the targets break, so their limit is above what this period shows`,
      heldUpToTokensPerSecondPerReplica: figure,
    };
  const broke = (judged[firstBroke] as { b: LoadBand }).b;
  // A band above the first broken one that held does not raise the figure (the rule stays below the lowest
  // break), but a user reading the answer should see that a few minutes set it.
  const heldAbove = judged.slice(firstBroke + 1).filter(({ b }) => b.verdict === "held");
  const above =
    heldAbove.length === 0
      ? ""
      : `; held again above it in ${heldAbove.map(({ b }) => `${range(b)} (${b.minutesWithinTargets} of ${b.minutes} minutes)`).join(", ")}, which does not raise the figure`;
  return {
    kind: "calibrated",
    tokensPerSecondPerReplica: figure,
    band: chosen.i,
    capacityTokensPerSecondPerReplica: broke.fromTokensPerSecond,
    why: `held in ${range(chosen.b)} (${chosen.b.minutesWithinTargets} of ${chosen.b.minutes} minutes); broke in ${range(broke)} (${(100 * broke.shareWithinTargets).toFixed(1)} % within targets: ${describeBroken(broke)})${above}`,
  };
}

function describeBroken(band: LoadBand): string {
  const parts = Object.entries(band.broken).map(([t, n]) => `${t} above target in ${n} minute(s)`);
  return parts.length === 0 ? "no breach" : parts.join(", ");
}
