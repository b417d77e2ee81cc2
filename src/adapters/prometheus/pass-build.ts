/**
 * What a pass has read (`PassAcc`) as the core takes it: one `RoleSamples` per scaler and role, one
 * `PodSample` per pod, the role's summed buckets where they were asked.
 */
import type {
  EngineKind,
  HistogramWindow,
  LatencyField,
  PodSample,
  PodWindowRates,
  RoleHistogram,
  RoleSamples,
  SignalFamily,
  WindowName,
} from "../../core/signals/types.js";
import {
  coveredPods,
  fieldOfHistogram,
  histogramNames,
  nativeSumMissing,
  nativeSumsAt,
  newestTarget,
  podSumsAsked,
  podsByRole,
  roleKey,
  windowSeconds,
  type HistogramAcc,
  type PassAcc,
  type PodAcc,
  type RoleAcc,
  type WindowAcc,
} from "./pass-acc.js";
import type { resetGroups } from "./queries.js";
import type { ScalerSamplingInput } from "./source.js";

/**
 * One `RoleSamples` per scaler and role. `perPodRoles` is set in the `roles`
 * plan: every role not in it (by `roleKey`) carries its summed buckets (`roleHistograms`).
 */
export function buildPass(
  scalers: readonly ScalerSamplingInput[],
  acc: PassAcc,
  unknownFamilies: Partial<Record<SignalFamily, string>>,
  perPodRoles: ReadonlySet<string> | undefined,
): Map<string, Map<string, RoleSamples>> {
  const partial = Object.keys(unknownFamilies).length > 0 ? { unknownFamilies } : {};
  const byRole = podsByRole(acc);
  const out = new Map<string, Map<string, RoleSamples>>();
  for (const s of scalers) {
    const roles = new Map<string, RoleSamples>();
    for (const role of s.roles) {
      const key = roleKey(s.namespace, s.deployment, role);
      const pods = byRole.get(key) ?? [];
      const samples: PodSample[] = [];
      // Once per role and window, not per pod: every pod of the role was asked alike.
      const sums: Record<WindowName, boolean> = {
        stable: podSumsAsked(acc, key, windowSeconds(s.stableWindowSeconds), perPodRoles),
        panic: podSumsAsked(acc, key, windowSeconds(s.panicWindowSeconds), perPodRoles),
      };
      for (const pod of pods) {
        const sample = toPodSample(pod, s, sums);
        if (sample) samples.push(sample);
      }
      samples.sort((a, b) => (a.pod < b.pod ? -1 : a.pod > b.pod ? 1 : 0));
      const summed =
        perPodRoles === undefined || perPodRoles.has(key)
          ? undefined
          : roleHistograms(pods, acc.roles.get(key), acc.summed.get(key), s, (w) => nativeSumsAt(acc, key, w));
      roles.set(role, { pods: samples, ...partial, ...(summed === undefined ? {} : { roleHistograms: summed }) });
    }
    out.set(s.key, roles);
  }
  return out;
}

/** A role's summed buckets by window name and histogram, with the pods each sum covers. */
export function roleHistograms(
  pods: readonly PodAcc[],
  role: RoleAcc | undefined,
  asked: ReadonlySet<number> | undefined,
  scaler: ScalerSamplingInput,
  nativeAt: (windowSeconds: number) => boolean,
): RoleSamples["roleHistograms"] {
  const out: Partial<Record<WindowName, Partial<Record<LatencyField, RoleHistogram>>>> = {};
  const windows: [WindowName, number][] = [
    ["stable", scaler.stableWindowSeconds],
    ["panic", scaler.panicWindowSeconds],
  ];
  for (const [name, seconds] of windows) {
    const w = windowSeconds(seconds);
    // A window whose sums were not asked (the stable one, where the panic window held observations) is not read.
    if (asked?.has(w) !== true) continue;
    const byField: Partial<Record<LatencyField, RoleHistogram>> = {};
    for (const histogram of histogramNames) {
      const covered = coveredPods(pods, w, histogram);
      const answered = role?.get(w)?.[histogram] ?? new Map<number, number>();
      // Classic bucket series absent are a role without buckets, as its pods' merge would read them.
      const buckets =
        nativeAt(w) && nativeSumMissing(covered.length > 0, answered.size) ? new Map([[Infinity, NaN]]) : answered;
      const sum = role?.get(w)?.sums[histogram];
      if (covered.length > 0 || buckets.size > 0)
        byField[fieldOfHistogram[histogram]] = {
          pods: covered,
          buckets: cumulativeBuckets(buckets),
          ...(sum === undefined ? {} : { sum }),
        };
    }
    if (Object.keys(byField).length > 0) out[name] = byField;
  }
  return Object.keys(out).length > 0 ? out : undefined;
}

/**
 * `podSums`: whether the pod's histogram sums of each window were asked (`podSumsAsked`); a sum asked and
 * not answered is no histogram.
 */
export function toPodSample(
  acc: PodAcc,
  scaler: ScalerSamplingInput,
  podSums: Readonly<Record<WindowName, boolean>>,
): PodSample | undefined {
  // A pod without a current gauge sample did not answer.
  const target = newestTarget(acc);
  const engine = target?.engine;
  if (target === undefined || engine === undefined || target.timestamp === undefined) return undefined;
  const g = (name: string): number | undefined => target.gauges.get(`${engine}/${name}`);
  const running = g("running");
  const waiting = g("waiting");
  const kv = g("kv");
  const transfer = g("transfer");
  const prealloc = g("prealloc");
  const bootstrap = g("bootstrap");
  const kvSeries = target.gaugeSeries?.get(`${engine}/kv`) ?? (engine === "sglang" ? "sglang:token_usage" : undefined);
  const bootstrapSeries = target.gaugeSeries?.get(`${engine}/bootstrap`);
  const gaugeSeries = {
    ...(kv !== undefined && kvSeries !== undefined ? { kvCacheUsage: kvSeries } : {}),
    ...(bootstrap !== undefined && bootstrapSeries !== undefined
      ? { prefillBootstrapQueueRequests: bootstrapSeries }
      : {}),
  };
  return {
    pod: acc.pod,
    engine,
    lastSampleUnixSeconds: target.timestamp,
    ...(running !== undefined ? { runningRequests: running } : {}),
    ...(waiting !== undefined ? { waitingRequests: waiting } : {}),
    ...(transfer !== undefined ? { decodeTransferQueueRequests: transfer } : {}),
    ...(prealloc !== undefined ? { decodePreallocQueueRequests: prealloc } : {}),
    ...(bootstrap !== undefined ? { prefillBootstrapQueueRequests: bootstrap } : {}),
    ...(kv !== undefined ? { kvCacheUsage: kv } : {}),
    ...(Object.keys(gaugeSeries).length > 0 ? { gaugeSeries } : {}),
    windows: {
      stable: toWindowRates(acc.windows.get(windowSeconds(scaler.stableWindowSeconds)), engine, podSums.stable),
      panic: toWindowRates(acc.windows.get(windowSeconds(scaler.panicWindowSeconds)), engine, podSums.panic),
    },
  };
}

export function toWindowRates(win: WindowAcc | undefined, engine: EngineKind, podSums: boolean): PodWindowRates {
  if (!win) return { established: false };
  // Two samples, no counter reset, and one scrape target: a pod recreated inside the window
  // (a new `instance`) has two series whose rates and histograms would add up, and whose
  // `resets()` each read zero; it is established again once the window holds only the new one.
  const targets = scrapeTargets(win);
  const established =
    win.samples !== undefined &&
    win.samples >= 2 &&
    win.resets !== undefined &&
    win.resets === 0 &&
    targets !== undefined &&
    targets <= 1;
  const r = (name: string): number | undefined => win.rates.get(`${engine}/${name}`);
  const entries: [keyof PodWindowRates, number | undefined][] =
    engine === "vllm"
      ? [
          ["promptTokensPerSecond", r("prompt")],
          ["generationTokensPerSecond", r("generation")],
          ["prefixCacheHitTokensPerSecond", r("prefix_hits")],
        ]
      : [
          ["promptTokensPerSecond", r("prompt")],
          ["generationTokensPerSecond", r("generation")],
          ["effectivePrefillTokensPerSecond", r("effective/input")],
          ...sglangHits(win),
        ];
  const rates: Record<string, number> = {};
  for (const [k, v] of entries) if (v !== undefined) rates[k] = v;
  const ttft = toHistogram(win.ttft, podSums);
  const itl = toHistogram(win.itl, podSums);
  const queueTime = toHistogram(win.queue, podSums);
  const cacheSeries = engine === "sglang" ? sglangCacheSeries(win) : undefined;
  return {
    established,
    ...rates,
    ...(cacheSeries !== undefined ? { cacheSeries } : {}),
    ...(ttft ? { ttftSeconds: ttft } : {}),
    ...(itl ? { itlSeconds: itl, ...(win.itlSeries !== undefined ? { itlSeries: win.itlSeries } : {}) } : {}),
    ...(queueTime ? { queueTimeSeconds: queueTime } : {}),
    ...(engine === "sglang"
      ? {
          counterPresence: {
            firstUseFamily: win.present.has(sglangGroup("first_use")),
            startupCounter: win.present.has(sglangGroup("startup")),
          },
        }
      : {}),
  };
}

/** How a window files an SGLang reset group it saw (`readCounter`), by a name `resetGroups` has. */
function sglangGroup(group: keyof typeof resetGroups.sglang): string {
  return `sglang/${group}`;
}

/** Scrape targets seen in the window, the most of either engine's; undefined where no samples part answered. */
function scrapeTargets(win: WindowAcc): number | undefined {
  const counts = Object.values(win.targetsByEngine);
  return counts.length === 0 ? undefined : Math.max(...counts);
}

/**
 * Whether this SGLang window has `prefill_effective_tokens_total` (2026 builds): its `input` mode is the prompt
 * demand.
 */
export function usesEffectiveCounter(win: WindowAcc): boolean {
  return [...win.rates.keys()].some((k) => k.startsWith("sglang/effective/"));
}

/**
 * SGLang hit rates per tier, from `cached_tokens_total{cache_source}`, on builds without the effective-prefill
 * counter; none where the pod has it, since its `input` mode is then the demand and the pass asks only that mode.
 */
export function sglangHits(win: WindowAcc): [keyof PodWindowRates, number | undefined][] {
  if (usesEffectiveCounter(win)) return [];
  const r = (name: string): number | undefined => win.rates.get(`sglang/${name}`);
  return [
    ["deviceHitTokensPerSecond", r("cached/device")],
    ["hostHitTokensPerSecond", r("cached/host")],
    ["storageHitTokensPerSecond", r("cached/storage")],
    ["totalCachedTokensPerSecond", r("cached/total")],
  ];
}

/** The series the window's hit tiers came from, where it has them. */
export function sglangCacheSeries(win: WindowAcc): string | undefined {
  if (usesEffectiveCounter(win)) return undefined;
  return [...win.rates.keys()].some((k) => k.startsWith("sglang/cached/")) ? "sglang:cached_tokens_total" : undefined;
}

/**
 * The pod's histogram of one window; none without its count, or without its sum where the sum was asked
 * (`podSums`: a series missing, or a NaN the sum read), which no merge can add.
 */
export function toHistogram(h: HistogramAcc, podSums: boolean): HistogramWindow | undefined {
  if (h.count === undefined || (podSums && h.sum === undefined)) return undefined;
  return {
    buckets: h.buckets === undefined ? [] : cumulativeBuckets(h.buckets),
    count: h.count,
    ...(h.sum === undefined ? {} : { sum: h.sum }),
  };
}

/**
 * Buckets by upper bound, ascending. A bucket whose series changed name inside the window
 * (`le="1.0"` → `le="1"`) loses the increase between the two series, and can fall below the
 * bucket before it. A cumulative count never falls, so it is at least the previous bucket's:
 * a lower bound that keeps the percentile from moving down.
 */
export function cumulativeBuckets(buckets: ReadonlyMap<number, number>): HistogramWindow["buckets"] {
  let floor = 0;
  return [...buckets.entries()]
    .sort((a, b) => a[0] - b[0])
    .map(([upperBound, count]) => ({ upperBound, count: (floor = Math.max(floor, count)) }));
}
