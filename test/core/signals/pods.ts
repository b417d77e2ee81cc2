/** Hand-written per-pod samples, as the Prometheus adapter hands them to the observation builder. */
import { observeRole } from "../../../src/core/signals/observe.js";
import type { PodField } from "../../../src/core/signals/pod-fields.js";
import type {
  EngineKind,
  HistogramWindow,
  PodSample,
  PodWindowRates,
  RoleObservation,
} from "../../../src/core/signals/types.js";

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

/** A Server role of these pods, all ready, stale after 60 s, reading `reads`. */
export function observeServer(pods: readonly PodSample[], reads: readonly PodField[] = []): RoleObservation {
  return observeRole({
    kind: "Server",
    samples: { pods },
    readyReplicas: pods.length,
    nowMs,
    staleAfterSeconds: 60,
    reads,
  });
}

/** Ten observations, eight of them at or under 100 ms. */
export const eightOfTenUnder100ms = histogram(
  [
    [0.1, 8],
    [Infinity, 10],
  ],
  0.9,
);
