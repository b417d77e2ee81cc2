/**
 * Real engine captures (../shared/fixtures/engine-expositions) and the derived
 * older-version ones (test/fixtures/engine-expositions-derived), each served to
 * a real Prometheus as two scrapes one scrape interval apart, the second with
 * every counter and histogram bucket doubled. The source and the observation
 * builder then read them, and every field is checked against values worked
 * out by hand from the capture.
 *
 * Why the hand values are exact: the evaluation time T is the second scrape's
 * timestamp and the window w is the whole seconds just above the gap Δ between
 * the scrapes, so Prometheus extrapolates the counter delta to the window
 * start (the gap to it is under 1.1 Δ) and `rate()` is exactly the delta / Δ:
 * with a factor of 2 the delta is the captured value. Histogram increases are
 * delta × w / Δ, which leaves their ratios (the p95 bucket, the mean) as captured.
 */
import { existsSync, readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { PrometheusClient } from "../../src/adapters/prometheus/client.js";
import { defaultPrometheusSignalConfig } from "../../src/adapters/prometheus/config.js";
import type { ScalerSamplingInput } from "../../src/adapters/prometheus/source.js";
import type { RoleKind } from "../../src/core/api/model-deployment.js";
import { tokenFieldsRead } from "../../src/core/algorithms/capacity.js";
import type { PodField } from "../../src/core/signals/pod-fields.js";
import { absentFirstUseSeries, observeRole } from "../../src/core/signals/observe.js";
import type { RoleObservation, RoleSamples } from "../../src/core/signals/types.js";
import { PrometheusHarness } from "../../harness/prometheus.js";
import { BothPlans } from "../support/both-plans.js";
import { advanceCounters, CaptureServer, type ServedCapture } from "../support/capture-server.js";

const captures = fileURLToPath(new URL("../../../shared/fixtures/engine-expositions/", import.meta.url));
const derived = fileURLToPath(new URL("../fixtures/engine-expositions-derived/", import.meta.url));
const namespace = "captures";
const scrapeIntervalSeconds = 3;

interface Case {
  readonly key: string;
  readonly file: string;
  readonly kind: RoleKind;
  /** The observation, given the gap between the two scrapes in seconds. */
  readonly expected: (gapSeconds: number) => RoleObservation;
}

/** The builder reports latency rounded to a nanosecond. */
const nanosecondMs = (ms: number): number => Math.round(ms * 1e6) / 1e6;
/**
 * The bracket the latency guard reads: the p95 lies in (lower, upper] ms and is placed by linear
 * interpolation of the cumulative counts at both boundaries (any common scale factor cancels).
 */
function bracket(lowerMs: number, upperMs: number, atLower: number, atUpper: number, total: number) {
  const estimate = lowerMs + ((upperMs - lowerMs) * (0.95 * total - atLower)) / (atUpper - atLower);
  return { lowerMilliseconds: lowerMs, upperMilliseconds: upperMs, estimateMilliseconds: nanosecondMs(estimate) };
}
// SGLang live capture, is_streaming summed: TTFT ≤2 s 20505 + 10046, ≤4 s 21584 + 10285 of 22474 + 10663.
const sglangTtftBracket = bracket(2000, 4000, 20505 + 10046, 21584 + 10285, 22474 + 10663);
const sglangItlBracket = bracket(20, 25, 11856448, 12113315, 12492997);
/**
 * One fresh pod, fully sampled. No capture here includes a queue-time histogram (the vLLM ones are cut
 * before it, the SGLang ones predate or leave out `queue_time_seconds`), so queue time reads as not
 * exported: 0 of 1 pods. The prometheus-source test reads it from the engine simulator.
 */
const fresh = { readyReplicas: 1, sampledReplicas: 1, queueTimeExport: { pods: 0, of: 1 } } as const;
const sglangTtftP95Ms = 4000; // is_streaming false+true: ≤2 s 30551, ≤4 s 31869 ≥ 0.95 × 33137
const sglangItlP95Ms = 25; // ≤0.02 s 11856448 < 0.95 × 12492997 = 11868347.15 ≤ 12113315 (≤0.025 s)
const sglangLiveGeneration = 3263152 + 10828064;
const sglangLiveRunning = { runningRequests: 1, kvCacheUsage: 0.1 } as const;
const effectiveInput = 'sglang:prefill_effective_tokens_total{mode="input"}';

function rates(prompt: number | undefined, generation: number, gap: number) {
  return {
    ...(prompt === undefined ? {} : { promptTokensPerSecond: prompt / gap, panicPromptTokensPerSecond: prompt / gap }),
    generationTokensPerSecond: generation / gap,
    panicGenerationTokensPerSecond: generation / gap,
  };
}

function sglangLive(waitingRequests: number, extraSeries: Record<string, Record<string, number>>) {
  return (gap: number): RoleObservation => ({
    ...fresh,
    signalState: "Fresh",
    ...sglangLiveRunning,
    waitingRequests,
    ...rates(34819072, sglangLiveGeneration, gap),
    ttftMilliseconds: sglangTtftP95Ms,
    itlMilliseconds: sglangItlP95Ms,
    ttftBracket: sglangTtftBracket,
    itlBracket: sglangItlBracket,
    seriesUsed: {
      kvCacheUsage: { "sglang:token_usage": 1 },
      itl: { "sglang:inter_token_latency_seconds": 1 },
      promptDemand: { [effectiveInput]: 1 },
      ...extraSeries,
    },
  });
}

const cases: readonly Case[] = [
  {
    key: "sglang-2026-live",
    file: `${captures}sglang-2026-live-excerpt.prom`,
    kind: "Server",
    expected: sglangLive(0, {}),
  },
  {
    key: "sglang-docs",
    file: `${captures}sglang-docs-production-metrics.prom`,
    kind: "Server",
    expected: (gap) => ({
      ...fresh,
      signalState: "Fresh",
      runningRequests: 162,
      waitingRequests: 2826,
      kvCacheUsage: 0.28,
      // No cache accounting in this release: the prompt rate as counted.
      ...rates(8128902, 7557572, gap),
      // 2513 of 11008 finite: the 95th percentile is in +Inf, so the mean.
      ttftMilliseconds: nanosecondMs((2351897.9474117756 / 11008) * 1000),
      // Old ITL name: ≤0.1 s 4950195 < 0.95 × 7400757 = 7030719.15 ≤ 7039435 (≤0.15 s).
      itlMilliseconds: 150,
      // Above the last finite boundary (30 s): the mean, which is larger.
      ttftBracket: {
        lowerMilliseconds: 30000,
        upperMilliseconds: Infinity,
        estimateMilliseconds: nanosecondMs((2351897.9474117756 / 11008) * 1000),
      },
      itlBracket: bracket(100, 150, 4950195, 7039435, 7400757),
      seriesUsed: {
        kvCacheUsage: { "sglang:token_usage": 1 },
        itl: { "sglang:time_per_output_token_seconds": 1 },
        promptDemand: { "sglang:prompt_tokens_total (no cache accounting)": 1 },
      },
    }),
  },
  {
    key: "vllm-head40",
    file: `${captures}vllm-v1-head40.prom`,
    kind: "Server",
    expected: () => ({
      ...fresh,
      signalState: "Idle",
      runningRequests: 0,
      waitingRequests: 0,
      kvCacheUsage: 0,
      ...rates(0, 0, 1),
      seriesUsed: {
        kvCacheUsage: { "vllm:kv_cache_usage_perc": 1 },
        promptDemand: { "vllm:prompt_tokens_total - vllm:prefix_cache_hits_total": 1 },
      },
    }),
  },
  {
    key: "vllm-grep",
    file: `${captures}vllm-v1-grep-no-type.prom`,
    kind: "Server",
    expected: (gap) => ({
      ...fresh,
      signalState: "Fresh",
      runningRequests: 0,
      waitingRequests: 0,
      kvCacheUsage: 0,
      ...rates(80, 500, gap),
      // No buckets in the capture: the means, 0.205 s / 10 and 0.864 s / 490.
      ttftMilliseconds: 20.5,
      itlMilliseconds: nanosecondMs((0.864 / 490) * 1000),
      seriesUsed: {
        kvCacheUsage: { "vllm:kv_cache_usage_perc": 1 },
        itl: { "vllm:inter_token_latency_seconds": 1 },
        promptDemand: { "vllm:prompt_tokens_total": 1 },
      },
    }),
  },
  {
    key: "vllm-docs-design",
    file: `${captures}vllm-docs-design-example.prom`,
    kind: "Server",
    // A TTFT histogram without `_sum` or `+Inf` is unusable, not zero; no prompt counter, no KV gauge.
    expected: (gap) => ({
      ...fresh,
      signalState: "Fresh",
      runningRequests: 8,
      generationTokensPerSecond: 27453 / gap,
      panicGenerationTokensPerSecond: 27453 / gap,
    }),
  },
  {
    key: "vllm-0.9-derived",
    file: `${derived}vllm-0.9-from-grep-no-type.prom`,
    kind: "Server",
    expected: (gap) => ({
      ...fresh,
      signalState: "Fresh",
      runningRequests: 0,
      waitingRequests: 0,
      kvCacheUsage: 0,
      ...rates(80, 500, gap),
      ttftMilliseconds: 20.5,
      itlMilliseconds: nanosecondMs((0.864 / 490) * 1000),
      seriesUsed: {
        kvCacheUsage: { "vllm:gpu_cache_usage_perc": 1 },
        itl: { "vllm:time_per_output_token_seconds": 1 },
        promptDemand: { "vllm:prompt_tokens_total": 1 },
      },
    }),
  },
  {
    key: "sglang-early-2026-derived",
    file: `${derived}sglang-early-2026-from-live-excerpt.prom`,
    kind: "Server",
    expected: (gap) => ({
      ...fresh,
      signalState: "Fresh",
      ...sglangLiveRunning,
      waitingRequests: 0,
      // Prompt 884585339 + 988748524 minus cached 1662463936 + 176968128 + 780288 (device, host, storage).
      ...rates(884585339 + 988748524 - (1662463936 + 176968128 + 780288), sglangLiveGeneration, gap),
      ttftMilliseconds: sglangTtftP95Ms,
      itlMilliseconds: sglangItlP95Ms,
      ttftBracket: sglangTtftBracket,
      itlBracket: sglangItlBracket,
      seriesUsed: {
        kvCacheUsage: { "sglang:token_usage": 1 },
        itl: { "sglang:time_per_output_token_seconds": 1 },
        promptDemand: { "sglang:prompt_tokens_total - sglang:cached_tokens_total": 1 },
      },
    }),
  },
  {
    key: "sglang-fresh-derived",
    file: `${derived}sglang-2026-fresh-pod-from-live-excerpt.prom`,
    kind: "Server",
    // No tokenizer series, the seeded counter present: the absent-counter rule reads zeros,
    // queue time (a first-use scheduler histogram) included: exported, no observation yet.
    expected: () => ({
      ...fresh,
      queueTimeExport: { pods: 1, of: 1 },
      signalState: "Idle",
      runningRequests: 0,
      waitingRequests: 0,
      kvCacheUsage: 0,
      ...rates(0, 0, 1),
      seriesUsed: {
        kvCacheUsage: { "sglang:token_usage": 1 },
        promptDemand: { [effectiveInput]: 1 },
        tokenCounters: { [absentFirstUseSeries]: 1 },
      },
    }),
  },
  {
    key: "sglang-2026-prefill-derived",
    file: `${derived}sglang-2026-prefill-from-live-excerpt.prom`,
    kind: "Prefill",
    expected: sglangLive(4, {
      prefillBootstrapQueue: { "sglang:num_prefill_bootstrap_queue_reqs": 1 },
    }),
  },
  {
    key: "sglang-2025-prefill-derived",
    file: `${derived}sglang-2025-prefill-from-live-excerpt.prom`,
    kind: "Prefill",
    expected: sglangLive(3, {
      prefillBootstrapQueue: { "sglang:num_prefill_prealloc_queue_reqs": 1 },
    }),
  },
  {
    key: "sglang-2026-decode-derived",
    file: `${derived}sglang-2026-decode-from-live-excerpt.prom`,
    kind: "Decode",
    // Queue 0 + transfer 2 + prealloc 5.
    expected: sglangLive(7, {}),
  },
];

/** Prometheus 3 writes `le="1"` where Prometheus 2 (and the engines) wrote `le="1.0"`. */
function prometheus3Le(exposition: string): string {
  return exposition.replace(/le="(\d+)\.0"/g, 'le="$1"');
}

const leKey = "sglang-le-spellings";
const leScrapes = (() => {
  const live = readFileSync(`${captures}sglang-2026-live-excerpt.prom`, "utf8");
  return [
    advanceCounters(live, 1),
    advanceCounters(live, 2),
    // The upgrade between the second and third scrapes, with nothing counted across it, so no
    // increase falls between the two series.
    prometheus3Le(advanceCounters(live, 2)),
    prometheus3Le(advanceCounters(live, 3)),
  ];
})();

function podLabels(key: string, index = 0): Record<string, string> {
  const l = defaultPrometheusSignalConfig.labels;
  return { [l.namespace]: namespace, [l.pod]: `${key}-${index}`, [l.deployment]: key, [l.role]: "role" };
}

/** Two pods of one role from the vLLM grep capture (TTFT count and sum, no buckets), the second without its TTFT `_sum`. */
const sumGapKey = "vllm-sum-gap";
const sumGapPods = (() => {
  const full = readFileSync(`${captures}vllm-v1-grep-no-type.prom`, "utf8");
  const withoutSum = full
    .split("\n")
    .filter((line) => !line.startsWith("vllm:time_to_first_token_seconds_sum"))
    .join("\n");
  return [full, withoutSum].map((text) => [text, advanceCounters(text, 2)]);
})();

let server: CaptureServer;
let prometheus: PrometheusHarness;
/** Every pass read with both query plans, compared. */
let source: BothPlans;

async function promQuery(query: string): Promise<{ metric: Record<string, string>; values?: [number, string][] }[]> {
  const res = await fetch(`${prometheus.url}/api/v1/query?query=${encodeURIComponent(query)}`);
  const body = (await res.json()) as {
    data: { result: { metric: Record<string, string>; values?: [number, string][] }[] };
  };
  return body.data.result;
}

/** Scrape timestamps (ms) of one capture's pod (its `index`), once it has at least `count` of them. */
async function scrapeTimesMs(key: string, count: number, timeoutMs = 60_000, index = 0): Promise<number[]> {
  const deadline = Date.now() + timeoutMs;
  let seen: number[] = [];
  while (Date.now() < deadline) {
    const result = await promQuery(`up{pod="${key}-${index}"}[5m]`);
    seen = (result[0]?.values ?? []).filter(([, v]) => v === "1").map(([t]) => Math.round(t * 1000));
    if (seen.length >= count) return seen.slice(0, count);
    await new Promise((r) => setTimeout(r, 250));
  }
  throw new Error(`${key}: ${seen.length} of ${count} scrapes in Prometheus`);
}

function scalerFor(key: string, windowSeconds: number): ScalerSamplingInput {
  return {
    key,
    namespace,
    deployment: key,
    roles: ["role"],
    stableWindowSeconds: windowSeconds,
    panicWindowSeconds: windowSeconds,
    intervalSeconds: 1,
  };
}

async function sampleAt(key: string, atMs: number, windowSeconds: number): Promise<RoleSamples> {
  const pass = await source.sample([scalerFor(key, windowSeconds)], atMs);
  const samples = pass.scalers.get(key)?.get("role");
  if (!samples) throw new Error(`${key}: no samples`);
  return samples;
}

/** Every key equal, numbers to 1e-9 relative. */
function expectClose(actual: unknown, expected: unknown, path = "observation"): void {
  if (typeof expected === "number" && typeof actual === "number" && Number.isFinite(expected)) {
    expect(Math.abs(actual - expected), `${path}: ${actual} vs ${expected}`).toBeLessThanOrEqual(
      1e-9 * Math.max(1, Math.abs(expected)),
    );
    return;
  }
  if (typeof expected === "object" && expected !== null && typeof actual === "object" && actual !== null) {
    expect(Object.keys(actual).sort(), path).toEqual(Object.keys(expected).sort());
    for (const [k, v] of Object.entries(expected))
      expectClose((actual as Record<string, unknown>)[k], v, `${path}.${k}`);
    return;
  }
  expect(actual, path).toEqual(expected);
}

beforeAll(async () => {
  expect(existsSync(captures), `${captures} is missing: the captures live in ../shared/fixtures`).toBe(true);
  const served = new Map<string, ServedCapture>();
  for (const c of cases) {
    const text = readFileSync(c.file, "utf8");
    served.set(c.key, { labels: podLabels(c.key), scrapes: [text, advanceCounters(text, 2)] });
  }
  served.set(leKey, { labels: podLabels(leKey), scrapes: leScrapes });
  sumGapPods.forEach((scrapes, i) => served.set(`${sumGapKey}-${i}`, { labels: podLabels(sumGapKey, i), scrapes }));
  server = new CaptureServer(served);
  await server.start();
  prometheus = await PrometheusHarness.start({ scrapeIntervalSeconds, targets: server.fileSdGroups() });
  source = new BothPlans(
    new PrometheusClient({ endpoint: prometheus.url, timeoutMs: 10_000 }),
    defaultPrometheusSignalConfig,
  );
}, 60_000);

afterAll(async () => {
  await prometheus?.stop();
  await server?.stop();
});

describe("real and derived engine captures through a real Prometheus", () => {
  it.each(cases)(
    "$key ($kind): every field as worked out from the capture",
    async ({ key, kind, expected }) => {
      const [first, second] = await scrapeTimesMs(key, 2);
      if (first === undefined || second === undefined) throw new Error("two scrapes expected");
      const gapSeconds = (second - first) / 1000;
      const windowSeconds = Math.ceil(gapSeconds + 0.5);
      const samples = await sampleAt(key, second, windowSeconds);
      expect(samples.pods.map((p) => p.pod)).toEqual([`${key}-0`]);
      const observation = observeRole({
        kind,
        samples,
        readyReplicas: 1,
        nowMs: second,
        staleAfterSeconds: 60,
        reads: [],
      });
      expectClose(observation, expected(gapSeconds));
    },
    90_000,
  );

  it("a fresh SGLang pod with no tokenizer series covers every field a Server's token algorithm reads", async () => {
    const key = "sglang-fresh-derived";
    const [first, second] = await scrapeTimesMs(key, 2);
    if (first === undefined || second === undefined) throw new Error("two scrapes expected");
    const samples = await sampleAt(key, second, Math.ceil((second - first) / 1000 + 0.5));
    const observe = (reads: readonly PodField[], unknown: RoleSamples["unknownFamilies"] = {}): RoleObservation =>
      observeRole({
        kind: "Server",
        samples: { ...samples, unknownFamilies: unknown },
        readyReplicas: 1,
        nowMs: second,
        staleAfterSeconds: 60,
        reads,
      });
    const reads = tokenFieldsRead("Server");
    expect(reads).toEqual(["promptTokens", "generationTokens", "ttft", "itl"]);
    // Absent prompt and generation counters and TTFT and ITL histograms are measured zeros: the pod covers.
    expect(observe(reads)).toMatchObject({ signalState: "Idle", sampledReplicas: 1, generationTokensPerSecond: 0 });
    expect(observe(reads).ttftMilliseconds).toBeUndefined();
    // A family whose query failed is never a measured zero.
    expect(observe(reads, { itl: "itl query failed: timed out" }).sampledReplicas).toBe(0);
    const noCounters = observe(reads, { counters: "counters query answered partially: store down" });
    expect(noCounters.sampledReplicas).toBe(0);
    expect(noCounters.generationTokensPerSecond).toBeUndefined();
  }, 90_000);

  it("reads SGLang's per-tier cached tokens as the hit rates when prefill_effective_tokens_total is absent", async () => {
    const key = "sglang-early-2026-derived";
    const [first, second] = await scrapeTimesMs(key, 2);
    if (first === undefined || second === undefined) throw new Error("two scrapes expected");
    const gap = (second - first) / 1000;
    const samples = await sampleAt(key, second, Math.ceil(gap + 0.5));
    const stable = samples.pods[0]?.windows.stable;
    expect(stable?.cacheSeries).toBe("sglang:cached_tokens_total");
    expectClose(
      {
        device: stable?.deviceHitTokensPerSecond,
        host: stable?.hostHitTokensPerSecond,
        storage: stable?.storageHitTokensPerSecond,
      },
      { device: 1662463936 / gap, host: 176968128 / gap, storage: 780288 / gap },
    );
  }, 90_000);

  it('merges le="1.0" and le="1" into one bucket when a window spans both spellings', async () => {
    const times = await scrapeTimesMs(leKey, 4);
    const first = times[0] ?? 0;
    const last = times[3] ?? 0;
    const windowSeconds = Math.ceil((last - first) / 1000 + 0.5);
    const samples = await sampleAt(leKey, last, windowSeconds);
    const itl = samples.pods[0]?.windows.stable.itlSeconds;
    if (!itl) throw new Error("no ITL histogram");
    // Prometheus' own increases of the two spellings of the 1 s bucket, each holding part of the window.
    const part = async (le: string): Promise<number> => {
      const result = await fetch(
        `${prometheus.url}/api/v1/query?time=${last / 1000}&query=${encodeURIComponent(
          `increase(sglang:inter_token_latency_seconds_bucket{pod="${leKey}-0",le="${le}"}[${windowSeconds}s])`,
        )}`,
      );
      const body = (await result.json()) as { data: { result: { value: [number, string] }[] } };
      return Number(body.data.result[0]?.value[1]);
    };
    const [old, current] = [await part("1.0"), await part("1")];
    expect(old).toBeGreaterThan(0);
    expect(current).toBeGreaterThan(0);
    const at1 = itl.buckets.filter((b) => b.upperBound === 1);
    expect(at1).toHaveLength(1);
    // Each part alone is below the 0.8 s bucket (read from one series over the whole window); together they are above.
    const below = itl.buckets.find((b) => b.upperBound === 0.8)?.count ?? 0;
    expect(Math.max(old, current)).toBeLessThan(below);
    expect(old + current).toBeGreaterThan(below);
    expect(at1[0]?.count).toBeCloseTo(old + current, 3);
    // One bucket per boundary, cumulative counts never decreasing.
    const bounds = itl.buckets.map((b) => b.upperBound);
    expect(new Set(bounds).size).toBe(bounds.length);
    for (let i = 1; i < itl.buckets.length; i++) {
      expect(itl.buckets[i]?.count ?? 0).toBeGreaterThanOrEqual((itl.buckets[i - 1]?.count ?? 0) * (1 - 1e-9));
    }
  }, 90_000);

  it("the roles plan reads a role from its summed buckets in 42 queries, and asks a pod's own buckets where the sum is not their merge", async () => {
    const [first, second] = await scrapeTimesMs("sglang-2026-live", 2);
    if (first === undefined || second === undefined) throw new Error("two scrapes expected");
    const live = await source.roles.sample(
      [scalerFor("sglang-2026-live", Math.ceil((second - first) / 1000 + 0.5))],
      second,
    );
    expect(live.queries).toBe(42);
    const summed = live.scalers.get("sglang-2026-live")?.get("role");
    expect(summed?.roleHistograms?.stable?.ttftSeconds?.pods).toEqual([
      { pod: "sglang-2026-live-0", engine: "sglang" },
    ]);
    expect(summed?.roleHistograms?.stable?.ttftSeconds?.buckets.length).toBeGreaterThan(0);
    expect(summed?.pods[0]?.windows.stable.ttftSeconds?.buckets).toEqual([]);

    // Here the capture's +Inf buckets are not its counts once the spellings change: the role's sum is not
    // the pod's merge, so the pass asks the pod's own buckets in the parts plan's six bucket queries.
    const times = await scrapeTimesMs(leKey, 4);
    const last = times[3] ?? 0;
    const windowSeconds = Math.ceil((last - (times[0] ?? 0)) / 1000 + 0.5);
    const pass = await source.roles.sample([scalerFor(leKey, windowSeconds)], last);
    expect(pass.queries).toBe(48);
    const perPod = pass.scalers.get(leKey)?.get("role");
    expect(perPod?.roleHistograms).toBeUndefined();
    expect(perPod?.pods[0]?.windows.stable.itlSeconds?.buckets).toEqual(
      (await sampleAt(leKey, last, windowSeconds)).pods[0]?.windows.stable.itlSeconds?.buckets,
    );
  }, 90_000);

  it("reads a role one of whose pods has no TTFT `_sum` series as parts does, under every plan: that pod out of the latency", async () => {
    // Every plan reads the parts plan's observations (BothPlans): under `native` on this Prometheus the role is read
    // from its classic sums by role with the pods' own sums beside them, since a `_sum` summed by role could not
    // tell the second pod missing from it (the mean would read one pod's sum over both pods' counts).
    // Both pods scraped twice (their scrapes need not line up): the window reaches back to the earlier first.
    const both = [await scrapeTimesMs(sumGapKey, 2), await scrapeTimesMs(sumGapKey, 2, 60_000, 1)];
    const at = Math.max(...both.map((t) => t[1] ?? 0));
    const windowSeconds = Math.ceil((at - Math.min(...both.map((t) => t[0] ?? at))) / 1000 + 0.5);
    const samples = await sampleAt(sumGapKey, at, windowSeconds);
    expect(samples.pods.map((p) => p.pod)).toEqual([`${sumGapKey}-0`, `${sumGapKey}-1`]);
    expect(samples.pods.map((p) => p.windows.stable.established)).toEqual([true, true]);
    expect(samples.pods[0]?.windows.stable.ttftSeconds?.count).toBeGreaterThan(0);
    expect(samples.pods[1]?.windows.stable.ttftSeconds, "no histogram without its sum").toBeUndefined();
    const observation = observeRole({
      kind: "Server",
      samples,
      readyReplicas: 2,
      nowMs: at,
      staleAfterSeconds: 60,
      reads: [],
    });
    // No buckets: the mean of the pod with a sum, 0.205 s / 10 (its count and sum extrapolated alike).
    expect(observation.ttftMilliseconds).toBeCloseTo(20.5, 6);
  }, 90_000);
});
