/** The series `seriesUsed` names for a role's observation, and those it leaves out. */
import { describe, expect, it } from "vitest";
import { eightOfTenUnder100ms, observeServer, pod } from "./pods.js";

describe("seriesUsed", () => {
  it("names a gauge's series only when the gauge is a measurement", () => {
    const gaugeSeries = { kvCacheUsage: "vllm:kv_cache_usage_perc", prefillBootstrapQueueRequests: "sglang:bq" };
    const stable = { generationTokensPerSecond: 1 };
    expect(
      observeServer([pod("a", { kvCacheUsage: 0.5, prefillBootstrapQueueRequests: 2, gaugeSeries, stable })])
        .seriesUsed,
    ).toMatchObject({ kvCacheUsage: { "vllm:kv_cache_usage_perc": 1 }, prefillBootstrapQueue: { "sglang:bq": 1 } });
    const unmeasured = observeServer([
      pod("a", { kvCacheUsage: Number.NaN, prefillBootstrapQueueRequests: -1, gaugeSeries, stable }),
    ]).seriesUsed;
    expect(unmeasured?.["kvCacheUsage"]).toBeUndefined();
    expect(unmeasured?.["prefillBootstrapQueue"]).toBeUndefined();
  });

  it("a measured gauge without a series name names nothing", () => {
    const observation = observeServer([
      pod("a", { prefillBootstrapQueueRequests: 2, stable: { generationTokensPerSecond: 1 } }),
    ]);
    expect(observation.seriesUsed?.["prefillBootstrapQueue"]).toBeUndefined();
  });

  it("reads the stable window: its ITL series when it has an ITL histogram, nothing when it is not established", () => {
    const withItl = pod("a", {
      stable: {
        generationTokensPerSecond: 1,
        itlSeconds: eightOfTenUnder100ms,
        itlSeries: "vllm:inter_token_latency_seconds",
      },
      panic: { established: false },
    });
    expect(observeServer([withItl]).seriesUsed?.["itl"]).toEqual({ "vllm:inter_token_latency_seconds": 1 });
    const seriesOnly = pod("a", { stable: { generationTokensPerSecond: 1, itlSeries: "vllm:itl" } });
    expect(observeServer([seriesOnly]).seriesUsed?.["itl"]).toBeUndefined();
    const reset = pod("a", {
      stable: { established: false, promptTokensPerSecond: 1, itlSeconds: eightOfTenUnder100ms, itlSeries: "vllm:itl" },
    });
    expect(observeServer([reset]).seriesUsed).toBeUndefined();
  });

  it("names absent first-use counters only when the zero was filled in, not when the pod reported it", () => {
    const filled = pod("a", {
      engine: "sglang",
      stable: { effectivePrefillTokensPerSecond: 0, counterPresence: { firstUseFamily: false, startupCounter: true } },
    });
    expect(observeServer([filled]).seriesUsed?.["tokenCounters"]).toEqual({
      "absent first-use counters (measured zero)": 1,
    });
    const reported = pod("a", { engine: "sglang", stable: { promptTokensPerSecond: 0, generationTokensPerSecond: 0 } });
    expect(observeServer([reported]).seriesUsed?.["tokenCounters"]).toBeUndefined();
    const unknown = pod("a", { stable: { promptTokensPerSecond: 3 } });
    expect(observeServer([unknown]).seriesUsed?.["tokenCounters"]).toBeUndefined();
  });
});
