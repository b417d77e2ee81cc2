/**
 * Builds one RoleObservation from the per-pod samples the Prometheus adapter
 * produced (spec: Engine signals; Status › Role observations; Limitations).
 *
 * The adapter has already dropped non-zero tensor/pipeline ranks and summed
 * data-parallel ranks, so one PodSample is one pod. Here, per pod: staleness,
 * the 64-pod cap, reset exclusion (`established: false`), the cache adjustment
 * of prompt demand with its clamp at zero; then per role: sums, means, the
 * latency percentile and the signal state.
 */
import type { RoleKind } from "../api/model-deployment.js";
import { coversPod, withMeasuredZeros } from "./coverage.js";
import { definedFields, meanDefined, sumDefined } from "./defined.js";
import { mergeHistograms, p95Bracket, p95Milliseconds, type MergedHistogram } from "./histogram.js";
import { podHasField, podWaitingRequests, type PodField } from "./pod-fields.js";
import { measured, promptDemandSeries, promptDemandTokensPerSecond } from "./prompt-demand.js";
import { roleSumHolds } from "./role-histogram.js";
import type {
  LatencyBracket,
  LatencyField,
  PodSample,
  PodWindowRates,
  RoleObservation,
  RoleHistogram,
  RoleSamples,
  SeriesUsed,
  SignalFamily,
  SignalState,
  WindowName,
} from "./types.js";
import { maxSampledPodsPerRole } from "./types.js";

export interface ObserveRoleInput {
  readonly kind: RoleKind;
  readonly samples: RoleSamples;
  /** Ready serving replicas of the role, from the target's status. */
  readonly readyReplicas: number;
  /** Time of this pass, Unix milliseconds. */
  readonly nowMs: number;
  /** A pod whose newest gauge sample is older than this is stale; see `staleAfterSeconds`. */
  readonly staleAfterSeconds: number;
  /** The fields the role's algorithm reads (`Algorithm.reads`): a pod counts toward coverage only with all of them. */
  readonly reads: readonly PodField[];
}

/** The staleness floor: a Prometheus scrape interval up to a minute must not look stale. */
export const minStaleAfterSeconds = 60;

/**
 * How old a pod's newest gauge sample may be: three sampling intervals, at
 * least 60 s. Example: the default 15 s interval gives max(45, 60) = 60 s;
 * a 60 s interval gives 180 s.
 */
export function staleAfterSeconds(intervalSeconds: number): number {
  return Math.max(3 * intervalSeconds, minStaleAfterSeconds);
}

function isFresh(pod: PodSample, nowMs: number, limitSeconds: number): boolean {
  const ageSeconds = nowMs / 1000 - pod.lastSampleUnixSeconds;
  return Number.isFinite(ageSeconds) && ageSeconds <= limitSeconds;
}

/** One sample per pod name (the newest), in name order so the 64-pod cap is deterministic. */
function uniquePods(pods: readonly PodSample[]): PodSample[] {
  const byName = new Map<string, PodSample>();
  for (const pod of pods) {
    const seen = byName.get(pod.pod);
    // Stryker disable next-line EqualityOperator: two samples of one pod with the same timestamp are one scrape
    if (seen === undefined || pod.lastSampleUnixSeconds > seen.lastSampleUnixSeconds) byName.set(pod.pod, pod);
  }
  // Names are unique here (one entry per name), so no two compare equal.
  // Stryker disable next-line EqualityOperator: with unique names `<=` orders as `<` does
  return [...byName.values()].sort((a, b) => (a.pod < b.pod ? -1 : 1));
}

function windowOf(pod: PodSample, window: WindowName): PodWindowRates {
  return pod.windows[window];
}

/** How `seriesUsed` names tokenizer counters that the absent-counter rule read as zero. */
export const absentFirstUseSeries = "absent first-use counters (measured zero)";

interface WindowRates {
  readonly promptTokensPerSecond: number | undefined;
  readonly generationTokensPerSecond: number | undefined;
}

/** Role totals over the pods whose window is established; pods with a reset contribute nothing. */
function windowRates(pods: readonly PodSample[], window: WindowName): WindowRates {
  const established = pods.filter((pod) => windowOf(pod, window).established);
  return {
    promptTokensPerSecond: sumDefined(
      established.map((pod) => promptDemandTokensPerSecond(pod.engine, windowOf(pod, window))),
    ),
    generationTokensPerSecond: sumDefined(
      established.map((pod) => measured(windowOf(pod, window).generationTokensPerSecond)),
    ),
  };
}

/**
 * The fresh pods an observation reads, at most 64: one sample per pod name,
 * the newest, whose newest gauge sample is at most `staleAfterSeconds` old.
 */
export function sampledPods(pods: readonly PodSample[], nowMs: number, staleAfterSeconds: number): PodSample[] {
  return uniquePods(pods)
    .filter((pod) => isFresh(pod, nowMs, staleAfterSeconds))
    .slice(0, maxSampledPodsPerRole);
}

/** Per window and histogram: the role's summed buckets, when the source summed them. */
type RoleHistograms = RoleSamples["roleHistograms"];

function windowHistogram(
  pods: readonly PodSample[],
  window: WindowName,
  field: LatencyField,
  role: RoleHistogram | undefined,
): MergedHistogram | undefined {
  const histograms = pods.flatMap((pod) => {
    const rates = windowOf(pod, window);
    const histogram = rates[field];
    // Stryker disable next-line ArrayDeclaration: mergeHistograms drops anything that is not a usable histogram
    return rates.established && histogram !== undefined ? [histogram] : [];
  });
  const merged = mergeHistograms(histograms);
  if (role === undefined || merged === undefined) return merged;
  // The pods came without their buckets (`native`: without their sums): the role's sum stands for them
  // (`latency` proves it first).
  const sum = merged.sum ?? role.sum;
  return { buckets: role.buckets, count: merged.count, ...(sum === undefined ? {} : { sum }) };
}

/**
 * Whether the pods' `window` holds an observation of `field`: their counts
 * alone say so, not their buckets. Where the panic window holds none, latency
 * reads the stable window's buckets (`latency`); the `roles` plan asks those
 * only then (adapters/prometheus/source.ts).
 */
export function holdsObservation(pods: readonly PodSample[], window: WindowName, field: LatencyField): boolean {
  const merged = windowHistogram(pods, window, field, undefined);
  return merged !== undefined && merged.count > 0;
}

/**
 * Latency reads the panic window, the recent one, so the guard reacts within
 * about a minute; when that window holds no observation (a quiet minute, or no
 * established pod) it falls back to the stable window. The p95 as the status
 * reports it (bucket boundary or mean), and its bracket for the guard.
 */
function latency(
  pods: readonly PodSample[],
  field: LatencyField,
  roles: RoleHistograms,
): { milliseconds?: number; bracket?: LatencyBracket } {
  for (const window of ["panic", "stable"] as const) {
    const role = roles?.[window]?.[field];
    // A role's sum that is not its pods' merge is unknown latency, not a reason to read the other window.
    if (role !== undefined && !roleSumHolds(role, pods, window, field)) return {};
    if (!holdsObservation(pods, window, field)) continue;
    const histogram = windowHistogram(pods, window, field, role);
    return definedFields({ milliseconds: p95Milliseconds(histogram), bracket: p95Bracket(histogram) });
  }
  return {};
}

/**
 * Which pods that count for latency (fresh, established stable window) export a
 * queue-time histogram: all of them makes a reading, none means the engines do
 * not export it, some is partial and so unknown (the guard decides what each means).
 */
function queueTimeExport(pods: readonly PodSample[], kind: RoleKind): { pods: number; of: number } | undefined {
  const counted = pods.filter((pod) => pod.windows.stable.established);
  if (counted.length === 0) return undefined;
  const exporting = counted.filter((pod) => podHasField(pod, "queueTime", kind, pod.windows.stable));
  return { pods: exporting.length, of: counted.length };
}

/** A fresh pod as sampled, and with the absent fields the absent-counter rule reads as zero filled in. */
interface SampledPod {
  readonly sampled: PodSample;
  readonly filled: PodSample;
}

/** Counts, per signal, the pods that read each series (stable window for rates and histograms). */
function seriesUsed(pods: readonly SampledPod[]): SeriesUsed | undefined {
  const out: Record<string, Record<string, number>> = {};
  const count = (signal: string, series: string | undefined): void => {
    if (series === undefined) return;
    const bySeries = (out[signal] ??= {});
    bySeries[series] = (bySeries[series] ?? 0) + 1;
  };
  for (const { sampled, filled: pod } of pods) {
    const stable = windowOf(pod, "stable");
    count("kvCacheUsage", measured(pod.kvCacheUsage) === undefined ? undefined : pod.gaugeSeries?.kvCacheUsage);
    count(
      "prefillBootstrapQueue",
      measured(pod.prefillBootstrapQueueRequests) === undefined
        ? undefined
        : pod.gaugeSeries?.prefillBootstrapQueueRequests,
    );
    if (!stable.established) continue;
    count("itl", stable.itlSeconds === undefined ? undefined : stable.itlSeries);
    count("promptDemand", promptDemandSeries(pod.engine, stable));
    if (sampled.windows.stable.generationTokensPerSecond === undefined && stable.generationTokensPerSecond === 0) {
      count("tokenCounters", absentFirstUseSeries);
    }
  }
  return Object.keys(out).length === 0 ? undefined : out;
}

/** Idle: every reported demand figure is a measured zero. */
function isIdle(observation: Omit<RoleObservation, "signalState">): boolean {
  const figures = [
    observation.promptTokensPerSecond,
    observation.generationTokensPerSecond,
    observation.panicPromptTokensPerSecond,
    observation.panicGenerationTokensPerSecond,
    observation.runningRequests,
    observation.waitingRequests,
  ];
  return figures.every((value) => value === undefined || value === 0);
}

/**
 * The observation of one role.
 *
 * - `Missing`: the query failed, no pod answered, or no fresh pod has an
 *   established stable window with a token rate (a reset or a first sample).
 *   Gauges and panic rates of fresh pods are still reported: they may justify growth.
 * - `Stale`: pods answered but every one is older than `staleAfterSeconds`; nothing is reported.
 * - `Idle`: usable readings, all zero. `Fresh`: usable readings with work.
 *
 * `sampledReplicas` counts fresh pods (at most 64) whose stable window is
 * established and that report every field in `reads` (coverage.ts): a pod reset
 * inside the window, or missing a field because its series is absent or its
 * request failed or came back partial (`unknownFamilies`), makes coverage
 * incomplete, which holds scale-down in the planner. What such a pod does
 * report still adds to the figures: partial readings may justify growth.
 * Absent first-use series that the absent-counter rule calls measured zeros
 * are filled in first (`withMeasuredZeros`), so they count as reported.
 */
export function observeRole(input: ObserveRoleInput): RoleObservation {
  const { kind, samples, readyReplicas, nowMs } = input;
  const unknown = (signalState: SignalState): RoleObservation => ({ readyReplicas, sampledReplicas: 0, signalState });
  if (samples.queryFailed !== undefined) return unknown("Missing");
  const answering = uniquePods(samples.pods);
  if (answering.length === 0) return unknown("Missing");
  const unknownFamilies = new Set(Object.keys(samples.unknownFamilies ?? {}) as SignalFamily[]);
  const sampled = sampledPods(answering, nowMs, input.staleAfterSeconds).map((pod) => ({
    sampled: pod,
    filled: withMeasuredZeros(pod, kind, unknownFamilies),
  }));
  if (sampled.length === 0) return unknown("Stale");
  const fresh = sampled.map((pod) => pod.filled);

  const stable = windowRates(fresh, "stable");
  const ttft = latency(fresh, "ttftSeconds", samples.roleHistograms);
  const itl = latency(fresh, "itlSeconds", samples.roleHistograms);
  const queueTime = latency(fresh, "queueTimeSeconds", samples.roleHistograms);
  const panic = windowRates(fresh, "panic");
  const readings = {
    readyReplicas,
    sampledReplicas: fresh.filter((pod) => coversPod(pod, input.reads, kind)).length,
    ...definedFields({
      runningRequests: sumDefined(fresh.map((pod) => measured(pod.runningRequests))),
      waitingRequests: sumDefined(fresh.map((pod) => podWaitingRequests(pod, kind))),
      promptTokensPerSecond: stable.promptTokensPerSecond,
      generationTokensPerSecond: stable.generationTokensPerSecond,
      panicPromptTokensPerSecond: panic.promptTokensPerSecond,
      panicGenerationTokensPerSecond: panic.generationTokensPerSecond,
      kvCacheUsage: meanDefined(fresh.map((pod) => measured(pod.kvCacheUsage))),
      ttftMilliseconds: ttft.milliseconds,
      itlMilliseconds: itl.milliseconds,
      ttftBracket: ttft.bracket,
      itlBracket: itl.bracket,
      queueTimeMilliseconds: queueTime.milliseconds,
      queueTimeBracket: queueTime.bracket,
      queueTimeExport: queueTimeExport(fresh, kind),
      seriesUsed: seriesUsed(sampled),
    }),
  };
  const stableUsable = stable.promptTokensPerSecond !== undefined || stable.generationTokensPerSecond !== undefined;
  const signalState: SignalState = !stableUsable ? "Missing" : isIdle(readings) ? "Idle" : "Fresh";
  return { ...readings, signalState };
}
