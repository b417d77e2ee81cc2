/**
 * `mds-scaler calibrate` against a real Prometheus (Debian's 2.42) serving
 * TSDB blocks that promtool built from constructed vLLM series whose answer is
 * known: deployment `chat` carries 1000, 2000, then 3000 tokens/s per replica
 * for ten minutes each, with TTFT and queue time within a 1500 ms target up to
 * 2000 and at 2.5 s at 3000; deployment `long` has the same loads, a TTFT
 * above the target at every load (its prompts' own prefill) and waiting only
 * at 3000; deployment `quiet` carries 500 throughout and exports no queue time. The page `--report` writes renders in headless Chromium.
 */
import { execFile } from "node:child_process";
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parse, parseAllDocuments } from "yaml";
import { runCalibrate } from "../../src/cli/calibrate.js";
import { PrometheusHarness } from "../../harness/prometheus.js";
import { CoreV1Api, CustomObjectsApi } from "@kubernetes/client-node";
import { startControlPlane, type ControlPlane } from "../../harness/kube/index.js";
import { KubeResources } from "../../src/adapters/kubernetes/resources.js";
import { floorsCalibratedAnnotation } from "../../src/core/api/floors-calibrated.js";
import { applyCalibratedSpec } from "../../src/cli/calibrate/apply.js";
import { loadModelDeploymentCrd, loadScalerCrd } from "../support/crds.js";
import { validateScaler } from "../../src/core/api/validation.js";
import { runHelm, runKubectl } from "../../harness/helm.js";
import { renderedDom } from "../support/chromium.js";
import { memoryIo } from "../support/memory-io.js";

const run = promisify(execFile);
const root = fileURLToPath(new URL("../../", import.meta.url));
const dir = mkdtempSync(join(tmpdir(), "mds-calibrate-prom-"));
const scrapeSeconds = 15;
const minutes = 30;
/** A whole minute three hours ago: inside retention, before the head block. */
const t0 = Math.floor(Date.now() / 3_600_000) * 3600 - 3 * 3600;
const ttftBounds = [0.1, 0.25, 0.5, 1, 2.5, 5, Infinity];
const itlBounds = [0.01, 0.025, 0.05, 0.1, Infinity];
const queueBounds = [0.05, 0.25, 1, 2.5, 5, Infinity];

interface Deployment {
  readonly name: string;
  /** Tokens/s per pod (cache-missed prompt + generation) in minute k (1-based). */
  readonly load: (minute: number) => number;
  /** Where this minute's TTFT and queue-time observations fall (seconds, a bucket bound). */
  readonly latency: (minute: number) => { ttft: number; queue: number };
  readonly queueSeries: boolean;
  /** Also served the same thirty minutes the day before (the floors by the hour read them). */
  readonly dayBefore?: boolean;
}

const secondsPerDay = 86_400;

const deployments: readonly Deployment[] = [
  {
    name: "chat",
    load: (k) => (k <= 10 ? 1000 : k <= 20 ? 2000 : 3000),
    latency: (k) => (k <= 20 ? { ttft: 0.25, queue: 0.05 } : { ttft: 2.5, queue: 2.5 }),
    queueSeries: true,
  },
  {
    name: "long",
    load: (k) => (k <= 10 ? 1000 : k <= 20 ? 2000 : 3000),
    latency: (k) => (k <= 20 ? { ttft: 2.5, queue: 0.05 } : { ttft: 5, queue: 2.5 }),
    queueSeries: true,
  },
  { name: "quiet", load: () => 500, latency: () => ({ ttft: 0.25, queue: 0.05 }), queueSeries: false },
  {
    name: "daily",
    load: (k) => (k <= 10 ? 1000 : k <= 20 ? 2000 : 3000),
    latency: (k) => (k <= 20 ? { ttft: 0.25, queue: 0.05 } : { ttft: 2.5, queue: 2.5 }),
    queueSeries: true,
    dayBefore: true,
  },
];

/** Scrape after scrape, every series in time order, as promtool wants it. */
function openMetrics(): string {
  const lines: string[] = [];
  const state = new Map<string, number>();
  const add = (key: string, by: number): number => {
    const v = (state.get(key) ?? 0) + by;
    state.set(key, v);
    return v;
  };
  for (const start of [t0 - secondsPerDay, t0])
    for (let s = 0; s <= (minutes + 1) * (60 / scrapeSeconds); s++) {
      const ts = start - 60 + s * scrapeSeconds;
      // The interval (ts − 15, ts] belongs to the minute holding ts.
      const minute = Math.max(1, Math.ceil((ts - start) / 60));
      for (const d of deployments.filter((d) => start === t0 || d.dayBefore === true)) {
        for (const pod of [`${d.name}-0`, `${d.name}-1`]) {
          const labels = `namespace="serving",pod="${pod}",app_kubernetes_io_instance="${d.name}",app_kubernetes_io_component="server",instance="${pod}:8000",model_name="m"`;
          const first = s === 0 && state.get(`${pod}/prompt_tokens_total`) === undefined;
          const load = first ? 0 : d.load(minute) * scrapeSeconds;
          // prompt 1000 per 1000 of load, of which 200 are cache hits, plus 200 generated: 800 + 200 = 1000.
          const counter = (name: string, share: number): void => {
            lines.push(`vllm:${name}{${labels}} ${add(`${pod}/${name}`, share * load)} ${ts}`);
          };
          counter("prompt_tokens_total", 1);
          counter("prefix_cache_hits_total", 0.2);
          counter("generation_tokens_total", 0.2);
          const observations = first ? 0 : 2;
          const { ttft, queue } = d.latency(minute);
          const histogram = (name: string, bounds: readonly number[], at: number): void => {
            for (const le of bounds) {
              const v = add(`${pod}/${name}/${le}`, le >= at ? observations : 0);
              lines.push(`vllm:${name}_bucket{${labels},le="${le === Infinity ? "+Inf" : String(le)}"} ${v} ${ts}`);
            }
            lines.push(`vllm:${name}_count{${labels}} ${add(`${pod}/${name}/count`, observations)} ${ts}`);
            lines.push(`vllm:${name}_sum{${labels}} ${add(`${pod}/${name}/sum`, observations * at)} ${ts}`);
          };
          histogram("time_to_first_token_seconds", ttftBounds, ttft);
          histogram("inter_token_latency_seconds", itlBounds, 0.025);
          if (d.queueSeries) histogram("request_queue_time_seconds", queueBounds, queue);
          lines.push(`vllm:num_requests_running{${labels}} 4 ${ts}`);
          lines.push(`vllm:num_requests_waiting{${labels}} 0 ${ts}`);
          lines.push(`vllm:kv_cache_usage_perc{${labels}} 0.3 ${ts}`);
        }
      }
    }
  return `${lines.join("\n")}\n# EOF\n`;
}

function files(deployment: string, serverTarget: string): { scaler: string; target: string } {
  const scaler = join(dir, `${deployment}-scaler.yaml`);
  writeFileSync(
    scaler,
    `apiVersion: worker.gpustack.ai/v1
kind: ModelDeploymentScaler
metadata: {name: ${deployment}, namespace: serving}
spec:
  targetRef: {name: ${deployment}}
  mode: Active
  roles: [{name: server, maxReplicas: 8}]
  algorithm:
    tokenThroughput: {serverTargetTokensPerSecond: "${serverTarget}", ttftTargetMilliseconds: "1500", itlTargetMilliseconds: "50"}
`,
  );
  const target = join(dir, `${deployment}-target.yaml`);
  writeFileSync(
    target,
    `apiVersion: worker.gpustack.ai/v1
kind: ModelDeployment
metadata: {name: ${deployment}, namespace: serving, uid: u-${deployment}, generation: 1, resourceVersion: "1"}
spec:
  roles: [{name: server, kind: Server, replicas: 2}]
status:
  roles: [{name: server, desired: 2, ready: 2, quotaReserved: 2}]
`,
  );
  return { scaler, target };
}

let prometheus: PrometheusHarness;

beforeAll(async () => {
  const text = join(dir, "series.om");
  writeFileSync(text, openMetrics());
  const storage = join(dir, "tsdb");
  await run("promtool", ["tsdb", "create-blocks-from", "openmetrics", text, storage], { maxBuffer: 16 * 2 ** 20 });
  // The blocks span a day and a half (the day before for the floors): keep them all.
  prometheus = await PrometheusHarness.start({ storagePath: storage, retentionTime: "3d" });
}, 120_000);

afterAll(async () => {
  await prometheus?.stop();
});

interface JsonRole {
  minutes: number;
  queueTime: string;
  skipped: Record<string, number>;
  bands: { fromTokensPerSecond: number; minutes: number; verdict: string; broken: Record<string, number> }[];
  answer: { kind: string; tokensPerSecondPerReplica?: number; heldUpToTokensPerSecondPerReplica?: number };
  demandSwing?: { largestRatio: number; endSeconds: number; windows: number };
}

async function calibrateJson(deployment: string, extra: readonly string[] = []): Promise<JsonRole> {
  const { scaler, target } = files(deployment, "1000");
  const io = memoryIo();
  const period = ["--start", String(t0), "--end", String(t0 + 60 * minutes)];
  const code = await runCalibrate(
    ["--prometheus-url", prometheus.url, "-f", scaler, "--target", target, ...period, "-o", "json", ...extra],
    io,
  );
  expect(code, io.err).toBe(0);
  return (JSON.parse(io.out) as { roles: JsonRole[] }).roles[0] as JsonRole;
}

describe("calibrate against a real Prometheus", () => {
  it("finds the band where the targets broke and gives the load below it", async () => {
    const report = join(dir, "report.html");
    const role = await calibrateJson("chat", ["--report", report]);
    expect(role.minutes).toBe(minutes);
    expect(role.skipped).toEqual({});
    expect(role.queueTime).toBe("read");
    expect(role.bands.map((b) => [b.fromTokensPerSecond, b.minutes, b.verdict])).toEqual([
      [1000, 10, "held"],
      [2000, 10, "held"],
      [3000, 10, "broke"],
    ]);
    expect(role.bands[2]?.broken).toEqual({ ttft: 10 });
    expect(role.answer.kind).toBe("calibrated");
    // 2000 tok/s per replica, rounded down to three figures (Prometheus' float arithmetic may land a hair under).
    expect(role.answer.tokensPerSecondPerReplica).toBeGreaterThanOrEqual(1990);
    expect(role.answer.tokensPerSecondPerReplica).toBeLessThanOrEqual(2000);
    // The load doubled at minute 11 (1000 → 2000) and rose by half at minute 21: the swing is the doubling,
    // measured over the 27 windows of four adjacent minutes in 30.
    expect(role.demandSwing?.largestRatio).toBe(2);
    expect(role.demandSwing?.endSeconds).toBe(t0 + 11 * 60);
    expect(role.demandSwing?.windows).toBe(minutes - 3);

    const html = readFileSync(report, "utf8");
    expect(html).not.toMatch(/<script[^>]+src=|<link[^>]+href=/);
    const stdout = await renderedDom(report);
    expect(stdout).toMatch(/<section data-chart="server" data-rendered="true">[\s\S]*?<canvas/);
  }, 120_000);

  it("reads a week ending with the half hour: the same bands from its minutes with series, every other minute skipped", async () => {
    const { scaler, target } = files("chat", "1000");
    const io = memoryIo();
    const end = t0 + 60 * minutes;
    const week = ["--start", String(end - 7 * secondsPerDay), "--end", String(end)];
    const code = await runCalibrate(
      ["--prometheus-url", prometheus.url, "-f", scaler, "--target", target, ...week, "-o", "json"],
      io,
    );
    expect(code, io.err).toBe(0);
    const role = (JSON.parse(io.out) as { roles: JsonRole[] }).roles[0] as JsonRole;
    // The series begin a minute before t0, carrying the first minute's load: the minute ending at t0, outside
    // the half hour (t0, t0 + 30 min] the other tests read, is a minute of the week.
    expect(role.minutes).toBe(minutes + 1);
    expect(Object.values(role.skipped).reduce((a, b) => a + b, 0)).toBe(7 * 24 * 60 - minutes - 1);
    expect(role.bands.map((b) => [b.fromTokensPerSecond, b.minutes, b.verdict])).toEqual([
      [1000, 11, "held"],
      [2000, 10, "held"],
      [3000, 10, "broke"],
    ]);
  }, 120_000);

  it("on queueing, finds where waiting began although TTFT was above its target at every load", async () => {
    const literal = await calibrateJson("long", ["--latency-guard-reading", "literal"]);
    expect(literal.answer.kind).toBe("targets never held");
    const queueing = await calibrateJson("long", ["--latency-guard-reading", "queueing"]);
    expect(queueing.queueTime).toBe("read");
    expect(queueing.bands.map((b) => [b.fromTokensPerSecond, b.verdict])).toEqual([
      [1000, "held"],
      [2000, "held"],
      [3000, "broke"],
    ]);
    expect(queueing.answer.kind).toBe("calibrated");
    expect(queueing.answer.tokensPerSecondPerReplica).toBeGreaterThanOrEqual(1990);
    expect(queueing.answer.tokensPerSecondPerReplica).toBeLessThanOrEqual(2000);
  });

  it("says not enough evidence, judged by TTFT alone, where the replicas never came near their limit", async () => {
    const role = await calibrateJson("quiet");
    expect(role.minutes).toBe(minutes);
    expect(role.queueTime).toBe("absent");
    expect(role.bands.map((b) => [b.fromTokensPerSecond, b.verdict])).toEqual([[500, "held"]]);
    expect(role.answer.kind).toBe("not enough evidence");
    expect(role.answer.heldUpToTokensPerSecondPerReplica).toBeGreaterThanOrEqual(495);
  });

  it("prints the table and writes the scaler with the figure", async () => {
    const { scaler, target } = files("chat", "1000");
    const out = join(dir, "calibrated.yaml");
    const io = memoryIo();
    const args = ["--prometheus-url", prometheus.url, "-f", scaler, "--target", target, "--start", String(t0)];
    expect(await runCalibrate([...args, "--end", String(t0 + 60 * minutes), "--write-scaler", out], io)).toBe(0);
    expect(io.out).toMatch(/ROLE server \(Server\): 30 minutes of evidence; queue time read/);
    // Each p95 inside its bucket: all of the minute's observations in (1, 2.5 s] read as 2,425 ms.
    expect(io.out).toMatch(/3000–3500\s+10\s+0\.0 %\s+2425\s+2425\s+24\.25\s+broke/);
    expect(io.out).toMatch(
      /spec:.*\n {2}algorithm:\n {4}tokenThroughput:\n {6}serverTargetTokensPerSecond: "(199\d|2000)"\n$/,
    );
    expect(readFileSync(out, "utf8")).toMatch(/serverTargetTokensPerSecond: "(199\d|2000)"/);
  });

  it("writes the floors by the UTC hour from the 24 hours before the period (--hourly-floors-from prometheus)", async () => {
    const { scaler, target } = files("daily", "1000");
    const io = memoryIo();
    const period = ["--start", String(t0), "--end", String(t0 + 60 * minutes)];
    const args = ["--prometheus-url", prometheus.url, "-f", scaler, "--target", target, ...period];
    expect(await runCalibrate([...args, "--hourly-floors-from", "prometheus", "-o", "scaler"], io), io.err).toBe(0);
    const floors = /floorReplicasByUtcHour:\n((?: {8}- \d+\n){24})/.exec(io.out)?.[1]?.match(/\d+/g)?.map(Number);
    const figure = Number(/serverTargetTokensPerSecond: "(\d+)"/.exec(io.out)?.[1]);
    expect(floors).toHaveLength(24);
    // The day before carried up to 3000 tok/s per pod on two pods in its minutes t0 − 24 h … + 30 min: at the
    // figure (about 2000), 6000 tok/s asks for 3 or 4 replicas, in the hour holding those minutes and any hour
    // whose half-hour margin reaches them; every other hour read nothing and raises nothing.
    const hourOf = (unixSeconds: number): number => new Date(unixSeconds * 1000).getUTCHours();
    const busyHours = new Set<number>();
    for (let m = 0; m < minutes; m++) {
      const at = t0 + m * 60;
      for (const h of [hourOf(at - 1800), hourOf(at), hourOf(at + 1800)]) busyHours.add(h);
    }
    for (const [h, f] of (floors ?? []).entries()) {
      if (busyHours.has(h)) expect(f, `hour ${h}`).toBeGreaterThanOrEqual(1);
      else expect(f, `hour ${h}`).toBe(1);
    }
    expect(floors?.[hourOf(t0 + 25 * 60)]).toBe(Math.ceil(6000 / figure));
  }, 600_000);

  describe("--swing-from prometheus: the docs' step for replacing a fleet, from the same hours of the day before", () => {
    interface Written {
      spec: {
        roles: { minReplicas?: number; maxReplicas: number }[];
        algorithm: { tokenThroughput: Record<string, string> };
      };
    }
    const written = (out: string): Written => parse(out.replace(/^#.*\n/gm, "")) as Written;

    async function stepped(startSeconds: number, extra: readonly string[]): Promise<ReturnType<typeof memoryIo>> {
      const { scaler, target } = files("daily", "1000");
      const io = memoryIo();
      const period = ["--start", String(startSeconds), "--end", String(t0 + 60 * minutes)];
      const args = ["--prometheus-url", prometheus.url, "-f", scaler, "--target", target, ...period];
      expect(await runCalibrate([...args, "--swing-from", "prometheus", ...extra, "-o", "scaler"], io), io.err).toBe(0);
      return io;
    }

    it("holds the role at its fleet where those hours doubled within a minute (1000 to 2000 tok/s a replica)", async () => {
      // The default two hours from t0 − 24 h hold the day before's 30 minutes: 1000, 2000, then 3000 per pod.
      const io = await stepped(t0, []);
      expect(written(io.out).spec.roles[0]).toMatchObject({ minReplicas: 8, maxReplicas: 8 });
      const swing = Number(/the demand swung ([\d.]+) ×, above 1\.65$/m.exec(io.out)?.[1]);
      expect(swing).toBeGreaterThan(1.65);
      expect(swing).toBeLessThanOrEqual(2);
      // Its first ten minutes alone (1000 a pod throughout) swung 1: the period bounds what the step reads.
      const calm = await stepped(t0, ["--swing-period", "10m"]);
      expect(written(calm.out).spec.roles[0]?.minReplicas ?? 1).toBe(1);
      expect(calm.out).not.toMatch(/held at its fleet/);
    }, 600_000);

    it("writes the scaler as calibrated where the hours from the period's start, a day earlier, rose by half", async () => {
      // From minute 13 the day before carried 2000, then 3000: a swing of 1.5 over the 30 minutes read.
      const io = await stepped(t0 + 12 * 60, ["--swing-period", "30m"]);
      const scaler = written(io.out);
      expect(scaler.spec.roles[0]?.minReplicas ?? 1).toBe(1);
      expect(scaler.spec.roles[0]?.maxReplicas).toBe(8);
      expect(scaler.spec.algorithm.tokenThroughput["serverTargetTokensPerSecond"]).toMatch(/^(199\d|2000)$/);
      const table = memoryIo();
      const { scaler: file, target } = files("daily", "1000");
      const args = ["--prometheus-url", prometheus.url, "-f", file, "--target", target];
      const period = ["--start", String(t0 + 12 * 60), "--end", String(t0 + 60 * minutes)];
      expect(
        await runCalibrate([...args, ...period, "--swing-from", "prometheus", "--swing-period", "30m"], table),
      ).toBe(0);
      expect(table.out).toMatch(
        /the demand swung at most 1\.5\d* ×, at most 1\.65; the scaler written replaces the fleet/,
      );
      // The day before's read: the 30 minutes from the period's start, 24 hours earlier.
      const from = new Date((t0 + 12 * 60 - 86_400) * 1000).toISOString();
      const to = new Date((t0 + 42 * 60 - 86_400) * 1000).toISOString();
      expect(table.out).toContain(`the day before (serving/daily in ${prometheus.url}, ${from} to ${to}): `);
    }, 600_000);

    it("names the flag and the value of a period longer than the day before", async () => {
      const { scaler, target } = files("daily", "1000");
      const io = memoryIo();
      const args = ["--prometheus-url", prometheus.url, "-f", scaler, "--target", target, "--start", String(t0)];
      expect(await runCalibrate([...args, "--swing-from", "prometheus", "--swing-period", "25h"], io)).toBe(2);
      expect(io.err).toMatch(/--swing-period: "25h" is longer than the day before \(at most 24h\)/);
    });
  });

  describe("--apply: the scaler written back to the cluster it was read from (a real API server)", () => {
    let controlPlane: ControlPlane;
    const scalers = {
      group: "worker.gpustack.ai",
      version: "v1",
      namespace: "serving",
      plural: "modeldeploymentscalers",
    };
    interface Stored {
      metadata: { resourceVersion: string; annotations?: Record<string, string> };
      spec: { roles: { maxReplicas: number; floorReplicasByUtcHour?: number[] }[]; algorithm: unknown };
    }
    const custom = (): CustomObjectsApi => controlPlane.kubeConfig.makeApiClient(CustomObjectsApi);
    const stored = async (): Promise<Stored> =>
      (await custom().getNamespacedCustomObject({ ...scalers, name: "daily" })) as Stored;

    beforeAll(async () => {
      controlPlane = await startControlPlane();
      await controlPlane.applyCrd(await loadScalerCrd());
      await controlPlane.applyCrd(await loadModelDeploymentCrd());
      await controlPlane.kubeConfig
        .makeApiClient(CoreV1Api)
        .createNamespace({ body: { metadata: { name: "serving" } } });
      const body = parse(readFileSync(files("daily", "1000").scaler, "utf8")) as object;
      await custom().createNamespacedCustomObject({ ...scalers, body });
      // The job reads the scaler's target from the cluster.
      await custom().createNamespacedCustomObject({
        ...scalers,
        plural: "modeldeployments",
        body: {
          apiVersion: "worker.gpustack.ai/v1",
          kind: "ModelDeployment",
          metadata: { name: "daily", namespace: "serving" },
          spec: { roles: [{ name: "server", kind: "Server", replicas: 2, instanceType: "h100" }] },
        },
      });
    }, 180_000);

    afterAll(async () => {
      await controlPlane?.stop();
    });

    /** calibrate on the scaler and its target read from the cluster, over the thirty minutes from t0. */
    const inCluster = (): string[] => [
      "--prometheus-url",
      prometheus.url,
      "--scaler",
      "serving/daily",
      "--kubeconfig",
      controlPlane.kubeConfigPath,
      "--start",
      String(t0),
      "--end",
      String(t0 + 60 * minutes),
    ];
    /** The same with the target from the file. */
    const fromCluster = (): string[] => [...inCluster(), "--target", files("daily", "1000").target];

    it("writes the floors at the scaler's own target into its spec: the daily refresh, one command", async () => {
      const io = memoryIo();
      const refresh = ["--keep-targets", "--hourly-floors-from", "prometheus", "--apply", "-o", "json"];
      expect(await runCalibrate([...fromCluster(), ...refresh], io), io.err).toBe(0);
      expect(io.err).toMatch(
        /^applied: ModelDeploymentScaler serving\/daily, its spec written against resourceVersion \d+\n$/,
      );
      const spec = (await stored()).spec;
      // The day before carried 3000 tok/s per pod on two pods at t0 − 24 h + 25 min: at the kept 1000, 6 replicas.
      const floors = spec.roles[0]?.floorReplicasByUtcHour;
      expect(floors).toHaveLength(24);
      expect(floors?.[new Date((t0 + 25 * 60) * 1000).getUTCHours()]).toBe(6);
      expect(spec.algorithm).toMatchObject({ tokenThroughput: { serverTargetTokensPerSecond: "1000" } });
      expect(spec.roles[0]?.maxReplicas).toBe(8);
      // Dated beside the floors, for the controller's MdsScalerFloorsStale: the end of the day read, the period's start.
      const dated = (await stored()).metadata.annotations?.[floorsCalibratedAnnotation];
      expect(dated).toBe(new Date(t0 * 1000).toISOString().replace(".000Z", "Z"));
    }, 600_000);

    it("runs the chart's CronJob command as its ServiceAccount, with only the Role the chart grants it", async () => {
      // The chart rendered for this scaler: its job's arguments and its floor-refresh RBAC.
      const rendered = runHelm([
        "template",
        "mds",
        join(root, "charts", "mds-scaler"),
        "--namespace",
        "mds-system",
        "--set",
        "floorRefresh.scalers[0]=serving/daily",
      ]);
      expect(rendered.status, rendered.stderr).toBe(0);
      const objects = parseAllDocuments(rendered.stdout)
        .map(
          (d) =>
            d.toJS() as { kind: string; metadata: { name: string; labels?: Record<string, string> }; spec?: unknown },
        )
        .filter((o) => o !== null && o.metadata.labels?.["app.kubernetes.io/component"] === "floor-refresh");
      const rbac = objects.filter((o) => o.kind === "Role" || o.kind === "RoleBinding");
      expect(rbac).toHaveLength(2);
      const applied = runKubectl(["--kubeconfig", controlPlane.kubeConfigPath, "apply", "-f", "-"], {
        input: rbac.map((o) => JSON.stringify(o)).join("\n"),
      });
      expect(applied.status, applied.stderr).toBe(0);
      const job = objects.find((o) => o.kind === "CronJob")?.spec as {
        jobTemplate: { spec: { template: { spec: { serviceAccountName: string; containers: { args: string[] }[] } } } };
      };
      const pod = job.jobTemplate.spec.template.spec;
      const account = await controlPlane.kubeConfigFor({
        user: `system:serviceaccount:mds-system:${pod.serviceAccountName}`,
        groups: ["system:serviceaccounts", "system:serviceaccounts:mds-system"],
      });
      const kubeconfig = join(dir, "floor-refresh.kubeconfig");
      writeFileSync(kubeconfig, account.exportConfig());
      // The job's arguments as rendered, but the test's Prometheus; --last 15m then ends now, and the 24 hours before
      // hold the thirty minutes from t0 (1000, 2000, then 3000 tok/s on each of two pods), whatever the date.
      const [command, ...args] = pod.containers[0]?.args ?? [];
      expect(command).toBe("calibrate");
      const io = memoryIo();
      // Floors of 1 before the run (the test above wrote the run's own), dated a week ago, beside another annotation,
      // so the job's write shows.
      const before = await stored();
      const weekAgo = "2026-11-30T00:05:00Z";
      await custom().replaceNamespacedCustomObject({
        ...scalers,
        name: "daily",
        body: {
          ...before,
          metadata: { ...before.metadata, annotations: { team: "search", [floorsCalibratedAnnotation]: weekAgo } },
          spec: {
            ...before.spec,
            roles: before.spec.roles.map((r) => ({ ...r, floorReplicasByUtcHour: new Array(24).fill(1) })),
          },
        },
      });
      const asJob = args.map((a) => (a.startsWith("--prometheus-url=") ? `--prometheus-url=${prometheus.url}` : a));
      const startedMs = Date.now();
      expect(await runCalibrate([...asJob, "--kubeconfig", kubeconfig], io), io.err).toBe(0);
      const endedMs = Date.now();
      expect(io.err).toMatch(/^applied: ModelDeploymentScaler serving\/daily/);
      const after = await stored();
      const floors = after.spec.roles[0]?.floorReplicasByUtcHour;
      expect(floors?.[new Date((t0 + 25 * 60) * 1000).getUTCHours()]).toBe(6);
      // The date moved on with the floors, under the job's own grants; the other annotation stayed.
      expect(after.metadata.annotations?.["team"]).toBe("search");
      // The job reads the day up to its last 15 minutes (`--last=15m`), and dates the floors by that day's end.
      const dated = Date.parse(after.metadata.annotations?.[floorsCalibratedAnnotation] ?? "");
      const quarterMs = 15 * 60_000;
      expect(dated).toBeGreaterThanOrEqual(Math.floor((startedMs - quarterMs) / 1000) * 1000);
      expect(dated).toBeLessThanOrEqual(endedMs - quarterMs);
      // The same account may not even read another scaler of the namespace.
      const other = account.makeApiClient(CustomObjectsApi);
      await expect(other.getNamespacedCustomObject({ ...scalers, name: "chat" })).rejects.toMatchObject({ code: 403 });
    }, 600_000);

    it("reads the target at the API version given, as the controller does, names it where none is served, and checks the Kubernetes flags as the controller does", async () => {
      const args = inCluster();
      const served = memoryIo();
      expect(await runCalibrate([...args, "--target-api-version", "v1"], served), served.err).toBe(0);
      const other = memoryIo();
      expect(await runCalibrate([...args, "--target-api-version", "v1beta1"], other)).toBe(1);
      expect(other.err).toContain(
        "target: ModelDeployment serving/daily (worker.gpustack.ai/v1beta1) not found in the cluster",
      );
      const bad = memoryIo();
      expect(await runCalibrate([...args, "--target-api-version", "1"], bad)).toBe(2);
      expect(bad.err).toMatch(/^--target-api-version: "1" must be a version such as v1 or v1alpha1/);
      const timeout = memoryIo();
      expect(await runCalibrate([...args, "--kube-timeout-ms", "5"], timeout)).toBe(2);
      expect(timeout.err).toMatch(/^--kube-timeout-ms: "5" Too small/);
    }, 600_000);

    it("prints a scaler read from the cluster as a manifest to keep or apply, without what the API server keeps", async () => {
      const io = memoryIo();
      expect(await runCalibrate([...fromCluster(), "-o", "scaler"], io), io.err).toBe(0);
      const manifest = parse(io.out.replace(/^#.*\n/gm, "")) as Record<string, unknown>;
      expect(Object.keys(manifest)).toEqual(["apiVersion", "kind", "metadata", "spec"]);
      // The annotations a user keeps (the refresh's date and the tests' own above), not the API server's fields.
      expect(manifest["metadata"]).toEqual({
        name: "daily",
        namespace: "serving",
        annotations: { team: "search", [floorsCalibratedAnnotation]: expect.stringMatching(/^\d{4}-\d\d-\d\dT/) },
      });
      // What the cluster keeps of the same object, left out above.
      const kept = (await stored()) as unknown as { metadata: Record<string, unknown> };
      expect(kept.metadata).toHaveProperty("uid");
      expect(kept.metadata).toHaveProperty("managedFields");
      expect(validateScaler(manifest).ok).toBe(true);
    }, 600_000);

    it("writes over a status write made after the read, and writes nothing over a spec edited after it", async () => {
      const kube = new KubeResources(controlPlane.kubeConfig, {
        timeoutMs: 10_000,
        fieldManager: "mds-scaler-calibrate",
      });
      const read = await stored();
      // The controller's status write moves the version on; the spec calibrate judged is the same.
      await custom().replaceNamespacedCustomObjectStatus({
        ...scalers,
        name: "daily",
        body: { ...read, status: { observedGeneration: 1 } },
      });
      expect((await stored()).metadata.resourceVersion).not.toBe(read.metadata.resourceVersion);
      const written = {
        ...read.spec,
        roles: read.spec.roles.map((r) => ({ ...r, floorReplicasByUtcHour: new Array(24).fill(2) })),
      };
      const done = await applyCalibratedSpec(kube, { namespace: "serving", name: "daily", read, spec: written });
      expect(done.attempts).toBe(2);
      expect((await stored()).spec.roles[0]?.floorReplicasByUtcHour).toEqual(new Array(24).fill(2));
      // Someone edits the spec after calibrate read it: calibrate's write is refused, the edit stays.
      const before = await stored();
      await custom().replaceNamespacedCustomObject({
        ...scalers,
        name: "daily",
        body: { ...before, spec: { ...before.spec, roles: before.spec.roles.map((r) => ({ ...r, maxReplicas: 9 })) } },
      });
      await expect(
        applyCalibratedSpec(kube, { namespace: "serving", name: "daily", read: before, spec: before.spec }),
      ).rejects.toThrow(
        /--apply: ModelDeploymentScaler serving\/daily changed its spec after calibrate read it \(resourceVersion \d+ → \d+\); nothing written/,
      );
      expect((await stored()).spec.roles[0]?.maxReplicas).toBe(9);
    }, 120_000);
  });
});
