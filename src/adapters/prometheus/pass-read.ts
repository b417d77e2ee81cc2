/**
 * A pass's answers read into what it has read so far (`PassAcc`): which answers may be used (a failed or
 * partial query costs its family), and each sample filed under its pod, target, window or role by its tag.
 */
import type { EngineKind, SignalFamily } from "../../core/signals/types.js";
import type { InstantQueryResult, NativeHistogram, VectorSample } from "./client.js";
import type { PrometheusLabelNames } from "./config.js";
import { nativeCumulativeCounts } from "./native-histogram.js";
import {
  emptyHistogram,
  newestTarget,
  roleKey,
  type HistogramName,
  type PassAcc,
  type PodAcc,
  type RoleAcc,
  type TargetAcc,
  type WindowAcc,
} from "./pass-acc.js";
import { instanceLabel, queryNames, seriesLabel, windowLabel, type PartQuery, type QueryName } from "./queries.js";

/** The family of fields each query carries: what its failure or partial answer costs. */
export const familyOfQuery: Readonly<Record<QueryName, SignalFamily>> = {
  gauges: "gauges",
  counters: "counters",
  ttft: "ttft",
  itl: "itl",
};

/** Which answers a pass may use: all of a complete one; only the pod names and times of a partial gauge answer. */
export type Usable = "all" | "podsOnly";

/**
 * One query of a pass: its family, and, in the `parts` plan, the signal (and
 * window, when it holds one) that the `unions` plan's tags would carry.
 */
export type IssuedQuery = Pick<PartQuery, "family" | "text"> &
  Partial<Pick<PartQuery, "signal" | "windowSeconds" | "perRole">>;

/** A pass's answers as read: what may be used, and what each family's failed or partial queries cost. */
export interface PassAnswers {
  readonly usable: UsableAnswer[];
  readonly failures: Map<QueryName, string>;
  readonly warnings: string[];
  readonly infos: string[];
  readonly unknownFamilies: Partial<Record<SignalFamily, string>>;
}

/** One answer a pass may use, with the query it answers. */
export interface UsableAnswer {
  readonly query: IssuedQuery;
  readonly result: InstantQueryResult;
  readonly use: Usable;
}

/**
 * What a sample's tag says: the engine, the signal and, for a reset count, the counter group
 * (`resetGroups`), for a queue-time part, the part (`bucket`, `count`, `sum`).
 */
export interface Tag {
  readonly engine: EngineKind;
  readonly signal: string;
  readonly counter: string | undefined;
  /**
   * `<engine>/<signal>`: what a gauge or rate is filed under. Made here, once per tag, so a pass's maps share one
   * string where they held one for each of its hundreds of thousands of series.
   */
  readonly signalKey: string;
  /** `<engine>/<counter>`: what a reset count's counter group is filed under (`WindowAcc.present`), made once too. */
  readonly groupKey: string | undefined;
}

/** Each tag read once per pass, however many series carry it. */
export class Tags {
  private readonly read = new Map<string, Tag | undefined>();

  of(text: string | undefined): Tag | undefined {
    if (text === undefined) return undefined;
    if (this.read.has(text)) return this.read.get(text);
    const [engine, signal, counter] = text.split("/");
    const tag: Tag | undefined =
      (engine === "vllm" || engine === "sglang") && signal
        ? {
            engine,
            signal,
            counter,
            signalKey: `${engine}/${signal}`,
            groupKey: counter === undefined ? undefined : `${engine}/${counter}`,
          }
        : undefined;
    this.read.set(text, tag);
    return tag;
  }
}

/** Adds one sample of a usable answer to its pod: a gauge to its scrape target, anything else to its window. */
export function readSample(
  pass: PassAcc,
  labels: PrometheusLabelNames,
  answer: UsableAnswer,
  s: VectorSample,
  tag: Tag,
): void {
  if (answer.query.perRole === true) return readRoleBuckets(pass.roles, labels, answer, s, tag);
  const acc = podOf(pass, labels, s);
  if (!acc) return;
  const family = answer.query.family;
  if (family === "gauges") return readGauge(targetOf(acc, s), s, tag, answer.use);
  const win = windowOf(acc, answer.query.windowSeconds ?? Number(s.labels[windowLabel]));
  if (!win) return;
  if (family === "counters") return readCounter(win, s, tag);
  readHistogramPart(acc, win, family, s, tag);
}

/**
 * A bucket of a role's sum (`roles` plan), or a role's native histogram with its sum (`native`): per role,
 * window and histogram, both engines' parts added.
 */
export function readRoleBuckets(
  roles: Map<string, RoleAcc>,
  l: PrometheusLabelNames,
  answer: UsableAnswer,
  s: VectorSample,
  { signal }: Tag,
): void {
  const namespace = s.labels[l.namespace];
  const deployment = s.labels[l.deployment];
  const role = s.labels[l.role];
  const w = answer.query.windowSeconds ?? Number(s.labels[windowLabel]);
  const le = parseLe(s.labels["le"]);
  if (!namespace || !deployment || !role || !Number.isFinite(w) || (le === undefined && s.histogram === undefined))
    return;
  const key = roleKey(namespace, deployment, role);
  let acc = roles.get(key);
  if (!acc) roles.set(key, (acc = new Map()));
  let win = acc.get(w);
  if (!win) acc.set(w, (win = { ttft: new Map(), itl: new Map(), queue: new Map(), sums: {} }));
  const name: HistogramName = signal === "queue" ? "queue" : answer.query.family === "ttft" ? "ttft" : "itl";
  if (s.histogram !== undefined) {
    win.sums[name] = (win.sums[name] ?? 0) + s.histogram.sum;
    return addNativeSum(win[name], s.histogram);
  }
  if (le !== undefined) win[name].set(le, (win[name].get(le) ?? 0) + s.value);
}

/**
 * A role's native histogram (`native` plan) as the cumulative counts at bounds a role's `_bucket` sums give
 * (`nativeCumulativeCounts`). Only the bounds of the buckets the answer names are known, so a second histogram
 * for the same role and window (both engines' parts of a mixed role) cannot be added bound by bound as
 * `_bucket` series are: the sum is then not known, and its pods' own buckets are asked.
 */
export function addNativeSum(buckets: Map<number, number>, histogram: NativeHistogram): void {
  if (buckets.size > 0) {
    buckets.set(Infinity, NaN);
    return;
  }
  for (const [bound, count] of nativeCumulativeCounts(histogram)) buckets.set(bound, count);
}

export function podOf(pass: PassAcc, l: PrometheusLabelNames, s: VectorSample): PodAcc | undefined {
  const namespace = s.labels[l.namespace];
  const deployment = s.labels[l.deployment];
  const role = s.labels[l.role];
  const pod = s.labels[l.pod];
  if (!namespace || !deployment || !role || !pod) return undefined;
  const named = pass.podsByName.get(pod);
  if (named !== undefined)
    for (const acc of named)
      if (acc.namespace === namespace && acc.deployment === deployment && acc.role === role) return acc;
  const acc: PodAcc = { namespace, deployment, role, pod, targets: new Map(), windows: new Map() };
  pass.pods.push(acc);
  if (named === undefined) pass.podsByName.set(pod, [acc]);
  else named.push(acc);
  return acc;
}

export function targetOf(acc: PodAcc, s: VectorSample): TargetAcc {
  const instance = s.labels[instanceLabel] ?? "";
  let target = acc.targets.get(instance);
  if (!target) acc.targets.set(instance, (target = { gauges: new Map() }));
  return target;
}

export function windowOf(acc: PodAcc, w: number): WindowAcc | undefined {
  if (!Number.isFinite(w)) return undefined;
  let win = acc.windows.get(w);
  if (!win)
    acc.windows.set(
      w,
      (win = {
        rates: new Map(),
        present: new Set(),
        targetsByEngine: {},
        ttft: emptyHistogram(),
        itl: emptyHistogram(),
        queue: emptyHistogram(),
      }),
    );
  return win;
}

/** The scrape time names the target's engine; gauge values count only from a complete answer. */
export function readGauge(target: TargetAcc, s: VectorSample, { engine, signal, signalKey }: Tag, use: Usable): void {
  if (signal === "timestamp") {
    if (target.engine === undefined || (target.timestamp ?? -Infinity) < s.value) target.engine = engine;
    target.timestamp = Math.max(target.timestamp ?? -Infinity, s.value);
  } else if (use === "all") {
    target.gauges.set(signalKey, s.value);
    const series = s.labels[seriesLabel];
    if (series !== undefined) (target.gaugeSeries ??= new Map()).set(signalKey, `${engine}:${series}`);
  }
}

export function readCounter(win: WindowAcc, s: VectorSample, { engine, signal, signalKey, groupKey }: Tag): void {
  if (signal === "resets") {
    win.resets = (win.resets ?? 0) + s.value;
    if (groupKey !== undefined) win.present.add(groupKey);
  } else if (signal === "cached") {
    // Storage tiers are named per backend (`storage_HiCacheNixl`); an unlabelled series is a total.
    const source = s.labels["cache_source"] ?? "";
    const tier = source === "" ? "total" : source.startsWith("storage") ? "storage" : source;
    const key = `${engine}/cached/${tier}`;
    win.rates.set(key, (win.rates.get(key) ?? 0) + s.value);
  } else if (signal === "samples") {
    // One row per scrape target: the pod's sample count is the fewest, its targets are its rows, counted per
    // engine since each engine's part answers for its own targets (`scrapeTargets` takes the larger).
    win.samples = Math.min(win.samples ?? Infinity, s.value);
    win.targetsByEngine[engine] = (win.targetsByEngine[engine] ?? 0) + 1;
  } else if (signal === "effective") win.rates.set(`${engine}/effective/${s.labels["mode"] ?? ""}`, s.value);
  else win.rates.set(signalKey, s.value);
}

/** A TTFT, ITL or queue-time part, counted only when it comes from the engine the pod's newest target runs. */
export function readHistogramPart(
  acc: PodAcc,
  win: WindowAcc,
  family: QueryName,
  s: VectorSample,
  { engine: tagEngine, signal, counter }: Tag,
): void {
  // Queue-time parts ride in the TTFT answer, tagged `<engine>/queue/<part>`.
  const queue = signal === "queue";
  const h = queue ? win.queue : family === "ttft" ? win.ttft : win.itl;
  const part = queue ? counter : signal;
  if (part === "count") h.counted = [...h.counted, tagEngine];
  const engine = newestTarget(acc)?.engine;
  if (tagEngine !== engine && engine !== undefined) return;
  if (family === "itl" && s.labels[seriesLabel] !== undefined) win.itlSeries = `${tagEngine}:${s.labels[seriesLabel]}`;
  if (part === "bucket") {
    // `le="1.0"` (Prometheus 2) and `le="1"` (Prometheus 3) are one bucket: a window
    // spanning an upgrade holds both series, each with part of the increase.
    const le = parseLe(s.labels["le"]);
    if (le !== undefined) {
      const buckets = (h.buckets ??= new Map());
      buckets.set(le, (buckets.get(le) ?? 0) + s.value);
    }
  } else if (part === "count") h.count = s.value;
  else if (part === "sum") h.sum = s.value;
}

export function parseLe(le: string | undefined): number | undefined {
  if (le === undefined) return undefined;
  if (le === "+Inf" || le === "Inf") return Infinity;
  const v = Number(le);
  return Number.isNaN(v) ? undefined : v;
}

/**
 * Prometheus 3's warnings where native histograms of one group, or of one series over its window, have bucket
 * layouts it cannot add (`util/annotations`): the group or series is left out of the answer.
 */
export const histogramLayoutWarning =
  /incompatible custom buckets|mix of histograms with exponential and custom buckets/;

/**
 * Reads the answers of a pass: what may be used, and what each family's failed or partial
 * queries cost. A family is as good as its worst query: one failed query fails the family
 * (the first failure in issue order is its reason), one partial answer makes it partial.
 */
export function readAnswers(
  queries: readonly IssuedQuery[],
  settled: readonly PromiseSettledResult<InstantQueryResult>[],
): PassAnswers {
  const failures = new Map<QueryName, string>();
  const partial = new Map<QueryName, string[]>();
  const infos: string[] = [];
  const answered: { query: IssuedQuery; result: InstantQueryResult }[] = [];
  settled.forEach((s, i) => {
    const query = queries[i];
    if (!query) return;
    const name = query.family;
    if (s.status === "rejected") {
      if (!failures.has(name)) failures.set(name, s.reason instanceof Error ? s.reason.message : String(s.reason));
      return;
    }
    answered.push({ query, result: s.value });
    // A native sum Prometheus could not add (pods of a role with other bucket layouts) is left out of the
    // answer, with this warning; a role without its sum, or whose sum misses a pod, is asked for its pods'
    // own buckets, so nothing is read from what is missing: the family stays known, the warning is reported.
    const layout = (w: string): boolean => query.perRole === true && histogramLayoutWarning.test(w);
    const warnings = s.value.warnings.filter((w) => !layout(w));
    for (const info of [...(s.value.infos ?? []), ...s.value.warnings.filter(layout)])
      if (!infos.includes(`${name}: ${info}`)) infos.push(`${name}: ${info}`);
    if (warnings.length === 0) return;
    // The queries of one family read the same stores: each warning once.
    const seen = partial.get(name) ?? [];
    for (const warning of warnings) if (!seen.includes(warning)) seen.push(warning);
    partial.set(name, seen);
  });
  const warnings: string[] = [];
  const unknownFamilies: Partial<Record<SignalFamily, string>> = {};
  for (const name of queryNames) {
    const family = familyOfQuery[name];
    const failure = failures.get(name);
    const partialWarnings = partial.get(name);
    if (partialWarnings !== undefined) warnings.push(...partialWarnings.map((warning) => `${name}: ${warning}`));
    if (failure !== undefined) unknownFamilies[family] = `${name} query failed: ${failure}`;
    // A warning may mean a store did not answer (remote read, a federating layer's partial
    // response): what came back may be half the demand, so the family is unknown, not smaller.
    else if (partialWarnings !== undefined)
      unknownFamilies[family] = `${name} query answered partially: ${partialWarnings.join("; ")}`;
  }
  const usable: UsableAnswer[] = [];
  for (const { query, result } of answered) {
    const name = query.family;
    if (failures.has(name)) continue;
    if (!partial.has(name)) usable.push({ query, result, use: "all" });
    // The pods a partial gauge answer names did answer; their gauge values may be partial sums.
    else if (name === "gauges") usable.push({ query, result, use: "podsOnly" });
  }
  return { usable, failures, warnings, infos, unknownFamilies };
}
