import { describe, expect, it } from "vitest";
import type { RoleKind } from "../../../src/core/api/model-deployment.js";
import { holdsObservation, observeRole, staleAfterSeconds } from "../../../src/core/signals/observe.js";
import type { PodField } from "../../../src/core/signals/pod-fields.js";
import type {
  PodSample,
  PodWindowRates,
  RoleObservation,
  RoleSamples,
  SignalFamily,
} from "../../../src/core/signals/types.js";
import { histogram, nowMs, pod } from "./pods.js";

function observe(
  pods: readonly PodSample[],
  options: { kind?: RoleKind; readyReplicas?: number; samples?: RoleSamples; reads?: readonly PodField[] } = {},
): RoleObservation {
  return observeRole({
    kind: options.kind ?? "Server",
    samples: options.samples ?? { pods },
    readyReplicas: options.readyReplicas ?? pods.length,
    nowMs,
    staleAfterSeconds: 60,
    // Coverage by established windows alone unless a test names the fields read (see "coverage by fields read").
    reads: options.reads ?? [],
  });
}

describe("staleAfterSeconds", () => {
  it.each([
    { intervalSeconds: 5, want: 60 },
    { intervalSeconds: 15, want: 60 },
    { intervalSeconds: 20, want: 60 },
    { intervalSeconds: 60, want: 180 },
    { intervalSeconds: 300, want: 900 },
  ])("interval $intervalSeconds s → $want s", ({ intervalSeconds, want }) => {
    expect(staleAfterSeconds(intervalSeconds)).toBe(want);
  });
});

describe("prompt demand: vLLM", () => {
  it.each([
    {
      name: "prompt minus prefix-cache hits",
      pods: [pod("p0", { stable: { promptTokensPerSecond: 3000, prefixCacheHitTokensPerSecond: 1800 } })],
      want: 1200,
    },
    {
      name: "no hit counter: the raw prompt rate",
      pods: [pod("p0", { stable: { promptTokensPerSecond: 3000 } })],
      want: 3000,
    },
    {
      name: "clamped at zero per pod before summing (not 1000 − 200 = 800)",
      pods: [
        pod("p0", { stable: { promptTokensPerSecond: 100, prefixCacheHitTokensPerSecond: 300 } }),
        pod("p1", { stable: { promptTokensPerSecond: 1000, prefixCacheHitTokensPerSecond: 0 } }),
      ],
      want: 1000,
    },
    {
      name: "data-parallel engines arrive summed per pod; pods add up",
      pods: [
        pod("dp-pod-a", { stable: { promptTokensPerSecond: 4000, prefixCacheHitTokensPerSecond: 1000 } }),
        pod("dp-pod-b", { stable: { promptTokensPerSecond: 2000, prefixCacheHitTokensPerSecond: 500 } }),
      ],
      want: 4500,
    },
    {
      name: "SGLang-only counters are ignored for a vLLM pod",
      pods: [
        pod("p0", {
          stable: { promptTokensPerSecond: 3000, effectivePrefillTokensPerSecond: 10, deviceHitTokensPerSecond: 2000 },
        }),
      ],
      want: 3000,
    },
  ])("$name", ({ pods, want }) => {
    expect(observe(pods).promptTokensPerSecond).toBe(want);
  });
});

describe("prompt demand: SGLang", () => {
  const sglang = (name: string, stable: Partial<PodWindowRates>): PodSample => pod(name, { engine: "sglang", stable });
  it.each([
    {
      name: "prefill_effective_tokens_total{mode=input} when present, whatever the hit counters say",
      pods: [
        sglang("s0", {
          promptTokensPerSecond: 5000,
          effectivePrefillTokensPerSecond: 1500,
          deviceHitTokensPerSecond: 100,
        }),
      ],
      want: 1500,
    },
    {
      name: "the effective counter alone, without a prompt rate",
      pods: [sglang("s0", { effectivePrefillTokensPerSecond: 700 })],
      want: 700,
    },
    {
      name: "no effective counter: prompt minus device, host and storage hits",
      pods: [
        sglang("s0", {
          promptTokensPerSecond: 5000,
          deviceHitTokensPerSecond: 2000,
          hostHitTokensPerSecond: 500,
          storageHitTokensPerSecond: 250,
        }),
      ],
      want: 2250,
    },
    {
      name: "only the device tier reported",
      pods: [sglang("s0", { promptTokensPerSecond: 5000, deviceHitTokensPerSecond: 2000 })],
      want: 3000,
    },
    {
      name: "no cache accounting: the raw prompt rate",
      pods: [sglang("s0", { promptTokensPerSecond: 5000 })],
      want: 5000,
    },
    {
      name: "clamped at zero per pod",
      pods: [
        sglang("s0", { promptTokensPerSecond: 100, deviceHitTokensPerSecond: 900 }),
        sglang("s1", { promptTokensPerSecond: 300 }),
      ],
      want: 300,
    },
    {
      name: "pods of mixed counter versions each use their best source",
      pods: [
        sglang("new", { promptTokensPerSecond: 5000, effectivePrefillTokensPerSecond: 1000 }),
        sglang("old", { promptTokensPerSecond: 800, deviceHitTokensPerSecond: 300 }),
      ],
      want: 1500,
    },
    {
      name: "a vLLM hit counter is ignored for an SGLang pod",
      pods: [sglang("s0", { promptTokensPerSecond: 5000, prefixCacheHitTokensPerSecond: 4000 })],
      want: 5000,
    },
  ])("$name", ({ pods, want }) => {
    expect(observe(pods).promptTokensPerSecond).toBe(want);
  });
});

describe("requests", () => {
  it.each([
    {
      name: "vLLM server: running and waiting summed over pods",
      kind: "Server" as const,
      engine: "vllm" as const,
      want: { running: 7, waiting: 3 },
    },
    {
      name: "SGLang prefill: the transfer queue is not waiting",
      kind: "Prefill" as const,
      engine: "sglang" as const,
      want: { running: 7, waiting: 3 },
    },
    {
      name: "SGLang decode: waiting includes the KV transfer queue",
      kind: "Decode" as const,
      engine: "sglang" as const,
      want: { running: 7, waiting: 3 + 6 },
    },
  ])("$name", ({ kind, engine, want }) => {
    const pods = [
      pod("a", {
        engine,
        runningRequests: 4,
        waitingRequests: 1,
        decodeTransferQueueRequests: 2,
        stable: { generationTokensPerSecond: 1 },
      }),
      pod("b", {
        engine,
        runningRequests: 3,
        waitingRequests: 2,
        decodeTransferQueueRequests: 4,
        stable: { generationTokensPerSecond: 1 },
      }),
    ];
    const observation = observe(pods, { kind });
    expect([observation.runningRequests, observation.waitingRequests]).toEqual([want.running, want.waiting]);
  });

  it("a decode pod with only the transfer queue reports it as waiting", () => {
    const observation = observe(
      [pod("d", { engine: "sglang", decodeTransferQueueRequests: 5, stable: { generationTokensPerSecond: 9 } })],
      { kind: "Decode" },
    );
    expect(observation.waitingRequests).toBe(5);
  });

  it("keeps a measured zero and omits what no pod reported", () => {
    const observation = observe([
      pod("a", { runningRequests: 0, stable: { promptTokensPerSecond: 0, generationTokensPerSecond: 0 } }),
    ]);
    expect(observation.runningRequests).toBe(0);
    expect(observation).not.toHaveProperty("waitingRequests");
    expect(observation).not.toHaveProperty("kvCacheUsage");
    expect(observation).not.toHaveProperty("ttftMilliseconds");
  });

  it("sums the pods that report a gauge when others do not", () => {
    const observation = observe([
      pod("a", { runningRequests: 4, stable: { generationTokensPerSecond: 1 } }),
      pod("b", { stable: { generationTokensPerSecond: 1 } }),
    ]);
    expect(observation.runningRequests).toBe(4);
  });

  it.each([Number.NaN, Number.POSITIVE_INFINITY, -1])(
    "treats a gauge of %s as not reported, never as zero or a value",
    (bad) => {
      const observation = observe([
        pod("a", {
          runningRequests: bad,
          kvCacheUsage: bad,
          stable: { generationTokensPerSecond: bad, promptTokensPerSecond: 10 },
        }),
      ]);
      expect(observation).not.toHaveProperty("runningRequests");
      expect(observation).not.toHaveProperty("kvCacheUsage");
      expect(observation).not.toHaveProperty("generationTokensPerSecond");
      expect(observation.promptTokensPerSecond).toBe(10);
    },
  );
});

describe("kvCacheUsage", () => {
  it("is the mean of the reported fractions", () => {
    const pods = [pod("a", { kvCacheUsage: 0.2 }), pod("b", { kvCacheUsage: 0.6 }), pod("c")];
    expect(observe(pods).kvCacheUsage).toBeCloseTo(0.4, 12);
  });
});

describe("windows", () => {
  it("reports both windows separately", () => {
    const observation = observe([
      pod("a", {
        stable: { promptTokensPerSecond: 1000, generationTokensPerSecond: 200 },
        panic: { promptTokensPerSecond: 3000, generationTokensPerSecond: 600 },
      }),
    ]);
    expect(observation).toMatchObject({
      promptTokensPerSecond: 1000,
      generationTokensPerSecond: 200,
      panicPromptTokensPerSecond: 3000,
      panicGenerationTokensPerSecond: 600,
    });
  });

  it("excludes a pod whose counters reset until it has a new baseline, and counts it out of coverage", () => {
    const observation = observe([
      pod("a", { runningRequests: 2, stable: { promptTokensPerSecond: 1000 } }),
      pod("reset", {
        runningRequests: 3,
        stable: { established: false, promptTokensPerSecond: 99999 },
        panic: { established: false, promptTokensPerSecond: 99999 },
      }),
    ]);
    expect(observation.promptTokensPerSecond).toBe(1000);
    expect(observation.panicPromptTokensPerSecond).toBe(1000);
    expect(observation.runningRequests).toBe(5); // gauges need no baseline
    expect(observation.sampledReplicas).toBe(1);
    expect(observation.readyReplicas).toBe(2);
    expect(observation.signalState).toBe("Fresh");
  });

  it("a reset only inside the stable window still gives panic rates", () => {
    const observation = observe([
      pod("a", { stable: { established: false, promptTokensPerSecond: 5 }, panic: { promptTokensPerSecond: 800 } }),
    ]);
    expect(observation).not.toHaveProperty("promptTokensPerSecond");
    expect(observation.panicPromptTokensPerSecond).toBe(800);
    expect(observation.signalState).toBe("Missing");
  });

  it("no established stable window anywhere is Missing, and the gauges still show", () => {
    const observation = observe([
      pod("new", {
        runningRequests: 6,
        waitingRequests: 1,
        stable: { established: false },
        panic: { established: false },
      }),
    ]);
    expect(observation).toEqual({
      readyReplicas: 1,
      sampledReplicas: 0,
      signalState: "Missing",
      runningRequests: 6,
      waitingRequests: 1,
    });
  });

  it("an established window with no token counter at all is Missing", () => {
    expect(observe([pod("a", { runningRequests: 1 })]).signalState).toBe("Missing");
  });
});

describe("signal state", () => {
  it.each([
    {
      name: "query failed: Missing with nothing reported",
      samples: {
        pods: [pod("a", { runningRequests: 3, stable: { promptTokensPerSecond: 10 } })],
        queryFailed: { reason: "timeout" },
      },
      want: { readyReplicas: 2, sampledReplicas: 0, signalState: "Missing" },
    },
    {
      name: "no pod answered: Missing",
      samples: { pods: [] },
      want: { readyReplicas: 2, sampledReplicas: 0, signalState: "Missing" },
    },
    {
      name: "every pod older than the limit: Stale with nothing reported",
      samples: {
        pods: [
          pod("a", { ageSeconds: 61, runningRequests: 3, stable: { promptTokensPerSecond: 10 } }),
          pod("b", { ageSeconds: 600 }),
        ],
      },
      want: { readyReplicas: 2, sampledReplicas: 0, signalState: "Stale" },
    },
  ])("$name", ({ samples, want }) => {
    expect(observeRole({ kind: "Server", samples, readyReplicas: 2, nowMs, staleAfterSeconds: 60, reads: [] })).toEqual(
      want,
    );
  });

  it.each([
    {
      name: "all rates and requests a measured zero: Idle",
      running: 0,
      waiting: 0,
      prompt: 0,
      generation: 0,
      want: "Idle",
    },
    { name: "one waiting request: Fresh", running: 0, waiting: 1, prompt: 0, generation: 0, want: "Fresh" },
    { name: "generation under way: Fresh", running: 0, waiting: 0, prompt: 0, generation: 5, want: "Fresh" },
    {
      name: "zero rates and no request gauges: Idle",
      running: undefined,
      waiting: undefined,
      prompt: 0,
      generation: 0,
      want: "Idle",
    },
  ])("$name", ({ running, waiting, prompt, generation, want }) => {
    const gauges = {
      ...(running === undefined ? {} : { runningRequests: running }),
      ...(waiting === undefined ? {} : { waitingRequests: waiting }),
    };
    expect(
      observe([
        pod("a", { ...gauges, stable: { promptTokensPerSecond: prompt, generationTokensPerSecond: generation } }),
      ]).signalState,
    ).toBe(want);
  });

  it("mixed stale: stale pods drop out of every figure and out of coverage", () => {
    const observation = observe(
      [
        pod("fresh", { runningRequests: 2, kvCacheUsage: 0.5, stable: { promptTokensPerSecond: 100 } }),
        pod("stale", {
          ageSeconds: 120,
          runningRequests: 50,
          kvCacheUsage: 1,
          stable: { promptTokensPerSecond: 9000 },
        }),
      ],
      { readyReplicas: 2 },
    );
    expect(observation).toMatchObject({
      signalState: "Fresh",
      sampledReplicas: 1,
      readyReplicas: 2,
      runningRequests: 2,
      kvCacheUsage: 0.5,
      promptTokensPerSecond: 100,
    });
  });

  it("a pod exactly at the limit is fresh; one second older is stale", () => {
    expect(observe([pod("a", { ageSeconds: 60, stable: { promptTokensPerSecond: 1 } })]).signalState).toBe("Fresh");
    expect(observe([pod("a", { ageSeconds: 61, stable: { promptTokensPerSecond: 1 } })]).signalState).toBe("Stale");
  });

  it("a missing reading is never turned into a zero", () => {
    const missing = observe([pod("a", { stable: { established: false } })]);
    const zero = observe([pod("a", { stable: { promptTokensPerSecond: 0, generationTokensPerSecond: 0 } })]);
    expect(missing.signalState).toBe("Missing");
    expect(missing).not.toHaveProperty("promptTokensPerSecond");
    expect(zero.signalState).toBe("Idle");
    expect(zero.promptTokensPerSecond).toBe(0);
  });
});

describe("coverage", () => {
  const many = (count: number): PodSample[] =>
    Array.from({ length: count }, (_, i) =>
      pod(`pod-${String(i).padStart(3, "0")}`, { runningRequests: 1, stable: { generationTokensPerSecond: i } }),
    );

  it("samples at most 64 pods, the first by name, so coverage stays incomplete above the cap", () => {
    const observation = observe(many(70), { readyReplicas: 70 });
    expect(observation.sampledReplicas).toBe(64);
    expect(observation.readyReplicas).toBe(70);
    expect(observation.runningRequests).toBe(64);
    expect(observation.generationTokensPerSecond).toBe((63 * 64) / 2); // 0 + 1 + … + 63
  });

  it("the cap does not depend on the order pods arrive in", () => {
    const pods = many(70);
    expect(observe([...pods].reverse(), { readyReplicas: 70 })).toEqual(observe(pods, { readyReplicas: 70 }));
  });

  it("the cap applies after stale pods are dropped", () => {
    const stale = Array.from({ length: 10 }, (_, i) => pod(`aaa-${i}`, { ageSeconds: 300, runningRequests: 100 }));
    const observation = observe([...stale, ...many(64)], { readyReplicas: 64 });
    expect(observation.sampledReplicas).toBe(64);
    expect(observation.runningRequests).toBe(64);
  });

  it("exactly 64 pods are complete coverage", () => {
    expect(observe(many(64), { readyReplicas: 64 }).sampledReplicas).toBe(64);
  });

  it("a pod reported twice counts once, with its newest sample", () => {
    const observation = observe([
      pod("a", { ageSeconds: 30, runningRequests: 9 }),
      pod("a", { ageSeconds: 2, runningRequests: 1, stable: { promptTokensPerSecond: 1 } }),
    ]);
    expect(observation.runningRequests).toBe(1);
    expect(observation.sampledReplicas).toBe(1);
  });
});

describe("latency", () => {
  const fast = histogram(
    [
      [0.1, 100],
      [0.5, 100],
      [Infinity, 100],
    ],
    5,
  );
  const slow = histogram(
    [
      [0.1, 0],
      [0.5, 100],
      [Infinity, 100],
    ],
    30,
  );

  it.each(["vllm", "sglang"] as const)("%s: p95 bucket boundary over the pods, in milliseconds", (engine) => {
    const observation = observe(
      [
        pod("a", {
          engine,
          stable: {
            promptTokensPerSecond: 1,
            ttftSeconds: fast,
            itlSeconds: histogram(
              [
                [0.02, 1000],
                [Infinity, 1000],
              ],
              10,
            ),
          },
        }),
        pod("b", {
          engine,
          stable: {
            promptTokensPerSecond: 1,
            ttftSeconds: slow,
            itlSeconds: histogram(
              [
                [0.02, 900],
                [0.05, 1000],
                [Infinity, 1000],
              ],
              20,
            ),
          },
        }),
      ],
      { kind: "Server" },
    );
    expect(observation.ttftMilliseconds).toBe(500);
    // 95% of 2000 = 1900 reached at 0.02 s.
    expect(observation.itlMilliseconds).toBe(20);
  });

  it("reads the panic window first", () => {
    const observation = observe([
      pod("a", {
        stable: { promptTokensPerSecond: 1, ttftSeconds: fast },
        panic: { promptTokensPerSecond: 1, ttftSeconds: slow },
      }),
    ]);
    expect(observation.ttftMilliseconds).toBe(500);
  });

  it("falls back to the stable window when the panic window saw no request", () => {
    const empty = histogram(
      [
        [0.1, 0],
        [0.5, 0],
        [Infinity, 0],
      ],
      0,
    );
    const observation = observe([
      pod("a", {
        stable: { promptTokensPerSecond: 1, ttftSeconds: slow },
        panic: { promptTokensPerSecond: 0, ttftSeconds: empty },
      }),
    ]);
    expect(observation.ttftMilliseconds).toBe(500);
  });

  it("says where a window holds an observation from the pods' counts alone, as the roles plan asks it", () => {
    // The roles plan's pods carry counts and sums without buckets: the counts decide which window latency reads.
    const counted = { buckets: [], count: 3, sum: 0.6 };
    const none = { buckets: [], count: 0, sum: 0 };
    const quiet = [
      pod("a", { stable: { promptTokensPerSecond: 1, ttftSeconds: counted }, panic: { ttftSeconds: none } }),
    ];
    expect(holdsObservation(quiet, "panic", "ttftSeconds")).toBe(false);
    expect(holdsObservation(quiet, "stable", "ttftSeconds")).toBe(true);
    expect(holdsObservation(quiet, "stable", "itlSeconds")).toBe(false);
    // A pod whose window is not established is not read, whatever it counted.
    const reset = [pod("b", { stable: { established: false, ttftSeconds: counted } })];
    expect(holdsObservation(reset, "stable", "ttftSeconds")).toBe(false);
  });

  it("is absent when no window saw a request", () => {
    const empty = histogram(
      [
        [0.1, 0],
        [Infinity, 0],
      ],
      0,
    );
    const observation = observe([
      pod("a", {
        stable: { promptTokensPerSecond: 0, generationTokensPerSecond: 0, ttftSeconds: empty, itlSeconds: empty },
      }),
    ]);
    expect(observation).not.toHaveProperty("ttftMilliseconds");
    expect(observation).not.toHaveProperty("itlMilliseconds");
    expect(observation.signalState).toBe("Idle");
  });

  it("ignores the histogram of a pod whose window is not established", () => {
    const observation = observe([
      pod("a", { stable: { promptTokensPerSecond: 1, ttftSeconds: fast } }),
      pod("reset", {
        stable: { established: false, ttftSeconds: slow },
        panic: { established: false, ttftSeconds: slow },
      }),
    ]);
    expect(observation.ttftMilliseconds).toBe(100);
  });

  it("uses the mean when the percentile is in +Inf", () => {
    const tail = histogram(
      [
        [0.1, 10],
        [0.2, 80],
        [Infinity, 100],
      ],
      50,
    );
    expect(observe([pod("a", { stable: { promptTokensPerSecond: 1, ttftSeconds: tail } })]).ttftMilliseconds).toBe(500);
  });
});

describe("coverage by fields read", () => {
  const h = histogram(
    [
      [0.1, 8],
      [Infinity, 10],
    ],
    0.9,
  );
  const complete = (name: string, generation = 100): PodSample =>
    pod(name, {
      runningRequests: 2,
      waitingRequests: 1,
      stable: { promptTokensPerSecond: 300, generationTokensPerSecond: generation, ttftSeconds: h, itlSeconds: h },
    });
  const serverReads: readonly PodField[] = ["promptTokens", "generationTokens", "ttft", "itl"];

  it("counts a pod only when it reports every field the algorithm reads", () => {
    const noItl = pod("b", { stable: { promptTokensPerSecond: 300, generationTokensPerSecond: 100, ttftSeconds: h } });
    const observation = observe([complete("a"), noItl], { reads: serverReads });
    expect(observation.sampledReplicas).toBe(1);
    // What the incomplete pod does report still adds up: partial readings may justify growth.
    expect(observation.generationTokensPerSecond).toBe(200);
    expect(observation.itlMilliseconds).toBe(90);
  });

  it("a field the algorithm does not read does not cost coverage", () => {
    const noLatency = pod("b", { stable: { promptTokensPerSecond: 300, generationTokensPerSecond: 100 } });
    expect(observe([complete("a"), noLatency], { reads: ["generationTokens"] }).sampledReplicas).toBe(2);
    expect(observe([complete("a"), noLatency], { reads: serverReads }).sampledReplicas).toBe(1);
  });

  it("a measured zero covers; NaN, Inf and negatives do not", () => {
    const zero = complete("a", 0);
    expect(observe([zero], { reads: serverReads }).sampledReplicas).toBe(1);
    for (const bad of [NaN, Infinity, -1]) {
      expect(observe([complete("a", bad)], { reads: serverReads }).sampledReplicas).toBe(0);
    }
  });

  it("gauge fields: QueueDepth reads running and waiting; a decode role's transfer queue stands for waiting", () => {
    const noWaiting = pod("b", { runningRequests: 2, stable: { generationTokensPerSecond: 1 } });
    const reads: readonly PodField[] = ["runningRequests", "waitingRequests"];
    expect(observe([complete("a"), noWaiting], { reads }).sampledReplicas).toBe(1);
    const transfer = pod("c", { runningRequests: 2, decodeTransferQueueRequests: 3, stable: {} });
    expect(observe([transfer], { reads, kind: "Decode" }).sampledReplicas).toBe(1);
    expect(observe([transfer], { reads, kind: "Server" }).sampledReplicas).toBe(0);
  });

  it("a latency family the source could not read leaves throughput known and coverage empty", () => {
    // What the source hands over when the TTFT query failed: no pod carries a TTFT histogram.
    const noTtft = (name: string): PodSample =>
      pod(name, { stable: { promptTokensPerSecond: 300, generationTokensPerSecond: 100, itlSeconds: h } });
    const pods = [noTtft("a"), noTtft("b")];
    const observation = observe(pods, {
      reads: serverReads,
      samples: { pods, unknownFamilies: { ttft: "ttft query failed: timed out" } },
    });
    expect(observation).toMatchObject({
      signalState: "Fresh",
      sampledReplicas: 0,
      promptTokensPerSecond: 600,
      generationTokensPerSecond: 200,
      itlMilliseconds: 90,
    });
    expect(observation.ttftMilliseconds).toBeUndefined();
  });

  it("an absent series is unknown until the engine-signals rule calls it a measured zero", () => {
    // An SGLang pod before its first finished request: no tokenizer counters or histograms yet.
    const fresh = pod("a", { engine: "sglang", runningRequests: 0, waitingRequests: 0, stable: {} });
    const observation = observe([fresh], { reads: serverReads });
    expect(observation.sampledReplicas).toBe(0);
    expect(observation.signalState).toBe("Missing");
  });

  it("absent SGLang first-use series the absent-counter rule calls zeros cover, unless their family is unknown", () => {
    // Fresh, established, the seeded start-up counter present and no tokenizer series: nothing finished yet.
    const idle = pod("a", {
      engine: "sglang",
      runningRequests: 0,
      waitingRequests: 0,
      stable: {
        effectivePrefillTokensPerSecond: 0,
        counterPresence: { firstUseFamily: false, startupCounter: true },
      },
    });
    const covered = observe([idle], { reads: serverReads });
    expect(covered).toMatchObject({ signalState: "Idle", sampledReplicas: 1, generationTokensPerSecond: 0 });
    expect(covered.ttftMilliseconds).toBeUndefined();
    expect(covered.itlMilliseconds).toBeUndefined();
    const withUnknown = (family: SignalFamily): RoleObservation =>
      observe([idle], {
        reads: serverReads,
        samples: { pods: [idle], unknownFamilies: { [family]: `${family} query failed: timed out` } },
      });
    expect(withUnknown("ttft").sampledReplicas).toBe(0);
    expect(withUnknown("itl").sampledReplicas).toBe(0);
    expect(withUnknown("counters").sampledReplicas).toBe(0);
    expect(withUnknown("counters").generationTokensPerSecond).toBeUndefined();
    // One family series present and another absent is a partial scrape: unknown, not zero.
    const partial = pod("b", {
      engine: "sglang",
      stable: { promptTokensPerSecond: 5, counterPresence: { firstUseFamily: true, startupCounter: true } },
    });
    expect(observe([partial], { reads: serverReads }).sampledReplicas).toBe(0);
    // vLLM creates its counters at start-up: an absent one was not scraped.
    const vllm = pod("c", { stable: { counterPresence: { firstUseFamily: false, startupCounter: true } } });
    expect(observe([vllm], { reads: serverReads }).sampledReplicas).toBe(0);
  });

  it("an unestablished window covers nothing whatever it reports", () => {
    const reset = pod("a", {
      stable: { established: false, promptTokensPerSecond: 1, generationTokensPerSecond: 1, ttftSeconds: h },
    });
    expect(observe([reset], { reads: [] }).sampledReplicas).toBe(0);
  });
});

describe("observation: a generation-only window, one sample per pod, the 64-pod cap", () => {
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
