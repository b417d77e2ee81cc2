/** Which readings are measurements, the prompt-demand series each engine reads, and the zeros a rule fills in. */
import { describe, expect, it } from "vitest";
import { measured, promptDemandSeries } from "../../../src/core/signals/prompt-demand.js";
import { eightOfTenUnder100ms, observeServer, pod } from "./pods.js";

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

describe("measured zeros", () => {
  const evidence = { counterPresence: { firstUseFamily: false, startupCounter: true } };

  it("an SGLang pod without any prompt counter reads 0 prompt tokens/s when the rule says so", () => {
    const observation = observeServer([pod("a", { engine: "sglang", stable: evidence })], ["promptTokens"]);
    expect(observation).toMatchObject({ promptTokensPerSecond: 0, sampledReplicas: 1, signalState: "Idle" });
  });

  it("a series the pod does report is never replaced by a zero", () => {
    // Mid first request: the TTFT histogram exists, the finish-counted token counters do not yet.
    const observation = observeServer([
      pod("a", { engine: "sglang", stable: { ...evidence, ttftSeconds: eightOfTenUnder100ms } }),
    ]);
    expect(observation.ttftMilliseconds).toBe(90);
    expect(observation.generationTokensPerSecond).toBe(0);
  });
});
