/**
 * The edges of the observation rules that the broader tests do not pin: which
 * series `seriesUsed` names, the exact ends of the histogram rules, the
 * duplicate-pod and name-order rules, and the explanation of each state.
 */
import { describe, expect, it } from "vitest";
import { coversPod } from "../../../src/core/signals/coverage.js";
import { explainSignalState } from "../../../src/core/signals/explain.js";
import { mergeHistograms, p95Bracket, p95Milliseconds } from "../../../src/core/signals/histogram.js";
import { observeRole } from "../../../src/core/signals/observe.js";
import { podHasField, type PodField } from "../../../src/core/signals/pod-fields.js";
import { measured, promptDemandSeries } from "../../../src/core/signals/prompt-demand.js";
import type { PodSample, RoleObservation } from "../../../src/core/signals/types.js";
import { histogram, nowMs, pod } from "./pods.js";

function observe(pods: readonly PodSample[], reads: readonly PodField[] = []): RoleObservation {
  return observeRole({
    kind: "Server",
    samples: { pods },
    readyReplicas: pods.length,
    nowMs,
    staleAfterSeconds: 60,
    reads,
  });
}

const h = histogram(
  [
    [0.1, 8],
    [Infinity, 10],
  ],
  0.9,
);

describe("measured", () => {
  it.each([
    [0, 0],
    [2.5, 2.5],
    [Number.NaN, undefined],
    [Infinity, undefined],
    [-1, undefined],
    [undefined, undefined],
  ])("%s reads as %s", (value, expected) => {
    expect(measured(value)).toBe(expected);
  });
});

describe("promptDemandSeries", () => {
  it.each([
    ["vllm", { established: true }, undefined],
    ["vllm", { established: true, promptTokensPerSecond: 5 }, "vllm:prompt_tokens_total"],
    [
      "vllm",
      { established: true, promptTokensPerSecond: 5, prefixCacheHitTokensPerSecond: 1 },
      "vllm:prompt_tokens_total - vllm:prefix_cache_hits_total",
    ],
    ["sglang", { established: true }, undefined],
    [
      "sglang",
      { established: true, promptTokensPerSecond: 5, effectivePrefillTokensPerSecond: 3 },
      'sglang:prefill_effective_tokens_total{mode="input"}',
    ],
    ["sglang", { established: true, promptTokensPerSecond: 5 }, "sglang:prompt_tokens_total (no cache accounting)"],
    [
      "sglang",
      { established: true, promptTokensPerSecond: 5, deviceHitTokensPerSecond: 1 },
      "sglang:prompt_tokens_total - sglang:prefill_effective_tokens_total",
    ],
    [
      "sglang",
      { established: true, promptTokensPerSecond: 5, totalCachedTokensPerSecond: 1, cacheSeries: "sglang:cached" },
      "sglang:prompt_tokens_total - sglang:cached",
    ],
  ] as const)("%s %j names %s", (engine, rates, expected) => {
    expect(promptDemandSeries(engine, rates)).toBe(expected);
  });
});

describe("seriesUsed", () => {
  it("names a gauge's series only when the gauge is a measurement", () => {
    const gaugeSeries = { kvCacheUsage: "vllm:kv_cache_usage_perc", prefillBootstrapQueueRequests: "sglang:bq" };
    const stable = { generationTokensPerSecond: 1 };
    expect(
      observe([pod("a", { kvCacheUsage: 0.5, prefillBootstrapQueueRequests: 2, gaugeSeries, stable })]).seriesUsed,
    ).toMatchObject({ kvCacheUsage: { "vllm:kv_cache_usage_perc": 1 }, prefillBootstrapQueue: { "sglang:bq": 1 } });
    const unmeasured = observe([
      pod("a", { kvCacheUsage: Number.NaN, prefillBootstrapQueueRequests: -1, gaugeSeries, stable }),
    ]).seriesUsed;
    expect(unmeasured?.["kvCacheUsage"]).toBeUndefined();
    expect(unmeasured?.["prefillBootstrapQueue"]).toBeUndefined();
  });

  it("a measured gauge without a series name names nothing", () => {
    const observation = observe([
      pod("a", { prefillBootstrapQueueRequests: 2, stable: { generationTokensPerSecond: 1 } }),
    ]);
    expect(observation.seriesUsed?.["prefillBootstrapQueue"]).toBeUndefined();
  });

  it("reads the stable window: its ITL series when it has an ITL histogram, nothing when it is not established", () => {
    const withItl = pod("a", {
      stable: { generationTokensPerSecond: 1, itlSeconds: h, itlSeries: "vllm:inter_token_latency_seconds" },
      panic: { established: false },
    });
    expect(observe([withItl]).seriesUsed?.["itl"]).toEqual({ "vllm:inter_token_latency_seconds": 1 });
    const seriesOnly = pod("a", { stable: { generationTokensPerSecond: 1, itlSeries: "vllm:itl" } });
    expect(observe([seriesOnly]).seriesUsed?.["itl"]).toBeUndefined();
    const reset = pod("a", {
      stable: { established: false, promptTokensPerSecond: 1, itlSeconds: h, itlSeries: "vllm:itl" },
    });
    expect(observe([reset]).seriesUsed).toBeUndefined();
  });

  it("names absent first-use counters only when the zero was filled in, not when the pod reported it", () => {
    const filled = pod("a", {
      engine: "sglang",
      stable: { effectivePrefillTokensPerSecond: 0, counterPresence: { firstUseFamily: false, startupCounter: true } },
    });
    expect(observe([filled]).seriesUsed?.["tokenCounters"]).toEqual({
      "absent first-use counters (measured zero)": 1,
    });
    const reported = pod("a", { engine: "sglang", stable: { promptTokensPerSecond: 0, generationTokensPerSecond: 0 } });
    expect(observe([reported]).seriesUsed?.["tokenCounters"]).toBeUndefined();
    const unknown = pod("a", { stable: { promptTokensPerSecond: 3 } });
    expect(observe([unknown]).seriesUsed?.["tokenCounters"]).toBeUndefined();
  });
});

describe("measured zeros", () => {
  const evidence = { counterPresence: { firstUseFamily: false, startupCounter: true } };

  it("an SGLang pod without any prompt counter reads 0 prompt tokens/s when the rule says so", () => {
    const observation = observe([pod("a", { engine: "sglang", stable: evidence })], ["promptTokens"]);
    expect(observation).toMatchObject({ promptTokensPerSecond: 0, sampledReplicas: 1, signalState: "Idle" });
  });

  it("a series the pod does report is never replaced by a zero", () => {
    // Mid first request: the TTFT histogram exists, the finish-counted token counters do not yet.
    const observation = observe([pod("a", { engine: "sglang", stable: { ...evidence, ttftSeconds: h } })]);
    expect(observation.ttftMilliseconds).toBe(90);
    expect(observation.generationTokensPerSecond).toBe(0);
  });
});

describe("observation", () => {
  it("a generation rate alone is a usable stable window", () => {
    expect(observe([pod("a", { stable: { generationTokensPerSecond: 5 } })]).signalState).toBe("Fresh");
  });

  it("a pod reported twice keeps its newest sample whichever comes first", () => {
    const observation = observe([
      pod("a", { ageSeconds: 2, runningRequests: 1, stable: { promptTokensPerSecond: 1 } }),
      pod("a", { ageSeconds: 30, runningRequests: 9, stable: { promptTokensPerSecond: 1 } }),
    ]);
    expect(observation.runningRequests).toBe(1);
  });

  it("the 64-pod cap takes the first 64 by name from any arrival order", () => {
    const pods = Array.from({ length: 70 }, (_, i) =>
      pod(`pod-${String(i).padStart(3, "0")}`, { runningRequests: 1, stable: { generationTokensPerSecond: i } }),
    );
    // A fixed shuffle: 37 is coprime with 70, so i -> 37 i mod 70 visits every pod once.
    const shuffled = pods.map((_, i) => pods[(37 * i) % 70] as PodSample);
    for (const order of [shuffled, [...pods].reverse()]) {
      expect(observe(order).generationTokensPerSecond).toBe((63 * 64) / 2);
    }
  });
});

describe("podHasField", () => {
  const window = { established: true };

  it.each([
    ["runningRequests", { runningRequests: 0 }, true],
    ["runningRequests", {}, false],
    ["promptTokens", { stable: { promptTokensPerSecond: 0 } }, true],
    ["promptTokens", {}, false],
  ] as const)("%s of %j: %s", (field, options, expected) => {
    const sample = pod("a", options);
    expect(podHasField(sample, field, "Server", sample.windows.stable)).toBe(expected);
  });

  it("a histogram with a negative count or sum is not a report", () => {
    for (const [count, sum, expected] of [
      [0, 0, true],
      [-1, 0, false],
      [1, -0.5, false],
    ] as const) {
      const rates = { ...window, ttftSeconds: { buckets: [], count, sum } };
      expect(podHasField(pod("a"), "ttft", "Server", rates)).toBe(expected);
      expect(coversPod(pod("a", { stable: rates }), ["ttft"], "Server")).toBe(expected);
    }
  });
});

describe("histograms", () => {
  it("a histogram without observations is usable; one with a negative count or sum is not", () => {
    expect(mergeHistograms([{ buckets: [], count: 0, sum: 0 }])).toEqual({ buckets: [], count: 0, sum: 0 });
    expect(mergeHistograms([{ buckets: [], count: -1, sum: 0 }])).toBeUndefined();
    expect(mergeHistograms([{ buckets: [], count: 1, sum: -1 }])).toBeUndefined();
  });

  it("a pod without observations and without buckets still withholds the bucket merge", () => {
    const merged = mergeHistograms([{ buckets: [], count: 0, sum: 0 }, h]);
    expect(merged).toEqual({ buckets: [], count: 10, sum: 0.9 });
  });

  it("merges different layouts in ascending boundary order", () => {
    const a = histogram(
      [
        [0.1, 1],
        [0.5, 2],
        [Infinity, 2],
      ],
      0.5,
    );
    const b = histogram(
      [
        [0.25, 1],
        [Infinity, 1],
      ],
      0.2,
    );
    expect(mergeHistograms([a, b])?.buckets.map((bucket) => bucket.upperBound)).toEqual([0.1, 0.25, 0.5, Infinity]);
  });

  it("no histogram has no percentile", () => {
    expect(p95Milliseconds(undefined)).toBeUndefined();
    expect(p95Bracket(undefined)).toBeUndefined();
  });

  it("p95Bracket needs buckets", () => {
    expect(p95Bracket({ buckets: [], count: 10, sum: 1 })).toBeUndefined();
  });

  it("a bucket holding exactly 95% of the observations is the percentile's bucket", () => {
    const exact = histogram(
      [
        [0.1, 95],
        [0.2, 100],
        [Infinity, 100],
      ],
      10,
    );
    expect(p95Milliseconds(exact)).toBe(100);
    expect(p95Bracket(exact)).toEqual({ lowerMilliseconds: 0, upperMilliseconds: 100, estimateMilliseconds: 100 });
  });

  it("an infinite bucket short of the count leaves the last finite boundary as the lower end", () => {
    // Extrapolated window counts need not agree: the buckets end at 90 of 100 observations.
    const short = {
      buckets: [
        { upperBound: 0.1, count: 50 },
        { upperBound: Infinity, count: 90 },
      ],
      count: 100,
      sum: 5,
    };
    expect(p95Bracket(short)).toEqual({
      lowerMilliseconds: 100,
      upperMilliseconds: Infinity,
      estimateMilliseconds: 100,
    });
  });
});

describe("explainSignalState", () => {
  const missing: RoleObservation = { readyReplicas: 2, sampledReplicas: 0, signalState: "Missing" };

  it("counts established windows among fresh pods only, a pod at the limit being fresh", () => {
    const staleEstablished = pod("old", { ageSeconds: 61, stable: { promptTokensPerSecond: 1 } });
    const freshReset = pod("new", { stable: { established: false } });
    const explain = (pods: readonly PodSample[]): string =>
      explainSignalState({ samples: { pods }, observation: missing, nowMs, staleAfterSeconds: 60 });
    expect(explain([staleEstablished, freshReset])).toMatch(/^no fresh pod has an established stable window/);
    const atLimit = pod("edge", { ageSeconds: 60, stable: {} });
    expect(explain([atLimit, freshReset])).toMatch(/^no established pod reports a prompt or generation token rate/);
  });

  it("explains Idle", () => {
    const idle: RoleObservation = { readyReplicas: 1, sampledReplicas: 1, signalState: "Idle" };
    expect(explainSignalState({ samples: { pods: [pod("a")] }, observation: idle, nowMs, staleAfterSeconds: 60 })).toBe(
      "every demand figure is a measured zero",
    );
  });
});
