/**
 * The PromQL signal source: one sampling pass for all due scalers issues the
 * fixed set of queries in queries.ts, then splits the results in memory into
 * one `RoleSamples` per scaler role, one `PodSample` per pod (ranks already
 * filtered and summed). Nothing unknown becomes zero: a missing or non-finite
 * value is an absent field, and a failed query marks every role of the pass
 * `queryFailed`.
 */
import type { EngineKind, HistogramWindow, PodSample, PodWindowRates, RoleSamples } from "../../core/signals/types.js";
import type { InstantQueryResult, PrometheusQueryClient, VectorSample } from "./client.js";
import { validatePrometheusSignalConfig, type PrometheusSignalConfig } from "./config.js";
import {
  buildSamplingQueries,
  firstUseCounters,
  seriesLabel,
  signalLabel,
  startupCounters,
  windowLabel,
  type QueryName,
  type SamplingQueries,
  type TargetSelection,
  type WindowSelection,
} from "./queries.js";
import { dueScalers } from "./schedule.js";

/** What the source needs to know about one scaler; engine-agnostic. */
export interface ScalerSamplingInput {
  /** Identifies the scaler across passes, e.g. `<namespace>/<name>`. */
  readonly key: string;
  readonly namespace: string;
  /** The target ModelDeployment's name. */
  readonly deployment: string;
  readonly roles: readonly string[];
  readonly stableWindowSeconds: number;
  readonly panicWindowSeconds: number;
  readonly intervalSeconds: number;
}

export interface SamplingPass {
  readonly atUnixMs: number;
  /** Queries issued: fixed per pass, zero when nothing was due. */
  readonly queries: number;
  /** Per sampled scaler key, per role name. */
  readonly scalers: ReadonlyMap<string, ReadonlyMap<string, RoleSamples>>;
  readonly warnings: readonly string[];
}

interface WindowAcc {
  rates: Map<string, number>;
  resets?: number;
  /** Counters with a sample in the window (their `resets()` part answered). */
  present: Set<string>;
  itlSeries?: string;
  samples?: number;
  ttft: HistogramAcc;
  itl: HistogramAcc;
}

interface HistogramAcc {
  buckets: Map<number, number>;
  count?: number;
  sum?: number;
}

interface PodAcc {
  namespace: string;
  deployment: string;
  role: string;
  pod: string;
  engine?: EngineKind;
  timestamp?: number;
  gauges: Map<string, number>;
  /** The series a renamed gauge was read from, by `<engine>/<signal>`. */
  gaugeSeries: Map<string, string>;
  windows: Map<number, WindowAcc>;
}

const queryNames: readonly QueryName[] = ["gauges", "counters", "ttft", "itl"];

export class PrometheusSignalSource {
  private readonly config: PrometheusSignalConfig;
  private readonly lastSampledUnixMs = new Map<string, number>();
  /** Queries issued since construction. */
  queriesIssued = 0;

  constructor(
    private readonly client: PrometheusQueryClient,
    config: PrometheusSignalConfig,
  ) {
    this.config = validatePrometheusSignalConfig(config);
  }

  /** Samples the scalers that are due; records them as sampled even when Prometheus fails. */
  async sampleDue(scalers: readonly ScalerSamplingInput[], nowUnixMs: number): Promise<SamplingPass> {
    const due = dueScalers(scalers, this.lastSampledUnixMs, nowUnixMs);
    for (const s of due) this.lastSampledUnixMs.set(s.key, nowUnixMs);
    return await this.sample(due, nowUnixMs);
  }

  /** Forgets a deleted scaler's schedule. */
  forget(key: string): void {
    this.lastSampledUnixMs.delete(key);
  }

  /** One pass over exactly these scalers, evaluated at `atUnixMs`. */
  async sample(scalers: readonly ScalerSamplingInput[], atUnixMs: number): Promise<SamplingPass> {
    if (scalers.length === 0) return { atUnixMs, queries: 0, scalers: new Map(), warnings: [] };
    const queries = this.queriesFor(scalers);
    this.queriesIssued += queryNames.length;
    const settled = await Promise.allSettled(
      queryNames.map((name) => this.client.instantQuery(queries[name], atUnixMs)),
    );
    const warnings: string[] = [];
    const failures: string[] = [];
    const results = new Map<QueryName, InstantQueryResult>();
    settled.forEach((s, i) => {
      const name = queryNames[i];
      if (!name) return;
      if (s.status === "fulfilled") {
        results.set(name, s.value);
        warnings.push(...s.value.warnings);
      } else {
        failures.push(`${name}: ${s.reason instanceof Error ? s.reason.message : String(s.reason)}`);
      }
    });
    const out = new Map<string, Map<string, RoleSamples>>();
    if (failures.length > 0) {
      // Every query spans every scaler, so a failed one leaves each role unknown.
      const reason = failures.join("; ");
      for (const s of scalers) out.set(s.key, new Map(s.roles.map((r) => [r, { pods: [], queryFailed: { reason } }])));
      return { atUnixMs, queries: queryNames.length, scalers: out, warnings };
    }
    const pods = this.accumulate(results);
    for (const s of scalers) {
      const roles = new Map<string, RoleSamples>();
      for (const role of s.roles) {
        const samples: PodSample[] = [];
        for (const acc of pods.values()) {
          if (acc.namespace !== s.namespace || acc.deployment !== s.deployment || acc.role !== role) continue;
          const sample = toPodSample(acc, s);
          if (sample) samples.push(sample);
        }
        samples.sort((a, b) => (a.pod < b.pod ? -1 : a.pod > b.pod ? 1 : 0));
        roles.set(role, { pods: samples });
      }
      out.set(s.key, roles);
    }
    return { atUnixMs, queries: queryNames.length, scalers: out, warnings };
  }

  /** The queries a pass over these scalers issues (exposed for tests and docs). */
  queriesFor(scalers: readonly ScalerSamplingInput[]): SamplingQueries {
    const selection = (list: readonly ScalerSamplingInput[]): TargetSelection => ({
      namespaces: list.map((s) => s.namespace),
      deployments: list.map((s) => s.deployment),
      roles: list.flatMap((s) => s.roles),
    });
    const byWindow = new Map<number, ScalerSamplingInput[]>();
    for (const s of scalers) {
      for (const w of new Set([windowSeconds(s.stableWindowSeconds), windowSeconds(s.panicWindowSeconds)])) {
        const list = byWindow.get(w);
        if (list) list.push(s);
        else byWindow.set(w, [s]);
      }
    }
    const windows: WindowSelection[] = [...byWindow.entries()]
      .sort((a, b) => a[0] - b[0])
      .map(([w, list]) => ({ windowSeconds: w, selection: selection(list) }));
    return buildSamplingQueries(
      { labels: this.config.labels, separator: this.config.metricNameSeparator },
      selection(scalers),
      windows,
    );
  }

  private accumulate(results: ReadonlyMap<QueryName, InstantQueryResult>): Map<string, PodAcc> {
    const l = this.config.labels;
    const pods = new Map<string, PodAcc>();
    const podOf = (s: VectorSample): PodAcc | undefined => {
      const namespace = s.labels[l.namespace];
      const deployment = s.labels[l.deployment];
      const role = s.labels[l.role];
      const pod = s.labels[l.pod];
      if (!namespace || !deployment || !role || !pod) return undefined;
      const key = JSON.stringify([namespace, deployment, role, pod]);
      let acc = pods.get(key);
      if (!acc)
        pods.set(
          key,
          (acc = { namespace, deployment, role, pod, gauges: new Map(), gaugeSeries: new Map(), windows: new Map() }),
        );
      return acc;
    };
    const windowOf = (acc: PodAcc, s: VectorSample): WindowAcc | undefined => {
      const w = Number(s.labels[windowLabel]);
      if (!Number.isFinite(w)) return undefined;
      let win = acc.windows.get(w);
      if (!win)
        acc.windows.set(
          w,
          (win = { rates: new Map(), present: new Set(), ttft: { buckets: new Map() }, itl: { buckets: new Map() } }),
        );
      return win;
    };
    for (const name of queryNames) {
      for (const s of results.get(name)?.samples ?? []) {
        // NaN and ±Inf are unknown, never a reading.
        if (!Number.isFinite(s.value)) continue;
        const [engineTag, signal, counter] = (s.labels[signalLabel] ?? "").split("/");
        if ((engineTag !== "vllm" && engineTag !== "sglang") || !signal) continue;
        const acc = podOf(s);
        if (!acc) continue;
        if (name === "gauges") {
          if (signal === "timestamp") {
            if (acc.engine === undefined || (acc.timestamp ?? -Infinity) < s.value) acc.engine = engineTag;
            acc.timestamp = Math.max(acc.timestamp ?? -Infinity, s.value);
          } else {
            acc.gauges.set(`${engineTag}/${signal}`, s.value);
            const series = s.labels[seriesLabel];
            if (series !== undefined) acc.gaugeSeries.set(`${engineTag}/${signal}`, `${engineTag}:${series}`);
          }
          continue;
        }
        const win = windowOf(acc, s);
        if (!win) continue;
        if (name === "counters") {
          if (signal === "resets") {
            win.resets = (win.resets ?? 0) + s.value;
            if (counter !== undefined) win.present.add(`${engineTag}/${counter}`);
          } else if (signal === "cached") {
            // Storage tiers are named per backend (`storage_HiCacheNixl`); an unlabelled series is a total.
            const source = s.labels["cache_source"] ?? "";
            const tier = source === "" ? "total" : source.startsWith("storage") ? "storage" : source;
            const key = `${engineTag}/cached/${tier}`;
            win.rates.set(key, (win.rates.get(key) ?? 0) + s.value);
          } else if (signal === "samples") win.samples = Math.min(win.samples ?? Infinity, s.value);
          else if (signal === "effective") win.rates.set(`${engineTag}/effective/${s.labels["mode"] ?? ""}`, s.value);
          else win.rates.set(`${engineTag}/${signal}`, s.value);
          continue;
        }
        const h = name === "ttft" ? win.ttft : win.itl;
        if (engineTag !== acc.engine && acc.engine !== undefined) continue;
        if (name === "itl" && s.labels[seriesLabel] !== undefined)
          win.itlSeries = `${engineTag}:${s.labels[seriesLabel]}`;
        if (signal === "bucket") {
          // `le="1.0"` (Prometheus 2) and `le="1"` (Prometheus 3) are one bucket: a window
          // spanning an upgrade holds both series, each with part of the increase.
          const le = parseLe(s.labels["le"]);
          if (le !== undefined) h.buckets.set(le, (h.buckets.get(le) ?? 0) + s.value);
        } else if (signal === "count") h.count = s.value;
        else if (signal === "sum") h.sum = s.value;
      }
    }
    return pods;
  }
}

/** Prometheus ranges take whole seconds; windows below one second are not meaningful. */
function windowSeconds(w: number): number {
  return Math.max(1, Math.round(w));
}

function parseLe(le: string | undefined): number | undefined {
  if (le === undefined) return undefined;
  if (le === "+Inf" || le === "Inf") return Infinity;
  const v = Number(le);
  return Number.isNaN(v) ? undefined : v;
}

function toPodSample(acc: PodAcc, scaler: ScalerSamplingInput): PodSample | undefined {
  // A pod without a current gauge sample did not answer.
  const engine = acc.engine;
  if (engine === undefined || acc.timestamp === undefined) return undefined;
  const g = (name: string): number | undefined => acc.gauges.get(`${engine}/${name}`);
  const running = g("running");
  const waiting = g("waiting");
  const kv = g("kv");
  const transfer = g("transfer");
  const prealloc = g("prealloc");
  const bootstrap = g("bootstrap");
  const kvSeries = acc.gaugeSeries.get(`${engine}/kv`) ?? (engine === "sglang" ? "sglang:token_usage" : undefined);
  const bootstrapSeries = acc.gaugeSeries.get(`${engine}/bootstrap`);
  const gaugeSeries = {
    ...(kv !== undefined && kvSeries !== undefined ? { kvCacheUsage: kvSeries } : {}),
    ...(bootstrap !== undefined && bootstrapSeries !== undefined
      ? { prefillBootstrapQueueRequests: bootstrapSeries }
      : {}),
  };
  return {
    pod: acc.pod,
    engine,
    lastSampleUnixSeconds: acc.timestamp,
    ...(running !== undefined ? { runningRequests: running } : {}),
    ...(waiting !== undefined ? { waitingRequests: waiting } : {}),
    ...(transfer !== undefined ? { decodeTransferQueueRequests: transfer } : {}),
    ...(prealloc !== undefined ? { decodePreallocQueueRequests: prealloc } : {}),
    ...(bootstrap !== undefined ? { prefillBootstrapQueueRequests: bootstrap } : {}),
    ...(kv !== undefined ? { kvCacheUsage: kv } : {}),
    ...(Object.keys(gaugeSeries).length > 0 ? { gaugeSeries } : {}),
    windows: {
      stable: toWindowRates(acc.windows.get(windowSeconds(scaler.stableWindowSeconds)), engine),
      panic: toWindowRates(acc.windows.get(windowSeconds(scaler.panicWindowSeconds)), engine),
    },
  };
}

function toWindowRates(win: WindowAcc | undefined, engine: EngineKind): PodWindowRates {
  if (!win) return { established: false };
  const established = win.samples !== undefined && win.samples >= 2 && win.resets !== undefined && win.resets === 0;
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
  const ttft = toHistogram(win.ttft);
  const itl = toHistogram(win.itl);
  const cacheSeries = engine === "sglang" ? sglangCacheSeries(win) : undefined;
  const present = [...win.present].filter((c) => c.startsWith(`${engine}/`)).map((c) => c.slice(engine.length + 1));
  return {
    established,
    ...rates,
    ...(cacheSeries !== undefined ? { cacheSeries } : {}),
    ...(ttft ? { ttftSeconds: ttft } : {}),
    ...(itl ? { itlSeconds: itl, ...(win.itlSeries !== undefined ? { itlSeries: win.itlSeries } : {}) } : {}),
    ...(engine === "sglang"
      ? {
          counterPresence: {
            firstUseFamily: present.some((c) => firstUseCounters.has(c)),
            startupCounter: present.some((c) => startupCounters.has(c)),
          },
        }
      : {}),
  };
}

/** Whether this SGLang window's hit tiers come from `prefill_effective_tokens_total` (2026) or `cached_tokens_total`. */
function usesEffectiveCounter(win: WindowAcc): boolean {
  return [...win.rates.keys()].some((k) => k.startsWith("sglang/effective/"));
}

/** SGLang hit rates per tier, from the effective-prefill counter when the pod has it, else from cached tokens. */
function sglangHits(win: WindowAcc): [keyof PodWindowRates, number | undefined][] {
  const r = (name: string): number | undefined => win.rates.get(`sglang/${name}`);
  if (usesEffectiveCounter(win)) {
    return [
      ["deviceHitTokensPerSecond", r("effective/device_hit")],
      ["hostHitTokensPerSecond", r("effective/host_hit")],
      ["storageHitTokensPerSecond", r("effective/storage_hit")],
    ];
  }
  return [
    ["deviceHitTokensPerSecond", r("cached/device")],
    ["hostHitTokensPerSecond", r("cached/host")],
    ["storageHitTokensPerSecond", r("cached/storage")],
    ["totalCachedTokensPerSecond", r("cached/total")],
  ];
}

function sglangCacheSeries(win: WindowAcc): string | undefined {
  if (usesEffectiveCounter(win)) return "sglang:prefill_effective_tokens_total";
  return [...win.rates.keys()].some((k) => k.startsWith("sglang/cached/")) ? "sglang:cached_tokens_total" : undefined;
}

function toHistogram(h: HistogramAcc): HistogramWindow | undefined {
  if (h.count === undefined || h.sum === undefined) return undefined;
  // A bucket whose series changed name inside the window (`le="1.0"` → `le="1"`) loses the
  // increase between the two series, and can fall below the bucket before it. A cumulative
  // count never falls, so it is at least the previous bucket's: a lower bound that keeps
  // the percentile from moving down.
  let floor = 0;
  const buckets = [...h.buckets.entries()]
    .sort((a, b) => a[0] - b[0])
    .map(([upperBound, count]) => ({ upperBound, count: (floor = Math.max(floor, count)) }));
  return { buckets, count: h.count, sum: h.sum };
}
