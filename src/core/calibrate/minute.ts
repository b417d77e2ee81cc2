/**
 * One minute of one role as calibration reads it: the token throughput per
 * ready replica that TokenThroughput's per-replica target means for the
 * role's kind, and the p95 latencies the latency targets are compared with.
 * A minute whose figures are partial or unknown is not evidence: it is
 * skipped with its reason, never read as a quiet minute.
 */
import type { RoleKind } from "../api/model-deployment.js";
import { roleDemandTokensPerSecond } from "../algorithms/capacity.js";
import type { RoleObservation } from "../signals/types.js";

export interface CalibrationMinute {
  /** Unix seconds at the minute's end (simulated seconds for a simulator run). */
  readonly endSeconds: number;
  readonly readyReplicas: number;
  /** The kind's demand (as TokenThroughput reads it) over the minute ÷ ready replicas. */
  readonly tokensPerSecondPerReplica: number;
  /** p95 as a bucket boundary, as the core reads it; absent when the kind is not judged on it or none was observed. */
  readonly ttftP95Milliseconds?: number;
  readonly itlP95Milliseconds?: number;
  /** Absent when no pod of the role exported queue time in this minute. */
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

/**
 * The minute from a role observation whose windows are that minute (both
 * windows 60 s), and the role's queue-time p95 over the same minute when any
 * pod exported it.
 */
export function minuteOf(input: {
  readonly kind: RoleKind;
  readonly observation: RoleObservation;
  readonly endSeconds: number;
  readonly queueP95Milliseconds?: number;
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
  const ttft = judged.ttft ? observation.ttftMilliseconds : undefined;
  const itl = judged.itl ? observation.itlMilliseconds : undefined;
  if ((judged.ttft && ttft === undefined) || (judged.itl && itl === undefined)) return skip("no latency observed");
  return {
    kind: "minute",
    minute: {
      endSeconds: input.endSeconds,
      readyReplicas: observation.readyReplicas,
      tokensPerSecondPerReplica: demand / observation.readyReplicas,
      ...(ttft === undefined ? {} : { ttftP95Milliseconds: ttft }),
      ...(itl === undefined ? {} : { itlP95Milliseconds: itl }),
      ...(judged.ttft && input.queueP95Milliseconds !== undefined
        ? { queueP95Milliseconds: input.queueP95Milliseconds }
        : {}),
    },
  };
}

/** One role's minutes over a period, and the minutes that were not evidence, by reason. */
export interface RoleMinutes {
  readonly role: string;
  readonly kind: RoleKind;
  readonly minutes: readonly CalibrationMinute[];
  readonly skipped: Readonly<Partial<Record<SkipReason, number>>>;
}
