/**
 * Simulator behaviours the real captures show: SGLang tokenizer series created
 * on first use, non-zero tensor ranks exposing only seeded counters, every
 * disaggregation gauge on every server; and speculative decoding, which makes
 * the same ITL target stricter on vLLM (one observation per step) than on
 * SGLang (one per token).
 */
import { describe, expect, it } from "vitest";
import { observeRole } from "../../../src/core/signals/observe.js";
import {
  EngineFleet,
  renderExposition,
  SyntheticWorkload,
  type SimDeploymentSpec,
} from "../../../src/sim/engines/index.js";

function fleetAt(spec: SimDeploymentSpec, seconds: number): EngineFleet {
  const fleet = new EngineFleet({ startSeconds: 0, recordEverySeconds: 1 });
  fleet.addDeployment(spec);
  fleet.advanceTo(seconds);
  return fleet;
}

function sglangServer(options: {
  streamingFraction: number;
  outputTokens: number;
  tensorParallelSize?: number;
  metricsForAllSchedulers?: boolean;
}): SimDeploymentSpec {
  return {
    namespace: "ns",
    name: "md",
    engine: "sglang",
    coldStartSeconds: 0,
    roles: [
      {
        name: "server",
        serving: "unified",
        replicas: 1,
        tensorParallelSize: options.tensorParallelSize ?? 1,
        metricsForAllSchedulers: options.metricsForAllSchedulers ?? false,
      },
    ],
    workload: new SyntheticWorkload({
      seed: 3,
      startSeconds: 0,
      requestsPerSecond: 2,
      arrivals: "uniform",
      promptTokens: { kind: "fixed", tokens: 200 },
      outputTokens: { kind: "fixed", tokens: options.outputTokens },
      streamingFraction: options.streamingFraction,
    }),
  };
}

function exposition(fleet: EngineFleet): string {
  const pod = fleet.listPods()[0];
  if (!pod) throw new Error("no pod");
  return renderExposition(pod.replica, { createdUnixSeconds: 0 });
}

describe("SGLang series the captures show", () => {
  it("creates tokenizer series on first use: token counters at the first finish, latency histograms at the first token", () => {
    // 500 output tokens at 50 tok/s: nothing finishes in the first 5 s, but first tokens were streamed.
    const early = exposition(fleetAt(sglangServer({ streamingFraction: 0, outputTokens: 500 }), 5));
    for (const family of [
      "prompt_tokens_total",
      "generation_tokens_total",
      "num_requests_total",
      "cached_tokens_total",
    ]) {
      expect(early).not.toContain(`sglang:${family}`);
    }
    expect(early).toMatch(/^sglang:time_to_first_token_seconds_count\{[^}]*is_streaming="false"/m);
    expect(early).toMatch(/^sglang:inter_token_latency_seconds_count\{/m);
    // The scheduler's seeded counter is there from start-up.
    expect(early).toMatch(/^sglang:prefill_effective_tokens_total\{[^}]*mode="input"/m);
    const later = exposition(fleetAt(sglangServer({ streamingFraction: 0, outputTokens: 20 }), 10));
    expect(later).toMatch(/^sglang:prompt_tokens_total\{engine_type="unified",is_streaming="false"/m);
    // No streaming request ever finished: no is_streaming="true" child.
    expect(later).not.toContain('is_streaming="true"');
  });

  it("exposes only the seeded counters on tensor ranks other than 0, unless every scheduler writes metrics", () => {
    const only0 = exposition(
      fleetAt(sglangServer({ streamingFraction: 1, outputTokens: 20, tensorParallelSize: 2 }), 10),
    );
    const rank1 = only0.split("\n").filter((l) => l.includes('tp_rank="1"'));
    expect(rank1.length).toBe(4);
    for (const line of rank1) expect(line).toMatch(/^sglang:prefill_effective_tokens_total\{.*\} 0\.0$/);
    const all = exposition(
      fleetAt(
        sglangServer({ streamingFraction: 1, outputTokens: 20, tensorParallelSize: 2, metricsForAllSchedulers: true }),
        10,
      ),
    );
    expect(all).toMatch(/^sglang:num_running_reqs\{[^}]*tp_rank="1"\}/m);
  });

  it("exposes every disaggregation gauge on a unified server, at 0", () => {
    const text = exposition(fleetAt(sglangServer({ streamingFraction: 1, outputTokens: 20 }), 5));
    for (const gauge of [
      "num_prefill_bootstrap_queue_reqs",
      "num_prefill_inflight_queue_reqs",
      "num_decode_prealloc_queue_reqs",
      "num_decode_transfer_queue_reqs",
    ]) {
      expect(text).toMatch(new RegExp(`^sglang:${gauge}\\{engine_type="unified"[^}]*\\} 0\\.0$`, "m"));
    }
  });
});

describe("SGLang scheduler gauges change only when stats are logged", () => {
  // One running request at a time, 500 output tokens at 50 tok/s (10 s each); later arrivals wait.
  const busy = (engine: "vllm" | "sglang"): SimDeploymentSpec => ({
    namespace: "ns",
    name: engine,
    engine,
    coldStartSeconds: 0,
    roles: [
      {
        name: "server",
        serving: "unified",
        replicas: 1,
        capacity: { maxRunningRequests: 1, maxTokensPerSecondPerRequest: 50 },
      },
    ],
    workload: new SyntheticWorkload({
      seed: 1,
      startSeconds: 0,
      requestsPerSecond: 2,
      arrivals: "uniform",
      promptTokens: { kind: "fixed", tokens: 100 },
      outputTokens: { kind: "fixed", tokens: 500 },
    }),
  });
  const waiting = (engine: "vllm" | "sglang", atSeconds: number): number => {
    const text = exposition(fleetAt(busy(engine), atSeconds));
    const metric = engine === "vllm" ? "vllm:num_requests_waiting" : "sglang:num_queue_reqs";
    const line = text.split("\n").find((l) => l.startsWith(`${metric}{`));
    return Number(line?.split(" ").at(-1));
  };

  it("holds the queue gauge between stats logs (40 decode steps, 0.8 s here); vLLM's is current", () => {
    // 1.2 s: a request waits, but SGLang last logged before it arrived.
    expect(waiting("vllm", 1.2)).toBe(1);
    expect(waiting("sglang", 1.2)).toBe(0);
    // Later decode logs catch up with the queue.
    expect(waiting("vllm", 2.2)).toBe(3);
    expect(waiting("sglang", 2.2)).toBe(3);
  });
});

describe("speculative decoding and ITL semantics", () => {
  // 3 tokens per step (2 accepted drafts + 1) at 50 tok/s per request: a step takes 60 ms, a token 20 ms.
  const spec = (engine: "vllm" | "sglang"): SimDeploymentSpec => ({
    namespace: "ns",
    name: engine,
    engine,
    coldStartSeconds: 0,
    roles: [
      {
        name: "server",
        serving: "unified",
        replicas: 1,
        capacity: { maxTokensPerSecondPerRequest: 50, decodeTokensPerSecond: 4000, acceptedTokensPerStep: 3 },
      },
    ],
    workload: new SyntheticWorkload({
      seed: 5,
      startSeconds: 0,
      requestsPerSecond: 2,
      arrivals: "uniform",
      promptTokens: { kind: "fixed", tokens: 200 },
      outputTokens: { kind: "fixed", tokens: 61 },
    }),
  });

  function itlP95Ms(engine: "vllm" | "sglang"): { p95: number | undefined; meanMs: number } {
    const fleet = fleetAt(spec(engine), 60);
    const pod = `${engine}-server-0`;
    const truth = fleet.truthRates("ns", pod, 20, 60);
    if (!truth) throw new Error("no truth");
    const count = truth.itlBuckets.at(-1)?.count ?? 0;
    const totals = fleet.pod("ns", pod)?.replica.totals();
    const window = { established: true, generationTokensPerSecond: truth.generationTokensPerSecond };
    const itlSeconds = { buckets: truth.itlBuckets, count, sum: 0 };
    const observation = observeRole({
      kind: "Decode",
      samples: {
        pods: [
          {
            pod,
            engine,
            lastSampleUnixSeconds: 60,
            windows: { stable: { ...window, itlSeconds }, panic: { ...window, itlSeconds } },
          },
        ],
      },
      readyReplicas: 1,
      nowMs: 60_000,
      staleAfterSeconds: 60,
      reads: [],
    });
    return {
      p95: observation.itlMilliseconds,
      meanMs: ((totals?.itlSumSeconds ?? 0) / (totals?.itlCount ?? 1)) * 1000,
    };
  }

  it("records one 60 ms step on vLLM and three 20 ms tokens on SGLang: a 50 ms target is met only on SGLang", () => {
    const vllm = itlP95Ms("vllm");
    const sglang = itlP95Ms("sglang");
    expect(vllm.meanMs).toBeCloseTo(60, 6);
    expect(sglang.meanMs).toBeCloseTo(20, 6);
    // vLLM buckets …0.05, 0.075…: the p95 boundary is 75 ms, over a 50 ms target; SGLang …0.02…: 20 ms.
    expect(vllm.p95).toBe(75);
    expect(sglang.p95).toBe(20);
  });
});
