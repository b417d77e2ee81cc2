/**
 * The scaler's own metrics: a planned status becomes the series users query,
 * unknown figures export nothing, and a deleted scaler's or role's series go.
 */
import { describe, expect, it } from "vitest";
import { ScalerMetrics } from "../../../src/adapters/telemetry/metrics.js";
import { roleReports } from "../../../src/adapters/telemetry/role-reports.js";
import { ScalerSpecSchema, withInferredAlgorithm } from "../../../src/core/api/scaler.js";

const spec = withInferredAlgorithm(
  ScalerSpecSchema.parse({
    targetRef: { name: "chat" },
    roles: [
      { name: "prefill", maxReplicas: 8 },
      { name: "decode", maxReplicas: 8 },
    ],
    algorithm: { tokenThroughput: { prefillTargetTokensPerSecond: "2000", decodeTargetTokensPerSecond: "800" } },
  }),
);

const status = {
  roles: [
    {
      name: "prefill",
      currentReplicas: 2,
      readyReplicas: 2,
      signalState: "Fresh" as const,
      promptTokensPerSecond: "2400",
      generationTokensPerSecond: "0",
      rawRecommendedReplicas: 2,
      constrainedReplicas: 2,
      reason: "TokenThroughput",
      ttftMilliseconds: "400",
      queueTimeMilliseconds: "300",
    },
    {
      name: "decode",
      currentReplicas: 2,
      readyReplicas: 2,
      signalState: "Missing" as const,
      reason: "WaitingForMetrics",
    },
  ],
  lastCommit: {
    decisionID: "d",
    term: 1,
    vector: { prefill: 2, decode: 2 },
    baselineVector: { prefill: 1, decode: 2 },
    timestamp: "2026-11-29T00:00:00Z",
    targetGeneration: 2,
  },
};

async function series(
  metrics: ScalerMetrics,
  name: string,
): Promise<{ labels: Record<string, string | number>; value: number }[]> {
  const metric = (await metrics.registry.getMetricsAsJSON()).find((m) => m.name === name);
  return (metric?.values ?? []) as { labels: Record<string, string | number>; value: number }[];
}

describe("own metrics", () => {
  const reports = roleReports(
    spec,
    status,
    { prefill: "Prefill", decode: "Decode" },
    {
      prefill: {
        readyReplicas: 2,
        sampledReplicas: 2,
        signalState: "Fresh",
        panicPromptTokensPerSecond: 3100,
        panicGenerationTokensPerSecond: 0,
        seriesUsed: { itl: { "vllm:time_per_output_token_seconds": 1, "vllm:inter_token_latency_seconds": 1 } },
      },
    },
  );
  const metrics = new ScalerMetrics({ defaultMetrics: false });
  metrics.report({
    namespace: "llm",
    scaler: "chat",
    target: "chat",
    mode: "Active",
    bindingTerm: 1,
    conditions: [{ type: "Blocked", status: "False", reason: "Ready" }],
    roles: reports,
  });

  it("takes demand and capacity from the core's rules; a role of unknown kind serves both, with no capacity", () => {
    const [prefill] = roleReports(spec, status, { prefill: "Prefill" });
    expect(prefill?.stableDemandTokensPerSecond).toBe(2400);
    expect(prefill?.capacityPerReplicaTokensPerSecond).toBe(2000);
    const [unknown] = roleReports(spec, status, {});
    expect(unknown?.stableDemandTokensPerSecond).toBe(2400);
    expect(unknown?.capacityPerReplicaTokensPerSecond).toBeUndefined();
    const [server] = roleReports(spec, status, { prefill: "Server" });
    // A Server serves prompt and generation tokens: 2400 + 0.
    expect(server?.stableDemandTokensPerSecond).toBe(2400);
  });

  it("reports the floor by the hour of the last pass, and none without floors or a pass time", () => {
    const floors = Array.from({ length: 24 }, (_, h) => (h === 14 ? 6 : 1));
    const floored = { ...spec, roles: spec.roles.map((r) => ({ ...r, floorReplicasByUtcHour: floors })) };
    const at = (lastPassTime: string) => roleReports(floored, { ...status, lastPassTime }, { prefill: "Prefill" });
    expect(at("2026-11-29T14:59:59Z")[0]?.hourlyFloorReplicas).toBe(6);
    expect(at("2026-11-29T15:00:00Z")[0]?.hourlyFloorReplicas).toBe(1);
    expect(roleReports(floored, status, { prefill: "Prefill" })[0]?.hourlyFloorReplicas).toBeUndefined();
    expect(
      roleReports(spec, { ...status, lastPassTime: "2026-11-29T14:00:00Z" })[0]?.hourlyFloorReplicas,
    ).toBeUndefined();
  });

  it("exports when the floors in force were calibrated, and nothing for a scaler without that date", async () => {
    expect(await series(metrics, "mds_scaler_floors_calibrated_timestamp_seconds")).toEqual([]);
    const dated = new ScalerMetrics({ defaultMetrics: false });
    const report = { target: "chat", mode: "Active", conditions: [], roles: [] };
    dated.report({ ...report, namespace: "llm", scaler: "chat", floorsCalibratedAtSeconds: 1_796_601_912 });
    dated.report({ ...report, namespace: "llm", scaler: "search" });
    expect(await series(dated, "mds_scaler_floors_calibrated_timestamp_seconds")).toEqual([
      { labels: { namespace: "llm", scaler: "chat", target: "chat" }, value: 1_796_601_912 },
    ]);
  });

  it("exports demand by window and the capacity it was divided by", async () => {
    const demand = await series(metrics, "mds_role_demand_tokens_per_second");
    expect(demand.filter((s) => s.labels["role"] === "prefill").map((s) => [s.labels["window"], s.value])).toEqual([
      ["stable", 2400],
      ["panic", 3100],
    ]);
    expect(
      (await series(metrics, "mds_role_capacity_tokens_per_second")).map((s) => [s.labels["role"], s.value]),
    ).toEqual([
      ["prefill", 2000],
      ["decode", 800],
    ]);
  });

  it("exports the queue time the queueing guard reads, and none where it is unknown", async () => {
    const queue = await series(metrics, "mds_role_queue_time_p95_milliseconds");
    expect(queue.map((s) => [s.labels["role"], s.value])).toEqual([["prefill", 300]]);
  });

  it("exports a queue-time target only where the scaler writes one, for the kinds judged on it", async () => {
    expect(await series(metrics, "mds_role_queue_time_target_milliseconds")).toEqual([]);
    const withTarget = withInferredAlgorithm(
      ScalerSpecSchema.parse({
        ...spec,
        algorithm: { tokenThroughput: { prefillTargetTokensPerSecond: "2000", queueTimeTargetMilliseconds: "1000" } },
      }),
    );
    const targeted = new ScalerMetrics({ defaultMetrics: false });
    targeted.report({
      namespace: "llm",
      scaler: "chat",
      target: "chat",
      mode: "Active",
      conditions: [],
      roles: roleReports(withTarget, status, { prefill: "Prefill", decode: "Decode" }),
    });
    expect(
      (await series(targeted, "mds_role_queue_time_target_milliseconds")).map((s) => [s.labels["role"], s.value]),
    ).toEqual([["prefill", 1000]]);
  });

  it("exports no number for an unknown figure: a Missing role has no demand series", async () => {
    const demand = await series(metrics, "mds_role_demand_tokens_per_second");
    expect(demand.filter((s) => s.labels["role"] === "decode")).toEqual([]);
    const state = await series(metrics, "mds_role_signal_state");
    expect(state.filter((s) => s.labels["role"] === "decode" && s.value === 1).map((s) => s.labels["state"])).toEqual([
      "Missing",
    ]);
  });

  it("exports which engine series each signal was read from, in pods", async () => {
    expect(
      (await series(metrics, "mds_role_signal_series_pods")).map((s) => [
        s.labels["role"],
        s.labels["signal"],
        s.labels["series"],
        s.value,
      ]),
    ).toEqual([
      ["prefill", "itl", "vllm:time_per_output_token_seconds", 1],
      ["prefill", "itl", "vllm:inter_token_latency_seconds", 1],
    ]);
  });

  it("exports conditions the kube-state-metrics way and the committed vector", async () => {
    expect(
      (await series(metrics, "mds_scaler_condition")).map((s) => [
        s.labels["type"],
        s.labels["status"],
        s.labels["reason"],
        s.value,
      ]),
    ).toEqual([["Blocked", "False", "Ready", 1]]);
    expect((await series(metrics, "mds_role_committed_replicas")).map((s) => s.value)).toEqual([2, 2]);
  });

  it("drops a role's series when the role leaves the report, and all series of a forgotten scaler", async () => {
    const m = new ScalerMetrics({ defaultMetrics: false });
    const base = { namespace: "llm", scaler: "chat", target: "chat", mode: "Active", conditions: [] };
    m.report({ ...base, roles: reports });
    m.commits.inc({ namespace: "llm", scaler: "chat", target: "chat" });
    m.report({ ...base, roles: reports.filter((r) => r.role === "prefill") });
    expect(new Set((await series(m, "mds_role_current_replicas")).map((s) => s.labels["role"]))).toEqual(
      new Set(["prefill"]),
    );
    m.forget("llm", "chat");
    expect(await series(m, "mds_role_current_replicas")).toEqual([]);
    expect(await series(m, "mds_commits_total")).toEqual([]);
  });
});

describe("leadership and controller health", () => {
  const base = { namespace: "llm", scaler: "chat", target: "chat", mode: "Active", conditions: [] };
  const labels = { namespace: "llm", scaler: "chat", target: "chat" };

  it("a replica that loses the Lease stops exporting every per-scaler series and its last pass", async () => {
    const m = new ScalerMetrics({ defaultMetrics: false });
    m.setLeading(true);
    m.report({ ...base, roles: [{ role: "decode", currentReplicas: 2, readyReplicas: 2, signalState: "Fresh" }] });
    m.commits.inc(labels);
    m.commitFailures.inc(labels);
    m.scalerError("llm", "chat", "reconcile");
    m.passEnded(1_764_000_000_000);
    expect(await series(m, "mds_leader")).toEqual([{ labels: {}, value: 1 }]);
    expect(await series(m, "mds_last_pass_timestamp_seconds")).toEqual([{ labels: {}, value: 1_764_000_000 }]);
    expect(await series(m, "mds_role_current_replicas")).toHaveLength(1);

    m.setLeading(false);
    // A pass that was running when the Lease was lost still reports: a follower exports none of it.
    m.report({ ...base, roles: [{ role: "decode", currentReplicas: 3, readyReplicas: 3, signalState: "Fresh" }] });
    m.commits.inc(labels);
    expect(await series(m, "mds_leader")).toEqual([{ labels: {}, value: 0 }]);
    for (const name of [
      "mds_last_pass_timestamp_seconds",
      "mds_role_current_replicas",
      "mds_scaler_mode",
      "mds_commits_total",
      "mds_commit_failures_total",
      "mds_errors_total",
    ])
      expect(await series(m, name), name).toEqual([]);
  });

  it("a scaler's counters start at zero with its first report", async () => {
    const m = new ScalerMetrics({ defaultMetrics: false });
    m.report({ ...base, roles: [] });
    for (const name of ["mds_commits_total", "mds_commit_failures_total", "mds_rollbacks_total"])
      expect(
        (await series(m, name)).map((s) => [s.labels, s.value]),
        name,
      ).toEqual([[labels, 0]]);
  });

  it("a replica that leads again continues its counters, and drops those of scalers deleted meanwhile", async () => {
    const m = new ScalerMetrics({ defaultMetrics: false });
    m.report({ ...base, roles: [] });
    m.report({ ...base, scaler: "gone", target: "gone", roles: [] });
    m.commits.inc(labels);
    m.setLeading(false);
    expect(await series(m, "mds_commits_total")).toEqual([]);
    m.setLeading(true);
    // Figures are reported afresh by the new leadership's passes; counts carry on.
    expect(await series(m, "mds_scaler_mode")).toEqual([]);
    expect(await series(m, "mds_last_pass_timestamp_seconds")).toEqual([]);
    m.commits.inc(labels);
    expect((await series(m, "mds_commits_total")).map((s) => [s.labels["scaler"], s.value])).toEqual([
      ["chat", 2],
      ["gone", 0],
    ]);
    m.retain(new Set(["llm/chat"]));
    expect((await series(m, "mds_commits_total")).map((s) => [s.labels["scaler"], s.value])).toEqual([["chat", 2]]);
    expect(new Set((await series(m, "mds_errors_total")).map((s) => s.labels["scaler"]))).toEqual(
      new Set([undefined, "chat"]),
    );
  });

  it("labels a scaler's errors with its namespace and name, and forgets them with the scaler", async () => {
    const m = new ScalerMetrics({ defaultMetrics: false });
    m.report({ ...base, roles: [] });
    m.scalerError("llm", "chat", "conflict");
    m.errors.inc({ kind: "prometheus" });
    const errors = async (): Promise<[Record<string, string | number>, number][]> =>
      (await series(m, "mds_errors_total")).map((s) => [s.labels, s.value]);
    // Every kind starts at zero, so rate() reads 0 rather than no data before the first error.
    expect(await errors()).toEqual([
      [{ kind: "kubernetes" }, 0],
      [{ kind: "invalid_scaler" }, 0],
      [{ kind: "prometheus" }, 1],
      [{ kind: "conflict", namespace: "llm", scaler: "chat" }, 1],
      [{ kind: "reconcile", namespace: "llm", scaler: "chat" }, 0],
    ]);
    m.forget("llm", "chat");
    expect(await errors()).toEqual([
      [{ kind: "kubernetes" }, 0],
      [{ kind: "invalid_scaler" }, 0],
      [{ kind: "prometheus" }, 1],
    ]);
  });
});

describe("query and admission timings", () => {
  /** The `_count` series of a histogram. */
  async function counts(metrics: ScalerMetrics, name: string): Promise<{ labels: object; value: number }[]> {
    const metric = (await metrics.registry.getMetricsAsJSON()).find((m) => m.name === name);
    return (metric?.values ?? [])
      .filter((v) => (v as { metricName?: string }).metricName === `${name}_count`)
      .map((v) => ({ labels: v.labels, value: v.value }));
  }

  it("labels a PromQL query by its first 40 characters (whitespace then collapsed), so the label set stays bounded", async () => {
    const metrics = new ScalerMetrics({ defaultMetrics: false });
    const query = `sum by (namespace, pod) (\n    rate(vllm:prompt_tokens_total[1m])\n)`;
    metrics.timeQuery(query)();
    metrics.timeQuery(`${query} + 0`)();
    const found = await counts(metrics, "mds_promql_query_duration_seconds");
    expect(found).toEqual([{ labels: { query: "sum by (namespace, pod) ( rate(vllm:" }, value: 2 }]);
  });

  it("labels a named query by its name, which is what the Controller dashboard's legend shows", async () => {
    const metrics = new ScalerMetrics({ defaultMetrics: false });
    metrics.timeQuery(
      `label_replace(sum by (namespace, pod) (vllm:num_requests_running), "x", "y", "", "")`,
      "gauges",
    )();
    metrics.timeQuery("sum(rate(vllm:prompt_tokens_total[3m]))", "counters")();
    const found = await counts(metrics, "mds_promql_query_duration_seconds");
    expect(found.map((s) => s.labels)).toEqual([{ query: "gauges" }, { query: "counters" }]);
  });

  it("labels an admission answer by webhook, verdict and code, 200 when the verdict has none", async () => {
    const metrics = new ScalerMetrics({ defaultMetrics: false });
    metrics.observeWebhookAnswer("fence", { allowed: true }, 0.002);
    metrics.observeWebhookAnswer("validate-scaler", { allowed: false, code: 422 }, 0.004);
    const found = await counts(metrics, "mds_webhook_duration_seconds");
    expect(found.map((s) => s.labels)).toEqual([
      { webhook: "fence", allowed: "true", code: "200" },
      { webhook: "validate-scaler", allowed: "false", code: "422" },
    ]);
  });
});
