/** Older engine series in the observation builder: cache accounting, disaggregation queues, absent counters, provenance. */
import { describe, expect, it } from "vitest";
import type { RoleKind } from "../../../src/core/api/model-deployment.js";
import { absentFirstUseSeries, observeRole } from "../../../src/core/signals/observe.js";
import type { PodSample, RoleObservation } from "../../../src/core/signals/types.js";
import { nowMs, pod } from "./pods.js";

function observe(pods: readonly PodSample[], kind: RoleKind = "Server"): RoleObservation {
  return observeRole({ kind, samples: { pods }, readyReplicas: pods.length, nowMs, staleAfterSeconds: 60, reads: [] });
}

describe("SGLang prompt demand without prefill_effective_tokens_total", () => {
  it("subtracts cached_tokens_total by tier", () => {
    const obs = observe([
      pod("s0", {
        engine: "sglang",
        stable: {
          promptTokensPerSecond: 1000,
          deviceHitTokensPerSecond: 600,
          hostHitTokensPerSecond: 100,
          storageHitTokensPerSecond: 50,
          cacheSeries: "sglang:cached_tokens_total",
        },
      }),
    ]);
    expect(obs.promptTokensPerSecond).toBe(250);
    expect(obs.seriesUsed?.["promptDemand"]).toEqual({
      "sglang:prompt_tokens_total - sglang:cached_tokens_total": 1,
    });
  });

  it("subtracts an untiered total when no tier is reported", () => {
    const obs = observe([
      pod("s0", {
        engine: "sglang",
        stable: {
          promptTokensPerSecond: 1000,
          totalCachedTokensPerSecond: 900,
          cacheSeries: "sglang:cached_tokens_total",
        },
      }),
    ]);
    expect(obs.promptTokensPerSecond).toBe(100);
  });

  it("names the uncached fallback", () => {
    const obs = observe([pod("s0", { engine: "sglang", stable: { promptTokensPerSecond: 1000 } })]);
    expect(obs.promptTokensPerSecond).toBe(1000);
    expect(obs.seriesUsed?.["promptDemand"]).toEqual({ "sglang:prompt_tokens_total (no cache accounting)": 1 });
  });
});

describe("SGLang disaggregation queues are waiting work", () => {
  const queues = {
    engine: "sglang" as const,
    waitingRequests: 2,
    decodeTransferQueueRequests: 3,
    decodePreallocQueueRequests: 5,
    prefillBootstrapQueueRequests: 7,
    gaugeSeries: { prefillBootstrapQueueRequests: "sglang:num_prefill_prealloc_queue_reqs" },
    stable: { generationTokensPerSecond: 10, promptTokensPerSecond: 10 },
  };
  it.each([
    { kind: "Decode" as const, want: 2 + 3 + 5 },
    { kind: "Prefill" as const, want: 2 + 7 },
    { kind: "Server" as const, want: 2 },
  ])("$kind waits for $want", ({ kind, want }) => {
    expect(observe([pod("s0", queues)], kind).waitingRequests).toBe(want);
  });

  it("reports the older bootstrap queue name it read", () => {
    expect(observe([pod("s0", queues)], "Prefill").seriesUsed?.["prefillBootstrapQueue"]).toEqual({
      "sglang:num_prefill_prealloc_queue_reqs": 1,
    });
  });
});

describe("absent first-use counters", () => {
  const seeded = { effectivePrefillTokensPerSecond: 0, deviceHitTokensPerSecond: 0 };
  it("read as zero on an SGLang pod whose seeded counter is present and family absent", () => {
    const obs = observe([
      pod("s0", {
        engine: "sglang",
        runningRequests: 0,
        waitingRequests: 0,
        stable: { ...seeded, counterPresence: { firstUseFamily: false, startupCounter: true } },
      }),
    ]);
    expect(obs.signalState).toBe("Idle");
    expect(obs.generationTokensPerSecond).toBe(0);
    expect(obs.seriesUsed?.["tokenCounters"]).toEqual({ [absentFirstUseSeries]: 1 });
  });

  it("stay unknown when the family is partly present", () => {
    const obs = observe([
      pod("s0", {
        engine: "sglang",
        stable: { promptTokensPerSecond: 5, counterPresence: { firstUseFamily: true, startupCounter: true } },
      }),
    ]);
    expect(obs.generationTokensPerSecond).toBeUndefined();
  });

  it("stay unknown without a start-up counter (older SGLang)", () => {
    const obs = observe([
      pod("s0", { engine: "sglang", stable: { counterPresence: { firstUseFamily: false, startupCounter: false } } }),
    ]);
    expect(obs.signalState).toBe("Missing");
    expect(obs.generationTokensPerSecond).toBeUndefined();
  });
});

describe("ITL and KV provenance", () => {
  it("counts pods per series", () => {
    const itl = { buckets: [{ upperBound: 0.05, count: 10 }], count: 10, sum: 0.3 };
    const obs = observe([
      pod("v0", {
        kvCacheUsage: 0.5,
        gaugeSeries: { kvCacheUsage: "vllm:gpu_cache_usage_perc" },
        stable: { promptTokensPerSecond: 1, itlSeconds: itl, itlSeries: "vllm:time_per_output_token_seconds" },
      }),
      pod("v1", {
        kvCacheUsage: 0.3,
        gaugeSeries: { kvCacheUsage: "vllm:kv_cache_usage_perc" },
        stable: { promptTokensPerSecond: 1, itlSeconds: itl, itlSeries: "vllm:inter_token_latency_seconds" },
      }),
    ]);
    expect(obs.seriesUsed?.["itl"]).toEqual({
      "vllm:time_per_output_token_seconds": 1,
      "vllm:inter_token_latency_seconds": 1,
    });
    expect(obs.seriesUsed?.["kvCacheUsage"]).toEqual({ "vllm:gpu_cache_usage_perc": 1, "vllm:kv_cache_usage_perc": 1 });
  });
});
