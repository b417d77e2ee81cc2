/** Hand-written per-pod samples, as the Prometheus adapter hands them to the observation builder. */
import type { EngineKind, HistogramWindow, PodSample, PodWindowRates } from "../../../src/core/signals/types.js";

/** The time of every test pass: 2026-11-29T12:00:00Z. */
export const nowMs = Date.UTC(2026, 10, 29, 12, 0, 0);
export const nowSeconds = nowMs / 1000;

export interface PodOptions {
  readonly engine?: EngineKind;
  readonly ageSeconds?: number;
  readonly runningRequests?: number;
  readonly waitingRequests?: number;
  readonly decodeTransferQueueRequests?: number;
  readonly decodePreallocQueueRequests?: number;
  readonly prefillBootstrapQueueRequests?: number;
  readonly kvCacheUsage?: number;
  readonly gaugeSeries?: NonNullable<PodSample["gaugeSeries"]>;
  /** Rates of the stable window; `established` defaults to true. */
  readonly stable?: Partial<PodWindowRates>;
  /** Rates of the panic window; defaults to the stable window's. */
  readonly panic?: Partial<PodWindowRates>;
}

function window(rates: Partial<PodWindowRates> | undefined): PodWindowRates {
  return { established: true, ...rates };
}

export function pod(name: string, options: PodOptions = {}): PodSample {
  const { engine = "vllm", ageSeconds = 5, stable, panic, ...gauges } = options;
  return {
    pod: name,
    engine,
    lastSampleUnixSeconds: nowSeconds - ageSeconds,
    ...gauges,
    windows: { stable: window(stable), panic: window(panic ?? stable) },
  };
}

/** A cumulative histogram in seconds from `[upperBound, cumulativeCount]` pairs; `count` is the last count. */
export function histogram(pairs: readonly (readonly [number, number])[], sum: number): HistogramWindow {
  const buckets = pairs.map(([upperBound, count]) => ({ upperBound, count }));
  return { buckets, count: buckets.at(-1)?.count ?? 0, sum };
}
