/**
 * The observation builder: what Prometheus would hold about the simulated
 * engines, turned into the same `RoleSamples` the Prometheus source produces,
 * then into a `RoleObservation` by the core's own `observeRole`.
 *
 * Window rules follow the Prometheus source: gauges are the newest scrape;
 * counter rates and histogram deltas span the scrapes inside the window
 * (`rate(x[w])`, `increase(h[w])`); a pod with fewer than two scrapes in a
 * window is not established there; only ready pods are sampled. One
 * difference, stated: Prometheus extrapolates `rate()` and `increase()` to the
 * window's edges, here the rate is the exact delta over the scrapes' own span
 * (the two agree when scrapes cover the window; extrapolation scales histogram
 * counts uniformly, which leaves the percentile unchanged).
 */
import type { ReplicaTotals } from "../engines/model.js";
import { observeRole, staleAfterSeconds } from "../../core/signals/observe.js";
import type { PodField } from "../../core/signals/pod-fields.js";
import type { HistogramWindow, PodSample, PodWindowRates, RoleObservation } from "../../core/signals/types.js";

/** One scrape of one pod: cumulative counters and gauges at a simulated time. */
export interface Scrape {
  readonly atSeconds: number;
  readonly promptTokens: number;
  readonly generationTokens: number;
  readonly prefixCacheHits: number;
  readonly running: number;
  readonly waiting: number;
  readonly kvUsage: number;
  readonly ttft: readonly { upperBound: number; count: number }[];
  readonly ttftCount: number;
  readonly ttftSum: number;
  readonly itl: readonly { upperBound: number; count: number }[];
  readonly itlCount: number;
  readonly itlSum: number;
  /** `vllm:request_queue_time_seconds`: observed when a request finishes (`src/sim/engines/model.ts`). */
  readonly queueTime: readonly { upperBound: number; count: number }[];
  readonly queueTimeCount: number;
  readonly queueTimeSum: number;
}

export function scrapeOf(atSeconds: number, t: ReplicaTotals): Scrape {
  return {
    atSeconds,
    promptTokens: t.promptTokens,
    generationTokens: t.generationTokens,
    prefixCacheHits: t.prefixCacheHits,
    running: t.running,
    waiting: t.waiting,
    kvUsage: t.kvUsage,
    ttft: t.ttftCumulative,
    ttftCount: t.ttftCount,
    ttftSum: t.ttftSumSeconds,
    itl: t.itlCumulative,
    itlCount: t.itlCount,
    itlSum: t.itlSumSeconds,
    queueTime: t.queueTimeCumulative,
    queueTimeCount: t.queueTimeCount,
    queueTimeSum: t.queueTimeSumSeconds,
  };
}

/** Scrapes of one pod, oldest first, kept for the longest window. */
export class ScrapeHistory {
  private readonly scrapes: Scrape[] = [];
  constructor(private readonly keepSeconds: number) {}

  add(scrape: Scrape): void {
    this.scrapes.push(scrape);
    const horizon = scrape.atSeconds - this.keepSeconds;
    while ((this.scrapes[0]?.atSeconds ?? Infinity) < horizon) this.scrapes.shift();
  }

  newest(): Scrape | undefined {
    return this.scrapes[this.scrapes.length - 1];
  }

  /** Scrapes with `atSeconds` in (now − window, now]. */
  within(nowSeconds: number, windowSeconds: number): Scrape[] {
    return this.scrapes.filter((s) => s.atSeconds > nowSeconds - windowSeconds && s.atSeconds <= nowSeconds);
  }
}

function histogramDelta(
  first: readonly { upperBound: number; count: number }[],
  last: readonly { upperBound: number; count: number }[],
  count: number,
  sum: number,
): HistogramWindow {
  return {
    buckets: last.map((b, i) => ({ upperBound: b.upperBound, count: b.count - (first[i]?.count ?? 0) })),
    count,
    sum,
  };
}

/** One window's rates from the scrapes inside it; not established with fewer than two. */
export function windowRates(scrapes: readonly Scrape[]): PodWindowRates {
  const first = scrapes[0];
  const last = scrapes[scrapes.length - 1];
  if (first === undefined || last === undefined || scrapes.length < 2 || last.atSeconds <= first.atSeconds)
    return { established: false };
  const span = last.atSeconds - first.atSeconds;
  return {
    established: true,
    promptTokensPerSecond: (last.promptTokens - first.promptTokens) / span,
    generationTokensPerSecond: (last.generationTokens - first.generationTokens) / span,
    prefixCacheHitTokensPerSecond: (last.prefixCacheHits - first.prefixCacheHits) / span,
    ttftSeconds: histogramDelta(first.ttft, last.ttft, last.ttftCount - first.ttftCount, last.ttftSum - first.ttftSum),
    itlSeconds: histogramDelta(first.itl, last.itl, last.itlCount - first.itlCount, last.itlSum - first.itlSum),
    queueTimeSeconds: histogramDelta(
      first.queueTime,
      last.queueTime,
      last.queueTimeCount - first.queueTimeCount,
      last.queueTimeSum - first.queueTimeSum,
    ),
  };
}

export interface PodHistory {
  readonly pod: string;
  readonly history: ScrapeHistory;
}

export interface BuildObservationInput {
  /** The role's kind (Server, Prefill or Decode); Server when omitted. */
  readonly kind?: "Server" | "Prefill" | "Decode";
  readonly pods: readonly PodHistory[];
  readonly readyReplicas: number;
  readonly nowSeconds: number;
  /** Unix ms of simulated time zero. */
  readonly epochMs: number;
  readonly stableWindowSeconds: number;
  readonly panicWindowSeconds: number;
  readonly samplingIntervalSeconds: number;
  /** The fields the scaler's algorithm reads: a pod counts toward coverage only with all of them. */
  readonly reads: readonly PodField[];
}

/** The pod samples the Prometheus source would return for these ready pods. */
export function podSamples(input: BuildObservationInput): PodSample[] {
  const out: PodSample[] = [];
  for (const { pod, history } of input.pods) {
    const newest = history.newest();
    if (newest === undefined) continue;
    out.push({
      pod,
      engine: "vllm",
      lastSampleUnixSeconds: input.epochMs / 1000 + newest.atSeconds,
      runningRequests: newest.running,
      waitingRequests: newest.waiting,
      kvCacheUsage: newest.kvUsage,
      windows: {
        stable: windowRates(history.within(input.nowSeconds, input.stableWindowSeconds)),
        panic: windowRates(history.within(input.nowSeconds, input.panicWindowSeconds)),
      },
    });
  }
  return out;
}

/** The role observation the planner receives, built by the core's `observeRole`. */
export function buildObservation(input: BuildObservationInput): RoleObservation {
  return observeRole({
    kind: input.kind ?? "Server",
    samples: { pods: podSamples(input) },
    readyReplicas: input.readyReplicas,
    nowMs: input.epochMs + input.nowSeconds * 1000,
    staleAfterSeconds: staleAfterSeconds(input.samplingIntervalSeconds),
    reads: input.reads,
  });
}
