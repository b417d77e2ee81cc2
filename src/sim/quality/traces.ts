/**
 * Trace readers for the quality simulator: a trace file in any format `trace-formats.ts` recognises
 * (quantised timestamps spread within their step), gzipped or not, and ServeGen per-client rate series
 * (arrivals drawn per client and window). Every reader returns requests in arrival order with times in
 * seconds from the trace start.
 */
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { gunzipSync } from "node:zlib";
import { parseTrace } from "../engines/trace-formats.js";
import type { TraceRow } from "../engines/workload.js";
import { SeededRandom } from "../engines/random.js";

/** One request of a replayed trace. */
export interface TraceRequest {
  readonly arrivalSeconds: number;
  readonly promptTokens: number;
  readonly outputTokens: number;
  readonly prefixBlocks?: readonly number[];
  readonly blockTokens?: number;
}

export interface Trace {
  readonly name: string;
  readonly requests: readonly TraceRequest[];
  /** Replay length: the last arrival plus one second, or the series' last window end. */
  readonly spanSeconds: number;
  /** How the trace was read, for reports (spread, sample, scale). */
  readonly notes: readonly string[];
  /**
   * The second of the source trace this trace's second 0 is (`fromSecond`; 0 when absent). A run's clock reads
   * the source's own time of day, its second 0 as 00:00 UTC, so a floor by the hour falls where the trace's hours are.
   */
  readonly originSeconds?: number;
}

/** The shared traces directory beside the project (`../shared/traces`), overridable for tests. */
export function defaultTracesDir(): string {
  return process.env["MDS_TRACES_DIR"] ?? resolve(process.cwd(), "../shared/traces");
}

export const namedTraces = [
  "azure-conv",
  "azure-code",
  "mooncake-conversation",
  "mooncake-synthetic",
  "servegen-m-large-day",
  "servegen-m-large-14d",
] as const;
export type TraceName = (typeof namedTraces)[number];

function fromRows(rows: readonly TraceRow[]): TraceRequest[] {
  return rows.map((r) => ({
    arrivalSeconds: r.offsetSeconds,
    promptTokens: Math.max(1, r.promptTokens),
    outputTokens: Math.max(1, r.outputTokens),
    ...(r.prefixBlocks === undefined ? {} : { prefixBlocks: r.prefixBlocks, blockTokens: r.blockTokens ?? 512 }),
  }));
}

function spanOf(requests: readonly TraceRequest[]): number {
  return (requests[requests.length - 1]?.arrivalSeconds ?? 0) + 1;
}

/** Reads a trace file (`.gz` inflated first); the format comes from its content (`trace-formats.ts`). */
export function readTraceFile(path: string): Trace {
  let bytes: Buffer;
  try {
    const read = readFileSync(path);
    bytes = path.endsWith(".gz") ? gunzipSync(read) : read;
  } catch (error) {
    throw new Error(`${path}: cannot read the trace: ${error instanceof Error ? error.message : String(error)}`);
  }
  const parsed = parseTrace(bytes, path);
  const rows = parsed.quantised ? spreadQuantised(fromRows(parsed.rows)) : fromRows(parsed.rows);
  return {
    name: path,
    requests: rows,
    spanSeconds: spanOf(rows),
    notes: [...parsed.notes, ...(parsed.quantised ? ["quantised timestamps spread evenly within their step"] : [])],
  };
}

/**
 * Spreads requests that share a quantised timestamp evenly over the step to
 * the next distinct timestamp: the k-th of m requests at `t` arrives at
 * `t + (k + 0.5) / m · step`. Order is kept; the last step uses the median step.
 */
export function spreadQuantised(requests: readonly TraceRequest[]): TraceRequest[] {
  const distinct = [...new Set(requests.map((r) => r.arrivalSeconds))].sort((a, b) => a - b);
  const steps = distinct.slice(1).map((t, i) => t - (distinct[i] ?? 0));
  const median = [...steps].sort((a, b) => a - b)[Math.floor(steps.length / 2)] ?? 1;
  const next = new Map<number, number>();
  distinct.forEach((t, i) => next.set(t, (distinct[i + 1] ?? t + median) - t));
  const out: TraceRequest[] = [];
  for (let i = 0; i < requests.length;) {
    const t = requests[i]?.arrivalSeconds ?? 0;
    let j = i;
    while (j < requests.length && requests[j]?.arrivalSeconds === t) j++;
    const m = j - i;
    const step = next.get(t) ?? median;
    for (let k = 0; k < m; k++) {
      const r = requests[i + k] as TraceRequest;
      out.push({ ...r, arrivalSeconds: t + ((k + 0.5) / m) * step });
    }
    i = j;
  }
  return out;
}

// ------------------------------------------------------------------ ServeGen

/** One client's window: `window_start_s, rate_rps, cv, dist, shape, scale`. */
export interface ServeGenWindow {
  readonly startSeconds: number;
  readonly rateRps: number;
  readonly dist: "Gamma" | "Weibull" | "";
  readonly shape: number;
  readonly scale: number;
}

export const serveGenWindowSeconds = 600;

export function parseServeGenClient(csv: string, path: string): ServeGenWindow[] {
  const out: ServeGenWindow[] = [];
  csv.split(/\r?\n/).forEach((line, i) => {
    if (line.trim() === "") return;
    const [start, rate, , dist, shape, scale] = line.split(",");
    const window = {
      startSeconds: Number(start),
      rateRps: Number(rate),
      dist: (dist ?? "") as ServeGenWindow["dist"],
      shape: Number(shape || 0),
      scale: Number(scale || 0),
    };
    if (!Number.isFinite(window.startSeconds) || !Number.isFinite(window.rateRps) || window.rateRps < 0)
      throw new Error(
        `${path}: line ${i + 1}: window_start_s and rate_rps must be numbers, got ${JSON.stringify(line)}`,
      );
    if (window.dist !== "" && window.dist !== "Gamma" && window.dist !== "Weibull")
      throw new Error(`${path}: line ${i + 1}: dist must be Gamma or Weibull, got ${JSON.stringify(dist)}`);
    out.push(window);
  });
  return out;
}

/** Lanczos log-gamma, for the Weibull mean. */
function logGamma(x: number): number {
  const g = 7;
  const c = [
    0.99999999999980993, 676.5203681218851, -1259.1392167224028, 771.32342877765313, -176.61502916214059,
    12.507343278686905, -0.13857109526572012, 9.9843695780195716e-6, 1.5056327351493116e-7,
  ];
  if (x < 0.5) return Math.log(Math.PI / Math.sin(Math.PI * x)) - logGamma(1 - x);
  const xx = x - 1;
  let a = c[0] as number;
  const t = xx + g + 0.5;
  for (let i = 1; i < g + 2; i++) a += (c[i] as number) / (xx + i);
  return 0.5 * Math.log(2 * Math.PI) + (xx + 0.5) * Math.log(t) - t + Math.log(a);
}

function normal(rng: SeededRandom): number {
  const u = 1 - rng.next();
  const v = rng.next();
  return Math.sqrt(-2 * Math.log(u)) * Math.cos(2 * Math.PI * v);
}

/** Gamma(shape, 1) by Marsaglia and Tsang, with the shape < 1 boost. */
export function drawGamma(shape: number, rng: SeededRandom): number {
  if (shape < 1) return drawGamma(shape + 1, rng) * Math.pow(1 - rng.next(), 1 / shape);
  const d = shape - 1 / 3;
  const c = 1 / Math.sqrt(9 * d);
  for (;;) {
    const x = normal(rng);
    const v0 = 1 + c * x;
    if (v0 <= 0) continue;
    const v = v0 * v0 * v0;
    const u = 1 - rng.next();
    if (Math.log(u) < 0.5 * x * x + d - d * v + d * Math.log(v)) return d * v;
  }
}

/** One inter-arrival gap with the window's shape, rescaled so the mean gap is 1 / rate (as ServeGen does). */
function drawGapSeconds(w: ServeGenWindow, rng: SeededRandom): number {
  if (w.dist === "Weibull" && w.shape > 0) {
    const unitMean = Math.exp(logGamma(1 + 1 / w.shape));
    return Math.pow(-Math.log(1 - rng.next()), 1 / w.shape) / unitMean / w.rateRps;
  }
  if (w.dist === "Gamma" && w.shape > 0) return drawGamma(w.shape, rng) / w.shape / w.rateRps;
  return rng.exponential(1 / w.rateRps);
}

export interface ServeGenOptions {
  readonly seed: number;
  /** Windows to replay: [first, first + count). */
  readonly firstWindow: number;
  readonly windowCount: number;
  /** Each client's rate is multiplied by this; its inter-arrival shape (CV) is kept. */
  readonly rateScale: number;
  /** Trace seconds per replayed second: 24 plays a day in an hour. */
  readonly compression: number;
  /** Requests whose lengths are drawn jointly (prompt, output), e.g. the Azure conversation trace. */
  readonly lengths: readonly TraceRequest[];
}

/**
 * Arrivals from per-client rate series: per client and window, gaps drawn from
 * the window's Gamma or Weibull fit and rescaled to its rate; clients merged.
 * Windows where every client is at zero are data gaps (traces README) and are
 * cut out, so the replay closes over them.
 */
export function serveGenArrivals(clients: readonly ServeGenWindow[][], options: ServeGenOptions): TraceRequest[] {
  const rng = new SeededRandom(options.seed);
  const lengthRng = new SeededRandom(options.seed ^ 0x5bd1e995);
  const last = options.firstWindow + options.windowCount;
  const active = new Set<number>();
  for (const windows of clients)
    for (const w of windows) {
      const index = Math.round(w.startSeconds / serveGenWindowSeconds);
      if (index >= options.firstWindow && index < last && w.rateRps > 0) active.add(index);
    }
  const kept = [...active].sort((a, b) => a - b);
  const slot = new Map(kept.map((index, k) => [index, k]));
  const times: number[] = [];
  for (const windows of clients) {
    for (const w of windows) {
      const index = Math.round(w.startSeconds / serveGenWindowSeconds);
      const k = slot.get(index);
      if (k === undefined || !(w.rateRps > 0)) continue;
      const scaled = { ...w, rateRps: w.rateRps * options.rateScale };
      const start = k * serveGenWindowSeconds;
      let t = start + drawGapSeconds(scaled, rng) * rng.next();
      while (t < start + serveGenWindowSeconds) {
        times.push(t / options.compression);
        t += drawGapSeconds(scaled, rng);
      }
    }
  }
  times.sort((a, b) => a - b);
  if (options.lengths.length === 0) throw new Error("serveGenArrivals: the length source has no requests");
  return times.map((arrivalSeconds) => {
    const pick = options.lengths[Math.floor(lengthRng.next() * options.lengths.length)] as TraceRequest;
    return { arrivalSeconds, promptTokens: pick.promptTokens, outputTokens: pick.outputTokens };
  });
}

export function readServeGenModel(dir: string): ServeGenWindow[][] {
  if (!existsSync(dir)) throw new Error(`${dir}: ServeGen model directory not found`);
  const files = readdirSync(dir)
    .filter((f) => /^chunk-\d+-trace\.csv$/.test(f))
    .sort();
  if (files.length === 0) throw new Error(`${dir}: no chunk-<client>-trace.csv files`);
  return files.map((f) => parseServeGenClient(readFileSync(join(dir, f), "utf8"), join(dir, f)));
}

/** The ServeGen sample the benchmark replays (see docs/quality.md): m-large, day 1. */
export const serveGenDaySample = {
  model: "language/m-large",
  firstWindow: 0,
  windowCount: 144,
  /**
   * m-large day 1 averages about 290 rps; with the day compressed 24x into an hour, client
   * rates scaled by 0.0008 replay at about 5.5 rps, the Azure conversation trace's mean rate.
   */
  rateScale: 0.0008,
  compression: 24,
} as const;

export interface LoadOptions {
  readonly seed?: number;
  readonly tracesDir?: string;
  /** ServeGen time compression (trace seconds per replayed second). */
  readonly compression?: number;
}

/** Reads a trace by name (from the shared traces) or by file (format from its content). */
export function loadTrace(nameOrFile: string, options: LoadOptions = {}): Trace {
  const dir = options.tracesDir ?? defaultTracesDir();
  const seed = options.seed ?? 1;
  switch (nameOrFile as TraceName) {
    case "azure-conv":
      return { ...readTraceFile(join(dir, "azure_llm_2023/AzureLLMInferenceTrace_conv.csv")), name: nameOrFile };
    case "azure-code":
      return { ...readTraceFile(join(dir, "azure_llm_2023/AzureLLMInferenceTrace_code.csv")), name: nameOrFile };
    case "mooncake-conversation":
      return { ...readTraceFile(join(dir, "mooncake_fast25/conversation_trace.jsonl")), name: nameOrFile };
    case "mooncake-synthetic":
      return { ...readTraceFile(join(dir, "mooncake_fast25/synthetic_trace.jsonl")), name: nameOrFile };
    case "servegen-m-large-day":
    case "servegen-m-large-14d": {
      const s = serveGenDaySample;
      const windowCount = nameOrFile === "servegen-m-large-14d" ? 14 * s.windowCount : s.windowCount;
      const compression = options.compression ?? s.compression;
      const lengths = readTraceFile(join(dir, "azure_llm_2023/AzureLLMInferenceTrace_conv.csv")).requests;
      const requests = serveGenArrivals(readServeGenModel(join(dir, "servegen", s.model)), {
        seed,
        firstWindow: s.firstWindow,
        windowCount,
        rateScale: s.rateScale,
        compression,
        lengths,
      });
      return {
        name: nameOrFile,
        requests,
        spanSeconds: (windowCount * serveGenWindowSeconds) / compression,
        notes: [
          `ServeGen ${s.model} windows ${s.firstWindow}..${s.firstWindow + windowCount - 1}, client rates scaled by ${s.rateScale}, time compressed ${compression}x`,
          "token lengths drawn from the Azure 2023 conversation trace",
        ],
      };
    }
  }
  if (!existsSync(nameOrFile))
    throw new Error(
      `--trace: ${JSON.stringify(nameOrFile)} is neither a trace name (${namedTraces.join(", ")}) nor a file`,
    );
  return readTraceFile(nameOrFile);
}

/**
 * K copies of the trace, copy k delayed by a seeded offset drawn uniformly in
 * [0, maxShiftSeconds): bursts at the minute scale and above keep their shape
 * with K times the volume; spikes shorter than the shift are smoothed.
 */
export function overlay(trace: Trace, copies: number, seed: number, maxShiftSeconds = 60): Trace {
  if (!Number.isInteger(copies) || copies < 1) throw new Error(`overlay copies must be an integer >= 1, got ${copies}`);
  if (copies === 1) return trace;
  const rng = new SeededRandom(seed ^ 0x9e3779b9);
  const all: TraceRequest[] = [];
  for (let k = 0; k < copies; k++) {
    const shift = k === 0 ? 0 : rng.next() * maxShiftSeconds;
    for (const r of trace.requests) all.push(shift === 0 ? r : { ...r, arrivalSeconds: r.arrivalSeconds + shift });
  }
  all.sort((a, b) => a.arrivalSeconds - b.arrivalSeconds);
  return {
    ...(trace.originSeconds === undefined ? {} : { originSeconds: trace.originSeconds }),
    name: `${trace.name} x${copies}`,
    requests: all,
    spanSeconds: trace.spanSeconds + maxShiftSeconds,
    notes: [...trace.notes, `${copies} copies overlaid, each delayed by a seeded offset in [0, ${maxShiftSeconds}) s`],
  };
}

/** The trace's first `seconds`: a training slice a later replay can leave out (the whole trace when shorter). */
export function firstSeconds(trace: Trace, seconds: number): Trace {
  if (seconds >= trace.spanSeconds) return trace;
  return {
    ...trace,
    name: `${trace.name}, first ${seconds} s`,
    requests: trace.requests.filter((r) => r.arrivalSeconds < seconds),
    spanSeconds: seconds,
    notes: [...trace.notes, `first ${seconds} s only`],
  };
}

/** The trace from `seconds` on, shifted to start at zero: the replay a training slice before it does not include. */
export function fromSecond(trace: Trace, seconds: number): Trace {
  if (!(seconds > 0 && seconds < trace.spanSeconds))
    throw new Error(`a trace of ${trace.spanSeconds} s has nothing from second ${seconds} on to replay`);
  return {
    ...trace,
    name: `${trace.name}, from ${seconds} s`,
    requests: trace.requests
      .filter((r) => r.arrivalSeconds >= seconds)
      .map((r) => ({ ...r, arrivalSeconds: r.arrivalSeconds - seconds })),
    spanSeconds: trace.spanSeconds - seconds,
    notes: [...trace.notes, `from ${seconds} s on, shifted to start at zero`],
    originSeconds: (trace.originSeconds ?? 0) + seconds,
  };
}

/** The trace replayed `speedup` times faster: every arrival and the span divided by it. */
export function speedUp(trace: Trace, speedup: number): Trace {
  if (speedup === 1) return trace;
  return {
    ...trace,
    name: `${trace.name} at ${speedup}x`,
    requests: trace.requests.map((r) => ({ ...r, arrivalSeconds: r.arrivalSeconds / speedup })),
    spanSeconds: trace.spanSeconds / speedup,
    notes: [...trace.notes, `replayed ${speedup}x faster`],
  };
}
