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

/** One output row being aggregated: its labels and its value so far. */
interface Group<T> {
  readonly labels: Record<string, string>;
  value: T;
}

/** Groups in the order Prometheus' aggregation first sees them (its answer's order), keyed by their labels. */
class Groups<T> {
  private readonly byKey = new Map<string, Group<T>>();

  get(labels: Record<string, string>, init: () => T): Group<T> {
    const key = JSON.stringify(labels);
    let group = this.byKey.get(key);
    if (!group) this.byKey.set(key, (group = { labels, value: init() }));
    return group;
  }

  values(): IterableIterator<Group<T>> {
    return this.byKey.values();
  }
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
  const byMetric = new Map<string, RawSeries[]>();
  for (const s of series) {
    if (!s.name.startsWith(prefix)) continue;
    const metric = s.name.slice(prefix.length);
    const list = byMetric.get(metric);
    if (list) list.push(s);
    else byMetric.set(metric, [s]);
  }
  const rows: VectorSample[] = [];
  for (const { windowSeconds: w, selection } of windows) {
    const selected = inSelection(labels, selection);
    const of = (metric: string): { readonly s: RawSeries; readonly inWindow: FloatSample[] }[] =>
      (byMetric.get(metric) ?? []).filter(selected).map((s) => ({ s, inWindow: windowOf(s.samples, endMs, w) }));
    const emit = <T>(signal: string, groups: Groups<T>, value: (v: T) => number): void => {
      for (const g of groups.values())
        rows.push({
          labels: { ...g.labels, [signalLabel]: signal, [windowLabel]: String(w) },
          value: value(g.value),
          timestampUnixSeconds: atUnixMs / 1000,
        });
    };
    const group = (s: RawSeries, extra: readonly string[] = []): Record<string, string> =>
      groupLabels(s.labels, [labels.namespace, labels.pod, labels.deployment, labels.role, ...extra]);
    const sumOf = (
      signal: string,
      metric: string,
      f: (inWindow: FloatSample[]) => number | undefined,
      extra: readonly string[] = [],
    ): void => {
      const groups = new Groups<KahanSum>();
      for (const { s, inWindow } of of(metric)) {
        const v = f(inWindow);
        if (v !== undefined) groups.get(group(s, extra), () => new KahanSum()).value.add(v);
      }
      emit(signal, groups, (k) => k.value);
    };
    const rate = (inWindow: FloatSample[]): number | undefined => extrapolatedRate(inWindow, endMs, w);
    for (const [signal, metric] of rateParts[engine]) sumOf(`${engine}/${signal}`, metric, rate);
    if (engine === "sglang") {
      effectiveRows(of("prefill_effective_tokens_total"), group, rate, emit);
      sumOf("sglang/cached", "cached_tokens_total", rate, ["cache_source"]);
    }
    for (const counter of resetCounters[engine]) sumOf(`${engine}/resets/${counter}`, counter, resets);
    const counts = new Groups<number | undefined>();
    for (const { s, inWindow } of of(samplesGauge[engine]))
      if (inWindow.length > 0) {
        const g = counts.get(group(s, [instanceLabel]), () => undefined);
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
  series: readonly { readonly s: RawSeries; readonly inWindow: FloatSample[] }[],
  group: (s: RawSeries, extra?: readonly string[]) => Record<string, string>,
  rate: (inWindow: FloatSample[]) => number | undefined,
  emit: (signal: string, groups: Groups<KahanSum>, value: (v: KahanSum) => number) => void,
): void {
  const base = series.filter(
    ({ s }) =>
      oneOf(s.labels["pp_rank"], "0", "") && oneOf(s.labels["priority"], "") && oneOf(s.labels["mode"], "input"),
  );
  const leader = base.filter(({ s }) => oneOf(s.labels["tp_rank"], "0", ""));
  const dataParallel = base.filter(({ s }) => !oneOf(s.labels["tp_rank"], "0", "") && !oneOf(s.labels["dp_rank"], ""));
  const ranks = new Groups<number | undefined>();
  for (const { s, inWindow } of [...leader, ...dataParallel]) {
    const v = rate(inWindow);
    if (v === undefined) continue;
    const g = ranks.get(group(s, ["dp_rank", instanceLabel, "mode"]), () => undefined);
    g.value = extreme(g.value, v, "max");
  }
  const sums = new Groups<KahanSum>();
  for (const r of ranks.values()) {
    const { ["dp_rank"]: _rank, [instanceLabel]: _instance, ...byPodAndMode } = r.labels;
    if (r.value !== undefined) sums.get(byPodAndMode, () => new KahanSum()).value.add(r.value);
  }
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
): (item: { readonly labels: Readonly<Record<string, string>> }) => boolean {
  const namespaces = new Set(sel.namespaces);
  const deployments = new Set(sel.deployments);
  const roles = new Set(sel.roles);
  return ({ labels }) =>
    namespaces.has(labels[l.namespace] ?? "") &&
    deployments.has(labels[l.deployment] ?? "") &&
    roles.has(labels[l.role] ?? "");
}
