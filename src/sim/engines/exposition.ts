/**
 * Prometheus text exposition of a simulated replica, written the way the
 * engines' prometheus_client writes it: sorted label names, Python float
 * formatting with Go-style exponents, counters exposed with `_total`, vLLM
 * (single process) with `_created` gauges, SGLang (multiprocess) without them,
 * SGLang histograms with `_sum` before the buckets.
 */
import type { Histogram } from "./buckets.js";
import type { EngineRank, EngineReplica, StreamCounters } from "./model.js";

/** Python `repr(float)`: shortest round-trip digits, exponent below 1e-4 and from 1e16. */
export function pythonFloatRepr(value: number): string {
  if (Number.isNaN(value)) return "nan";
  if (value === Infinity) return "inf";
  if (value === -Infinity) return "-inf";
  if (value === 0) return Object.is(value, -0) ? "-0.0" : "0.0";
  const abs = Math.abs(value);
  if (abs >= 1e16 || abs < 1e-4) {
    const [mantissa = "", exp = "0"] = value.toExponential().split("e");
    const expNum = Number(exp);
    const sign = expNum < 0 ? "-" : "+";
    return `${mantissa}e${sign}${String(Math.abs(expNum)).padStart(2, "0")}`;
  }
  const s = String(value);
  return s.includes(".") ? s : `${s}.0`;
}

/** prometheus_client `floatToGoString`: Python repr, switched to an exponent sooner, like Go. */
export function formatSampleValue(value: number): string {
  if (value === Infinity) return "+Inf";
  if (value === -Infinity) return "-Inf";
  if (Number.isNaN(value)) return "NaN";
  const s = pythonFloatRepr(value);
  const dot = s.indexOf(".");
  if (value > 0 && dot > 6) {
    const mantissa = `${s[0]}.${s.slice(1, dot)}${s.slice(dot + 1)}`.replace(/[0.]+$/, "");
    return `${mantissa}e+0${dot - 1}`;
  }
  return s;
}

function escapeLabelValue(v: string): string {
  return v.replace(/\\/g, "\\\\").replace(/\n/g, "\\n").replace(/"/g, '\\"');
}

type Labels = Readonly<Record<string, string>>;

function labelString(labels: Labels): string {
  const keys = Object.keys(labels).sort();
  if (keys.length === 0) return "";
  return `{${keys.map((k) => `${k}="${escapeLabelValue(labels[k] ?? "")}"`).join(",")}}`;
}

class Writer {
  readonly lines: string[] = [];
  family(name: string, type: string, help: string): void {
    this.lines.push(`# HELP ${name} ${help}`, `# TYPE ${name} ${type}`);
  }
  sample(name: string, labels: Labels, value: number): void {
    this.lines.push(`${name}${labelString(labels)} ${formatSampleValue(value)}`);
  }
  /** The cumulative buckets of histograms with one layout, added together, then `+Inf` and `_count`. */
  buckets(base: string, labels: Labels, hs: readonly Histogram[]): void {
    let cumulative = 0;
    hs[0]?.upperBoundsSeconds.forEach((le, i) => {
      cumulative += hs.reduce((n, h) => n + (h.bucketCounts[i] ?? 0), 0);
      this.sample(`${base}_bucket`, { ...labels, le: formatSampleValue(le) }, cumulative);
    });
    const count = hs.reduce((n, h) => n + h.count, 0);
    this.sample(`${base}_bucket`, { ...labels, le: "+Inf" }, count);
    this.sample(`${base}_count`, labels, count);
  }
  text(): string {
    return this.lines.length === 0 ? "" : `${this.lines.join("\n")}\n`;
  }
}

export interface ExpositionOptions {
  /** `_created` values (unix seconds): the replica's start. */
  readonly createdUnixSeconds: number;
}

/** Renders one replica's `/metrics` body. */
export function renderExposition(replica: EngineReplica, options: ExpositionOptions): string {
  return replica.spec.engine === "vllm" ? renderVllm(replica, options) : renderSglang(replica);
}

// ---------------------------------------------------------------- vLLM

function renderVllm(replica: EngineReplica, options: ExpositionOptions): string {
  const w = new Writer();
  const model = replica.spec.modelName;
  const ranks = replica.ranks.map((rank, i) => ({ rank, labels: { engine: String(i), model_name: model } }));
  const created = options.createdUnixSeconds;

  const gauge = (name: string, help: string, value: (r: EngineRank) => number): void => {
    w.family(name, "gauge", help);
    for (const { rank, labels } of ranks) w.sample(name, labels, value(rank));
  };
  const counter = (base: string, help: string, value: (r: EngineRank) => number): void => {
    w.family(`${base}_total`, "counter", help);
    for (const { rank, labels } of ranks) w.sample(`${base}_total`, labels, value(rank));
    w.family(`${base}_created`, "gauge", help);
    for (const { labels } of ranks) w.sample(`${base}_created`, labels, created);
  };
  const both = (r: EngineRank, f: (s: StreamCounters) => number): number =>
    f(r.counters.byStreaming.streaming) + f(r.counters.byStreaming.nonStreaming);
  const histogram = (base: string, help: string, pick: (r: EngineRank) => Histogram[]): void => {
    w.family(base, "histogram", help);
    for (const { rank, labels } of ranks) {
      const hs = pick(rank);
      if (hs.length === 0) continue;
      w.buckets(base, labels, hs);
      w.sample(
        `${base}_sum`,
        labels,
        hs.reduce((n, h) => n + h.sum, 0),
      );
    }
    w.family(`${base}_created`, "gauge", help);
    for (const { labels } of ranks) w.sample(`${base}_created`, labels, created);
  };

  gauge("vllm:num_requests_running", "Number of requests in model execution batches.", (r) => r.gauges().running);
  gauge("vllm:num_requests_waiting", "Number of requests waiting to be processed.", (r) => r.gauges().waiting);
  gauge("vllm:kv_cache_usage_perc", "KV-cache usage. 1 means 100 percent usage.", (r) => r.gauges().kvUsage);
  counter("vllm:num_preemptions", "Cumulative number of preemption from the engine.", () => 0);
  counter("vllm:prompt_tokens", "Number of prefill tokens processed.", (r) => both(r, (s) => s.promptTokens));
  counter("vllm:generation_tokens", "Number of generation tokens processed.", (r) =>
    both(r, (s) => s.generationTokens),
  );
  counter(
    "vllm:prefix_cache_queries",
    "Prefix cache queries, in terms of number of queried tokens.",
    (r) => r.counters.prefixCacheQueries,
  );
  counter(
    "vllm:prefix_cache_hits",
    "Prefix cache hits, in terms of number of cached tokens.",
    (r) => r.counters.prefixCacheHits,
  );
  counter(
    "vllm:external_prefix_cache_queries",
    "External prefix cache queries from KV connector cross-instance cache sharing, in terms of number of queried tokens.",
    (r) => r.counters.externalPrefixCacheQueries,
  );
  counter(
    "vllm:external_prefix_cache_hits",
    "External prefix cache hits from KV connector cross-instance cache sharing, in terms of number of cached tokens.",
    (r) => r.counters.externalPrefixCacheHits,
  );
  // request_success carries finished_reason on top of the engine labels.
  w.family("vllm:request_success_total", "counter", "Count of successfully processed requests.");
  for (const { rank, labels } of ranks) {
    w.sample("vllm:request_success_total", { ...labels, finished_reason: "stop" }, rank.counters.finishedStop);
    w.sample("vllm:request_success_total", { ...labels, finished_reason: "length" }, rank.counters.finishedLength);
    w.sample("vllm:request_success_total", { ...labels, finished_reason: "abort" }, 0);
  }
  w.family("vllm:request_success_created", "gauge", "Count of successfully processed requests.");
  for (const { labels } of ranks) {
    for (const reason of ["stop", "length", "abort"])
      w.sample("vllm:request_success_created", { ...labels, finished_reason: reason }, created);
  }
  histogram("vllm:time_to_first_token_seconds", "Histogram of time to first token in seconds.", (r) => [
    r.counters.byStreaming.streaming.ttft,
    r.counters.byStreaming.nonStreaming.ttft,
  ]);
  histogram("vllm:inter_token_latency_seconds", "Histogram of inter-token latency in seconds.", (r) => [
    r.counters.itl,
  ]);
  histogram("vllm:e2e_request_latency_seconds", "Histogram of e2e request latency in seconds.", (r) => [
    r.counters.byStreaming.streaming.e2e,
    r.counters.byStreaming.nonStreaming.e2e,
  ]);
  histogram("vllm:request_queue_time_seconds", "Histogram of time spent in WAITING phase for request.", (r) => [
    r.counters.queueTime,
  ]);
  return w.text();
}

// ---------------------------------------------------------------- SGLang

/** One scheduler series set: the rank, its labels, and whether it writes scheduler stats. */
interface SchedulerSeries {
  readonly rank: EngineRank;
  readonly labels: Labels;
  /** Tensor rank 0, or every rank with metrics on all schedulers. */
  readonly writes: boolean;
}

/** One tokenizer `is_streaming` child and the counters it reads. */
interface TokenizerStream {
  readonly flag: "true" | "false";
  readonly pick: (r: EngineRank) => StreamCounters;
}

const tokenizerStreams: readonly TokenizerStream[] = [
  { flag: "true", pick: (r) => r.counters.byStreaming.streaming },
  { flag: "false", pick: (r) => r.counters.byStreaming.nonStreaming },
];

function renderSglang(replica: EngineReplica): string {
  const w = new Writer();
  const scheduler = schedulerSeries(replica);
  writeSchedulerGauges(w, scheduler);
  writeEffectiveTokens(w, scheduler);
  writeTokenizerCounters(w, replica);
  writeSglangHistograms(w, replica, scheduler);
  return w.text();
}

/**
 * Scheduler series: one per DP rank (DP attention: tp_rank is the rank's global TP rank), plus
 * duplicates on tensor-parallel ranks other than 0.
 */
function schedulerSeries(replica: EngineReplica): SchedulerSeries[] {
  const spec = replica.spec;
  const dp = spec.dataParallelSize > 1;
  const scheduler: SchedulerSeries[] = [];
  replica.ranks.forEach((rank, i) => {
    for (let tp = 0; tp < spec.tensorParallelSize; tp++) {
      const tpRank = dp ? i * spec.tensorParallelSize + tp : tp;
      scheduler.push({
        rank,
        writes: tp === 0 || spec.metricsForAllSchedulers === true,
        labels: {
          engine_type: spec.serving,
          model_name: spec.modelName,
          moe_ep_rank: "0",
          pp_rank: "0",
          tp_rank: String(tpRank),
          ...(dp ? { dp_rank: String(i) } : {}),
        },
      });
    }
  });
  return scheduler;
}

function writeSchedulerGauges(w: Writer, scheduler: readonly SchedulerSeries[]): void {
  const schedGauge = (name: string, help: string, value: (r: EngineRank) => number): void => {
    w.family(name, "gauge", help);
    for (const { rank, labels, writes } of scheduler) if (writes) w.sample(name, labels, value(rank));
  };
  schedGauge("sglang:num_running_reqs", "The number of running requests.", (r) => r.gauges().running);
  schedGauge("sglang:num_queue_reqs", "The number of requests in the waiting queue.", (r) => r.gauges().waiting);
  schedGauge("sglang:token_usage", "The token usage.", (r) => r.gauges().kvUsage);
  // Every server exposes all disaggregation gauges (the live capture's unified server has the
  // decode transfer queue at 0); only its own kind moves them.
  schedGauge(
    "sglang:num_prefill_bootstrap_queue_reqs",
    "The number of requests in the prefill bootstrap queue.",
    () => 0,
  );
  schedGauge(
    "sglang:num_prefill_inflight_queue_reqs",
    "The number of requests in the prefill inflight queue.",
    (r) => r.gauges().prefillInflight,
  );
  schedGauge(
    "sglang:num_decode_prealloc_queue_reqs",
    "The number of requests in the decode prealloc queue.",
    (r) => r.gauges().decodePrealloc,
  );
  schedGauge(
    "sglang:num_decode_transfer_queue_reqs",
    "The number of requests in the decode transfer queue.",
    (r) => r.gauges().decodeTransfer,
  );
}

function writeEffectiveTokens(w: Writer, scheduler: readonly SchedulerSeries[]): void {
  w.family(
    "sglang:prefill_effective_tokens_total",
    "counter",
    "Effective prefill tokens with retracted-request re-counts excluded, updated on each log interval. mode: device_hit, host_hit, storage_hit, input.",
  );
  // Seeded at 0 on every rank; only a rank that writes stats counts.
  for (const { rank, labels, writes } of scheduler) {
    w.sample(
      "sglang:prefill_effective_tokens_total",
      { ...labels, mode: "input" },
      writes ? rank.counters.effectiveInputTokens : 0,
    );
    w.sample(
      "sglang:prefill_effective_tokens_total",
      { ...labels, mode: "device_hit" },
      writes ? rank.counters.effectiveDeviceHitTokens : 0,
    );
    w.sample("sglang:prefill_effective_tokens_total", { ...labels, mode: "host_hit" }, 0);
    w.sample("sglang:prefill_effective_tokens_total", { ...labels, mode: "storage_hit" }, 0);
  }
}

/** A replica-wide sum over its ranks. */
function sumOverRanks(replica: EngineReplica, f: (r: EngineRank) => number): number {
  return replica.ranks.reduce((n, r) => n + f(r), 0);
}

/**
 * Tokenizer counters: one series per server, no rank labels, split by is_streaming. They are created
 * when the first request finishes: a labelled child (one `is_streaming` value) appears with its first
 * finished request, the family with the server's first.
 */
function writeTokenizerCounters(w: Writer, replica: EngineReplica): void {
  const engineType = replica.spec.serving;
  const model = replica.spec.modelName;
  const finished = (s: TokenizerStream): boolean => sumOverRanks(replica, (r) => s.pick(r).requests) > 0;
  if (!tokenizerStreams.some(finished)) return;
  const tokCounter = (name: string, help: string, value: (s: StreamCounters) => number): void => {
    w.family(name, "counter", help);
    for (const s of tokenizerStreams) {
      if (!finished(s)) continue;
      w.sample(
        name,
        { engine_type: engineType, is_streaming: s.flag, model_name: model },
        sumOverRanks(replica, (r) => value(s.pick(r))),
      );
    }
  };
  tokCounter("sglang:prompt_tokens_total", "Number of prefill tokens processed.", (s) => s.promptTokens);
  tokCounter("sglang:generation_tokens_total", "Number of generation tokens processed.", (s) => s.generationTokens);
  tokCounter("sglang:num_requests_total", "Number of requests processed.", (s) => s.requests);
  w.family("sglang:cached_tokens_total", "counter", "Number of cached prompt tokens by source (device/host/storage).");
  w.sample(
    "sglang:cached_tokens_total",
    { cache_source: "device", engine_type: engineType, model_name: model },
    sumOverRanks(
      replica,
      (r) => r.counters.byStreaming.streaming.cachedTokens + r.counters.byStreaming.nonStreaming.cachedTokens,
    ),
  );
}

/** A histogram family, `_sum` before the buckets; a labelled child appears with its first observation. */
function writeSglangHistogram(
  w: Writer,
  name: string,
  help: string,
  series: readonly { labels: Labels; all: Histogram[] }[],
): void {
  const used = series.filter(({ all }) => all.some((h) => h.count > 0));
  if (used.length === 0) return;
  w.family(name, "histogram", help);
  for (const { labels, all } of used) {
    if (all.length === 0) continue;
    w.sample(
      `${name}_sum`,
      labels,
      all.reduce((n, h) => n + h.sum, 0),
    );
    w.buckets(name, labels, all);
  }
}

function writeSglangHistograms(w: Writer, replica: EngineReplica, scheduler: readonly SchedulerSeries[]): void {
  const engineType = replica.spec.serving;
  const model = replica.spec.modelName;
  // Tokenizer histograms: one series per server, summed over its ranks.
  const tokHistogram = (
    name: string,
    help: string,
    series: { labels: Labels; hs: (r: EngineRank) => Histogram }[],
  ): void =>
    writeSglangHistogram(
      w,
      name,
      help,
      series.map(({ labels, hs }) => ({ labels, all: replica.ranks.map(hs) })),
    );
  const perStream = (pick: (c: StreamCounters) => Histogram): { labels: Labels; hs: (r: EngineRank) => Histogram }[] =>
    tokenizerStreams.map((s) => ({
      labels: { engine_type: engineType, is_streaming: s.flag, model_name: model },
      hs: (r: EngineRank) => pick(s.pick(r)),
    }));
  // Scheduler histogram: one series per rank that writes stats, observed when a request is scheduled.
  writeSglangHistogram(
    w,
    "sglang:queue_time_seconds",
    "Histogram of queueing time in seconds.",
    scheduler.filter(({ writes }) => writes).map(({ rank, labels }) => ({ labels, all: [rank.counters.queueTime] })),
  );
  tokHistogram(
    "sglang:time_to_first_token_seconds",
    "Histogram of time to first token in seconds.",
    perStream((c) => c.ttft),
  );
  tokHistogram("sglang:inter_token_latency_seconds", "Histogram of inter-token latency in seconds.", [
    { labels: { engine_type: engineType, model_name: model }, hs: (r) => r.counters.itl },
  ]);
  tokHistogram(
    "sglang:e2e_request_latency_seconds",
    "Histogram of End-to-end request latency in seconds",
    perStream((c) => c.e2e),
  );
}
