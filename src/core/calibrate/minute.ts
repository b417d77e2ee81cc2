/**
 * One minute of one role as calibration reads it: the token throughput per
 * ready replica that TokenThroughput's per-replica target means for the
 * role's kind, and the p95 latencies the latency targets are compared with.
 * A minute whose figures are partial or unknown is not evidence: it is
 * skipped with its reason, never read as a quiet minute. Latencies are read
 * as the latency guard reads them: each p95 at its estimate inside its bucket
 * (`token-throughput.ts`, `guardedMilliseconds`), queue time as the waiting
 * its buckets can name (`ttft-reading.ts`).
 */
import type { RoleKind } from "../api/model-deployment.js";
import { roleDemandTokensPerSecond } from "../algorithms/capacity.js";
import { guardedMilliseconds } from "../algorithms/token-throughput.js";
import { roleWaiting } from "../algorithms/ttft-reading.js";
import type { RoleObservation } from "../signals/types.js";

export interface CalibrationMinute {
  /** Unix seconds at the minute's end (for a simulator run, seconds of its source trace, whose second 0 is 00:00). */
  readonly endSeconds: number;
  readonly readyReplicas: number;
  /** The kind's demand (as TokenThroughput reads it) over the minute ÷ ready replicas. */
  readonly tokensPerSecondPerReplica: number;
  /**
   * p95 at its estimate inside its bucket, as the latency guard compares it with its
   * target; absent when the kind is not judged on it or none was observed.
   */
  readonly ttftP95Milliseconds?: number;
  readonly itlP95Milliseconds?: number;
  /**
   * The p95 waiting the queue-time buckets name (0 when the p95 falls in a bucket
   * starting at zero). Absent when not every sampled pod exported queue time, or
   * none was observed in the minute: TTFT is then judged literally.
   */
  readonly queueP95Milliseconds?: number;
}

export type MinuteReading =
  | { readonly kind: "minute"; readonly minute: CalibrationMinute }
  | { readonly kind: "skipped"; readonly reason: SkipReason };

export const skipReasons = [
  "no ready replica",
  "partial coverage",
  "no throughput figure",
  "no traffic",
  "no latency observed",
] as const;
export type SkipReason = (typeof skipReasons)[number];

/** Which latencies a kind is judged on: TTFT (with queue time) where prompts are served, ITL where tokens are generated. */
export function judgedLatencies(kind: RoleKind): { readonly ttft: boolean; readonly itl: boolean } {
  return { ttft: kind === "Prefill" || kind === "Server", itl: kind === "Decode" || kind === "Server" };
}

/** The minute from a role observation whose windows are that minute (both windows 60 s). */
export function minuteOf(input: {
  readonly kind: RoleKind;
  readonly observation: RoleObservation;
  readonly endSeconds: number;
}): MinuteReading {
  const { kind, observation } = input;
  const skip = (reason: SkipReason): MinuteReading => ({ kind: "skipped", reason });
  if (observation.readyReplicas <= 0) return skip("no ready replica");
  // Partial is unknown: a sum over fewer pods than are ready understates the load per replica.
  if (observation.sampledReplicas < observation.readyReplicas) return skip("partial coverage");
  const demand = roleDemandTokensPerSecond(kind, observation, "stable");
  if (demand === undefined) return skip("no throughput figure");
  if (demand <= 0) return skip("no traffic");
  const judged = judgedLatencies(kind);
  const ttft = judged.ttft ? guardedMilliseconds(observation.ttftMilliseconds, observation.ttftBracket) : undefined;
  const itl = judged.itl ? guardedMilliseconds(observation.itlMilliseconds, observation.itlBracket) : undefined;
  if ((judged.ttft && ttft === undefined) || (judged.itl && itl === undefined)) return skip("no latency observed");
  // Partial is unknown: a minute without every pod's queue time carries none, and TTFT is then read literally.
  const known = judged.ttft ? roleWaiting(observation) : undefined;
  const waiting = known !== undefined && "milliseconds" in known ? known.milliseconds : undefined;
  return {
    kind: "minute",
    minute: {
      endSeconds: input.endSeconds,
      readyReplicas: observation.readyReplicas,
      tokensPerSecondPerReplica: demand / observation.readyReplicas,
      ...(ttft === undefined ? {} : { ttftP95Milliseconds: ttft }),
      ...(itl === undefined ? {} : { itlP95Milliseconds: itl }),
      ...(waiting === undefined ? {} : { queueP95Milliseconds: waiting }),
    },
  };
}

/** A role's demand in a minute: throughput per ready replica × ready replicas. */
export function minuteDemandTokensPerSecond(minute: CalibrationMinute): number {
  return minute.tokensPerSecondPerReplica * minute.readyReplicas;
}

const minuteSeconds = 60;
/** Minute ends read from Prometheus or a simulator land on the second, give or take rounding. */
const adjacencyToleranceSeconds = 1;

/**
 * Two minutes are adjacent when their ends are one minute apart (within a second): minutes of another run,
 * or around a skipped minute, are not.
 */
export function adjacentMinutes(before: CalibrationMinute, after: CalibrationMinute): boolean {
  return Math.abs(after.endSeconds - before.endSeconds - minuteSeconds) <= adjacencyToleranceSeconds;
}

/** One role's minutes over a period, and the minutes that were not evidence, by reason. */
export interface RoleMinutes {
  readonly role: string;
  readonly kind: RoleKind;
  readonly minutes: readonly CalibrationMinute[];
  readonly skipped: Readonly<Partial<Record<SkipReason, number>>>;
}
