/**
 * HTTP edge cases of the Prometheus client, with nock intercepting the
 * axios requests prometheus-query makes.
 */
import nock from "nock";
import { afterEach, beforeAll, describe, expect, it } from "vitest";
import { PrometheusClient, PrometheusQueryError } from "../../../src/adapters/prometheus/client.js";
import { defaultPrometheusSignalConfig } from "../../../src/adapters/prometheus/config.js";
import { PrometheusSignalSource } from "../../../src/adapters/prometheus/source.js";

const endpoint = "http://prometheus.test:9090";
const at = Date.UTC(2026, 10, 29, 12, 0, 0);

function vector(result: unknown[], extra: Record<string, unknown> = {}): Record<string, unknown> {
  return { status: "success", data: { resultType: "vector", result }, ...extra };
}

async function failure(p: Promise<unknown>): Promise<PrometheusQueryError> {
  const err = await p.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(PrometheusQueryError);
  return err as PrometheusQueryError;
}

beforeAll(() => {
  nock.disableNetConnect();
});

afterEach(() => {
  nock.cleanAll();
});

describe("PrometheusClient", () => {
  const client = new PrometheusClient({ endpoint, timeoutMs: 200 });

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
    expect(params.get("timeout")).toBe("1s");
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
    const err = await failure(client.instantQuery("x", at));
    expect(err.kind).toBe("http");
    expect(err.httpStatus).toBe(status);
    expect(err.message).toMatch(message);
    expect(err.cause).toBeDefined();
  });

  it("treats an error status without a Prometheus body as an http error", async () => {
    nock(endpoint).post("/api/v1/query").reply(502, "<html>bad gateway</html>");
    const err = await failure(client.instantQuery("x", at));
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
    const err = await failure(client.instantQuery("x", at));
    expect(err.kind).toBe("malformed");
  });

  it("times out a slow answer within its deadline", async () => {
    nock(endpoint).post("/api/v1/query").delay(5_000).reply(200, vector([]));
    const err = await failure(client.instantQuery("x", at));
    expect(err.kind).toBe("timeout");
    expect(err.cause).toBeDefined();
  });

  it("reports a refused connection as a network error", async () => {
    nock(endpoint)
      .post("/api/v1/query")
      .replyWithError(Object.assign(new Error("connect ECONNREFUSED 127.0.0.1:9090"), { code: "ECONNREFUSED" }));
    const err = await failure(client.instantQuery("x", at));
    expect(err.kind).toBe("network");
    expect(err.message).toMatch(/cannot reach prometheus/);
  });
});

describe("PrometheusSignalSource over HTTP failures", () => {
  const scaler = {
    key: "ns/s",
    namespace: "ns",
    deployment: "d",
    roles: ["prefill", "decode"],
    stableWindowSeconds: 60,
    panicWindowSeconds: 10,
    intervalSeconds: 15,
  };

  it("marks every role queryFailed when one of the pass's queries fails, never zero", async () => {
    nock(endpoint).post("/api/v1/query").times(3).reply(200, vector([]));
    nock(endpoint).post("/api/v1/query").reply(503, { status: "error", errorType: "unavailable", error: "overloaded" });
    const source = new PrometheusSignalSource(
      new PrometheusClient({ endpoint, timeoutMs: 500 }),
      defaultPrometheusSignalConfig,
    );
    const pass = await source.sample([scaler], at);
    for (const role of ["prefill", "decode"]) {
      const r = pass.scalers.get("ns/s")?.get(role);
      expect(r?.pods).toEqual([]);
      expect(r?.queryFailed?.reason).toMatch(/503/);
    }
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
    const source = new PrometheusSignalSource(
      new PrometheusClient({ endpoint, timeoutMs: 500 }),
      defaultPrometheusSignalConfig,
    );
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
