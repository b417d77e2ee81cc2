/**
 * How the latency guard reads TTFT (docs/algorithms.md, "The latency guard on
 * queueing"; design call 14). The specification's guard holds scale-down while
 * p95 TTFT is above its target and grows above 1.2 times it. Read literally it
 * cannot tell waiting from computing: a long prompt's TTFT is mostly its own
 * prefill, which no added replica shortens. Read on queueing, a TTFT breach
 * counts only when the engines' queue-time histogram of the same pods and window
 * shows that waiting is a material part of it; where no pod exports queue time,
 * or not every pod does, TTFT is read literally. ITL is always read as the
 * specification says.
 *
 * The default is `queueing` since the fifth quality run, judged by a rule
 * written before it (docs/quality.md, "The guard's default reading, measured"):
 * at the figures `mds-scaler calibrate` gives, both readings keep the same
 * attainment at the same GPU-hours wherever the literal one gives a scaler, and
 * judged on queueing calibrate also gives a figure for long-prompt traffic where
 * judged literally it gives none. At a rule-of-thumb figure the literal reading's
 * growth buys headroom the figure lacks (docs/quality.md, "The guard on
 * queueing"), so `literal` stays selectable.
 */
import type { LatencyBracket, RoleObservation } from "../signals/types.js";

/** `queueing` (the default) or `literal` (the specification's words): the controller's, `simulate`'s and `calibrate`'s flag. */
export const latencyGuardReadings = ["queueing", "literal"] as const;
export type LatencyGuardReading = (typeof latencyGuardReadings)[number];
export const defaultLatencyGuardReading: LatencyGuardReading = "queueing";

export function isLatencyGuardReading(value: string): value is LatencyGuardReading {
  return (latencyGuardReadings as readonly string[]).includes(value);
}

/**
 * Waiting is material when the p95 queue time is above this fraction of the TTFT
 * target: at least half the latency budget is spent before the engine schedules
 * the request, which more replicas remove. Below it, a TTFT above its target is
 * mostly the prompt's own compute (prefill, chunking, the batch it shares), and
 * a replica added for it lowers TTFT by less than half the target. Chosen before
 * the quality run that measured it, and not changed after it (docs/quality.md,
 * "The guard on queueing").
 */
export const materialQueueFractionOfTtftTarget = 0.5;

/** What the guard does with a TTFT reading, and the words status shows for it. */
export interface TtftReading {
  readonly reading: LatencyGuardReading;
  /** False when TTFT is measured but must not hold or grow: its breach is compute, not waiting. */
  readonly counts: boolean;
  /** Shown in the role's `latencyGuard` status, starting with the reading that applied. */
  readonly message: string;
}

function literal(message: string): TtftReading {
  return { reading: "literal", counts: true, message: `literal: ${message}` };
}

function formatMs(milliseconds: number): string {
  return `${Math.round(milliseconds)} ms`;
}

/**
 * The p95 waiting the buckets can name, in ms: the estimate inside the p95's
 * bucket, as for TTFT, except in a bucket that starts at zero: queue time is
 * mostly exactly zero, and interpolating from zero would put a p95 of zeros at
 * 95 % of the first bound (285 ms on vLLM's first 300 ms bucket), so such a
 * bucket names no waiting (0). Without buckets, the mean.
 */
export function namedWaitingMilliseconds(milliseconds: number, bracket: LatencyBracket | undefined): number {
  if (bracket === undefined) return milliseconds;
  return bracket.lowerMilliseconds > 0 ? bracket.estimateMilliseconds : 0;
}

/**
 * The role's p95 waiting as the buckets name it, or why it is unknown: no pod, or not every
 * pod, exports queue time (partial is unknown), or the window holds no queue observation.
 * The guard (`ttftReading`) and calibrate (`core/calibrate/minute.ts`) read queue time only through it.
 */
export function roleWaiting(
  observation: RoleObservation,
): { readonly milliseconds: number } | { readonly unknown: string } {
  const exported = observation.queueTimeExport;
  if (exported === undefined) return { unknown: "no established pod reports queue time" };
  if (exported.pods === 0) return { unknown: "no pod exports queue time" };
  if (exported.pods < exported.of)
    return { unknown: `queue time from ${exported.pods} of ${exported.of} pods is unknown` };
  const queueMs = observation.queueTimeMilliseconds;
  if (queueMs === undefined) return { unknown: "no queue-time observation in the window" };
  return { milliseconds: namedWaitingMilliseconds(queueMs, observation.queueTimeBracket) };
}

/**
 * Whether waiting is a material part of a TTFT judged against `ttftTargetMilliseconds`:
 * the one test the guard (`ttftReading`) and calibrate (`core/calibrate/bands.ts`) share.
 */
export function waitingIsMaterial(waitingMilliseconds: number, ttftTargetMilliseconds: number): boolean {
  return waitingMilliseconds > materialQueueFractionOfTtftTarget * ttftTargetMilliseconds;
}

/**
 * The reading of one role's TTFT. Literal when selected, when no pod exports
 * queue time (`not exported`), when only some do or the window holds no queue
 * observation (unknown: partial is unknown, and unknown holds as the
 * specification's guard does). On queueing, the TTFT breach counts only when
 * the p95 queue time is above half the target.
 *
 * Example: target 500 ms, p95 TTFT 900 ms, p95 queue time in vLLM's (0, 300 ms]
 * bucket → the breach does not count; in (300, 500 ms] → it counts.
 */
export function ttftReading(
  observation: RoleObservation,
  ttftTargetMilliseconds: number,
  selected: LatencyGuardReading,
): TtftReading {
  if (selected === "literal") return literal("selected");
  const waiting = roleWaiting(observation);
  if ("unknown" in waiting) return literal(waiting.unknown);
  const thresholdMs = materialQueueFractionOfTtftTarget * ttftTargetMilliseconds;
  const bracket = observation.queueTimeBracket;
  // Without buckets the waiting is the mean; with them, the estimate inside the p95's bucket.
  const shown = formatMs(bracket === undefined ? waiting.milliseconds : bracket.estimateMilliseconds);
  if (waitingIsMaterial(waiting.milliseconds, ttftTargetMilliseconds)) {
    return {
      reading: "queueing",
      counts: true,
      message: `queueing: p95 queue time ${shown} is above ${formatMs(thresholdMs)} (half the TTFT target), TTFT counts`,
    };
  }
  const upper =
    bracket !== undefined && bracket.lowerMilliseconds === 0 ? `at most ${formatMs(bracket.upperMilliseconds)}` : shown;
  return {
    reading: "queueing",
    counts: false,
    message: `queueing: p95 queue time ${upper} is not above ${formatMs(thresholdMs)} (half the TTFT target), TTFT does not count`,
  };
}
