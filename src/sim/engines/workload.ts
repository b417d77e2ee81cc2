/**
 * Request arrival processes: synthetic (constant or Poisson, seeded) and trace
 * replay of trace rows. Parsing a trace file's formats is trace-formats.ts;
 * reading one from disk is traces.ts.
 */
import { drawLength, SeededRandom, type LengthDistribution } from "./random.js";

/** A request before the fleet gives it an id. */
export interface ArrivingRequest {
  readonly arrivalSeconds: number;
  readonly promptTokens: number;
  readonly outputTokens: number;
  readonly prefixBlocks?: readonly number[];
  readonly blockTokens?: number;
  readonly streaming?: boolean;
}

/** Yields requests in arrival order. */
export interface Workload {
  /** Requests arriving before `untilSeconds` not yet returned. */
  take(untilSeconds: number): ArrivingRequest[];
}

export interface SyntheticWorkloadOptions {
  readonly seed: number;
  readonly startSeconds: number;
  /** Offered request rate; a function allows ramps. */
  readonly requestsPerSecond: number | ((atSeconds: number) => number);
  /** `uniform` spaces arrivals evenly (steady load for tests); `poisson` draws gaps. */
  readonly arrivals: "uniform" | "poisson";
  readonly promptTokens: LengthDistribution;
  readonly outputTokens: LengthDistribution;
  /**
   * Shared prefixes: each request starts with one of `groups` prefixes of
   * `prefixTokens` tokens (whole blocks of `blockTokens`), so a warm cache hits them.
   */
  readonly sharedPrefix?: { readonly groups: number; readonly prefixTokens: number; readonly blockTokens: number };
  /** Fraction of requests that stream (SGLang `is_streaming`). */
  readonly streamingFraction?: number;
}

export class SyntheticWorkload implements Workload {
  private readonly rng: SeededRandom;
  private nextArrivalSeconds: number;
  private sequence = 0;

  constructor(private readonly options: SyntheticWorkloadOptions) {
    this.rng = new SeededRandom(options.seed);
    this.nextArrivalSeconds = options.startSeconds + this.gapSeconds(options.startSeconds);
  }

  private rateAt(atSeconds: number): number {
    const r = this.options.requestsPerSecond;
    return typeof r === "number" ? r : r(atSeconds);
  }

  private gapSeconds(atSeconds: number): number {
    const rate = this.rateAt(atSeconds);
    // An idle period is probed again a second later.
    if (!(rate > 0)) return 1;
    return this.options.arrivals === "uniform" ? 1 / rate : this.rng.exponential(1 / rate);
  }

  take(untilSeconds: number): ArrivingRequest[] {
    const out: ArrivingRequest[] = [];
    while (this.nextArrivalSeconds < untilSeconds) {
      const at = this.nextArrivalSeconds;
      if (this.rateAt(at) > 0) out.push(this.draw(at));
      this.nextArrivalSeconds = at + this.gapSeconds(at);
    }
    return out;
  }

  private draw(arrivalSeconds: number): ArrivingRequest {
    const o = this.options;
    const seq = this.sequence++;
    const promptTokens = Math.max(1, drawLength(o.promptTokens, this.rng));
    const outputTokens = Math.max(1, drawLength(o.outputTokens, this.rng));
    const streaming = this.rng.next() < (o.streamingFraction ?? 1);
    const sp = o.sharedPrefix;
    if (!sp) return { arrivalSeconds, promptTokens, outputTokens, streaming };
    const group = seq % sp.groups;
    const sharedBlocks = Math.floor(sp.prefixTokens / sp.blockTokens);
    const totalBlocks = Math.ceil(promptTokens / sp.blockTokens);
    const prefixBlocks: number[] = [];
    for (let b = 0; b < totalBlocks; b++) {
      // Shared blocks are named by group; the rest are unique to the request.
      prefixBlocks.push(b < sharedBlocks ? group * 1_000_003 + b : -(seq * 100_003 + b + 1));
    }
    return { arrivalSeconds, promptTokens, outputTokens, prefixBlocks, blockTokens: sp.blockTokens, streaming };
  }
}

/** One row of a request trace, times relative to the trace start. */
export interface TraceRow {
  readonly offsetSeconds: number;
  readonly promptTokens: number;
  readonly outputTokens: number;
  readonly prefixBlocks?: readonly number[];
  readonly blockTokens?: number;
}

export interface TraceWorkloadOptions {
  readonly startSeconds: number;
  /** Trace seconds per simulated second: 2 replays twice as fast. */
  readonly speedup?: number;
  /** Repeat the trace when it ends. */
  readonly loop?: boolean;
  /** Multiply token lengths, e.g. to fit a small simulated replica. */
  readonly tokenScale?: number;
}

export class TraceWorkload implements Workload {
  private index = 0;
  private lapOffsetSeconds = 0;
  private readonly spanSeconds: number;

  constructor(
    private readonly rows: readonly TraceRow[],
    private readonly options: TraceWorkloadOptions,
  ) {
    const last = rows[rows.length - 1];
    this.spanSeconds = (last?.offsetSeconds ?? 0) + 1;
  }

  take(untilSeconds: number): ArrivingRequest[] {
    const out: ArrivingRequest[] = [];
    const speedup = this.options.speedup ?? 1;
    const scale = this.options.tokenScale ?? 1;
    for (;;) {
      const row = this.rows[this.index];
      if (!row) {
        if (!this.options.loop || this.rows.length === 0) return out;
        this.index = 0;
        this.lapOffsetSeconds += this.spanSeconds;
        continue;
      }
      const at = this.options.startSeconds + (this.lapOffsetSeconds + row.offsetSeconds) / speedup;
      if (at >= untilSeconds) return out;
      this.index++;
      out.push({
        arrivalSeconds: at,
        promptTokens: Math.max(1, Math.round(row.promptTokens * scale)),
        outputTokens: Math.max(1, Math.round(row.outputTokens * scale)),
        ...(row.prefixBlocks ? { prefixBlocks: row.prefixBlocks } : {}),
        ...(row.blockTokens ? { blockTokens: Math.max(1, Math.round(row.blockTokens * scale)) } : {}),
        streaming: true,
      });
    }
  }
}
