/**
 * Pure PromQL builders for one sampling pass.
 *
 * The pass reads four families of parts whatever the number of scalers or
 * windows: gauges (instant), counters (rates, resets and sample counts per
 * window), TTFT with queue time, and ITL (histogram deltas per window). Every
 * part is one signal (`<engine>/<signal>`) of one window. Two ways to ask for
 * them (`QueryPlan`): `unions`, four queries, each the union of its family's
 * parts tagged with `mds_signal` and `mds_window_seconds` by `label_replace`;
 * `parts`, one query per signal (its windows' parts joined, tagged only by
 * window when there are several), run side by side, the signal known from
 * the query. Either way the results split in memory by namespace,
 * deployment, role and pod. Object names only ever enter a query through
 * `anyOf`, which escapes them twice (regex, then string).
 */
import type { MetricNameSeparator, PrometheusLabelNames } from "./config.js";
import { matcherText, type LabelMatcher } from "./matchers.js";

export const signalLabel = "mds_signal";
export const windowLabel = "mds_window_seconds";
/** Names the series a part with a version fallback read (the metric name without the engine prefix). */
export const seriesLabel = "mds_series";

/** Escapes text for a PromQL double-quoted string literal. */
export function escapePromQLString(value: string): string {
  let out = "";
  for (const ch of value) {
    const code = ch.codePointAt(0) ?? 0;
    if (ch === "\\") out += "\\\\";
    else if (ch === '"') out += '\\"';
    else if (ch === "\n") out += "\\n";
    else if (ch === "\r") out += "\\r";
    else if (ch === "\t") out += "\\t";
    else if (code < 0x20 || code === 0x7f) out += `\\x${code.toString(16).padStart(2, "0")}`;
    else out += ch;
  }
  return out;
}

/** Escapes text so an RE2 pattern matches it literally. */
export function escapeRegex(value: string): string {
  return value.replace(/[\\.+*?()|[\]{}^$]/g, "\\$&");
}

/** `label=~"v1|v2"` matching exactly these values (anchored by Prometheus). */
export function anyOf(label: string, values: readonly string[]): string {
  const unique = [...new Set(values)].sort();
  return `${label}=~"${escapePromQLString(unique.map(escapeRegex).join("|"))}"`;
}

/** The scrape target label: a pod recreated under the same name comes back with a new one. */
export const instanceLabel = "instance";

/** Which series a part reads: the cross product is narrowed again in memory. */
export interface TargetSelection {
  readonly namespaces: readonly string[];
  readonly deployments: readonly string[];
  readonly roles: readonly string[];
}

export interface WindowSelection {
  readonly windowSeconds: number;
  readonly selection: TargetSelection;
}

export interface SamplingQueries {
  readonly gauges: string;
  readonly counters: string;
  readonly ttft: string;
  readonly itl: string;
}

export type QueryName = keyof SamplingQueries;

/** The families in the order a pass reads them: the gauges first, since they name the pods. */
export const queryNames: readonly QueryName[] = ["gauges", "counters", "ttft", "itl"];

/**
 * How a pass asks for its parts: `unions` (four queries of tagged parts),
 * `parts` (one query per signal), `roles` (as `parts`, the histogram buckets
 * summed by role) or `native` (as `roles`, the sums read from the native
 * histograms with custom buckets a Prometheus 3 converts the classic ones
 * into; docs/prometheus-signals.md, "Cost" and "The `native` plan").
 */
export const queryPlans = ["unions", "parts", "roles", "native"] as const;
export type QueryPlan = (typeof queryPlans)[number];

/** Whether a plan asks the latency buckets summed by role, with the per-pod fallback where a sum is not proven. */
export function sumsByRole(plan: QueryPlan): boolean {
  return plan === "roles" || plan === "native";
}

/** The plan a pass uses unless told otherwise: `roles`, kept by its rule (docs/prometheus-signals.md, "Cost"). */
export const defaultQueryPlan: QueryPlan = "roles";

/** One signal of one window (no window for the gauges), as an expression without tags. */
export interface Part {
  readonly signal: string;
  readonly windowSeconds?: number;
  readonly expr: string;
  /** Summed by role (`roleGroup`): the series carry no pod label. */
  readonly perRole?: true;
}

/**
 * One query of the `parts` plan: every window of one signal. `windowSeconds`
 * is set when the query holds one window; with several, each series carries
 * `mds_window_seconds`.
 */
export interface PartQuery {
  readonly family: QueryName;
  readonly signal: string;
  readonly windowSeconds?: number;
  readonly text: string;
  readonly perRole?: true;
}

export interface QueryContext {
  readonly labels: PrometheusLabelNames;
  readonly separator: MetricNameSeparator;
  /** Matchers every selector carries besides the scaler's own labels (`--prometheus-matchers`); none when absent. */
  readonly matchers?: readonly LabelMatcher[];
}

function tagWindow(expr: string, windowSeconds: number): string {
  return `label_replace(${expr}, "${windowLabel}", "${windowSeconds}", "", "")`;
}

/** A part as the `unions` plan asks for it: tagged with its signal and window. */
function tag({ expr, signal, windowSeconds }: Part): string {
  const tagged = `label_replace(${expr}, "${signalLabel}", "${signal}", "", "")`;
  return windowSeconds === undefined ? tagged : tagWindow(tagged, windowSeconds);
}

/**
 * The parts joined by `or` as a balanced tree. Prometheus evaluates a chain
 * `a or b or c ...` one `or` at a time, each taking every series gathered so
 * far as its left side, so a flat chain of n parts handles the answer about n/2
 * times (48 parts in the counter query); a balanced tree log2(n) times. `or`
 * is associative (a series is kept unless an earlier part has its labels), so
 * the answer is the same.
 */
export function union(parts: readonly string[]): string {
  if (parts.length <= 1) return parts[0] ?? "";
  const half = Math.ceil(parts.length / 2);
  return `(${union(parts.slice(0, half))})\n or (${union(parts.slice(half))})`;
}

/**
 * Version fallback per pod: the first expression whose pod answers wins, each
 * labelled with the metric it read (`mds_series`). Each expression must be
 * aggregated `by` the pod group (plus any extra labels, e.g. `le`): `or on
 * (group)` keeps an older series only for pods without the newer one.
 */
function firstPresent(
  group: string,
  candidates: readonly { readonly metric: string; readonly expr: string }[],
): string {
  return candidates
    .map(({ metric, expr }) => `label_replace(${expr}, "${seriesLabel}", "${metric}", "", "")`)
    .join(` or on (${group}) `);
}

/** Older names of renamed series, newest first (docs/prometheus-signals.md, "Engine versions"). */
export const seriesFallbacks = {
  vllmKvCacheUsage: ["kv_cache_usage_perc", "gpu_cache_usage_perc"],
  itl: ["inter_token_latency_seconds", "time_per_output_token_seconds"],
  sglangPrefillBootstrapQueue: ["num_prefill_bootstrap_queue_reqs", "num_prefill_prealloc_queue_reqs"],
} as const;

class Builder {
  readonly group: string;
  /** A role's series summed over its pods. */
  readonly roleGroup: string;
  constructor(private readonly ctx: QueryContext) {
    const l = ctx.labels;
    this.group = `${l.namespace}, ${l.pod}, ${l.deployment}, ${l.role}`;
    this.roleGroup = `${l.namespace}, ${l.deployment}, ${l.role}`;
  }

  name(engine: "vllm" | "sglang", metric: string): string {
    return `${engine}${this.ctx.separator}${metric}`;
  }

  /**
   * No `pod!=""` matcher: Prometheus answers it by merging the postings of
   * every pod value in the TSDB (12,000 lists at 1,000 deployments) for every
   * selector of the pass. A series without a pod label lands in a group with
   * an empty pod, which the source drops in memory.
   */
  matchers(sel: TargetSelection, extra: readonly string[] = []): string {
    const l = this.ctx.labels;
    return [
      anyOf(l.namespace, sel.namespaces),
      anyOf(l.deployment, sel.deployments),
      anyOf(l.role, sel.roles),
      ...(this.ctx.matchers ?? []).map(matcherText),
      ...extra,
    ].join(", ");
  }

  series(engine: "vllm" | "sglang", metric: string, sel: TargetSelection, extra: readonly string[] = []): string {
    return `${this.name(engine, metric)}{${this.matchers(sel, extra)}}`;
  }

  /**
   * SGLang scheduler series: keep pipeline rank 0 and the `priority=""`
   * total; keep tensor rank 0 unless the series names a data-parallel rank
   * (with DP attention `tp_rank` is that rank's global TP rank); then one value
   * per DP rank (duplicates from other TP ranks collapse) with `inner` applied,
   * per scrape target (`instance`) so that gauges can tell a recreated pod's targets apart. `by` keeps more
   * labels, `collapse` is how duplicate ranks become one, `matchers` narrow the series further.
   */
  sglangScheduler(
    metric: string,
    sel: TargetSelection,
    wrap: (s: string) => string,
    {
      by = [],
      collapse = "max",
      matchers = [],
    }: { by?: readonly string[]; collapse?: "max" | "avg"; matchers?: readonly string[] } = {},
  ): string {
    const base = ['pp_rank=~"0|"', 'priority=""', ...matchers];
    const leader = wrap(this.series("sglang", metric, sel, [...base, 'tp_rank=~"0|"']));
    const dataParallel = wrap(this.series("sglang", metric, sel, [...base, 'dp_rank!=""']));
    const group = [this.group, "dp_rank", instanceLabel, ...by].join(", ");
    return `${collapse} by (${group}) (${leader} or ${dataParallel})`;
  }
}

/**
 * The gauge query: running, waiting, KV usage (vLLM before 0.9.2: `gpu_cache_usage_perc`),
 * SGLang's disaggregation queues (decode transfer and prealloc, prefill bootstrap
 * under either name) and the newest sample time per pod.
 */
export function gaugesParts(ctx: QueryContext, sel: TargetSelection): Part[] {
  const b = new Builder(ctx);
  // Per scrape target too: the old target of a recreated pod, still in the lookback, is not added to the new one.
  const g = `${b.group}, ${instanceLabel}`;
  const id = (s: string): string => s;
  return [
    part(`sum by (${g}) (${b.series("vllm", "num_requests_running", sel)})`, "vllm/running"),
    part(`sum by (${g}) (${b.series("vllm", "num_requests_waiting", sel)})`, "vllm/waiting"),
    part(
      firstPresent(
        g,
        seriesFallbacks.vllmKvCacheUsage.map((metric) => ({
          metric,
          expr: `avg by (${g}) (${b.series("vllm", metric, sel)})`,
        })),
      ),
      "vllm/kv",
    ),
    part(`max by (${g}) (timestamp(${b.series("vllm", "num_requests_running", sel)}))`, "vllm/timestamp"),
    part(`sum by (${g}) (${b.sglangScheduler("num_running_reqs", sel, id)})`, "sglang/running"),
    part(`sum by (${g}) (${b.sglangScheduler("num_queue_reqs", sel, id)})`, "sglang/waiting"),
    part(`avg by (${g}) (${b.sglangScheduler("token_usage", sel, id)})`, "sglang/kv"),
    part(`sum by (${g}) (${b.sglangScheduler("num_decode_transfer_queue_reqs", sel, id)})`, "sglang/transfer"),
    part(`sum by (${g}) (${b.sglangScheduler("num_decode_prealloc_queue_reqs", sel, id)})`, "sglang/prealloc"),
    part(
      firstPresent(
        g,
        seriesFallbacks.sglangPrefillBootstrapQueue.map((metric) => ({
          metric,
          expr: `sum by (${g}) (${b.sglangScheduler(metric, sel, id)})`,
        })),
      ),
      "sglang/bootstrap",
    ),
    part(`max by (${g}) (timestamp(${b.series("sglang", "num_running_reqs", sel)}))`, "sglang/timestamp"),
  ];
}

/**
 * Counter rates, resets and sample counts for every window, the resets only for the windows of
 * `resetWindows` (by default every window; `resetParts` asks the others' where they are read).
 */
export function countersParts(
  ctx: QueryContext,
  windows: readonly WindowSelection[],
  resetWindows: readonly WindowSelection[] = windows,
): Part[] {
  const b = new Builder(ctx);
  const g = b.group;
  const parts: Part[] = [];
  for (const { windowSeconds: w, selection: sel } of windows) {
    const range = `[${w}s]`;
    const resetSel = resetWindows.find((rw) => rw.windowSeconds === w)?.selection;
    const rate = (engine: "vllm" | "sglang", metric: string): string =>
      `sum by (${g}) (rate(${b.series(engine, metric, sel)}${range}))`;
    const inputMode = b.sglangScheduler("prefill_effective_tokens_total", sel, (s) => `rate(${s}${range})`, {
      by: ["mode"],
      matchers: ['mode="input"'],
    });
    parts.push(
      part(rate("vllm", "prompt_tokens_total"), "vllm/prompt", w),
      part(rate("vllm", "generation_tokens_total"), "vllm/generation", w),
      part(rate("vllm", "prefix_cache_hits_total"), "vllm/prefix_hits", w),
      part(rate("sglang", "prompt_tokens_total"), "sglang/prompt", w),
      part(rate("sglang", "generation_tokens_total"), "sglang/generation", w),
      // The `input` mode alone: where the pod has this counter its prompt demand is that mode's rate, and the
      // three hit modes are never read (the hit tiers count only without it, from cached_tokens_total). They were
      // three of the four series, and this the dearest query of the pass (docs/prometheus-signals.md, Cost).
      part(`sum by (${g}, mode) (${inputMode})`, "sglang/effective", w),
      // Cached prompt tokens by tier at request finish: the cache accounting of SGLang builds without
      // prefill_effective_tokens_total (cache_source came in 2026-01; before it the series is unlabelled).
      part(
        `sum by (${g}, cache_source) (rate(${b.series("sglang", "cached_tokens_total", sel)}${range}))`,
        "sglang/cached",
        w,
      ),
    );
    for (const engine of ["vllm", "sglang"] as const) {
      // A counter of the pod going down means the process restarted inside the window, and the counters that
      // count first show it (`resetGroups`): the resets are summed per pod over the counters of a group, each
      // counter tagged with its name (`mds_series`) before the sum, since functions drop metric names and series
      // of different counters would collide in one expression. A group's part answers only when one of its
      // counters has a sample in the window, which tells the absent-counter rule which groups exist.
      if (resetSel !== undefined) {
        const resets = (counter: string): string =>
          `resets(${b.series(engine, counter, resetSel, resetMatchers[counter] ?? [])}${range})`;
        const groups: Readonly<Record<string, readonly string[]>> = resetGroups[engine];
        for (const [group, counters] of Object.entries(groups)) {
          const inner =
            counters.length === 1
              ? resets(counters[0] ?? "")
              : union(counters.map((c) => `label_replace(${resets(c)}, "${seriesLabel}", "${c}", "", "")`));
          parts.push(part(`sum by (${g}) (${inner})`, `${engine}/resets/${group}`, w));
        }
      }
      // Scrapes seen in the window, counted on a gauge that every engine process exposes, one row per scrape
      // target: the pod's fewest is its sample count, and its rows are the targets seen in the window (more
      // than one means the pod was recreated inside it). One query where there were two, each reading the gauge.
      const gauge = engine === "vllm" ? "num_requests_running" : "num_running_reqs";
      parts.push(
        part(
          `min by (${g}, ${instanceLabel}) (count_over_time(${b.series(engine, gauge, sel)}${range}))`,
          `${engine}/samples`,
          w,
        ),
      );
    }
  }
  return parts;
}

/**
 * The counters whose resets a pass reads, per engine, in groups: one `resets()` part per group and window,
 * the pod's resets summed over the group's counters. A part answers where one of its counters has a sample
 * in the window, so a group is as present as its first counter to appear: SGLang's tokenizer counters created
 * when the first request finishes (`first_use`; its TTFT and ITL histograms are created earlier, at the first
 * token, so their presence says nothing about finished requests) and its counter created at start-up, seeded at
 * 0 on every rank (`startup`), are groups of their own for the absent-counter rule.
 *
 * A reset means the process restarted, which takes down every counter that had counted: so a restart is read
 * from the counters that count first in a request's life (docs/prometheus-signals.md, "A restart read from the
 * counters that count first"). vLLM counts a request's prompt tokens and its first generated token in one step,
 * with its TTFT; its inter-token and per-output-token counts come later (`first`: both token counters, so that
 * an exposition without one still answers, as the vLLM design document's example has no prompt counter). Only
 * its prefix-cache hits can count before (a chunked prefill's blocks hit by another request), and a restart of
 * a process that had counted nothing else changes no rate the core reads. SGLang's start-up counter counts at
 * prefill, before the first token, and its `input` mode has counted whenever another mode has (a prefill
 * computes at least its last token); builds without that counter (before mid-2026) read a restart from the
 * TTFT count (`first_token`), which the ITL and per-output-token counts follow, and from the first-use family.
 */
export const resetGroups = {
  vllm: {
    first: ["prompt_tokens_total", "generation_tokens_total"],
  },
  sglang: {
    first_use: ["prompt_tokens_total", "generation_tokens_total", "cached_tokens_total"],
    startup: ["prefill_effective_tokens_total"],
    first_token: ["time_to_first_token_seconds_count"],
  },
} as const satisfies Record<"vllm" | "sglang", Record<string, readonly string[]>>;

/** Matchers narrowing a reset counter's series: the start-up counter's `input` mode alone (`resetGroups`). */
const resetMatchers: Readonly<Record<string, readonly string[]>> = {
  prefill_effective_tokens_total: ['mode="input"'],
};

/**
 * Where the bucket series are summed: per pod, or per role (`roles` plan),
 * where the role's pods each answer their count and sum and the core proves
 * the role's sum is the merge it would have made (core/signals/role-histogram.ts);
 * `native` sums by role the histogram stored as one native series with custom
 * buckets (NHCB) under the base name, in place of its `_bucket` series.
 */
export type BucketsBy = "pod" | "role" | "native";

/**
 * Whether buckets read so are asked with each pod's histogram sums beside them: not native sums by role, which
 * carry them (a pod's sum is read for the mean alone, and the role's is the one the mean reads). Classic
 * buckets, per pod or summed by role, are: a `_sum` series summed by role could not tell a pod missing from it.
 */
export function asksPodSums(bucketsBy: BucketsBy): boolean {
  return bucketsBy !== "native";
}

/**
 * What a bucket part reads: the `_bucket` series by `le`, or (`native`) the one histogram series under the
 * base name, with no `le` to keep; SGLang's duplicate ranks then collapse with `avg`, since `max` ignores
 * native histograms (the duplicates are copies, so both keep the same one).
 */
function bucketSeries(bucketsBy: BucketsBy): {
  readonly suffix: string;
  readonly le: readonly string[];
  readonly ranks: "max" | "avg";
} {
  return bucketsBy === "native"
    ? { suffix: "", le: [], ranks: "avg" }
    : { suffix: "_bucket", le: ["le"], ranks: "max" };
}

/**
 * Histogram deltas (buckets by `le`, count, sum) for every window, the buckets
 * only for the windows of `bucketWindows` (by default every window). ITL reads
 * `inter_token_latency_seconds`, and per pod falls back to the older
 * `time_per_output_token_seconds` (vLLM before 0.11, older SGLang) with the
 * same window; the part is labelled with the series it read. The TTFT query
 * also carries queue time (`queueTimeParts`), so the guard reads both of the
 * same pods and window from one answer. With `bucketsBy: "role"` the bucket
 * parts are the per-pod ones summed by role: the same series, ranks and
 * fallbacks, one answer per role instead of one per pod.
 */
export function histogramParts(
  ctx: QueryContext,
  windows: readonly WindowSelection[],
  histogram: "time_to_first_token_seconds" | "inter_token_latency_seconds",
  bucketsBy: BucketsBy = "pod",
  bucketWindows: readonly WindowSelection[] = windows,
  podSums = true,
): Part[] {
  const b = new Builder(ctx);
  const g = b.group;
  const names: readonly string[] = histogram === "inter_token_latency_seconds" ? seriesFallbacks.itl : [histogram];
  const perRole = bucketsBy !== "pod";
  const { suffix, le } = bucketSeries(bucketsBy);
  const parts: Part[] = [];
  for (const { windowSeconds: w, selection: sel } of windows) {
    const bucketSel = bucketWindows.find((bw) => bw.windowSeconds === w)?.selection;
    for (const engine of ["vllm", "sglang"] as const) {
      const inc = (name: string, suffix: string, by: string, of = sel): string =>
        `sum by (${by}) (increase(${b.series(engine, `${name}${suffix}`, of)}[${w}s]))`;
      const delta = (suffix: string, by: string, of = sel): string =>
        names.length === 1
          ? inc(histogram, suffix, by, of)
          : firstPresent(
              g,
              names.map((metric) => ({ metric, expr: inc(metric, suffix, by, of) })),
            );
      if (bucketSel !== undefined) {
        // A plain sum is summed by role directly; the per-pod fallback between names is chosen per pod first.
        const buckets = !perRole
          ? delta("_bucket", `${g}, le`, bucketSel)
          : names.length === 1
            ? inc(histogram, suffix, [b.roleGroup, ...le].join(", "), bucketSel)
            : `sum by (${[b.roleGroup, ...le].join(", ")}) (${delta(suffix, [g, ...le].join(", "), bucketSel)})`;
        parts.push(part(buckets, `${engine}/bucket`, w, perRole));
      }
      parts.push(part(delta("_count", g), `${engine}/count`, w));
      if (podSums) parts.push(part(delta("_sum", g), `${engine}/sum`, w));
    }
    if (histogram === "time_to_first_token_seconds")
      parts.push(...queueTimeParts(b, w, sel, bucketsBy, bucketSel, podSums));
  }
  return parts;
}

/**
 * Queue-time histogram deltas of one window, tagged `<engine>/queue/<bucket|count|sum>`:
 * vLLM `request_queue_time_seconds` (per engine, summed like TTFT), SGLang
 * `queue_time_seconds`, a scheduler series, so ranks are filtered as for the
 * scheduler gauges (`sglangScheduler`).
 */
function queueTimeParts(
  b: Builder,
  w: number,
  sel: TargetSelection,
  bucketsBy: BucketsBy,
  bucketSel: TargetSelection | undefined,
  podSums: boolean,
): Part[] {
  const g = b.group;
  const range = `[${w}s]`;
  const perRole = bucketsBy !== "pod";
  const read = bucketSeries(bucketsBy);
  const vllm = (suffix: string, by: string, of = sel): string =>
    `sum by (${by}) (increase(${b.series("vllm", `request_queue_time_seconds${suffix}`, of)}${range}))`;
  // The ranks are chosen per DP rank (`sglangScheduler`), then summed: by pod, or by role.
  const sglang = (suffix: string, by: readonly string[], sumBy = g, of = sel, ranks: "max" | "avg" = "max"): string => {
    const increase = (s: string): string => `increase(${s}${range})`;
    const ranked = b.sglangScheduler(`queue_time_seconds${suffix}`, of, increase, { by, collapse: ranks });
    return `sum by (${[sumBy, ...by].join(", ")}) (${ranked})`;
  };
  const bucketGroup = perRole ? b.roleGroup : g;
  const bucket = (engine: "vllm" | "sglang", of: TargetSelection): Part[] => [
    part(
      engine === "vllm"
        ? vllm(read.suffix, [bucketGroup, ...read.le].join(", "), of)
        : sglang(read.suffix, read.le, bucketGroup, of, read.ranks),
      `${engine}/queue/bucket`,
      w,
      perRole,
    ),
  ];
  const sum = (engine: "vllm" | "sglang"): Part[] =>
    podSums ? [part(engine === "vllm" ? vllm("_sum", g) : sglang("_sum", []), `${engine}/queue/sum`, w)] : [];
  return [
    ...(bucketSel === undefined ? [] : bucket("vllm", bucketSel)),
    part(vllm("_count", g), "vllm/queue/count", w),
    ...sum("vllm"),
    ...(bucketSel === undefined ? [] : bucket("sglang", bucketSel)),
    part(sglang("_count", []), "sglang/queue/count", w),
    ...sum("sglang"),
  ];
}

/**
 * The `resets()` parts of the counters family alone, for these windows: what a pass asks again
 * (`shorterWindowResets`).
 */
export function resetParts(
  ctx: QueryContext,
  windows: readonly WindowSelection[],
): Readonly<Record<QueryName, readonly Part[]>> {
  return {
    gauges: [],
    counters: countersParts(ctx, windows).filter((p) => p.signal.includes("/resets/")),
    ttft: [],
    itl: [],
  };
}

/** The gauge query of the `unions` plan. */
export function gaugesQuery(ctx: QueryContext, sel: TargetSelection): string {
  return union(gaugesParts(ctx, sel).map(tag));
}

function part(expr: string, signal: string, windowSeconds?: number, perRole = false): Part {
  return {
    expr,
    signal,
    ...(windowSeconds === undefined ? {} : { windowSeconds }),
    ...(perRole ? { perRole: true as const } : {}),
  };
}

/** Every part of a pass by family, each family's parts in the order its union joins them. */
export function samplingParts(
  ctx: QueryContext,
  gauges: TargetSelection,
  windows: readonly WindowSelection[],
  bucketsBy: BucketsBy = "pod",
  bucketWindows: readonly WindowSelection[] = windows,
  resetWindows: readonly WindowSelection[] = windows,
): Readonly<Record<QueryName, readonly Part[]>> {
  const sums = asksPodSums(bucketsBy);
  return {
    gauges: gaugesParts(ctx, gauges),
    counters: countersParts(ctx, windows, resetWindows),
    ttft: histogramParts(ctx, windows, "time_to_first_token_seconds", bucketsBy, bucketWindows, sums),
    itl: histogramParts(ctx, windows, "inter_token_latency_seconds", bucketsBy, bucketWindows, sums),
  };
}

/**
 * The bucket parts of the histogram families alone, per pod or summed by role:
 * what a `roles` pass asks again, in a constant number of queries, for the
 * roles whose sum the core cannot use (per pod) and for the stable window of
 * the roles whose panic window held no observation (by role). `withPodSums` (a
 * `native` pass, whose first ask left the pods' sums out): the pods' own sums
 * beside classic buckets, whether those are asked per pod or by role.
 */
export function bucketParts(
  ctx: QueryContext,
  windows: readonly WindowSelection[],
  bucketsBy: BucketsBy,
  withPodSums = false,
): Readonly<Record<QueryName, readonly Part[]>> {
  // A native sum carries its sum; classic buckets need the pods' `_sum` series beside them.
  const podSums = withPodSums && asksPodSums(bucketsBy);
  const buckets = (parts: readonly Part[]): Part[] =>
    parts.filter((p) => p.signal.endsWith("/bucket") || (podSums && p.signal.endsWith("/sum")));
  return {
    gauges: [],
    counters: [],
    ttft: buckets(histogramParts(ctx, windows, "time_to_first_token_seconds", bucketsBy, windows, podSums)),
    itl: buckets(histogramParts(ctx, windows, "inter_token_latency_seconds", bucketsBy, windows, podSums)),
  };
}

/** The `unions` plan: one query per family, the union of its tagged parts. */
export function buildSamplingQueries(parts: Readonly<Record<QueryName, readonly Part[]>>): SamplingQueries {
  const query = (name: QueryName): string => union(parts[name].map(tag));
  return { gauges: query("gauges"), counters: query("counters"), ttft: query("ttft"), itl: query("itl") };
}

/**
 * The `parts` plan: one query per family and signal, its windows joined by
 * `or` (each tagged with its window when there are several), in the order of
 * the families and of their parts. The count depends on the signals alone,
 * never on the number of scalers: 42 with the default two windows.
 */
export function buildPartQueries(parts: Readonly<Record<QueryName, readonly Part[]>>): PartQuery[] {
  const out: PartQuery[] = [];
  for (const family of queryNames) {
    const bySignal = new Map<string, Part[]>();
    for (const p of parts[family]) {
      const list = bySignal.get(p.signal);
      if (list) list.push(p);
      else bySignal.set(p.signal, [p]);
    }
    for (const [signal, list] of bySignal) {
      const [only] = list;
      const perRole = only?.perRole === true ? { perRole: true as const } : {};
      if (list.length === 1 && only !== undefined) {
        out.push({
          family,
          signal,
          ...(only.windowSeconds === undefined ? {} : { windowSeconds: only.windowSeconds }),
          text: only.expr,
          ...perRole,
        });
        continue;
      }
      out.push({
        family,
        signal,
        text: union(list.map((p) => (p.windowSeconds === undefined ? p.expr : tagWindow(p.expr, p.windowSeconds)))),
        ...perRole,
      });
    }
  }
  return out;
}
