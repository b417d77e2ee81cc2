/**
 * The contract between the Prometheus adapter (which produces per-pod samples)
 * and the pure observation builder (which turns them into one RoleObservation
 * per role). Absent optional fields mean "not reported": never read them as 0.
 */

/** Engines whose series the scaler understands. */
export type EngineKind = "vllm" | "sglang";

/** Window names: `stable` is stableWindowSeconds, `panic` is panicWindowSeconds. */
export type WindowName = "stable" | "panic";

/**
 * A cumulative histogram delta over one window: `buckets` are cumulative
 * counts by upper bound in ascending order (the `+Inf` bucket, when present,
 * has `upperBound: Infinity`), `count` and `sum` are the window's deltas.
 * Values are in seconds, as the engines export them.
 */
export interface HistogramWindow {
  readonly buckets: readonly { readonly upperBound: number; readonly count: number }[];
  readonly count: number;
  /**
   * Absent where the source did not ask the pod's sum because its role's sum
   * carries it (`RoleHistogram.sum`, the `native` plan); a sum the source asked
   * and did not get leaves the pod without a histogram.
   */
  readonly sum?: number;
}

/** Counter rates of one pod over one window, already summed over data-parallel ranks. */
export interface PodWindowRates {
  /**
   * False when the pod's process restarted inside the window (a counter reset), or the window
   * holds fewer than two samples: the pod's rates are not established and must not be used.
   */
  readonly established: boolean;
  readonly promptTokensPerSecond?: number;
  readonly generationTokensPerSecond?: number;
  /** vLLM `prefix_cache_hits_total` rate (tokens). */
  readonly prefixCacheHitTokensPerSecond?: number;
  /** SGLang `prefill_effective_tokens_total{mode="input"}` rate. */
  readonly effectivePrefillTokensPerSecond?: number;
  /**
   * SGLang cache-hit token rates by tier, each only when reported: from
   * `prefill_effective_tokens_total{mode=*_hit}`, or from `cached_tokens_total{cache_source}`
   * (see `cacheSeries`). Read only where `effectivePrefillTokensPerSecond` is absent, so the
   * Prometheus source reads them only on builds without that counter, from `cached_tokens_total`.
   */
  readonly deviceHitTokensPerSecond?: number;
  readonly hostHitTokensPerSecond?: number;
  readonly storageHitTokensPerSecond?: number;
  /** SGLang `cached_tokens_total{cache_source="total"}` (or unlabelled): cached tokens without a tier. */
  readonly totalCachedTokensPerSecond?: number;
  /** The series the SGLang hit rates came from, e.g. `sglang:cached_tokens_total`. */
  readonly cacheSeries?: string;
  /** The series `itlSeconds` came from, e.g. `vllm:time_per_output_token_seconds` on older vLLM. */
  readonly itlSeries?: string;
  /**
   * Which counters had samples in the window, for the absent-counter rule
   * (`absent-counter.ts`): a series of SGLang's first-use tokenizer family, and a
   * counter the engine creates at start-up. Absent when the adapter did not say.
   */
  readonly counterPresence?: { readonly firstUseFamily: boolean; readonly startupCounter: boolean };
  /** Time-to-first-token histogram delta over the window. */
  readonly ttftSeconds?: HistogramWindow;
  /** Inter-token latency histogram delta over the window. */
  readonly itlSeconds?: HistogramWindow;
  /**
   * Queue-time histogram delta over the window: how long requests waited in the
   * engine's queue before they were scheduled (vLLM `request_queue_time_seconds`,
   * observed when a request finishes; SGLang `queue_time_seconds`, observed when it
   * is scheduled). Absent when the pod does not export it.
   */
  readonly queueTimeSeconds?: HistogramWindow;
}

/** Everything the adapter learned about one engine pod in one sampling pass. */
export interface PodSample {
  readonly pod: string;
  readonly engine: EngineKind;
  /** Unix seconds of the newest sample seen for this pod's gauges. */
  readonly lastSampleUnixSeconds: number;
  readonly runningRequests?: number;
  readonly waitingRequests?: number;
  /** SGLang `num_decode_transfer_queue_reqs` (decode roles add it to waiting). */
  readonly decodeTransferQueueRequests?: number;
  /** SGLang `num_decode_prealloc_queue_reqs`: requests waiting for a decode KV slot (decode roles add it). */
  readonly decodePreallocQueueRequests?: number;
  /**
   * SGLang `num_prefill_bootstrap_queue_reqs`, named `num_prefill_prealloc_queue_reqs`
   * before 2026: requests waiting for their KV handshake (prefill roles add it).
   */
  readonly prefillBootstrapQueueRequests?: number;
  /** Fraction 0..1, mean over the pod's data-parallel ranks. */
  readonly kvCacheUsage?: number;
  /** The series each gauge came from where an engine version renamed it (`kvCacheUsage`, `prefillBootstrapQueueRequests`). */
  readonly gaugeSeries?: { readonly kvCacheUsage?: string; readonly prefillBootstrapQueueRequests?: string };
  readonly windows: { readonly stable: PodWindowRates; readonly panic: PodWindowRates };
}

/**
 * The families of pod fields a source reads together, one request each:
 * `gauges` (running, waiting, transfer queue, KV usage), `counters` (token
 * rates and whether each window is established), `ttft` (the TTFT and
 * queue-time histograms, one request) and `itl` (the ITL histogram). A request that failed or came back partial costs its
 * family and nothing else.
 */
export const signalFamilies = ["gauges", "counters", "ttft", "itl"] as const;
export type SignalFamily = (typeof signalFamilies)[number];

/** The latency histograms of a pod's window. */
export type LatencyField = "ttftSeconds" | "itlSeconds" | "queueTimeSeconds";

/**
 * One latency histogram's buckets summed over a role's pods by the source (the
 * `roles` query plan), with the pods whose series the sum covers: each pod, with
 * its engine, that answered the histogram's count in the window (a pod listed
 * twice answered for both engines). The pods' own histograms then carry count and
 * sum without buckets (`native`: their count alone, the role's sum carrying the
 * sum). The core uses the sum only where it is the merge it would have made of
 * the pods' buckets (`role-histogram.ts`).
 */
export interface RoleHistogram {
  readonly pods: readonly { readonly pod: string; readonly engine: EngineKind }[];
  /** Cumulative counts by upper bound, ascending, as in `HistogramWindow`; empty when no pod had buckets. */
  readonly buckets: readonly { readonly upperBound: number; readonly count: number }[];
  /** The histograms' sums added over the same pods (`native`), where the pods' own sums were not asked. */
  readonly sum?: number;
}

/**
 * The result of sampling one role: `pods` holds the pods that answered.
 * `queryFailed` is set when the source could not learn which pods answered
 * (Prometheus unreachable, the gauge request failed), so nothing about the
 * role is known. `unknownFamilies` names the families whose request failed or
 * was answered partially (a Prometheus warning, a federating layer's partial
 * response), with the reason: their fields are absent from every pod and are
 * unknown, never zero.
 */
export interface RoleSamples {
  readonly pods: readonly PodSample[];
  readonly queryFailed?: { readonly reason: string };
  readonly unknownFamilies?: Readonly<Partial<Record<SignalFamily, string>>>;
  /** Latency buckets summed over the role's pods, by window and histogram (see `RoleHistogram`). */
  readonly roleHistograms?: Readonly<
    Partial<Record<WindowName, Readonly<Partial<Record<LatencyField, RoleHistogram>>>>>
  >;
}

/** `Fresh` current readings, `Idle` observed with no work, `Missing` unavailable, `Stale` expired. */
export type SignalState = "Fresh" | "Idle" | "Missing" | "Stale";

/**
 * One role's observation, as status shows it plus both token-rate windows.
 * An absent field is a missing signal; 0 is a measured zero.
 */
export interface RoleObservation {
  readonly readyReplicas: number;
  /** Fresh pods (at most 64) with an established stable window and every field the role's algorithm reads. */
  readonly sampledReplicas: number;
  readonly signalState: SignalState;
  readonly runningRequests?: number;
  readonly waitingRequests?: number;
  /** Cache-missed prompt tokens per second over the stable window. */
  readonly promptTokensPerSecond?: number;
  readonly generationTokensPerSecond?: number;
  /** The same rates over the panic window. */
  readonly panicPromptTokensPerSecond?: number;
  readonly panicGenerationTokensPerSecond?: number;
  readonly kvCacheUsage?: number;
  readonly ttftMilliseconds?: number;
  readonly itlMilliseconds?: number;
  /** Where the buckets place the TTFT and ITL p95 (the latency guard compares the estimate). */
  readonly ttftBracket?: LatencyBracket;
  readonly itlBracket?: LatencyBracket;
  /** p95 queue time over the same pods and window as TTFT (status form: bucket boundary or mean). */
  readonly queueTimeMilliseconds?: number;
  readonly queueTimeBracket?: LatencyBracket;
  /**
   * How many of the pods that count for latency (fresh, established stable window)
   * export a queue-time histogram, of how many: all of them is a reading, none is
   * "not exported", some is a partial reading, which is unknown. Absent when no pod
   * counts (nothing to say).
   */
  readonly queueTimeExport?: { readonly pods: number; readonly of: number };
  /**
   * Which series each signal was read from, with the number of pods per series
   * (`signal → series → pods`), so a fallback to an older engine's series is visible.
   * Signals: `itl`, `kvCacheUsage`, `promptDemand`, `prefillBootstrapQueue`, and `tokenCounters`
   * when absent SGLang first-use counters were read as zero.
   */
  readonly seriesUsed?: SeriesUsed;
}

/**
 * A p95 known from buckets: above `lowerMilliseconds`, at most `upperMilliseconds`
 * (Infinity in the `+Inf` bucket), placed at `estimateMilliseconds` by linear
 * interpolation inside that bucket.
 */
export interface LatencyBracket {
  readonly lowerMilliseconds: number;
  readonly upperMilliseconds: number;
  readonly estimateMilliseconds: number;
}

/** `signal → series → number of pods` read from it. */
export type SeriesUsed = Readonly<Record<string, Readonly<Record<string, number>>>>;

/** The sampler reads at most this many ready answering pods per role. */
export const maxSampledPodsPerRole = 64;
