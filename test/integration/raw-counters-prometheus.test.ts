/**
 * The `raw-counters` plan against Prometheus 3.5 (built by tools/prom-bin) scraping simulated vLLM and SGLang
 * engines with the settings the `native` plan asks for (`convert_classic_histograms_to_nhcb`,
 * `always_scrape_classic_histograms`), and one more target whose counter resets every fifth scrape and which
 * fails every seventh (a failed scrape writes stale markers, which a range selector leaves out):
 *
 * - every counters part computed from the raw samples equals, row for row and to the bit, what Prometheus
 *   answers for the same part asked as a query at the same time;
 * - a pass reads the same as the `native` plan's, with the 22 counters queries asked as two raw reads;
 * - a raw read that fails (a connection refused) costs the counters family alone;
 * - a client that cannot read raw samples (a period read from range queries) is refused by name.
 */
import { createServer, type Server } from "node:http";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { PrometheusClient, type PrometheusQueryClient } from "../../src/adapters/prometheus/client.js";
import { defaultPrometheusSignalConfig } from "../../src/adapters/prometheus/config.js";
import { windowLabel } from "../../src/adapters/prometheus/queries.js";
import { RangeAnswers } from "../../src/adapters/prometheus/range-answers.js";
import { counterRows } from "../../src/adapters/prometheus/raw-counters.js";
import { PrometheusSignalSource } from "../../src/adapters/prometheus/source.js";
import type { EngineFleet, FleetServer } from "../../src/sim/engines/index.js";
import type { PrometheusHarness } from "../../harness/prometheus.js";
import { backendScalers, startBackendFleet } from "../support/backend-fleet.js";
import { toDigits } from "../support/digits.js";
import { startNhcbPrometheus } from "../support/nhcb-prometheus.js";
import { observationsOf } from "../support/plan-observations.js";

const namespace = "serving";
const stableWindowSeconds = 10;
const panicWindowSeconds = 3;
const scalers = backendScalers(namespace, stableWindowSeconds, panicWindowSeconds);
/** Longer than a 1 s scrape takes to land in the TSDB on a loaded machine. */
const ingestionSettleMs = 2_000;
const l = defaultPrometheusSignalConfig.labels;

let fleet: EngineFleet;
let server: FleetServer;
let prometheus: PrometheusHarness;
/** Serves a prompt counter that resets every fifth scrape, and fails every seventh scrape. */
let resettingPod: Server;
let scrapes = 0;

const client = (): PrometheusClient => new PrometheusClient({ endpoint: prometheus.url, timeoutMs: 10_000 });
const sourceOf = (queryPlan: "native" | "raw-counters", c: PrometheusQueryClient = client()): PrometheusSignalSource =>
  new PrometheusSignalSource(c, { ...defaultPrometheusSignalConfig, queryPlan });

/** A time whose scrapes have all landed, waited for. */
async function settledTime(): Promise<number> {
  const at = Date.now() - 1000;
  await new Promise((r) => setTimeout(r, Math.max(0, at + ingestionSettleMs - Date.now())));
  return at;
}

beforeAll(async () => {
  ({ fleet, server } = await startBackendFleet(namespace));
  resettingPod = createServer((_req, res) => {
    scrapes++;
    if (scrapes % 7 === 0) {
      res.writeHead(500);
      res.end();
      return;
    }
    res.writeHead(200, { "content-type": "text/plain; version=0.0.4" });
    res.end(
      [
        "# TYPE vllm:prompt_tokens_total counter",
        `vllm:prompt_tokens_total ${(scrapes % 5) * 7 + 3}`,
        "# TYPE vllm:num_requests_running gauge",
        `vllm:num_requests_running 1`,
        "",
      ].join("\n"),
    );
  });
  await new Promise<void>((resolve) => resettingPod.listen(0, "127.0.0.1", resolve));
  const address = resettingPod.address();
  const port = typeof address === "object" && address !== null ? address.port : 0;
  prometheus = await startNhcbPrometheus(
    [
      ...server.fileSdGroups(),
      {
        targets: [`127.0.0.1:${port}`],
        labels: { namespace, pod: "pd-vllm-prefill-resetting", [l.deployment]: "pd-vllm", [l.role]: "prefill" },
      },
    ],
    fleet.listPods().length,
    stableWindowSeconds,
  );
}, 120_000);

afterAll(async () => {
  await prometheus?.stop();
  await server?.stop();
  await new Promise<void>((resolve) => (resettingPod ? resettingPod.close(() => resolve()) : resolve()));
});

/** `<signal> <window> <labels>` of a row, the window read from the query or the row's tag. */
function rowKey(signal: string, windowSeconds: number, labels: Readonly<Record<string, string>>): string {
  const rest = Object.entries(labels)
    .filter(([k]) => k !== windowLabel && k !== "mds_signal")
    .sort(([a], [b]) => a.localeCompare(b));
  return `${signal} ${windowSeconds} ${JSON.stringify(rest)}`;
}

describe("the raw-counters plan on Prometheus 3.5", () => {
  it("computes every counters part from the raw samples as Prometheus answers it, to the bit", async () => {
    const at = await settledTime();
    const c = client();
    const asked = sourceOf("native")
      .issuedFor(scalers)
      .filter((q) => q.family === "counters");
    const reads = sourceOf("raw-counters")
      .issuedFor(scalers)
      .filter((q) => q.raw !== undefined);
    expect(reads.map((q) => q.raw?.engine)).toEqual(["vllm", "sglang"]);
    const expected = new Map<string, number>();
    for (const q of asked) {
      const answer = await c.instantQuery(q.text, at);
      expect(answer.warnings).toEqual([]);
      for (const s of answer.samples)
        expected.set(rowKey(q.signal ?? "", q.windowSeconds ?? Number(s.labels[windowLabel]), s.labels), s.value);
    }
    const computed = new Map<string, number>();
    for (const q of reads) {
      const answer = await c.rawSamples(q.text, at);
      for (const row of counterRows(q.raw?.engine ?? "vllm", answer.series, q.raw?.windows ?? [], l, ":", at))
        computed.set(rowKey(row.labels["mds_signal"] ?? "", Number(row.labels[windowLabel]), row.labels), row.value);
    }
    expect([...computed.keys()].sort()).toEqual([...expected.keys()].sort());
    const differing = [...expected].filter(([key, v]) => !Object.is(computed.get(key), v));
    expect(differing, "rows whose value differs from Prometheus' own").toEqual([]);
    // The resetting pod's resets and its gaps were in the windows compared.
    const resetting = [...expected].filter(([key]) => key.includes("resetting") && key.startsWith("vllm/resets/"));
    expect(
      resetting.some(([, v]) => v > 0),
      "a reset counted in a window",
    ).toBe(true);
    expect(scrapes, "a failed scrape in the stable window").toBeGreaterThan(7);
  }, 60_000);

  it("reads the same pass as the native plan, with 20 queries fewer", async () => {
    const at = await settledTime();
    const [native, raw] = await Promise.all([
      sourceOf("native").sample(scalers, at),
      sourceOf("raw-counters").sample(scalers, at),
    ]);
    // The 22 counters queries as two raw reads; the follow-up asks (the resetting pod counts no TTFT, so its role's
    // sums are unproven and its pods' buckets asked) are the same under both plans.
    expect(native.queries).toBeGreaterThanOrEqual(51);
    expect(raw.queries).toBe(native.queries - 20);
    expect(raw.unknownFamilies).toEqual({});
    const rates = raw.scalers
      .get(`${namespace}/pd-vllm`)
      ?.get("prefill")
      ?.pods.map((p) => p.windows.stable.promptTokensPerSecond);
    expect(rates?.filter((r) => r !== undefined && r > 0).length, "prompt rates read").toBeGreaterThan(0);
    expect(toDigits({ ...raw, queries: 0 })).toEqual(toDigits({ ...native, queries: 0 }));
    const expected = observationsOf(native, scalers);
    for (const [key, observation] of observationsOf(raw, scalers))
      expect(toDigits(observation), `${key} under the raw-counters plan`).toEqual(toDigits(expected.get(key)));
  }, 60_000);

  it("reads only the samples since the last pass, and computes the same passes as a whole read", async () => {
    const asked: string[] = [];
    const c = client();
    const recording: PrometheusQueryClient = {
      instantQuery: (q, t) => c.instantQuery(q, t),
      rawSamples: (q, t) => {
        asked.push(q);
        return c.rawSamples(q, t);
      },
    };
    // The scrapes land within a second here: the read since the last pass reaches one second behind it.
    const kept = new PrometheusSignalSource(recording, {
      ...defaultPrometheusSignalConfig,
      queryPlan: "raw-counters",
      rawReadOverlapSeconds: 1,
    });
    const first = await settledTime();
    for (let step = 0; step < 4; step++) {
      const at = first + step * 1500;
      await new Promise((r) => setTimeout(r, Math.max(0, at + ingestionSettleMs - Date.now())));
      const [incremental, whole] = await Promise.all([
        kept.sample(scalers, at),
        sourceOf("raw-counters").sample(scalers, at),
      ]);
      expect(incremental.unknownFamilies, `pass ${step}`).toEqual({});
      expect(incremental, `pass ${step}: the kept window and a whole read compute the same pass`).toEqual(whole);
    }
    // Two reads a pass: the whole window first, then 1.5 s since the last pass and the overlap, in whole seconds.
    expect(asked.map((q) => q.match(/\[(\d+)s\]$/)?.[1])).toEqual(["10", "10", "3", "3", "3", "3", "3", "3"]);
  }, 60_000);

  it("a raw read refused (its connection refused) costs the counters family alone", async () => {
    const at = await settledTime();
    const good = client();
    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, "127.0.0.1", resolve));
    const address = closed.address();
    const port = typeof address === "object" && address !== null ? address.port : 0;
    await new Promise<void>((resolve) => closed.close(() => resolve()));
    const refused = new PrometheusClient({ endpoint: `http://127.0.0.1:${port}`, timeoutMs: 5_000 });
    const split: PrometheusQueryClient = {
      instantQuery: (q, t) => good.instantQuery(q, t),
      rawSamples: (q, t) => refused.rawSamples(q, t),
    };
    const pass = await sourceOf("raw-counters", split).sample(scalers, at);
    expect(pass.unknownFamilies.counters).toMatch(/^counters query failed: cannot reach prometheus/);
    expect(Object.keys(pass.unknownFamilies)).toEqual(["counters"]);
    const pods = pass.scalers.get(`${namespace}/pd-vllm`)?.get("prefill")?.pods ?? [];
    expect(pods.length, "the pods named by the gauges").toBeGreaterThan(0);
    expect(
      pods.every((p) => p.windows.stable.promptTokensPerSecond === undefined),
      "no rate read",
    ).toBe(true);
    expect(
      pods.some((p) => p.windows.stable.ttftSeconds !== undefined),
      "latency still read",
    ).toBe(true);
  }, 60_000);

  it("is refused by name over a client that answers from range queries", () => {
    const answers = new RangeAnswers(client(), { firstUnixSeconds: 0, lastUnixSeconds: 60, stepSeconds: 15 });
    expect(() => sourceOf("raw-counters", answers)).toThrow(/queryPlan: "raw-counters" reads raw samples/);
  });
});
