/**
 * The quality simulator's observation builder against the real Prometheus
 * source on the same series: a real Prometheus scrapes a simulated vLLM role;
 * the source's four queries give one observation, the builder (fed the raw
 * samples that Prometheus holds for the same pods) gives the other. Gauges,
 * coverage and the p95 buckets (TTFT, ITL, queue time) must agree exactly; token rates within 2 %
 * (measured: 1e-8) once the series are older than the window. Prometheus'
 * extrapolation differs only where a series starts inside the window
 * (docs/quality.md, The scaler in the loop).
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { PrometheusClient } from "../../src/adapters/prometheus/client.js";
import { defaultPrometheusSignalConfig } from "../../src/adapters/prometheus/config.js";
import { PrometheusSignalSource } from "../../src/adapters/prometheus/source.js";
import { observeRole, staleAfterSeconds } from "../../src/core/signals/observe.js";
import { EngineFleet, FleetServer, SyntheticWorkload } from "../../src/sim/engines/index.js";
import { buildObservation, ScrapeHistory, type Scrape } from "../../src/sim/quality/observations.js";
import { podFields } from "../../src/core/signals/pod-fields.js";
import { PrometheusHarness } from "../../harness/prometheus.js";

const namespace = "serving";
const stableWindowSeconds = 10;
const panicWindowSeconds = 3;

let fleet: EngineFleet;
let server: FleetServer;
let prometheus: PrometheusHarness;

interface MatrixSeries {
  readonly metric: Record<string, string>;
  readonly values: [number, string][];
}

/** Raw samples Prometheus holds for the role's pods in (at − window, at], by pod then scrape time. */
async function rawScrapes(atUnixMs: number, windowSeconds: number): Promise<Map<string, ScrapeHistory>> {
  const names = [
    "prompt_tokens_total",
    "generation_tokens_total",
    "prefix_cache_hits_total",
    "num_requests_running",
    "num_requests_waiting",
    "kv_cache_usage_perc",
    "time_to_first_token_seconds_bucket",
    "time_to_first_token_seconds_count",
    "time_to_first_token_seconds_sum",
    "inter_token_latency_seconds_bucket",
    "inter_token_latency_seconds_count",
    "inter_token_latency_seconds_sum",
    "request_queue_time_seconds_bucket",
    "request_queue_time_seconds_count",
    "request_queue_time_seconds_sum",
  ];
  const expr = `{__name__=~"vllm:(${names.join("|")})", namespace="${namespace}"}[${windowSeconds}s]`;
  const url = `${prometheus.url}/api/v1/query?query=${encodeURIComponent(expr)}&time=${atUnixMs / 1000}`;
  const body = (await (await fetch(url)).json()) as { data: { result: MatrixSeries[] } };
  type Acc = {
    values: Map<string, number>;
    ttft: Map<number, number>;
    itl: Map<number, number>;
    queue: Map<number, number>;
  };
  const byPod = new Map<string, Map<number, Acc>>();
  for (const series of body.data.result) {
    const pod = series.metric["pod"] as string;
    const name = (series.metric["__name__"] as string).slice("vllm:".length);
    let times = byPod.get(pod);
    if (times === undefined) byPod.set(pod, (times = new Map()));
    for (const [t, v] of series.values) {
      let acc = times.get(t);
      if (acc === undefined)
        times.set(t, (acc = { values: new Map(), ttft: new Map(), itl: new Map(), queue: new Map() }));
      const value = Number(v);
      if (name.endsWith("_bucket")) {
        const le = series.metric["le"] === "+Inf" ? Infinity : Number(series.metric["le"]);
        const into = name.startsWith("time_to_first")
          ? acc.ttft
          : name.startsWith("request_queue")
            ? acc.queue
            : acc.itl;
        into.set(le, (into.get(le) ?? 0) + value);
      } else acc.values.set(name, (acc.values.get(name) ?? 0) + value);
    }
  }
  const out = new Map<string, ScrapeHistory>();
  for (const [pod, times] of byPod) {
    const history = new ScrapeHistory(3600);
    for (const [t, acc] of [...times.entries()].sort((a, b) => a[0] - b[0])) {
      const get = (name: string): number => acc.values.get(name) ?? 0;
      const buckets = (m: Map<number, number>) =>
        [...m.entries()].sort((a, b) => a[0] - b[0]).map(([upperBound, count]) => ({ upperBound, count }));
      const scrape: Scrape = {
        atSeconds: t,
        promptTokens: get("prompt_tokens_total"),
        generationTokens: get("generation_tokens_total"),
        prefixCacheHits: get("prefix_cache_hits_total"),
        running: get("num_requests_running"),
        waiting: get("num_requests_waiting"),
        kvUsage: get("kv_cache_usage_perc"),
        ttft: buckets(acc.ttft),
        ttftCount: get("time_to_first_token_seconds_count"),
        ttftSum: get("time_to_first_token_seconds_sum"),
        itl: buckets(acc.itl),
        itlCount: get("inter_token_latency_seconds_count"),
        itlSum: get("inter_token_latency_seconds_sum"),
        queueTime: buckets(acc.queue),
        queueTimeCount: get("request_queue_time_seconds_count"),
        queueTimeSum: get("request_queue_time_seconds_sum"),
      };
      history.add(scrape);
    }
    out.set(pod, history);
  }
  return out;
}

beforeAll(async () => {
  const startSeconds = Date.now() / 1000;
  fleet = new EngineFleet({ startSeconds, recordEverySeconds: 0.25, recordHistorySeconds: 60 });
  fleet.addDeployment({
    namespace,
    name: "chat",
    engine: "vllm",
    roles: [{ name: "server", serving: "unified", replicas: 2, capacity: { decodeTokensPerSecond: 400 } }],
    workload: new SyntheticWorkload({
      seed: 1,
      startSeconds,
      requestsPerSecond: 10,
      arrivals: "uniform",
      promptTokens: { kind: "fixed", tokens: 512 },
      outputTokens: { kind: "uniform", minTokens: 32, maxTokens: 64 },
    }),
  });
  server = new FleetServer({ fleet });
  await server.start();
  prometheus = await PrometheusHarness.start({ scrapeIntervalSeconds: 1, targets: server.fileSdGroups() });
  await prometheus.waitForHealthyTargets(fleet.listPods().length);
  // Series older than the stable window: where a series starts inside the window, Prometheus
  // extrapolates less than the builder, which is the stated difference and not what is tested here.
  const deadline = Date.now() + 90_000;
  while (Date.now() < deadline) {
    const histories = await rawScrapes(Date.now(), 2 * stableWindowSeconds);
    const old = [...histories.values()].filter(
      (h) => h.within(Date.now() / 1000, 2 * stableWindowSeconds).length >= 2 * stableWindowSeconds - 2,
    );
    if (old.length === 2) break;
    await new Promise((r) => setTimeout(r, 500));
  }
}, 120_000);

afterAll(async () => {
  await prometheus?.stop();
  await server?.stop();
});

describe("quality observation builder vs the Prometheus source", () => {
  it("agrees on gauges, coverage and the p95 bucket, and on rates within the extrapolation", async () => {
    const at = Date.now();
    const source = new PrometheusSignalSource(
      new PrometheusClient({ endpoint: prometheus.url, timeoutMs: 5_000 }),
      defaultPrometheusSignalConfig,
    );
    const pass = await source.sample(
      [
        {
          key: `${namespace}/chat`,
          namespace,
          deployment: "chat",
          roles: ["server"],
          stableWindowSeconds,
          panicWindowSeconds,
          intervalSeconds: 1,
        },
      ],
      at,
    );
    // Both builders judge coverage by every field a pod can carry, the strictest coverage there is.
    const reads = podFields;
    const samples = pass.scalers.get(`${namespace}/chat`)?.get("server");
    if (samples === undefined) throw new Error("no samples for chat/server");
    const fromSource = observeRole({
      kind: "Server",
      samples,
      readyReplicas: 2,
      nowMs: at,
      staleAfterSeconds: staleAfterSeconds(1),
      reads,
    });
    const histories = await rawScrapes(at, stableWindowSeconds);
    const fromBuilder = buildObservation({
      reads,
      pods: [...histories.entries()].map(([pod, history]) => ({ pod, history })),
      readyReplicas: 2,
      nowSeconds: at / 1000,
      epochMs: 0,
      stableWindowSeconds,
      panicWindowSeconds,
      samplingIntervalSeconds: 1,
    });
    expect(fromSource.signalState).toBe("Fresh");
    expect(fromBuilder.signalState).toBe(fromSource.signalState);
    expect(fromBuilder.sampledReplicas).toBe(fromSource.sampledReplicas);
    expect(fromBuilder.runningRequests).toBe(fromSource.runningRequests);
    expect(fromBuilder.waitingRequests).toBe(fromSource.waitingRequests);
    expect(fromBuilder.kvCacheUsage).toBeCloseTo(fromSource.kvCacheUsage ?? NaN, 9);
    expect(fromBuilder.ttftMilliseconds).toBe(fromSource.ttftMilliseconds);
    expect(fromBuilder.itlMilliseconds).toBe(fromSource.itlMilliseconds);
    // Queue time rides in the TTFT query; every pod exports it, and both read the same p95 bucket.
    expect(fromSource.queueTimeExport).toEqual({ pods: 2, of: 2 });
    expect(fromBuilder.queueTimeExport).toEqual(fromSource.queueTimeExport);
    expect(fromSource.queueTimeMilliseconds).toBeGreaterThan(0);
    expect(fromBuilder.queueTimeMilliseconds).toBe(fromSource.queueTimeMilliseconds);
    if (process.env["MDS_TEST_VERBOSE"]) console.info({ fromSource, fromBuilder });
    for (const field of ["promptTokensPerSecond", "generationTokensPerSecond"] as const) {
      const truth = fromSource[field] ?? NaN;
      expect(truth, field).toBeGreaterThan(0);
      expect(Math.abs((fromBuilder[field] ?? NaN) - truth) / truth, field).toBeLessThanOrEqual(0.02);
    }
  }, 60_000);
});
