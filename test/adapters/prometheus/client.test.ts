/**
 * HTTP edge cases of the Prometheus client, with nock intercepting the
 * axios requests prometheus-query makes.
 */
import { gzipSync } from "node:zlib";
import nock from "nock";
import { afterEach, beforeAll, describe, expect, it } from "vitest";
import { PrometheusClient, vmPartialWarning } from "../../../src/adapters/prometheus/client.js";
import { defaultPrometheusSignalConfig } from "../../../src/adapters/prometheus/config.js";
import { PrometheusSignalSource } from "../../../src/adapters/prometheus/source.js";
import { nativeHistogramAnswer, nativeHistogramRead } from "../../support/native-histogram.js";
import { queryFailure } from "../../support/query-failure.js";

const endpoint = "http://prometheus.test:9090";
const at = Date.UTC(2026, 10, 29, 12, 0, 0);

function vector(result: unknown[], extra: Record<string, unknown> = {}): Record<string, unknown> {
  return { status: "success", data: { resultType: "vector", result }, ...extra };
}

beforeAll(() => {
  nock.disableNetConnect();
});

afterEach(() => {
  nock.cleanAll();
});

describe("PrometheusClient", () => {
  // A deadline a loaded machine meets; the timeout test uses its own short one.
  const client = new PrometheusClient({ endpoint, timeoutMs: 5_000 });

  it("posts the query with its evaluation time and parses a vector", async () => {
    let body = "";
    nock(endpoint)
      .post("/api/v1/query", (b: unknown) => {
        body = new URLSearchParams(b as Record<string, string>).toString();
        return true;
      })
      .reply(200, vector([{ metric: { pod: "p-0", mds_signal: "vllm/running" }, value: [at / 1000, "3"] }]));
    const r = await client.instantQuery('up{pod="p-0"}', at);
    expect(r.samples).toEqual([
      { labels: { pod: "p-0", mds_signal: "vllm/running" }, value: 3, timestampUnixSeconds: at / 1000 },
    ]);
    expect(r.warnings).toEqual([]);
    const params = new URLSearchParams(body);
    expect(params.get("query")).toBe('up{pod="p-0"}');
    expect(Number(params.get("time"))).toBe(at / 1000);
    expect(params.get("timeout")).toBe("5s");
  });

  it.each([
    ["gzip", undefined, /gzip/],
    ["gzip", "gzip" as const, /gzip/],
    ["an uncompressed answer", "none" as const, /^identity$/],
  ])("asks for %s when compression is %s", async (_what, compression, acceptEncoding) => {
    nock(endpoint)
      .post("/api/v1/query")
      .matchHeader("accept-encoding", acceptEncoding)
      .reply(200, vector([{ metric: { pod: "p-0" }, value: [at / 1000, "1"] }]));
    const r = await new PrometheusClient({
      endpoint,
      timeoutMs: 5_000,
      ...(compression ? { compression } : {}),
    }).instantQuery("x", at);
    expect(r.samples.map((s) => s.value)).toEqual([1]);
  });

  it.each([
    ["compressed", true],
    ["uncompressed", false],
  ])("reads every series of an answer of megabytes, %s", async (_what, compressed) => {
    const result = Array.from({ length: 20_000 }, (_, i) => ({
      metric: { namespace: `team-${i % 10}`, pod: `model-${i}-decode-0`, le: String(i % 17) },
      value: [at / 1000, String(i / 4)],
    }));
    const text = JSON.stringify(vector(result));
    expect(text.length).toBeGreaterThan(1_000_000);
    nock(endpoint)
      .post("/api/v1/query")
      .reply(200, compressed ? gzipSync(text) : text, {
        "content-type": "application/json",
        ...(compressed ? { "content-encoding": "gzip" } : {}),
      });
    const r = await client.instantQuery("x", at);
    expect(r.samples).toHaveLength(result.length);
    expect(r.samples.map((s) => s.value)).toEqual(result.map((_, i) => i / 4));
    expect(r.samples[12_345]?.labels).toEqual(result[12_345]?.metric);
  });

  it.each([
    // What arrived is read: the series cut short make the text not JSON.
    ["cut short", (gz: Buffer) => gz.subarray(0, gz.length >> 1)],
    ["not gzip at all", () => Buffer.from("not gzip, whatever the header says")],
  ])("reports a gzip answer %s as malformed", async (_what, bytes) => {
    const text = JSON.stringify(
      vector(Array.from({ length: 5_000 }, (_, i) => ({ metric: { pod: `p-${i}` }, value: [at / 1000, "1"] }))),
    );
    nock(endpoint)
      .post("/api/v1/query")
      .reply(200, bytes(gzipSync(text)), { "content-type": "application/json", "content-encoding": "gzip" });
    await expect(client.instantQuery("x", at)).rejects.toMatchObject({
      name: "PrometheusQueryError",
      kind: "malformed",
    });
  });

  it("names the body that does not inflate", async () => {
    nock(endpoint)
      .post("/api/v1/query")
      .reply(200, Buffer.from("not gzip"), { "content-type": "application/json", "content-encoding": "gzip" });
    await expect(client.instantQuery("x", at)).rejects.toThrow(
      `prometheus ${endpoint} sent a compressed body that does not inflate: incorrect header check`,
    );
  });

  it("names an encoding it did not ask for instead of reading the bytes as text", async () => {
    nock(endpoint)
      .post("/api/v1/query")
      .reply(200, Buffer.from([0x1b, 0x03, 0x00]), { "content-type": "application/json", "content-encoding": "br" });
    await expect(client.instantQuery("x", at)).rejects.toMatchObject({
      name: "PrometheusQueryError",
      kind: "malformed",
      message: `prometheus ${endpoint} sent a body encoded as "br", which the client did not ask for (it asks for gzip)`,
    });
  });

  it("reads a body marked identity as it came", async () => {
    nock(endpoint)
      .post("/api/v1/query")
      // A Buffer: nock reads a string body of an encoded reply as hex.
      .reply(200, Buffer.from(JSON.stringify(vector([{ metric: { pod: "p-0" }, value: [at / 1000, "2"] }]))), {
        "content-type": "application/json",
        "content-encoding": "identity",
      });
    const r = await client.instantQuery("x", at);
    expect(r.samples.map((s) => s.value)).toEqual([2]);
  });

  it("reads labels as sent, without the metric name or a value that is not a string", async () => {
    nock(endpoint)
      .post("/api/v1/query")
      .reply(200, vector([{ metric: { __name__: "up", pod: "p-0", odd: 3 }, value: [at / 1000, "1"] }]));
    const r = await client.instantQuery("x", at);
    expect(r.samples[0]?.labels).toEqual({ pod: "p-0" });
  });

  it("keeps NaN and Inf as non-finite values for the caller to drop", async () => {
    nock(endpoint)
      .post("/api/v1/query")
      .reply(
        200,
        vector([
          { metric: { a: "1" }, value: [1, "NaN"] },
          { metric: { a: "2" }, value: [1, "+Inf"] },
        ]),
      );
    const r = await client.instantQuery("x", at);
    expect(r.samples.map((s) => Number.isFinite(s.value))).toEqual([false, false]);
  });

  it("returns Prometheus warnings from the response body", async () => {
    nock(endpoint)
      .post("/api/v1/query")
      .reply(200, vector([], { warnings: ["query hit the series limit"] }));
    const r = await client.instantQuery("x", at);
    expect(r.warnings).toEqual(["query hit the series limit"]);
  });

  it('reads VictoriaMetrics\' "isPartial": true as a warning, and false as none', async () => {
    nock(endpoint)
      .post("/api/v1/query")
      .reply(200, vector([], { isPartial: true }))
      .post("/api/v1/query")
      .reply(200, vector([], { isPartial: false }));
    expect((await client.instantQuery("x", at)).warnings).toEqual([vmPartialWarning]);
    expect((await client.instantQuery("x", at)).warnings).toEqual([]);
  });

  it("returns Prometheus 3 infos apart from warnings", async () => {
    nock(endpoint)
      .post("/api/v1/query")
      .reply(200, vector([], { infos: ["PromQL info: metric might not be a counter"] }));
    const r = await client.instantQuery("x", at);
    expect(r.warnings).toEqual([]);
    expect(r.infos).toEqual(["PromQL info: metric might not be a counter"]);
  });

  it.each([
    [400, { status: "error", errorType: "bad_data", error: "parse error at char 3" }, /answered 400: parse error/],
    [
      422,
      { status: "error", errorType: "execution", error: "vector cannot contain metrics with the same labelset" },
      /answered 422/,
    ],
    [503, { status: "error", errorType: "unavailable", error: "too many queries" }, /answered 503/],
  ])("wraps HTTP %i as an http error with its cause", async (status, body, message) => {
    nock(endpoint).post("/api/v1/query").reply(status, body);
    const err = await queryFailure(client.instantQuery("x", at));
    expect(err.kind).toBe("http");
    expect(err.httpStatus).toBe(status);
    expect(err.message).toMatch(message);
    expect(err.cause).toBeDefined();
  });

  it("reads Prometheus running out of its own timeout as a timeout, with its status", async () => {
    nock(endpoint)
      .post("/api/v1/query")
      .reply(503, { status: "error", errorType: "timeout", error: "query timed out in expression evaluation" });
    const err = await queryFailure(client.instantQuery("x", at));
    expect(err.kind).toBe("timeout");
    expect(err.httpStatus).toBe(503);
    expect(err.message).toMatch(/answered 503: query timed out in expression evaluation/);
  });

  it("treats an error status without a Prometheus body as an http error", async () => {
    nock(endpoint).post("/api/v1/query").reply(502, "<html>bad gateway</html>");
    const err = await queryFailure(client.instantQuery("x", at));
    expect(["http", "malformed"]).toContain(err.kind);
  });

  it.each([
    ["a body that is not JSON", "<html>proxy login</html>"],
    ["a success without data", { status: "success" }],
    ["a matrix where a vector was asked for", { status: "success", data: { resultType: "matrix", result: [] } }],
    ["a sample without a value", { status: "success", data: { resultType: "vector", result: [{ metric: {} }] } }],
    ["a result that is not a list", { status: "success", data: { resultType: "vector", result: "nope" } }],
  ])("rejects %s as malformed", async (_what, body) => {
    nock(endpoint).post("/api/v1/query").reply(200, body);
    const err = await queryFailure(client.instantQuery("x", at));
    expect(err.kind).toBe("malformed");
  });

  it("times out a slow answer within its deadline", async () => {
    nock(endpoint).post("/api/v1/query").delay(5_000).reply(200, vector([]));
    const err = await queryFailure(new PrometheusClient({ endpoint, timeoutMs: 200 }).instantQuery("x", at));
    expect(err.kind).toBe("timeout");
    expect(err.cause).toBeDefined();
  });

  it("reports a refused connection as a network error", async () => {
    nock(endpoint)
      .post("/api/v1/query")
      .replyWithError(Object.assign(new Error("connect ECONNREFUSED 127.0.0.1:9090"), { code: "ECONNREFUSED" }));
    const err = await queryFailure(client.instantQuery("x", at));
    expect(err.kind).toBe("network");
    expect(err.message).toMatch(/cannot reach prometheus/);
  });
});

describe("PrometheusClient native histograms", () => {
  const client = new PrometheusClient({ endpoint, timeoutMs: 5_000 });
  const histogram = nativeHistogramAnswer;
  const read = nativeHistogramRead;

  it("reads a vector's histogram sample, its value NaN, the infinities as themselves", async () => {
    nock(endpoint)
      .post("/api/v1/query")
      .reply(200, vector([{ metric: { role: "prefill" }, histogram: [at / 1000, histogram] }]));
    const r = await client.instantQuery("sum(increase(h[60s]))", at);
    expect(r.samples).toEqual([
      { labels: { role: "prefill" }, value: NaN, timestampUnixSeconds: at / 1000, histogram: read },
    ]);
  });

  it("reads a histogram without buckets (every bucket empty) as one with none", async () => {
    nock(endpoint)
      .post("/api/v1/query")
      .reply(200, vector([{ metric: {}, histogram: [at / 1000, { count: "0", sum: "0" }] }]));
    const r = await client.instantQuery("x", at);
    expect(r.samples[0]?.histogram).toEqual({ count: 0, sum: 0, buckets: [] });
  });

  it("reads a matrix series' histograms, and floats and histograms of one series in time order", async () => {
    const start = at / 1000;
    nock(endpoint)
      .post(/query_range/)
      .reply(200, {
        status: "success",
        data: {
          resultType: "matrix",
          result: [{ metric: { role: "decode" }, values: [[start + 60, "3"]], histograms: [[start, histogram]] }],
        },
      });
    const r = await client.rangeQuery("x", start, start + 60, 60);
    expect(r.series).toEqual([
      {
        labels: { role: "decode" },
        points: [
          { timestampUnixSeconds: start, value: NaN, histogram: read },
          { timestampUnixSeconds: start + 60, value: 3 },
        ],
      },
    ]);
  });

  it.each([
    [
      { metric: {}, histogram: [at / 1000, { count: 7 }] },
      /native histogram \{"count":7\} is not \{count, sum, buckets\}/,
    ],
    [{ metric: {}, histogram: [at / 1000, { count: "1", sum: "1", buckets: [[0, "0", "1"]] }] }, /native histogram/],
    [{ metric: {}, histogram: ["now", { count: "1", sum: "1" }] }, /is not \[time, \{histogram\}\]/],
  ])("names a malformed histogram sample: %j", async (sample, message) => {
    nock(endpoint)
      .post("/api/v1/query")
      .reply(200, vector([sample]));
    const err = await queryFailure(client.instantQuery("x", at));
    expect(err.kind).toBe("malformed");
    expect(err.message).toMatch(message);
  });
});

describe("PrometheusClient range queries", () => {
  const client = new PrometheusClient({ endpoint, timeoutMs: 5_000 });
  const start = at / 1000;
  const matrix = (result: unknown[], extra: Record<string, unknown> = {}) => ({
    status: "success",
    data: { resultType: "matrix", result },
    ...extra,
  });

  it("posts the query over its steps, asks VictoriaMetrics not to move them, and reads the matrix", async () => {
    let body = "";
    let path = "";
    nock(endpoint)
      .post(
        (uri) => ((path = uri), uri.startsWith("/api/v1/query_range")),
        (b: unknown) => {
          body = new URLSearchParams(b as Record<string, string>).toString();
          return true;
        },
      )
      .reply(
        200,
        matrix(
          [
            {
              metric: { __name__: "up", pod: "p-0" },
              values: [
                [start, "1"],
                [start + 120, "NaN"],
              ],
            },
          ],
          { warnings: ["partial"] },
        ),
      );
    const r = await client.rangeQuery('up{pod="p-0"}', start, start + 120, 60);
    expect(r.series).toEqual([
      {
        labels: { pod: "p-0" },
        points: [
          { timestampUnixSeconds: start, value: 1 },
          { timestampUnixSeconds: start + 120, value: NaN },
        ],
      },
    ]);
    expect(r.warnings).toEqual(["partial"]);
    const params = new URLSearchParams(body);
    expect(params.get("query")).toBe('up{pod="p-0"}');
    expect([params.get("start"), params.get("end"), params.get("step")].map(Number)).toEqual([start, start + 120, 60]);
    expect(new URL(path, endpoint).searchParams.get("nocache")).toBe("1");
  });

  it.each([
    [{ resultType: "vector", result: [] }, /expected a matrix result, got vector/],
    [{ resultType: "matrix", result: [{ metric: {} }] }, /matrix series without labels or values/],
    [
      { resultType: "matrix", result: [{ metric: {}, values: [[1, 2]] }] },
      /matrix point \[1,2\] is not \[time, "value"\]/,
    ],
  ])("names a malformed matrix: %j", async (data, message) => {
    nock(endpoint)
      .post(/query_range/)
      .reply(200, { status: "success", data });
    const err = await queryFailure(client.rangeQuery("x", start, start + 60, 60));
    expect(err.kind).toBe("malformed");
    expect(err.message).toMatch(message);
  });
});

describe("PrometheusSignalSource over HTTP failures and partial answers", () => {
  const labels = { namespace: "ns", app_kubernetes_io_instance: "d", app_kubernetes_io_component: "decode" };
  const windowed = (signal: string, window: string, value: string) => ({
    metric: { ...labels, pod: "p-0", mds_signal: signal, mds_window_seconds: window },
    value: [at / 1000, value],
  });
  const gauges = vector([
    { metric: { ...labels, pod: "p-0", mds_signal: "vllm/timestamp" }, value: [at / 1000, String(at / 1000 - 1)] },
    { metric: { ...labels, pod: "p-0", mds_signal: "vllm/running" }, value: [at / 1000, "3"] },
  ]);
  const counters = {
    status: "success",
    data: {
      resultType: "vector",
      result: [
        windowed("vllm/samples", "60", "4"),
        windowed("vllm/resets", "60", "0"),
        windowed("vllm/generation", "60", "50"),
        windowed("vllm/prompt", "60", "100"),
      ],
    },
  };
  const histogramAnswer = (name: "ttft" | "itl") =>
    vector([
      windowed("vllm/bucket", "60", "10"),
      windowed("vllm/count", "60", "10"),
      windowed("vllm/sum", "60", name === "ttft" ? "2" : "0.5"),
    ]);
  const queryOf = (b: unknown): string => new URLSearchParams(b as Record<string, string>).get("query") ?? "";
  const marker: Record<"gauges" | "counters" | "ttft" | "itl", string> = {
    gauges: "timestamp(",
    counters: "resets(",
    ttft: "time_to_first_token_seconds_bucket",
    itl: "inter_token_latency_seconds_bucket",
  };
  const answer = (name: keyof typeof marker, body: Record<string, unknown>): void => {
    nock(endpoint)
      .post("/api/v1/query", (b: unknown) => queryOf(b).includes(marker[name]))
      .reply(200, body);
  };
  // The answers here are the unions plan's tagged series; the parts plan meets the same failures and
  // partial answers from a real Prometheus in test/integration/prometheus-faults.test.ts.
  const unions = { ...defaultPrometheusSignalConfig, queryPlan: "unions" } as const;
  const newSource = () => new PrometheusSignalSource(new PrometheusClient({ endpoint, timeoutMs: 5_000 }), unions);
  const scaler = {
    key: "ns/s",
    namespace: "ns",
    deployment: "d",
    roles: ["prefill", "decode"],
    stableWindowSeconds: 60,
    panicWindowSeconds: 10,
    intervalSeconds: 15,
  };

  it("marks every role queryFailed when the gauge query, which names the pods, fails", async () => {
    answer("counters", vector([]));
    answer("ttft", vector([]));
    answer("itl", vector([]));
    nock(endpoint)
      .post("/api/v1/query", (b: unknown) => queryOf(b).includes("timestamp("))
      .reply(503, { status: "error", errorType: "unavailable", error: "overloaded" });
    const pass = await newSource().sample([scaler], at);
    for (const role of ["prefill", "decode"]) {
      const r = pass.scalers.get("ns/s")?.get(role);
      expect(r?.pods).toEqual([]);
      expect(r?.queryFailed?.reason).toMatch(/gauges: .*503/);
    }
  });

  it("drops series without a pod label (no pod matcher in the query) instead of reading them as a pod", async () => {
    const noPod = labels;
    answer(
      "gauges",
      vector([
        { metric: { ...labels, pod: "p-0", mds_signal: "vllm/timestamp" }, value: [at / 1000, String(at / 1000 - 1)] },
        { metric: { ...labels, pod: "p-0", mds_signal: "vllm/running" }, value: [at / 1000, "3"] },
        { metric: { ...noPod, mds_signal: "vllm/timestamp" }, value: [at / 1000, String(at / 1000 - 1)] },
        { metric: { ...noPod, mds_signal: "vllm/running" }, value: [at / 1000, "7"] },
      ]),
    );
    answer("counters", counters);
    answer("ttft", histogramAnswer("ttft"));
    answer("itl", histogramAnswer("itl"));
    const source = newSource();
    expect(Object.values(source.queriesFor([scaler])).join("\n")).not.toMatch(/pod!=/);
    const pass = await source.sample([scaler], at);
    const decode = pass.scalers.get("ns/s")?.get("decode");
    expect(decode?.pods.map((p) => [p.pod, p.runningRequests])).toEqual([["p-0", 3]]);
  });

  it("a failed latency query costs latency only: gauges and rates stay known", async () => {
    answer("gauges", gauges);
    answer("counters", counters);
    answer("itl", histogramAnswer("itl"));
    nock(endpoint)
      .post("/api/v1/query", (b: unknown) => queryOf(b).includes("time_to_first_token_seconds_bucket"))
      .reply(422, { status: "error", errorType: "execution", error: "query processing would load too many samples" });
    const pass = await newSource().sample([scaler], at);
    const decode = pass.scalers.get("ns/s")?.get("decode");
    expect(decode?.queryFailed).toBeUndefined();
    expect(decode?.unknownFamilies?.ttft).toMatch(/ttft query failed: .*422/);
    expect(Object.keys(decode?.unknownFamilies ?? {})).toEqual(["ttft"]);
    const pod = decode?.pods[0];
    expect(pod?.runningRequests).toBe(3);
    expect(pod?.windows.stable).toMatchObject({ established: true, generationTokensPerSecond: 50 });
    expect(pod?.windows.stable.ttftSeconds).toBeUndefined();
    expect(pod?.windows.stable.itlSeconds?.count).toBe(10);
  });

  it("reads a warning as a partial answer: the query's family is unknown, never the part that came back", async () => {
    // A warning of the kind a federating layer (Thanos with partial responses) sends when a store did not answer.
    const partial = "No StoreAPIs matched for this query; store 10.0.0.7:10901 unavailable";
    answer("gauges", gauges);
    answer("counters", { ...counters, warnings: [partial] });
    answer("ttft", histogramAnswer("ttft"));
    answer("itl", histogramAnswer("itl"));
    const pass = await newSource().sample([scaler], at);
    expect(pass.warnings).toEqual([`counters: ${partial}`]);
    expect(pass.unknownFamilies).toEqual({ counters: `counters query answered partially: ${partial}` });
    const decode = pass.scalers.get("ns/s")?.get("decode");
    expect(decode?.unknownFamilies).toEqual(pass.unknownFamilies);
    const pod = decode?.pods[0];
    expect(pod?.runningRequests).toBe(3);
    // Establishment comes from the counters query: no window is established, so no rate is read.
    expect(pod?.windows.stable).toEqual({
      established: false,
      ttftSeconds: expect.anything(),
      itlSeconds: expect.anything(),
    });
  });

  it("keeps the pods a partial gauge answer names but not their gauge values", async () => {
    answer("gauges", { ...gauges, warnings: ["remote_read: error sending request"] });
    answer("counters", counters);
    answer("ttft", histogramAnswer("ttft"));
    answer("itl", histogramAnswer("itl"));
    const pass = await newSource().sample([scaler], at);
    const decode = pass.scalers.get("ns/s")?.get("decode");
    expect(decode?.unknownFamilies?.gauges).toMatch(/gauges query answered partially/);
    const pod = decode?.pods[0];
    expect(pod?.lastSampleUnixSeconds).toBe(at / 1000 - 1);
    expect(pod?.runningRequests).toBeUndefined();
    expect(pod?.windows.stable.generationTokensPerSecond).toBe(50);
  });

  it("reports Prometheus 3 infos without reading them as a partial answer", async () => {
    const info = 'PromQL info: metric might not be a counter, name does not end in _total: "x"';
    answer("gauges", gauges);
    answer("counters", { ...counters, infos: [info] });
    answer("ttft", histogramAnswer("ttft"));
    answer("itl", histogramAnswer("itl"));
    const pass = await newSource().sample([scaler], at);
    expect(pass.infos).toEqual([`counters: ${info}`]);
    expect(pass.unknownFamilies).toEqual({});
    expect(pass.scalers.get("ns/s")?.get("decode")?.unknownFamilies).toBeUndefined();
    expect(pass.scalers.get("ns/s")?.get("decode")?.pods[0]?.windows.stable.generationTokensPerSecond).toBe(50);
  });

  it("reads a recreated pod from its newest scrape target, and not as established while both are in the window", async () => {
    const old = { ...labels, pod: "p-0", instance: "10.0.0.1:8000" };
    const recreated = { ...labels, pod: "p-0", instance: "10.0.0.2:8000" };
    answer(
      "gauges",
      vector([
        // The old target's series are still in the lookback (no staleness marker was written).
        { metric: { ...old, mds_signal: "vllm/timestamp" }, value: [at / 1000, String(at / 1000 - 40)] },
        { metric: { ...old, mds_signal: "vllm/running" }, value: [at / 1000, "5"] },
        { metric: { ...recreated, mds_signal: "vllm/timestamp" }, value: [at / 1000, String(at / 1000 - 1)] },
        { metric: { ...recreated, mds_signal: "vllm/running" }, value: [at / 1000, "2"] },
      ]),
    );
    answer(
      "counters",
      vector([
        ...counters.data.result.filter((r) => r.metric.mds_signal !== "vllm/samples"),
        // Both targets have samples in the 60 s window (one row each), only the new one in the 10 s window.
        {
          ...windowed("vllm/samples", "60", "4"),
          metric: { ...old, mds_signal: "vllm/samples", mds_window_seconds: "60" },
        },
        {
          ...windowed("vllm/samples", "60", "2"),
          metric: { ...recreated, mds_signal: "vllm/samples", mds_window_seconds: "60" },
        },
        {
          ...windowed("vllm/samples", "10", "4"),
          metric: { ...recreated, mds_signal: "vllm/samples", mds_window_seconds: "10" },
        },
        windowed("vllm/resets", "10", "0"),
        windowed("vllm/generation", "10", "20"),
      ]),
    );
    answer("ttft", vector([]));
    answer("itl", vector([]));
    const pass = await newSource().sample([scaler], at);
    const pods = pass.scalers.get("ns/s")?.get("decode")?.pods ?? [];
    expect(pods).toHaveLength(1);
    expect(pods[0]?.runningRequests).toBe(2);
    expect(pods[0]?.lastSampleUnixSeconds).toBe(at / 1000 - 1);
    expect(pods[0]?.windows.stable.established).toBe(false);
    expect(pods[0]?.windows.panic).toEqual({ established: true, generationTokensPerSecond: 20 });
  });

  it("drops non-finite gauges and pods without a current sample", async () => {
    const labels = { namespace: "ns", app_kubernetes_io_instance: "d", app_kubernetes_io_component: "decode" };
    const gauges = vector([
      { metric: { ...labels, pod: "p-0", mds_signal: "vllm/timestamp" }, value: [at / 1000, String(at / 1000 - 1)] },
      { metric: { ...labels, pod: "p-0", mds_signal: "vllm/running" }, value: [at / 1000, "NaN"] },
      { metric: { ...labels, pod: "p-0", mds_signal: "vllm/waiting" }, value: [at / 1000, "2"] },
      // Rates but no gauge timestamp: the pod did not answer this pass.
      { metric: { ...labels, pod: "p-1", mds_signal: "vllm/running" }, value: [at / 1000, "4"] },
    ]);
    const counters = vector([
      {
        metric: { ...labels, pod: "p-0", mds_signal: "vllm/generation", mds_window_seconds: "60" },
        value: [at / 1000, "+Inf"],
      },
      {
        metric: { ...labels, pod: "p-0", mds_signal: "vllm/prompt", mds_window_seconds: "60" },
        value: [at / 1000, "100"],
      },
      {
        metric: { ...labels, pod: "p-0", mds_signal: "vllm/samples", mds_window_seconds: "60" },
        value: [at / 1000, "4"],
      },
      {
        metric: { ...labels, pod: "p-0", mds_signal: "vllm/resets", mds_window_seconds: "60" },
        value: [at / 1000, "0"],
      },
    ]);
    const query = (b: unknown): string => new URLSearchParams(b as Record<string, string>).get("query") ?? "";
    nock(endpoint)
      .post("/api/v1/query", (b: unknown) => query(b).includes("timestamp("))
      .reply(200, gauges);
    nock(endpoint)
      .post("/api/v1/query", (b: unknown) => query(b).includes("resets("))
      .reply(200, counters);
    nock(endpoint).post("/api/v1/query").times(2).reply(200, vector([]));
    const source = new PrometheusSignalSource(new PrometheusClient({ endpoint, timeoutMs: 5_000 }), unions);
    const pass = await source.sample([scaler], at);
    const decode = pass.scalers.get("ns/s")?.get("decode");
    expect(decode?.pods).toEqual([
      {
        pod: "p-0",
        engine: "vllm",
        lastSampleUnixSeconds: at / 1000 - 1,
        waitingRequests: 2,
        windows: { stable: { established: true, promptTokensPerSecond: 100 }, panic: { established: false } },
      },
    ]);
    expect(pass.scalers.get("ns/s")?.get("prefill")).toEqual({ pods: [] });
  });
});
