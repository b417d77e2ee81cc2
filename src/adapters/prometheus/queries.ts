/**
 * Pure PromQL builders for one sampling pass.
 *
 * A pass issues four queries whatever the number of scalers or windows:
 * gauges (instant), counters (rates, resets and sample counts per window),
 * TTFT and ITL (histogram deltas per window). Each query is a union of parts;
 * every part is tagged with `mds_signal` (`<engine>/<signal>`) and, for
 * windowed parts, `mds_window_seconds`, so the results split in memory by
 * namespace, deployment, role and pod. Object names only ever enter a query
 * through `quoteRegexAlternatives`, which escapes them twice (regex, then string).
 */
import type { MetricNameSeparator, PrometheusLabelNames } from "./config.js";

export const signalLabel = "mds_signal";
export const windowLabel = "mds_window_seconds";

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

export interface QueryContext {
  readonly labels: PrometheusLabelNames;
  readonly separator: MetricNameSeparator;
}

function tag(expr: string, signal: string, windowSeconds?: number): string {
  const tagged = `label_replace(${expr}, "${signalLabel}", "${signal}", "", "")`;
  return windowSeconds === undefined
    ? tagged
    : `label_replace(${tagged}, "${windowLabel}", "${windowSeconds}", "", "")`;
}

function union(parts: readonly string[]): string {
  return parts.join("\n or ");
}

class Builder {
  readonly group: string;
  constructor(private readonly ctx: QueryContext) {
    const l = ctx.labels;
    this.group = `${l.namespace}, ${l.pod}, ${l.deployment}, ${l.role}`;
  }

  name(engine: "vllm" | "sglang", metric: string): string {
    return `${engine}${this.ctx.separator}${metric}`;
  }

  matchers(sel: TargetSelection, extra: readonly string[] = []): string {
    const l = this.ctx.labels;
    return [
      anyOf(l.namespace, sel.namespaces),
      anyOf(l.deployment, sel.deployments),
      anyOf(l.role, sel.roles),
      `${l.pod}!=""`,
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
   * per scrape target (`instance`) so that gauges can tell a recreated pod's targets apart.
   */
  sglangScheduler(
    metric: string,
    sel: TargetSelection,
    wrap: (s: string) => string,
    by: readonly string[] = [],
  ): string {
    const base = ['pp_rank=~"0|"', 'priority=""'];
    const leader = wrap(this.series("sglang", metric, sel, [...base, 'tp_rank=~"0|"']));
    const dataParallel = wrap(this.series("sglang", metric, sel, [...base, 'dp_rank!=""']));
    return `max by (${[this.group, "dp_rank", instanceLabel, ...by].join(", ")}) (${leader} or ${dataParallel})`;
  }
}

/** The gauge query: running, waiting, KV usage, decode transfer queue and the newest sample time per pod. */
export function gaugesQuery(ctx: QueryContext, sel: TargetSelection): string {
  const b = new Builder(ctx);
  // Per scrape target too: the old target of a recreated pod, still in the lookback, is not added to the new one.
  const g = `${b.group}, ${instanceLabel}`;
  const id = (s: string): string => s;
  return union([
    tag(`sum by (${g}) (${b.series("vllm", "num_requests_running", sel)})`, "vllm/running"),
    tag(`sum by (${g}) (${b.series("vllm", "num_requests_waiting", sel)})`, "vllm/waiting"),
    tag(`avg by (${g}) (${b.series("vllm", "kv_cache_usage_perc", sel)})`, "vllm/kv"),
    tag(`max by (${g}) (timestamp(${b.series("vllm", "num_requests_running", sel)}))`, "vllm/timestamp"),
    tag(`sum by (${g}) (${b.sglangScheduler("num_running_reqs", sel, id)})`, "sglang/running"),
    tag(`sum by (${g}) (${b.sglangScheduler("num_queue_reqs", sel, id)})`, "sglang/waiting"),
    tag(`avg by (${g}) (${b.sglangScheduler("token_usage", sel, id)})`, "sglang/kv"),
    tag(`sum by (${g}) (${b.sglangScheduler("num_decode_transfer_queue_reqs", sel, id)})`, "sglang/transfer"),
    tag(`max by (${g}) (timestamp(${b.series("sglang", "num_running_reqs", sel)}))`, "sglang/timestamp"),
  ]);
}

/** Counter rates, resets and sample counts for every window. */
export function countersQuery(ctx: QueryContext, windows: readonly WindowSelection[]): string {
  const b = new Builder(ctx);
  const g = b.group;
  const parts: string[] = [];
  for (const { windowSeconds: w, selection: sel } of windows) {
    const range = `[${w}s]`;
    const rate = (engine: "vllm" | "sglang", metric: string): string =>
      `sum by (${g}) (rate(${b.series(engine, metric, sel)}${range}))`;
    parts.push(
      tag(rate("vllm", "prompt_tokens_total"), "vllm/prompt", w),
      tag(rate("vllm", "generation_tokens_total"), "vllm/generation", w),
      tag(rate("vllm", "prefix_cache_hits_total"), "vllm/prefix_hits", w),
      tag(rate("sglang", "prompt_tokens_total"), "sglang/prompt", w),
      tag(rate("sglang", "generation_tokens_total"), "sglang/generation", w),
      tag(
        `sum by (${g}, mode) (${b.sglangScheduler("prefill_effective_tokens_total", sel, (s) => `rate(${s}${range})`, ["mode"])})`,
        "sglang/effective",
        w,
      ),
    );
    for (const engine of ["vllm", "sglang"] as const) {
      // Any counter of the pod going down means the process restarted inside the
      // window. One part per counter: functions drop metric names, so series of
      // different counters would collide inside one expression.
      const counters =
        engine === "vllm"
          ? [
              "prompt_tokens_total",
              "generation_tokens_total",
              "prefix_cache_hits_total",
              "time_to_first_token_seconds_count",
              "inter_token_latency_seconds_count",
            ]
          : [
              "prompt_tokens_total",
              "generation_tokens_total",
              "prefill_effective_tokens_total",
              "time_to_first_token_seconds_count",
              "inter_token_latency_seconds_count",
            ];
      for (const counter of counters) {
        parts.push(
          tag(`sum by (${g}) (resets(${b.series(engine, counter, sel)}${range}))`, `${engine}/resets/${counter}`, w),
        );
      }
      // Scrapes seen in the window, counted on a gauge that every engine process exposes.
      const gauge = engine === "vllm" ? "num_requests_running" : "num_running_reqs";
      parts.push(
        tag(`min by (${g}) (count_over_time(${b.series(engine, gauge, sel)}${range}))`, `${engine}/samples`, w),
        // Scrape targets seen in the window: more than one means the pod was recreated inside it.
        tag(
          `count by (${g}) (count by (${g}, ${instanceLabel}) (count_over_time(${b.series(engine, gauge, sel)}${range})))`,
          `${engine}/instances`,
          w,
        ),
      );
    }
  }
  return union(parts);
}

/** Histogram deltas (buckets by `le`, count, sum) for every window. */
export function histogramQuery(
  ctx: QueryContext,
  windows: readonly WindowSelection[],
  histogram: "time_to_first_token_seconds" | "inter_token_latency_seconds",
): string {
  const b = new Builder(ctx);
  const g = b.group;
  const parts: string[] = [];
  for (const { windowSeconds: w, selection: sel } of windows) {
    for (const engine of ["vllm", "sglang"] as const) {
      const inc = (suffix: string, by: string): string =>
        `sum by (${by}) (increase(${b.series(engine, `${histogram}${suffix}`, sel)}[${w}s]))`;
      parts.push(
        tag(inc("_bucket", `${g}, le`), `${engine}/bucket`, w),
        tag(inc("_count", g), `${engine}/count`, w),
        tag(inc("_sum", g), `${engine}/sum`, w),
      );
    }
  }
  return union(parts);
}

export function buildSamplingQueries(
  ctx: QueryContext,
  gauges: TargetSelection,
  windows: readonly WindowSelection[],
): SamplingQueries {
  return {
    gauges: gaugesQuery(ctx, gauges),
    counters: countersQuery(ctx, windows),
    ttft: histogramQuery(ctx, windows, "time_to_first_token_seconds"),
    itl: histogramQuery(ctx, windows, "inter_token_latency_seconds"),
  };
}
