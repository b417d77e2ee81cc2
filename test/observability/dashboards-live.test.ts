/**
 * Every dashboard panel, with its variables filled from the dashboard's own
 * variable queries the way Grafana fills "All", returns data from a real
 * Prometheus that scrapes the controller's metrics (with honor_labels, as the
 * chart's ServiceMonitor does) and simulated vLLM and SGLang engine pods
 * (labelled as the chart's PodMonitor labels them). Per-scaler and engine
 * panels carry the scaler's own namespace, not the controller's.
 */
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ScalerMetrics, type RoleReport } from "../../src/adapters/telemetry/metrics.js";
import { dashboards } from "../../src/dashboards/index.js";
import { EngineFleet, FleetServer, SyntheticWorkload } from "../../src/sim/engines/index.js";
import { PrometheusHarness } from "../../harness/prometheus.js";

const workloadNamespace = "llm";
const controllerNamespace = "mds-system";
const dir = join(import.meta.dirname, "..", "..", "dashboards");

interface DashboardJson {
  panels: { type: string; title: string; targets?: { expr: string }[] }[];
  templating: { list: { name: string; type: string; query?: unknown }[] };
}
interface Sample {
  metric: Record<string, string>;
}

let fleet: EngineFleet;
let engines: FleetServer;
let controller: Server;
let prometheus: PrometheusHarness;

function role(name: string, engineRole: "prefill" | "decode" | "server"): RoleReport {
  return {
    role: name,
    currentReplicas: 2,
    readyReplicas: 2,
    rawRecommendedReplicas: 3,
    constrainedReplicas: 3,
    committedReplicas: 2,
    hourlyFloorReplicas: 2,
    stableDemandTokensPerSecond: 900,
    panicDemandTokensPerSecond: 1100,
    forecastDemandTokensPerSecond: 1000,
    capacityPerReplicaTokensPerSecond: 400,
    ttftMilliseconds: 300,
    queueTimeMilliseconds: 100,
    itlMilliseconds: 30,
    runningRequests: 4,
    waitingRequests: 1,
    kvCacheUsage: 0.4,
    signalState: "Fresh",
    reason: "TokenThroughput",
    panic: false,
    predictorLevelTokensPerSecond: 950,
    predictorTrendTokensPerSecondPerSecond: 0.5,
    seriesUsed: { promptDemand: { "vllm:prompt_tokens_total": 2 } },
    // TTFT and queue time guard prefill and unified roles, ITL decode and unified roles.
    ...(engineRole === "decode" ? {} : { ttftTargetMilliseconds: 500, queueTimeTargetMilliseconds: 1000 }),
    ...(engineRole === "prefill" ? {} : { itlTargetMilliseconds: 50 }),
  };
}

/** The controller's registry as a leader that passed over two scalers in the workload namespace. */
function controllerMetrics(): ScalerMetrics {
  const metrics = new ScalerMetrics();
  metrics.setLeading(true);
  const conditions = [
    { type: "Bound", status: "True", reason: "Bound" },
    { type: "Active", status: "True", reason: "Active" },
    { type: "MetricsReady", status: "True", reason: "Ready" },
    { type: "Blocked", status: "False", reason: "Ready" },
  ];
  for (const [scaler, roles] of [
    ["chat", [role("prefill", "prefill"), role("decode", "decode")]],
    ["search", [role("server", "server")]],
  ] as const) {
    metrics.report({
      namespace: workloadNamespace,
      scaler,
      target: scaler,
      mode: "Active",
      bindingTerm: 1,
      // chat writes floors by the hour, calibrated an hour ago; search writes none.
      ...(scaler === "chat" ? { floorsCalibratedAtSeconds: Date.now() / 1000 - 3600 } : {}),
      conditions,
      roles,
    });
    metrics.commits.inc({ namespace: workloadNamespace, scaler, target: scaler });
  }
  metrics.passDuration.observe(0.02);
  metrics.passEnded(Date.now());
  metrics.queryDuration.observe({ query: "sum by (namespace) (rate(vllm:prompt" }, 0.01);
  metrics.webhookDuration.observe({ webhook: "fence", allowed: "true", code: "200" }, 0.003);
  metrics.webhookDuration.observe({ webhook: "validate-scaler", allowed: "false", code: "422" }, 0.004);
  return metrics;
}

async function query(promql: string): Promise<Sample[]> {
  const response = await fetch(`${prometheus.url}/api/v1/query?query=${encodeURIComponent(promql)}`, {
    signal: AbortSignal.timeout(10_000),
  });
  const body = (await response.json()) as { status: string; error?: string; data?: { result: Sample[] } };
  if (body.status !== "success") throw new Error(`${promql}: ${body.error ?? response.status}`);
  return body.data?.result ?? [];
}

/** Label values a `label_values(selector, label)` variable offers, from the series API as Grafana asks. */
async function labelValues(definition: string): Promise<string[]> {
  const m = /^label_values\((.*), *(\w+)\)$/.exec(definition);
  if (m === null) throw new Error(`not a label_values() query: ${definition}`);
  const [, selector = "", label = ""] = m;
  const response = await fetch(`${prometheus.url}/api/v1/series?match[]=${encodeURIComponent(selector)}`, {
    signal: AbortSignal.timeout(10_000),
  });
  const body = (await response.json()) as { data: Record<string, string>[] };
  return [...new Set(body.data.map((s) => s[label] ?? "").filter((v) => v !== ""))].sort();
}

/** Grafana's interpolation of a multi-value "All" into a Prometheus regex: (a|b), regex-escaped. */
function allRegex(values: readonly string[]): string {
  return `(${values.map((v) => v.replace(/[\\^$*+?.()|[\]{}]/g, "\\\\$&")).join("|")})`;
}

function substitute(expr: string, variables: ReadonlyMap<string, string>): string {
  let out = expr.replaceAll("$__rate_interval", "1m");
  for (const [name, value] of variables) out = out.replace(new RegExp(`\\$${name}\\b`, "g"), value);
  return out;
}

beforeAll(async () => {
  const startSeconds = Date.now() / 1000;
  fleet = new EngineFleet({ startSeconds, recordEverySeconds: 0.25, recordHistorySeconds: 30 });
  const workload = (seed: number): SyntheticWorkload =>
    new SyntheticWorkload({
      seed,
      startSeconds,
      requestsPerSecond: 10,
      arrivals: "uniform",
      promptTokens: { kind: "fixed", tokens: 256 },
      outputTokens: { kind: "uniform", minTokens: 16, maxTokens: 32 },
      streamingFraction: 1,
    });
  const capacity = { decodeTokensPerSecond: 400, maxTokensPerSecondPerRequest: 40 };
  fleet.addDeployment({
    namespace: workloadNamespace,
    name: "chat",
    engine: "vllm",
    kvTransferSeconds: 0.1,
    roles: [
      { name: "prefill", serving: "prefill", replicas: 1, capacity },
      { name: "decode", serving: "decode", replicas: 1, capacity },
    ],
    workload: workload(1),
  });
  fleet.addDeployment({
    namespace: workloadNamespace,
    name: "search",
    engine: "sglang",
    roles: [{ name: "server", serving: "unified", replicas: 1, tensorParallelSize: 2, capacity }],
    workload: workload(2),
  });
  engines = new FleetServer({ fleet });
  await engines.start();

  const metrics = controllerMetrics();
  controller = createServer((_req, res) => {
    void metrics.registry.metrics().then((text) => {
      res.writeHead(200, { "Content-Type": metrics.registry.contentType }).end(text);
    });
  });
  await new Promise<void>((resolve) => controller.listen(0, "127.0.0.1", resolve));
  const controllerTarget = {
    targets: [`127.0.0.1:${(controller.address() as AddressInfo).port}`],
    labels: { namespace: controllerNamespace, pod: "mds-scaler-0" },
  };
  prometheus = await PrometheusHarness.start({
    scrapeIntervalSeconds: 1,
    honorLabels: true,
    targets: [...engines.fileSdGroups(), controllerTarget],
  });
  await prometheus.waitForHealthyTargets(fleet.listPods().length + 1);
  // Rates and quantiles need two scrapes and some served requests in their window.
  const deadline = Date.now() + 30_000;
  while (Date.now() < deadline) {
    // Three samples of every role's counters, and tokens flowing in both engines.
    const ready = await query(
      `count(count by (app_kubernetes_io_component) (count_over_time(vllm:prompt_tokens_total[1m]) >= 3 or count_over_time(sglang:prompt_tokens_total[1m]) >= 3)) == 3` +
        ` and on () count(rate(vllm:generation_tokens_total[1m]) > 0) and on () count(rate(sglang:generation_tokens_total[1m]) > 0)`,
    );
    if (ready.length > 0) break;
    await new Promise((r) => setTimeout(r, 500));
  }
}, 90_000);

afterAll(async () => {
  await prometheus?.stop();
  await engines?.stop();
  await new Promise<void>((resolve) => (controller ? controller.close(() => resolve()) : resolve()));
});

describe.each(Object.keys(dashboards))("dashboards/%s in a real Prometheus", (file) => {
  const dashboard = JSON.parse(readFileSync(join(dir, file), "utf8")) as DashboardJson;
  const isController = file === "mds-scaler-controller.json";

  it("fills every variable from its own query, and every panel query returns data", async () => {
    const variables = new Map<string, string>();
    for (const v of dashboard.templating.list.filter((x) => x.type === "query")) {
      const values = await labelValues(substitute(String(v.query), variables));
      expect(values, `variable ${v.name}`).not.toEqual([]);
      if (v.name === "namespace") expect(values).toEqual([isController ? controllerNamespace : workloadNamespace]);
      variables.set(v.name, allRegex(values));
    }
    const empty: string[] = [];
    const wrongNamespace: string[] = [];
    for (const panel of dashboard.panels.filter((p) => p.type !== "row")) {
      for (const target of panel.targets ?? []) {
        const result = await query(substitute(target.expr, variables));
        if (result.length === 0) empty.push(`${panel.title}: ${target.expr}`);
        const expected = isController ? controllerNamespace : workloadNamespace;
        for (const sample of result)
          if (sample.metric["namespace"] !== undefined && sample.metric["namespace"] !== expected)
            wrongNamespace.push(`${panel.title}: ${JSON.stringify(sample.metric)}`);
        if (!isController && result.some((s) => s.metric["namespace"] === undefined))
          wrongNamespace.push(`${panel.title}: a series without namespace`);
      }
    }
    expect(empty).toEqual([]);
    expect(wrongNamespace).toEqual([]);
  });
});

describe("dashboards/mds-scaler-engines.json", () => {
  it("shows the roles of both engines, vLLM and SGLang", async () => {
    const dashboard = JSON.parse(readFileSync(join(dir, "mds-scaler-engines.json"), "utf8")) as DashboardJson;
    const tokens = dashboard.panels.find((p) => p.title === "Prompt and generation tokens per second");
    const expr = tokens?.targets?.[0]?.expr ?? "";
    const all = new Map([
      ["namespace", ".*"],
      ["target", ".*"],
      ["role", ".*"],
    ]);
    const roles = (await query(substitute(expr, all))).map((s) => s.metric["app_kubernetes_io_component"]);
    expect(new Set(roles)).toEqual(new Set(["decode", "prefill", "server"]));
  });
});
