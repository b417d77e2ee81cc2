import { existsSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import {
  EngineFleet,
  formatSampleValue,
  loadTraceRows,
  parseTrace,
  renderExposition,
  sglangTtftBucketsSeconds,
  SyntheticWorkload,
  TraceWorkload,
  vllmTtftBucketsSeconds,
  type SimDeploymentSpec,
} from "../../../src/sim/engines/index.js";

function steady(
  requestsPerSecond: number,
  extra: Partial<ConstructorParameters<typeof SyntheticWorkload>[0]> = {},
): SyntheticWorkload {
  return new SyntheticWorkload({
    seed: 7,
    startSeconds: 0,
    requestsPerSecond,
    arrivals: "uniform",
    promptTokens: { kind: "fixed", tokens: 1000 },
    outputTokens: { kind: "fixed", tokens: 100 },
    ...extra,
  });
}

function fleetWith(spec: SimDeploymentSpec, seconds: number): EngineFleet {
  const fleet = new EngineFleet({ startSeconds: 0, recordEverySeconds: 1 });
  fleet.addDeployment(spec);
  fleet.advanceTo(seconds);
  return fleet;
}

const server = (
  engine: "vllm" | "sglang",
  requestsPerSecond: number,
  extra: Partial<SimDeploymentSpec> = {},
): SimDeploymentSpec => ({
  namespace: "ns",
  name: "md",
  engine,
  roles: [
    {
      name: "server",
      serving: "unified",
      replicas: 1,
      capacity: {
        prefillTokensPerSecond: 10_000,
        decodeTokensPerSecond: 1000,
        maxTokensPerSecondPerRequest: 50,
        maxRunningRequests: 32,
      },
    },
  ],
  workload: steady(requestsPerSecond),
  ...extra,
});

describe("sample value formatting (prometheus_client)", () => {
  it.each([
    [12, "12.0"],
    [0, "0.0"],
    [0.6421875, "0.6421875"],
    [412345, "412345.0"],
    [1824000, "1.824e+06"],
    [1753795326.9353, "1.7537953269353e+09"],
    [0.00001, "1e-05"],
    [2560, "2560.0"],
    [Infinity, "+Inf"],
    [NaN, "NaN"],
  ])("%d is written %s", (value, text) => {
    expect(formatSampleValue(value)).toBe(text);
  });
});

describe("load model", () => {
  it("is deterministic for a seed", () => {
    const run = () => {
      const f = fleetWith(
        server("vllm", 5, {
          workload: steady(5, {
            arrivals: "poisson",
            promptTokens: { kind: "uniform", minTokens: 100, maxTokens: 2000 },
          }),
        }),
        30,
      );
      const pod = f.listPods()[0];
      return pod ? renderExposition(pod.replica, { createdUnixSeconds: 0 }) : "";
    };
    expect(run()).toBe(run());
  });

  it.each([
    ["vllm", 2],
    ["sglang", 2],
    ["vllm", 6],
  ] as const)("%s at %d req/s below capacity serves the offered tokens without a queue", (engine, rps) => {
    const f = fleetWith(server(engine, rps), 40);
    const truth = f.truthRates("ns", "md-server-0", 20, 40);
    expect(truth?.generationTokensPerSecond).toBeCloseTo(rps * 100, -1);
    expect(truth?.promptTokensPerSecond).toBeCloseTo(rps * 1000, -2);
    expect(f.listPods()[0]?.replica.totals().waiting).toBe(0);
  });

  it("queues, slows and fills KV when offered more than the batch can hold", () => {
    // Decode-bound: prefill is fast, the decode budget is shared by the batch.
    const roles = [
      {
        name: "server",
        serving: "unified" as const,
        replicas: 1,
        capacity: {
          prefillTokensPerSecond: 100_000,
          decodeTokensPerSecond: 1000,
          maxTokensPerSecondPerRequest: 50,
          maxRunningRequests: 32,
        },
      },
    ];
    const light = fleetWith(server("vllm", 4, { roles }), 60)
      .listPods()[0]
      ?.replica.totals();
    const heavy = fleetWith(server("vllm", 30, { roles, workload: steady(30) }), 60)
      .listPods()[0]
      ?.replica.totals();
    if (!light || !heavy) throw new Error("no pods");
    expect(light.waiting).toBe(0);
    expect(heavy.waiting).toBeGreaterThan(100);
    expect(heavy.running).toBeGreaterThanOrEqual(30);
    expect(heavy.kvUsage).toBeGreaterThan(light.kvUsage * 2);
    // Decode capacity shared by a full batch: tokens come slower.
    expect(heavy.itlSumSeconds / heavy.itlCount).toBeGreaterThan(light.itlSumSeconds / light.itlCount);
    expect(heavy.ttftSumSeconds / heavy.ttftCount).toBeGreaterThan(10 * (light.ttftSumSeconds / light.ttftCount));
  });

  it.each(["vllm", "sglang"] as const)(
    "%s reports a request as waiting until its prefill starts, as the engine's scheduler does",
    (engine) => {
      // Prefill-bound: 10 prompts of 1,000 tokens a second against 2,000 prompt tokens a second, and a batch and a KV
      // pool large enough that every request is admitted on arrival.
      const roles = [
        {
          name: "server",
          serving: "unified" as const,
          replicas: 1,
          capacity: {
            prefillTokensPerSecond: 2000,
            decodeTokensPerSecond: 100_000,
            maxTokensPerSecondPerRequest: 1000,
            maxRunningRequests: 1024,
            kvCacheTokens: 10_000_000,
          },
        },
      ];
      const fleet = fleetWith(server(engine, 10, { roles, workload: steady(10) }), 30);
      const totals = fleet.listPods()[0]?.replica.totals();
      if (!totals) throw new Error("no totals");
      // About 300 arrived and 60 were prefilled: the rest wait, however many the batch admitted.
      expect(totals.waiting).toBeGreaterThan(200);
      // Running: the prompt being prefilled and the few still decoding, not the admitted backlog.
      expect(totals.running).toBeLessThan(10);
      expect(totals.running + totals.waiting).toBeGreaterThan(200);
      const pod = fleet.listPods()[0];
      if (!pod) throw new Error("no pods");
      const text = renderExposition(pod.replica, { createdUnixSeconds: 0 });
      const waitingName = engine === "vllm" ? "vllm:num_requests_waiting" : "sglang:num_queue_reqs";
      const exported = text.split("\n").find((line) => line.startsWith(`${waitingName}{`));
      expect(Number(exported?.split(" ").at(-1))).toBeGreaterThan(200);
    },
  );

  it("serves shared prefixes from the cache once warm", () => {
    const spec = server("vllm", 4, {
      workload: steady(4, { sharedPrefix: { groups: 2, prefixTokens: 512, blockTokens: 16 } }),
    });
    const f = fleetWith(spec, 30);
    const truth = f.truthRates("ns", "md-server-0", 10, 30);
    if (!truth) throw new Error("no truth");
    // Half of each 1000-token prompt is a shared prefix.
    expect(truth.prefixCacheHitTokensPerSecond / truth.promptTokensPerSecond).toBeCloseTo(0.512, 2);
    expect(truth.effectiveInputTokensPerSecond).toBeCloseTo(
      truth.promptTokensPerSecond - truth.prefixCacheHitTokensPerSecond,
      0,
    );
  });

  it("starts pods after a cold start and restarts them with counters at zero", () => {
    const f = new EngineFleet({ startSeconds: 0 });
    f.addDeployment(server("sglang", 4, { coldStartSeconds: 5 }));
    f.advanceTo(4);
    expect(f.pod("ns", "md-server-0")?.phase).toBe("Starting");
    f.advanceTo(20);
    expect(f.pod("ns", "md-server-0")?.phase).toBe("Ready");
    expect(f.pod("ns", "md-server-0")?.replica.totals().generationTokens).toBeGreaterThan(0);
    f.restartPod("ns", "md-server-0", 3);
    expect(f.pod("ns", "md-server-0")?.replica.totals().generationTokens).toBe(0);
    expect(f.pod("ns", "md-server-0")?.restarts).toBe(1);
    f.advanceTo(22);
    expect(f.pod("ns", "md-server-0")?.phase).toBe("Starting");
    f.advanceTo(30);
    expect(f.pod("ns", "md-server-0")?.replica.totals().generationTokens).toBeGreaterThan(0);
    expect(f.truthRates("ns", "md-server-0", 15, 25)).toBeUndefined();
  });

  it("hands prefilled requests from prefill to decode pods through a KV transfer", () => {
    const f = fleetWith(
      {
        namespace: "ns",
        name: "pd",
        engine: "sglang",
        kvTransferSeconds: 0.5,
        roles: [
          { name: "prefill", serving: "prefill", replicas: 1 },
          { name: "decode", serving: "decode", replicas: 2 },
        ],
        workload: steady(8),
      },
      30,
    );
    const prefill = f.truthRates("ns", "pd-prefill-0", 10, 30);
    const decode0 = f.truthRates("ns", "pd-decode-0", 10, 30);
    const decode1 = f.truthRates("ns", "pd-decode-1", 10, 30);
    if (!prefill || !decode0 || !decode1) throw new Error("no truth");
    expect(prefill.effectiveInputTokensPerSecond).toBeCloseTo(8000, -2);
    expect(decode0.effectiveInputTokensPerSecond).toBe(0);
    expect(decode0.generationTokensPerSecond + decode1.generationTokensPerSecond).toBeCloseTo(800, -2);
    // About rate x transfer time requests are moving at any moment.
    const inTransfer =
      (f.pod("ns", "pd-decode-0")?.replica.totals().decodeTransfer ?? 0) +
      (f.pod("ns", "pd-decode-1")?.replica.totals().decodeTransfer ?? 0);
    expect(inTransfer).toBeGreaterThanOrEqual(2);
    expect(inTransfer).toBeLessThanOrEqual(6);
  });
});

describe("exposition", () => {
  it("writes vLLM with engine labels per DP rank, sorted labels, _created gauges and the default buckets", () => {
    const f = fleetWith(
      server("vllm", 4, { roles: [{ name: "server", serving: "unified", replicas: 1, dataParallelSize: 2 }] }),
      10,
    );
    const text = renderExposition(f.listPods()[0]!.replica, { createdUnixSeconds: 1753795326.9353 });
    expect(text).toContain("# TYPE vllm:prompt_tokens_total counter\n");
    expect(text).toContain(
      'vllm:prompt_tokens_created{engine="1",model_name="meta-llama/Llama-3.1-8B-Instruct"} 1.7537953269353e+09\n',
    );
    expect(text).toMatch(/^vllm:num_requests_running\{engine="0",model_name="[^"]+"\} \d+\.0$/m);
    expect(text).toContain('vllm:time_to_first_token_seconds_bucket{engine="0",le="0.001",model_name=');
    const les = [...text.matchAll(/vllm:time_to_first_token_seconds_bucket\{engine="0",le="([^"]+)"/g)].map(
      (m) => m[1],
    );
    expect(les).toEqual([...vllmTtftBucketsSeconds.map((b) => formatSampleValue(b)), "+Inf"]);
    for (const line of text.split("\n").filter((l) => l && !l.startsWith("#"))) {
      const labels = [...(line.match(/\{(.*)\}/)?.[1] ?? "").matchAll(/([a-z_]+)="/g)].map((m) => m[1] ?? "");
      expect(labels, line).toEqual([...labels].sort());
    }
  });

  it("writes SGLang with rank labels on scheduler series only, no _created, _sum first, PD queue gauges", () => {
    const f = fleetWith(
      {
        namespace: "ns",
        name: "pd",
        engine: "sglang",
        roles: [
          { name: "prefill", serving: "prefill", replicas: 1, tensorParallelSize: 2 },
          { name: "decode", serving: "decode", replicas: 1, dataParallelSize: 2 },
        ],
        workload: steady(2),
      },
      10,
    );
    const prefill = renderExposition(f.pod("ns", "pd-prefill-0")!.replica, { createdUnixSeconds: 0 });
    const decode = renderExposition(f.pod("ns", "pd-decode-0")!.replica, { createdUnixSeconds: 0 });
    expect(prefill).not.toContain("_created");
    // Tensor rank 1 writes no stats: only the counter SGLang seeds at 0.
    expect(prefill).toMatch(
      /^sglang:num_running_reqs\{engine_type="prefill",model_name="[^"]+",moe_ep_rank="0",pp_rank="0",tp_rank="0"\} /m,
    );
    expect(prefill).not.toMatch(/^sglang:num_running_reqs\{[^}]*tp_rank="1"/m);
    expect(prefill).toMatch(/^sglang:prefill_effective_tokens_total\{[^}]*mode="input",[^}]*tp_rank="1"\} 0\.0$/m);
    expect(prefill).toContain("sglang:num_prefill_inflight_queue_reqs{");
    expect(prefill).toMatch(/^sglang:prefill_effective_tokens_total\{engine_type="prefill",mode="input",/m);
    expect(prefill).toMatch(
      /^sglang:prompt_tokens_total\{engine_type="prefill",is_streaming="true",model_name="[^"]+"\} /m,
    );
    expect(decode).toMatch(/^sglang:num_decode_transfer_queue_reqs\{dp_rank="1",engine_type="decode",/m);
    expect(decode).toContain("sglang:num_decode_prealloc_queue_reqs{");
    const ttft = prefill.split("\n").filter((l) => l.startsWith("sglang:time_to_first_token_seconds"));
    expect(ttft[0]).toMatch(/^sglang:time_to_first_token_seconds_sum\{/);
    const les = ttft
      .filter((l) => l.includes('is_streaming="true"') && l.includes("_bucket"))
      .map((l) => /le="([^"]+)"/.exec(l)?.[1]);
    expect(les).toEqual([...sglangTtftBucketsSeconds.map((b) => formatSampleValue(b)), "+Inf"]);
  });
});

describe("traces", () => {
  it("parses Azure 2023 rows with seven fractional digits", () => {
    const { rows } = parseTrace(
      "TIMESTAMP,ContextTokens,GeneratedTokens\n2023-11-16 18:17:03.9799600,4808,10\n2023-11-16 18:17:04.0319600,3180,8",
      "azure.csv",
    );
    expect(rows).toEqual([
      { offsetSeconds: 0, promptTokens: 4808, outputTokens: 10 },
      { offsetSeconds: 0.052, promptTokens: 3180, outputTokens: 8 },
    ]);
  });

  it("parses Mooncake rows with 512-token prefix blocks", () => {
    const { rows } = parseTrace(
      '{"timestamp": 0, "input_length": 10, "output_length": 1}\n{"timestamp": 27482, "input_length": 6955, "output_length": 52, "hash_ids": [46, 47, 48]}\n',
      "mooncake.jsonl",
    );
    expect(rows.slice(1)).toEqual([
      { offsetSeconds: 27.482, promptTokens: 6955, outputTokens: 52, prefixBlocks: [46, 47, 48], blockTokens: 512 },
    ]);
  });

  const azure = fileURLToPath(
    new URL("../../../../shared/traces/azure_llm_2023/AzureLLMInferenceTrace_code.csv", import.meta.url),
  );
  // The public traces sit in shared/ beside the project, on every developer machine and in CI.
  it("replays the Azure code trace through a fleet", async () => {
    expect(existsSync(azure), `${azure} is missing: run bash tools/fetch-traces.sh`).toBe(true);
    const rows = await loadTraceRows(azure);
    expect(rows).toHaveLength(8819);
    const f = new EngineFleet({ startSeconds: 0 });
    f.addDeployment({
      ...server("vllm", 0),
      workload: new TraceWorkload(rows, { startSeconds: 0, speedup: 1, tokenScale: 0.25 }),
    });
    f.advanceTo(120);
    expect(f.offered.get("ns/md")?.requests).toBe(rows.filter((r) => r.offsetSeconds < 120 - f.stepSeconds).length);
  });
});
