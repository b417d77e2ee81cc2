/**
 * Pacing: how far one pass may move a role, and the two stabilization
 * windows over the recommendation history kept in status.
 *
 * History is bounded at 256 samples per role whatever the interval and window
 * lengths (5 s samples over an 1800 s window would need 361). When a role's
 * history outgrows the cap it is compacted into time buckets of
 * `ceil(horizon / 120)` seconds aligned to the Unix epoch; each bucket keeps
 * its lowest and its highest recommendation, both stamped with the bucket's
 * latest time. Both windows then still see the true extremes, up to one
 * bucket late: the scale-up window (lowest value) and the scale-down window
 * (highest value) each hold a little longer, never shorter.
 */
import type { ScalerSpec } from "../api/scaler.js";
import type { Limit } from "./types.js";

export const maxHistorySamples = 256;
/** Buckets per horizon after compaction: two entries each stay well under the cap. */
const compactedBucketsPerHorizon = 120;

export interface HistorySample {
  readonly timestampMs: number;
  readonly replicas: number;
  /** The stamp as read from status, reused on output so carried samples are not formatted again. */
  readonly timestamp?: string;
}

type ScaleUpBehavior = ScalerSpec["behavior"]["scaleUp"];
type ScaleDownBehavior = ScalerSpec["behavior"]["scaleDown"];

function percentOf(percent: number, current: number): number {
  return Math.ceil((percent * current) / 100);
}

/**
 * Replicas one pass may add: the `stepPolicy` alone when set (zero forbids
 * growth), else the larger of `maxStepReplicas` and `maxStepPercent`% of the
 * current count rounded up.
 */
export function scaleUpStep(behavior: ScaleUpBehavior, currentReplicas: number): Limit {
  const policy = behavior.stepPolicy;
  if (policy !== undefined) {
    const value = policy.type === "Pods" ? policy.value : percentOf(policy.value, currentReplicas);
    return { value, reason: "ScaleUpLimit" };
  }
  return {
    value: Math.max(behavior.maxStepReplicas, percentOf(behavior.maxStepPercent, currentReplicas)),
    reason: "ScaleUpLimit",
  };
}

/** Replicas one pass may remove: one, or the `stepPolicy` (zero forbids shrinking). */
export function scaleDownStep(behavior: ScaleDownBehavior, currentReplicas: number): Limit {
  const policy = behavior.stepPolicy;
  if (policy === undefined) return { value: 1, reason: "ScaleDownLimit" };
  const value = policy.type === "Pods" ? policy.value : percentOf(policy.value, currentReplicas);
  return { value, reason: "ScaleDownLimit" };
}

/** Shortest pause counted as a gap, seconds, whatever the interval. */
export const minHistoryGapSeconds = 60;

/**
 * A pause between planning passes longer than this is a gap: three sampling
 * intervals, at least 60 s (the same span after which a reading is stale).
 * The default 15 s interval gives 60 s; a 60 s interval gives 180 s.
 */
export function historyGapSeconds(intervalSeconds: number): number {
  return Math.max(3 * intervalSeconds, minHistoryGapSeconds);
}

/**
 * When the latest planning pass ran, as far as the status proves it.
 * `lastPassTime` (`lastPassMs`) where present: every pass stamps it, also a pass
 * that records no sample. Without it (a status written by another implementation
 * of the specification, by a version before the field, or restored from a backup)
 * the newest recommendation sample at or before now in any role's history: the
 * pass that recorded it ran then. No sample is later than the pass that
 * recorded it, so this finds every gap `lastPassTime` would; it is weaker the
 * other way (a pass that held for signals recorded nothing), so it errs towards
 * a gap, i.e. towards holding for the windows, never towards moving early. A
 * sample stamped after now proves nothing (clock skew, replayed input).
 */
export function provenLastPassMs(
  lastPassMs: number | undefined,
  histories: Iterable<readonly HistorySample[]>,
  nowMs: number,
): number | undefined {
  if (lastPassMs !== undefined) return lastPassMs;
  let newestMs = -Infinity;
  for (const history of histories)
    for (const s of history) if (s.timestampMs <= nowMs) newestMs = Math.max(newestMs, s.timestampMs);
  return newestMs === -Infinity ? undefined : newestMs;
}

/**
 * The history a pass may build on. After a gap (no planning pass ran for
 * longer than `gapSeconds`: a restart, a leader change, a suspension, a
 * period bound to another scaler) the samples before it say nothing about the
 * time in between, so the history starts again and each window must be spanned
 * anew. A status that proves no pass (`provenLastPassMs` undefined) starts over
 * as well. Passes that hold (signals Missing or Stale) still ran: no gap.
 */
export function continuousHistory(
  history: readonly HistorySample[],
  lastPassMs: number | undefined,
  nowMs: number,
  gapSeconds: number,
): readonly HistorySample[] {
  if (lastPassMs === undefined || nowMs - lastPassMs > gapSeconds * 1000) return [];
  return history;
}

/** The longest window the history must cover. */
export function historyHorizonSeconds(spec: ScalerSpec): number {
  return Math.max(spec.behavior.scaleUp.stabilizationWindowSeconds, spec.behavior.scaleDown.stabilizationWindowSeconds);
}

/**
 * Appends this pass's recommendation, drops samples the windows no longer
 * need (keeping the newest one at or before the horizon, which proves the
 * history spans it), and compacts past the cap.
 */
export function recordHistory(
  history: readonly HistorySample[],
  sample: HistorySample,
  horizonSeconds: number,
): HistorySample[] {
  // A sample from the future (clock skew, replayed input) would pin windows; drop it.
  const kept = history.filter((s) => s.timestampMs <= sample.timestampMs);
  kept.push(sample);
  const horizonStartMs = sample.timestampMs - horizonSeconds * 1000;
  let firstNeeded = 0;
  for (const [i, s] of kept.entries()) if (s.timestampMs <= horizonStartMs) firstNeeded = i;
  const trimmed = kept.slice(firstNeeded);
  return trimmed.length > maxHistorySamples ? compactHistory(trimmed, horizonSeconds) : trimmed;
}

/** Bucket width used by compaction, seconds. */
export function compactionBucketSeconds(horizonSeconds: number): number {
  return Math.max(1, Math.ceil(horizonSeconds / compactedBucketsPerHorizon));
}

/**
 * Each epoch-aligned bucket keeps its lowest and highest value, stamped with
 * its latest time. The oldest sample stays as it is: it proves the history
 * spans the windows, and moving it later would pause that proof for a pass.
 */
export function compactHistory(history: readonly HistorySample[], horizonSeconds: number): HistorySample[] {
  // One pass at the horizon's bucket width fits the cap for every trimmed history; wider buckets are a backstop.
  let bucketSeconds = compactionBucketSeconds(horizonSeconds);
  let out = compactWith(history, bucketSeconds * 1000);
  while (out.length > maxHistorySamples) {
    bucketSeconds *= 2;
    out = compactWith(out, bucketSeconds * 1000);
  }
  return out;
}

function compactWith(history: readonly HistorySample[], bucketMs: number): HistorySample[] {
  const out: HistorySample[] = history.slice(0, 1);
  let i = 1;
  while (i < history.length) {
    const first = history[i] as HistorySample;
    const bucket = Math.floor(first.timestampMs / bucketMs);
    let low = first.replicas;
    let high = first.replicas;
    let latest = first;
    let j = i + 1;
    for (; j < history.length; j++) {
      const s = history[j] as HistorySample;
      if (Math.floor(s.timestampMs / bucketMs) !== bucket) break;
      low = Math.min(low, s.replicas);
      high = Math.max(high, s.replicas);
      if (s.timestampMs >= latest.timestampMs) latest = s;
    }
    const stamp = latest.timestamp === undefined ? {} : { timestamp: latest.timestamp };
    out.push({ timestampMs: latest.timestampMs, replicas: low, ...stamp });
    if (high !== low) out.push({ timestampMs: latest.timestampMs, replicas: high, ...stamp });
    i = j;
  }
  return out;
}

/** Whether the history reaches back to the window's start. */
export function historySpans(history: readonly HistorySample[], nowMs: number, windowSeconds: number): boolean {
  const first = history[0];
  return first !== undefined && first.timestampMs <= nowMs - windowSeconds * 1000;
}

function windowExtreme(
  history: readonly HistorySample[],
  nowMs: number,
  windowSeconds: number,
  pick: (a: number, b: number) => number,
): number | undefined {
  const startMs = nowMs - windowSeconds * 1000;
  let result: number | undefined;
  for (const s of history) {
    if (s.timestampMs < startMs || s.timestampMs > nowMs) continue;
    result = result === undefined ? s.replicas : pick(result, s.replicas);
  }
  return result;
}

export interface StabilizationWindows {
  readonly scaleUpSeconds: number;
  readonly scaleDownSeconds: number;
}

/**
 * The recommendation after both windows (history already holds this pass's
 * sample). Growth waits until the history spans the scale-up window and then
 * goes to the lowest recommendation in it, so only a sustained rise grows;
 * shrinking waits until the history spans the scale-down window and then
 * stops at the highest recommendation in it.
 */
export function stabilize(
  history: readonly HistorySample[],
  nowMs: number,
  currentReplicas: number,
  wantedReplicas: number,
  windows: StabilizationWindows,
): Limit {
  if (wantedReplicas > currentReplicas && windows.scaleUpSeconds > 0) {
    if (!historySpans(history, nowMs, windows.scaleUpSeconds))
      return { value: currentReplicas, reason: "ScaleUpStabilization" };
    const lowest = windowExtreme(history, nowMs, windows.scaleUpSeconds, Math.min) ?? wantedReplicas;
    const value = Math.max(currentReplicas, Math.min(wantedReplicas, lowest));
    return { value, reason: value < wantedReplicas ? "ScaleUpStabilization" : "" };
  }
  if (wantedReplicas < currentReplicas) {
    if (!historySpans(history, nowMs, windows.scaleDownSeconds))
      return { value: currentReplicas, reason: "ScaleDownStabilization" };
    const highest = windowExtreme(history, nowMs, windows.scaleDownSeconds, Math.max) ?? wantedReplicas;
    const value = Math.min(currentReplicas, Math.max(wantedReplicas, highest));
    return { value, reason: value > wantedReplicas ? "ScaleDownStabilization" : "" };
  }
  return { value: wantedReplicas, reason: "" };
}
