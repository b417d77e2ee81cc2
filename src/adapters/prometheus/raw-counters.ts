/**
 * The `raw-counters` plan's counters family: each engine's counter samples read raw over the longest window
 * (`rawCountersSelector`), and every part the other plans ask Prometheus for (queries.ts `countersParts`)
 * computed from them here, window by window, as Prometheus 3 computes it (promql-window.ts). The rows come out
 * as the `unions` plan's tagged parts do (`mds_signal`, `mds_window_seconds`), so a pass reads them as any
 * other answer. Per part:
 *
 * - `<engine>/<counter>`: `sum by (pod) (rate(counter[w]))`;
 * - `sglang/effective`: the input mode's rate per data-parallel rank (`max` over the ranks' duplicates, as
 *   `sglangScheduler` filters them), summed by pod and mode;
 * - `sglang/cached`: `sum by (pod, cache_source) (rate(…))`;
 * - `<engine>/resets/<counter>`: `sum by (pod) (resets(counter[w]))`, every series of the counter;
 * - `<engine>/samples`: `min by (pod, instance) (count_over_time(gauge[w]))`.
 *
 * "pod" stands for the pod group (namespace, pod, deployment, role); a group's labels are its non-empty ones,
 * as Prometheus drops empty labels from an aggregation's answer.
 */
import type { RawSeries, VectorSample } from "./client.js";
import type { PrometheusLabelNames } from "./config.js";
import { extreme, extrapolatedRate, KahanSum, resets, windowOf, type FloatSample } from "./promql-window.js";
import {
  instanceLabel,
  resetCounters,
  samplesGauge,
  signalLabel,
  windowLabel,
  type TargetSelection,
  type WindowSelection,
} from "./queries.js";

/** The counters read as rates, by part signal (`<engine>/<signal>`), with the metric they read. */
const rateParts = {
  vllm: [
    ["prompt", "prompt_tokens_total"],
    ["generation", "generation_tokens_total"],
    ["prefix_hits", "prefix_cache_hits_total"],
  ],
  sglang: [
    ["prompt", "prompt_tokens_total"],
    ["generation", "generation_tokens_total"],
  ],
} as const;

/**
 * One output row being aggregated: its pod's labels, the one more label it is grouped by (if any, and not
 * empty), and its value so far. Its labels are made once, as the row is written.
 */
interface Group<T> {
  readonly podLabels: Readonly<Record<string, string>>;
  readonly extra?: readonly [string, string];
  value: T;
}

/**
 * Groups in the order Prometheus' aggregation first sees them (its answer's order), keyed by their label values.
 * No closure or label object is made per series: a pass reads about a hundred series per deployment, each in
 * several parts.
 */
type Groups<T> = Map<string, Group<T>>;

/** A series of the read with its pod group (the key of its label values, and the labels `by` keeps). */
interface PodSeries {
  readonly s: RawSeries;
  readonly podKey: string;
  readonly podLabels: Readonly<Record<string, string>>;
}

/** A series of a window: its pod group and its samples in the window. */
interface WindowSeries {
  readonly item: PodSeries;
  readonly inWindow: readonly FloatSample[];
}

/** Adds `v` to the sum of the group `key`, grouped by the pod and `extra` (a label and its value). */
function addTo(
  groups: Groups<KahanSum>,
  key: string,
  podLabels: Readonly<Record<string, string>>,
  extra: readonly [string, string] | undefined,
  v: number,
): void {
  let g = groups.get(key);
  if (!g) {
    g =
      extra === undefined || extra[1] === ""
        ? { podLabels, value: new KahanSum() }
        : { podLabels, extra, value: new KahanSum() };
    groups.set(key, g);
  }
  g.value.add(v);
}

/**
 * Every counters part of every window for one engine's raw read evaluated at `atUnixMs`, as tagged rows.
 * `windows` are the pass's windows with the scalers each applies to; the read holds the longest.
 */
export function counterRows(
  engine: "vllm" | "sglang",
  series: readonly RawSeries[],
  windows: readonly WindowSelection[],
  labels: PrometheusLabelNames,
  separator: string,
  atUnixMs: number,
): VectorSample[] {
  const endMs = Math.round(atUnixMs);
  const prefix = `${engine}${separator}`;
  const podNames = [labels.namespace, labels.pod, labels.deployment, labels.role];
  const byMetric = new Map<string, PodSeries[]>();
  for (const s of series) {
    if (!s.name.startsWith(prefix)) continue;
    const metric = s.name.slice(prefix.length);
    const l = s.labels;
    const podKey = `${l[labels.namespace] ?? ""}\u0000${l[labels.pod] ?? ""}\u0000${l[labels.deployment] ?? ""}\u0000${l[labels.role] ?? ""}`;
    const item: PodSeries = { s, podKey, podLabels: groupLabels(l, podNames) };
    const list = byMetric.get(metric);
    if (list) list.push(item);
    else byMetric.set(metric, [item]);
  }
  const rows: VectorSample[] = [];
  const timestampUnixSeconds = atUnixMs / 1000;
  for (const { windowSeconds: w, selection } of windows) {
    const selected = inSelection(labels, selection);
    const window = String(w);
    const read = new Map<string, WindowSeries[]>();
    const seriesOf = (metric: string): WindowSeries[] => {
      let list = read.get(metric);
      if (list) return list;
      list = [];
      for (const item of byMetric.get(metric) ?? [])
        if (selected(item.s.labels)) list.push({ item, inWindow: windowOf(item.s.samples, endMs, w) });
      read.set(metric, list);
      return list;
    };
    const emit = <T>(signal: string, groups: Groups<T>, value: (v: T) => number): void => {
      for (const g of groups.values()) {
        const rowLabels: Record<string, string> = { ...g.podLabels };
        if (g.extra !== undefined) rowLabels[g.extra[0]] = g.extra[1];
        rowLabels[signalLabel] = signal;
        rowLabels[windowLabel] = window;
        rows.push({ labels: rowLabels, value: value(g.value), timestampUnixSeconds });
      }
    };
    const total = (k: KahanSum): number => k.value;
    /** `sum by (pod)` (with `extra`, `by (pod, extra)`) of a rate or a reset count over a metric's series. */
    const sumOf = (signal: string, metric: string, kind: "rate" | "resets", extra?: string): void => {
      const groups: Groups<KahanSum> = new Map();
      for (const { item, inWindow } of seriesOf(metric)) {
        const v = kind === "rate" ? extrapolatedRate(inWindow, endMs, w) : resets(inWindow);
        if (v === undefined) continue;
        if (extra === undefined) addTo(groups, item.podKey, item.podLabels, undefined, v);
        else {
          const extraValue = item.s.labels[extra] ?? "";
          addTo(groups, `${item.podKey}\u0000${extraValue}`, item.podLabels, [extra, extraValue], v);
        }
      }
      emit(signal, groups, total);
    };
    for (const [signal, metric] of rateParts[engine]) sumOf(`${engine}/${signal}`, metric, "rate");
    if (engine === "sglang") {
      effectiveRows(seriesOf("prefill_effective_tokens_total"), endMs, w, emit);
      sumOf("sglang/cached", "cached_tokens_total", "rate", "cache_source");
    }
    for (const counter of resetCounters[engine]) sumOf(`${engine}/resets/${counter}`, counter, "resets");
    const counts: Groups<number | undefined> = new Map();
    for (const { item, inWindow } of seriesOf(samplesGauge[engine])) {
      if (inWindow.length === 0) continue;
      const instance = item.s.labels[instanceLabel] ?? "";
      const key = `${item.podKey}\u0000${instance}`;
      let g = counts.get(key);
      if (!g)
        counts.set(
          key,
          (g =
            instance === ""
              ? { podLabels: item.podLabels, value: undefined }
              : { podLabels: item.podLabels, extra: [instanceLabel, instance], value: undefined }),
        );
      g.value = extreme(g.value, inWindow.length, "min");
    }
    emit(`${engine}/samples`, counts, (v) => v ?? NaN);
  }
  return rows;
}

/**
 * SGLang's effective prefill as `sglangScheduler` asks it with `mode="input"`: pipeline rank 0 and the
 * `priority=""` total; tensor rank 0, or any series naming a data-parallel rank (each series once, the tensor
 * rank 0 ones first, as `or` keeps them); `max` per pod, data-parallel rank, target and mode; summed by pod and mode.
 */
function effectiveRows(
  series: readonly WindowSeries[],
  endMs: number,
  w: number,
  emit: (signal: string, groups: Groups<KahanSum>, value: (v: KahanSum) => number) => void,
): void {
  const base = series.filter(
    ({ item: { s } }) =>
      oneOf(s.labels["pp_rank"], "0", "") && oneOf(s.labels["priority"], "") && oneOf(s.labels["mode"], "input"),
  );
  const leader = base.filter(({ item: { s } }) => oneOf(s.labels["tp_rank"], "0", ""));
  const dataParallel = base.filter(
    ({ item: { s } }) => !oneOf(s.labels["tp_rank"], "0", "") && !oneOf(s.labels["dp_rank"], ""),
  );
  const ranks = new Map<string, { readonly item: PodSeries; max: number | undefined }>();
  for (const { item, inWindow } of [...leader, ...dataParallel]) {
    const v = extrapolatedRate(inWindow, endMs, w);
    if (v === undefined) continue;
    const l = item.s.labels;
    const key = `${item.podKey}\u0000${l["dp_rank"] ?? ""}\u0000${l[instanceLabel] ?? ""}`;
    let g = ranks.get(key);
    if (!g) ranks.set(key, (g = { item, max: undefined }));
    g.max = extreme(g.max, v, "max");
  }
  // Every series here has mode="input": the sum is by pod, the mode kept as its label.
  const sums: Groups<KahanSum> = new Map();
  for (const { item, max } of ranks.values())
    if (max !== undefined) addTo(sums, item.podKey, item.podLabels, ["mode", "input"], max);
  emit("sglang/effective", sums, (k) => k.value);
}

/** Whether a label's value (absent reads as empty, as in PromQL) is one of these. */
function oneOf(value: string | undefined, ...values: readonly string[]): boolean {
  return values.includes(value ?? "");
}

/** The labels `by` keeps of a series: the non-empty ones of these names, in this order. */
function groupLabels(labels: Readonly<Record<string, string>>, names: readonly string[]): Record<string, string> {
  const out: Record<string, string> = {};
  for (const name of names) {
    const v = labels[name];
    if (v !== undefined && v !== "") out[name] = v;
  }
  return out;
}

/** The series a window's scalers select: the read's matchers hold every scaler of the pass, a window's only some. */
function inSelection(
  l: PrometheusLabelNames,
  sel: TargetSelection,
): (labels: Readonly<Record<string, string>>) => boolean {
  const namespaces = new Set(sel.namespaces);
  const deployments = new Set(sel.deployments);
  const roles = new Set(sel.roles);
  return (labels) =>
    namespaces.has(labels[l.namespace] ?? "") &&
    deployments.has(labels[l.deployment] ?? "") &&
    roles.has(labels[l.role] ?? "");
}
