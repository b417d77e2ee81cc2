/**
 * The PromQL source against VictoriaMetrics single-node (tools/vm-bin), beside
 * a real Prometheus (Debian 2.42) holding the same samples: Prometheus scrapes
 * the engine captures and the engine fleet simulator and remote-writes every
 * sample to VictoriaMetrics, so both stores hold the same values at the same
 * timestamps and any difference is the query engine's.
 *
 * - Captures (two scrapes, the second with every counter doubled): the
 *   observations are equal field by field. VictoriaMetrics' `increase()`
 *   takes a new series as starting from 0 where Prometheus extrapolates, so its
 *   histogram deltas differ by one common factor per pod, which leaves the
 *   p95 bracket and the mean as they are.
 * - Simulator under steady load: gauges, sample times and window state are
 *   equal; rates differ because VictoriaMetrics does not extrapolate: its
 *   `rate(x[w])` is the change from the last sample before the window to the
 *   last one in it, over their time apart. The test checks that formula on the
 *   raw samples, and reports the gap between the two stores' rates.
 * - Tenancy: a second tenant's pods, with the same deployment, role and pod
 *   names and five times the load, in another namespace of the same store,
 *   change nothing in the first tenant's samples.
 * - VictoriaMetrics' defaults: `-search.latencyOffset` (30 s) moves an instant
 *   query at "now" 30 s back, so the source reads 30 s old samples, and
 *   `-search.maxQueryLen` (16 KiB) refuses the counter query of two scalers,
 *   which the source reads as unknown counters. The stores under comparison
 *   run with `-search.latencyOffset=0s -search.maxQueryLen=1MiB`.
 */
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { PrometheusClient } from "../../src/adapters/prometheus/client.js";
import { defaultPrometheusSignalConfig } from "../../src/adapters/prometheus/config.js";
import { RangeAnswers } from "../../src/adapters/prometheus/range-answers.js";
import { PrometheusSignalSource, type ScalerSamplingInput } from "../../src/adapters/prometheus/source.js";
import type { RoleKind } from "../../src/core/api/model-deployment.js";
import { observeRole } from "../../src/core/signals/observe.js";
import type { PodWindowRates, RoleObservation, RoleSamples } from "../../src/core/signals/types.js";
import { EngineFleet, FleetServer } from "../../src/sim/engines/index.js";
import { PrometheusHarness } from "../../harness/prometheus.js";
import { backendDeployments as deployments, backendScalers } from "../support/backend-fleet.js";
import { VictoriaMetricsHarness } from "../../harness/victoria-metrics.js";
import { runCli } from "../../src/cli/commands.js";
import { advanceCounters, CaptureServer, type ServedCapture } from "../support/capture-server.js";
import { memoryIo } from "../support/memory-io.js";

const captures = fileURLToPath(new URL("../../../shared/fixtures/engine-expositions/", import.meta.url));
const derived = fileURLToPath(new URL("../fixtures/engine-expositions-derived/", import.meta.url));
const captureNamespace = "captures";
const tenantA = "serving";
const tenantB = "other-team";
const stableWindowSeconds = 10;
const panicWindowSeconds = 3;
const l = defaultPrometheusSignalConfig.labels;
const fleetScalers = (namespace: string): ScalerSamplingInput[] =>
  backendScalers(namespace, stableWindowSeconds, panicWindowSeconds);

const captureCases: readonly { key: string; file: string; kind: RoleKind }[] = [
  { key: "sglang-2026-live", file: `${captures}sglang-2026-live-excerpt.prom`, kind: "Server" },
  { key: "sglang-docs", file: `${captures}sglang-docs-production-metrics.prom`, kind: "Server" },
  { key: "vllm-head40", file: `${captures}vllm-v1-head40.prom`, kind: "Server" },
  { key: "vllm-grep", file: `${captures}vllm-v1-grep-no-type.prom`, kind: "Server" },
  { key: "vllm-docs-design", file: `${captures}vllm-docs-design-example.prom`, kind: "Server" },
  { key: "vllm-0.9-derived", file: `${derived}vllm-0.9-from-grep-no-type.prom`, kind: "Server" },
  { key: "sglang-early-2026-derived", file: `${derived}sglang-early-2026-from-live-excerpt.prom`, kind: "Server" },
  { key: "sglang-fresh-derived", file: `${derived}sglang-2026-fresh-pod-from-live-excerpt.prom`, kind: "Server" },
  { key: "sglang-2026-prefill-derived", file: `${derived}sglang-2026-prefill-from-live-excerpt.prom`, kind: "Prefill" },
  { key: "sglang-2026-decode-derived", file: `${derived}sglang-2026-decode-from-live-excerpt.prom`, kind: "Decode" },
];

let captureServer: CaptureServer;
let fleet: EngineFleet;
let fleetStartMs = 0;
let fleetServer: FleetServer;
let prometheus: PrometheusHarness;
/** With the two settings the scaler needs: search up to the current time, and a longer query limit. */
let vm: VictoriaMetricsHarness;
/** VictoriaMetrics' defaults. */
let vmDefault: VictoriaMetricsHarness;
let onPrometheus: PrometheusSignalSource;
let onVm: PrometheusSignalSource;
let onVmDefault: PrometheusSignalSource;

const sourceFor = (url: string): PrometheusSignalSource =>
  new PrometheusSignalSource(new PrometheusClient({ endpoint: url, timeoutMs: 10_000 }), defaultPrometheusSignalConfig);

interface Sample {
  readonly metric: Record<string, string>;
  readonly value?: [number, string];
  readonly values?: [number, string][];
}

async function query(url: string, promql: string, atMs?: number): Promise<Sample[]> {
  const params = new URLSearchParams({ query: promql, ...(atMs === undefined ? {} : { time: String(atMs / 1000) }) });
  const res = await fetch(`${url}/api/v1/query`, { method: "POST", body: params });
  const body = (await res.json()) as { status: string; error?: string; data: { result: Sample[] } };
  if (body.status !== "success") throw new Error(`${url}: ${promql}: ${body.error ?? body.status}`);
  return body.data.result;
}

async function sleep(ms: number): Promise<void> {
  await new Promise((r) => setTimeout(r, ms));
}

/** Scrape times (ms) of one pod in Prometheus, once it has at least `count` of them. */
async function scrapeTimesMs(namespace: string, pod: string, count: number, timeoutMs = 60_000): Promise<number[]> {
  const deadline = Date.now() + timeoutMs;
  let seen: number[] = [];
  while (Date.now() < deadline) {
    const result = await query(prometheus.url, `up{namespace="${namespace}",pod="${pod}"}[5m]`);
    seen = (result[0]?.values ?? []).filter(([, v]) => v === "1").map(([t]) => Math.round(t * 1000));
    if (seen.length >= count) return seen;
    await sleep(250);
  }
  throw new Error(`${namespace}/${pod}: ${seen.length} of ${count} scrapes in Prometheus`);
}

/** Waits until a VictoriaMetrics store holds every Prometheus scrape of `pod` up to `atMs`. */
async function awaitRemoteWrite(
  store: VictoriaMetricsHarness,
  namespace: string,
  pod: string,
  atMs: number,
  timeoutMs = 30_000,
): Promise<void> {
  const selector = `up{namespace="${namespace}",pod="${pod}"}`;
  const want = (await query(prometheus.url, `count_over_time(${selector}[5m])`, atMs))[0]?.value?.[1];
  const deadline = Date.now() + timeoutMs;
  let got: string | undefined;
  while (Date.now() < deadline) {
    await store.flush();
    const params = new URLSearchParams({
      "match[]": selector,
      start: String((atMs - 300_000) / 1000),
      end: String(atMs / 1000),
    });
    const res = await fetch(`${store.url}/api/v1/export?${params.toString()}`);
    const lines = (await res.text()).split("\n").filter((line) => line.trim() !== "");
    got = String(lines.reduce((n, line) => n + ((JSON.parse(line) as { values: number[] }).values.length ?? 0), 0));
    if (want !== undefined && got === want) return;
    await sleep(200);
  }
  throw new Error(`${store.url}: ${got} of ${want} samples of ${selector} by ${atMs}`);
}

async function samplesOf(
  source: PrometheusSignalSource,
  scalers: readonly ScalerSamplingInput[],
  atMs: number,
): Promise<Map<string, RoleSamples>> {
  const pass = await source.sample(scalers, atMs);
  const out = new Map<string, RoleSamples>();
  for (const [key, roles] of pass.scalers) for (const [role, samples] of roles) out.set(`${key}/${role}`, samples);
  return out;
}

/** Every key equal, numbers to `relative` of each other. */
function expectClose(actual: unknown, expected: unknown, path: string, relative = 1e-9): void {
  if (typeof expected === "number" && typeof actual === "number" && Number.isFinite(expected)) {
    expect(Math.abs(actual - expected), `${path}: ${actual} vs ${expected}`).toBeLessThanOrEqual(
      relative * Math.max(1, Math.abs(expected)),
    );
    return;
  }
  if (typeof expected === "object" && expected !== null && typeof actual === "object" && actual !== null) {
    expect(Object.keys(actual).sort(), path).toEqual(Object.keys(expected).sort());
    for (const [k, v] of Object.entries(expected))
      expectClose((actual as Record<string, unknown>)[k], v, `${path}.${k}`, relative);
    return;
  }
  expect(actual, path).toEqual(expected);
}

beforeAll(async () => {
  const served = new Map<string, ServedCapture>();
  for (const c of captureCases) {
    const text = readFileSync(c.file, "utf8");
    served.set(c.key, {
      labels: { [l.namespace]: captureNamespace, [l.pod]: `${c.key}-0`, [l.deployment]: c.key, [l.role]: "role" },
      scrapes: [text, advanceCounters(text, 2)],
    });
  }
  captureServer = new CaptureServer(served);
  await captureServer.start();
  fleetStartMs = Date.now();
  const startSeconds = fleetStartMs / 1000;
  fleet = new EngineFleet({ startSeconds, recordEverySeconds: 0.25, recordHistorySeconds: 90 });
  for (const d of [...deployments(tenantA, startSeconds, 1), ...deployments(tenantB, startSeconds, 5)])
    fleet.addDeployment(d);
  fleetServer = new FleetServer({ fleet });
  await fleetServer.start();
  vm = await VictoriaMetricsHarness.start({ extraArgs: ["-search.latencyOffset=0s", "-search.maxQueryLen=1MiB"] });
  vmDefault = await VictoriaMetricsHarness.start();
  prometheus = await PrometheusHarness.start({
    scrapeIntervalSeconds: 1,
    targets: [...captureServer.fileSdGroups(), ...fleetServer.fileSdGroups()],
    remoteWrite: [vm.remoteWriteUrl, vmDefault.remoteWriteUrl],
  });
  await prometheus.waitForHealthyTargets(captureCases.length + fleet.listPods().length);
  onPrometheus = sourceFor(prometheus.url);
  onVm = sourceFor(vm.url);
  onVmDefault = sourceFor(vmDefault.url);
}, 120_000);

afterAll(async () => {
  await prometheus?.stop();
  await vm?.stop();
  await vmDefault?.stop();
  await fleetServer?.stop();
  await captureServer?.stop();
});

describe("the PromQL source on VictoriaMetrics single-node, beside Prometheus with the same samples", () => {
  it("is the version tools/vm-bin/versions.env names, and answers buildinfo as Prometheus 2.24.0", async () => {
    expect(await vm.reportedVersion()).toBe(vm.binary.version);
    // Not a way to tell VictoriaMetrics from Prometheus by version: it answers a fixed Prometheus version.
    const res = await fetch(`${vm.url}/api/v1/status/buildinfo`);
    expect(((await res.json()) as { data: { version: string } }).data.version).toBe("2.24.0");
  });

  it.each(captureCases)(
    "$key ($kind): the same observation, field by field",
    async ({ key, kind }) => {
      const pod = `${key}-0`;
      const [first, second] = await scrapeTimesMs(captureNamespace, pod, 2);
      if (first === undefined || second === undefined) throw new Error("two scrapes expected");
      await awaitRemoteWrite(vm, captureNamespace, pod, second);
      const windowSeconds = Math.ceil((second - first) / 1000 + 0.5);
      const scaler: ScalerSamplingInput = {
        key,
        namespace: captureNamespace,
        deployment: key,
        roles: ["role"],
        stableWindowSeconds: windowSeconds,
        panicWindowSeconds: windowSeconds,
        intervalSeconds: 1,
      };
      const observe = (samples: RoleSamples | undefined): RoleObservation => {
        if (!samples) throw new Error(`${key}: no samples`);
        return observeRole({ kind, samples, readyReplicas: 1, nowMs: second, staleAfterSeconds: 60, reads: [] });
      };
      const fromPrometheus = observe((await samplesOf(onPrometheus, [scaler], second)).get(`${key}/role`));
      const fromVm = observe((await samplesOf(onVm, [scaler], second)).get(`${key}/role`));
      expect(fromPrometheus.sampledReplicas).toBe(1);
      expectClose(fromVm, fromPrometheus, key);
    },
    90_000,
  );
});

/** A pod's sample times in Prometheus, as offsets in the second (ms): scrapes repeat every second. */
async function scrapeOffsetsMs(namespace: string): Promise<number[]> {
  const result = await query(prometheus.url, `up{namespace="${namespace}"}[5s]`);
  return result.flatMap((s) => (s.values ?? []).map(([t]) => Math.round(t * 1000) % 1000));
}

/**
 * A recent evaluation time whose windows' starts fall between scrapes (at least 20 ms from any pod's
 * scrape), so which samples a window holds does not depend on whether a store's window is left-closed.
 */
async function evaluationTimeMs(namespace: string): Promise<number> {
  const offsets = await scrapeOffsetsMs(namespace);
  const distance = (x: number): number =>
    Math.min(...offsets.map((o) => Math.min(Math.abs(o - x), 1000 - Math.abs(o - x))));
  let best = 0;
  for (let x = 0; x < 1000; x++) if (distance(x) > distance(best)) best = x;
  expect(distance(best), "a gap between scrapes").toBeGreaterThanOrEqual(20);
  return Math.floor((Date.now() - 3000) / 1000) * 1000 + best;
}

/**
 * VictoriaMetrics' `rate(x[w])` at `atMs`, worked out from the raw samples: per series, the change from
 * the last sample at or before the window's start (else the window's first) to the window's last,
 * divided by their time apart; summed over the series. No extrapolation to the window's edges.
 */
async function nonExtrapolatedRate(selector: string, atMs: number, windowSeconds: number): Promise<number> {
  const raw = await query(prometheus.url, `${selector}[${windowSeconds + 5}s]`, atMs);
  let total = 0;
  for (const s of raw) {
    const points = (s.values ?? []).map(([t, v]) => ({ ms: Math.round(t * 1000), value: Number(v) }));
    const startMs = atMs - windowSeconds * 1000;
    const inside = points.filter((p) => p.ms > startMs);
    const before = points.filter((p) => p.ms <= startMs).at(-1);
    const first = before ?? inside[0];
    const last = inside.at(-1);
    if (!first || !last || last.ms <= first.ms) continue;
    total += (last.value - first.value) / ((last.ms - first.ms) / 1000);
  }
  return total;
}

/** Largest relative gap between the two stores' rates per window, printed with MDS_TEST_VERBOSE=1. */
const worstGap = { stable: { relative: 0, what: "" }, panic: { relative: 0, what: "" } };
const warmUpMs = 30_000;

describe("the engine fleet simulator under steady load, on both stores", () => {
  it("gives equal gauges, sample times and window states, and VictoriaMetrics' rates as its formula says", async () => {
    // Past the warm-up (every counter series created more than a stable window ago: Prometheus
    // extrapolates a series that starts inside the window towards zero, VictoriaMetrics does not),
    // then every sample up to the evaluation time in both stores.
    const deadline = Date.now() + 60_000;
    while (Date.now() - fleetStartMs < warmUpMs && Date.now() < deadline) await sleep(250);
    const at = await evaluationTimeMs(tenantA);
    for (const pod of fleet.listPods().filter((p) => p.namespace === tenantA))
      await awaitRemoteWrite(vm, tenantA, pod.name, at);
    const scalers = fleetScalers(tenantA);
    const [fromPrometheus, fromVm] = [await samplesOf(onPrometheus, scalers, at), await samplesOf(onVm, scalers, at)];
    expect([...fromVm.keys()].sort()).toEqual([...fromPrometheus.keys()].sort());
    for (const [key, promRole] of fromPrometheus) {
      const vmRole = fromVm.get(key);
      expect(vmRole?.queryFailed, key).toBeUndefined();
      expect(
        vmRole?.pods.map((p) => p.pod),
        key,
      ).toEqual(promRole.pods.map((p) => p.pod));
      expect(promRole.pods.length, key).toBe(2);
      for (const promPod of promRole.pods) {
        const vmPod = vmRole?.pods.find((p) => p.pod === promPod.pod);
        if (!vmPod) throw new Error(`${key}: ${promPod.pod} missing on VictoriaMetrics`);
        const what = `${key} ${promPod.pod}`;
        const { windows: promWindows, ...promGauges } = promPod;
        const { windows: vmWindows, ...vmGauges } = vmPod;
        expectClose(vmGauges, promGauges, `${what} gauges`);
        for (const window of ["stable", "panic"] as const) {
          const seconds = window === "stable" ? stableWindowSeconds : panicWindowSeconds;
          const [p, v] = [promWindows[window], vmWindows[window]];
          expect(v.established, `${what} ${window} established`).toBe(p.established);
          expect(p.established, `${what} ${window} established`).toBe(true);
          const engine = promPod.engine;
          const selector = (metric: string): string =>
            `${engine}:${metric}{namespace="${tenantA}",pod="${promPod.pod}"}`;
          const rates: readonly [keyof PodWindowRates, string][] = [
            ["generationTokensPerSecond", selector("generation_tokens_total")],
            ["promptTokensPerSecond", selector("prompt_tokens_total")],
          ];
          for (const [field, series] of rates) {
            const vmRate = v[field] as number | undefined;
            const promRate = p[field] as number | undefined;
            expect(vmRate, `${what} ${window} ${field}`).toBeDefined();
            expectClose(vmRate, await nonExtrapolatedRate(series, at, seconds), `${what} ${window} ${field}`);
            if (vmRate !== undefined && promRate !== undefined && promRate > 0) {
              const gap = Math.abs(vmRate - promRate) / promRate;
              if (gap > worstGap[window].relative) worstGap[window] = { relative: gap, what: `${what} ${field}` };
            }
          }
          // Histogram deltas: the same buckets; counts differ only by the extrapolation.
          for (const h of ["ttftSeconds", "itlSeconds"] as const) {
            expect(
              v[h]?.buckets.map((b) => b.upperBound),
              `${what} ${window} ${h}`,
            ).toEqual(p[h]?.buckets.map((b) => b.upperBound));
          }
        }
      }
    }
    if (process.env["MDS_TEST_VERBOSE"])
      console.info("largest relative rate gap, VictoriaMetrics vs Prometheus", worstGap);
  }, 120_000);
});

describe("mds-scaler observe", () => {
  const key = "sglang-2026-decode-derived";
  const files: Record<string, string> = {
    "scaler.yaml": `apiVersion: worker.gpustack.ai/v1
kind: ModelDeploymentScaler
metadata: { name: ${key}, namespace: ${captureNamespace} }
spec:
  targetRef: { name: ${key} }
  roles: [{ name: role, minReplicas: 1, maxReplicas: 4 }]
  algorithm:
    type: TokenThroughput
    tokenThroughput: { decodeTargetTokensPerSecond: "800", stableWindowSeconds: 60, panicWindowSeconds: 30 }
`,
    "target.yaml": `apiVersion: worker.gpustack.ai/v1
kind: ModelDeployment
metadata: { name: ${key}, namespace: ${captureNamespace} }
spec: { roles: [{ name: role, kind: Decode, replicas: 1 }] }
status: { roles: [{ name: role, ready: 1 }] }
`,
  };
  const observe = async (url: string) => {
    const io = memoryIo((path) => files[path] ?? "");
    const code = await runCli(
      ["observe", "--prometheus-url", url, "-f", "scaler.yaml", "--target", "target.yaml", "-o", "json"],
      io,
    );
    expect(code, io.err).toBe(0);
    return JSON.parse(io.out) as {
      roles: { signalState: string; observation: Record<string, unknown>; pods: { pod: string }[] }[];
    };
  };

  it("reads the same pods, state and gauges on VictoriaMetrics as on Prometheus", async () => {
    await scrapeTimesMs(captureNamespace, `${key}-0`, 2);
    await vm.flush();
    const [onProm, onVictoria] = [await observe(prometheus.url), await observe(vm.url)];
    const gauges = (r: typeof onProm) =>
      r.roles.map((role) => ({
        state: role.signalState,
        pods: role.pods.map((p) => p.pod),
        sampled: role.observation["sampledReplicas"],
        running: role.observation["runningRequests"],
        waiting: role.observation["waitingRequests"],
        kv: role.observation["kvCacheUsage"],
      }));
    expect(gauges(onProm)).toEqual([
      { state: "Fresh", pods: [`${key}-0`], sampled: 1, running: 1, waiting: 7, kv: 0.1 },
    ]);
    expect(gauges(onVictoria)).toEqual(gauges(onProm));
  }, 60_000);
});

describe("a Prometheus URL with a path prefix", () => {
  it("reads the same samples through VictoriaMetrics' /prometheus prefix as at its root", async () => {
    const at = await evaluationTimeMs(tenantA);
    await awaitRemoteWrite(vm, tenantA, "pd-vllm-decode-0", at);
    const scalers = fleetScalers(tenantA);
    const atRoot = await samplesOf(onVm, scalers, at);
    const prefixed = await samplesOf(sourceFor(`${vm.url}/prometheus/`), scalers, at);
    expect(atRoot.get(`${tenantA}/pd-vllm/decode`)?.pods).toHaveLength(2);
    expect(prefixed).toEqual(atRoot);
  }, 60_000);
});

describe("a second tenant with the same names in the same store", () => {
  it("changes nothing in the first tenant's samples, on either store", async () => {
    const at = await evaluationTimeMs(tenantA);
    for (const pod of fleet.listPods()) await awaitRemoteWrite(vm, pod.namespace, pod.name, at);
    const both = [...fleetScalers(tenantA), ...fleetScalers(tenantB)];
    for (const [name, source, url] of [
      ["Prometheus", onPrometheus, prometheus.url],
      ["VictoriaMetrics", onVm, vm.url],
    ] as const) {
      const alone = await samplesOf(source, fleetScalers(tenantA), at);
      const beside = await samplesOf(source, both, at);
      for (const [key, samples] of alone) {
        expect(key.startsWith(`${tenantA}/`), `${name} ${key}`).toBe(true);
        expect(samples.pods.length, `${name} ${key}`).toBe(2);
        expect(beside.get(key), `${name} ${key} beside the other tenant`).toEqual(samples);
        // The other tenant's role of the same name: same pod names, about five times the traffic.
        const other = beside.get(key.replace(`${tenantA}/`, `${tenantB}/`));
        expect(
          other?.pods.map((p) => p.pod),
          `${name} ${key}`,
        ).toEqual(samples.pods.map((p) => p.pod));
        const generation = (s: RoleSamples | undefined): number =>
          (s?.pods ?? []).reduce((n, p) => n + (p.windows.stable.generationTokensPerSecond ?? NaN), 0);
        expect(generation(other), `${name} ${key}: the other tenant's traffic`).toBeGreaterThan(
          3 * generation(samples),
        );
      }
      // What an unpinned query would read: both tenants summed.
      const unpinned = await query(
        url,
        `sum(rate(vllm:generation_tokens_total{app_kubernetes_io_instance="pd-vllm",app_kubernetes_io_component="decode"}[${stableWindowSeconds}s]))`,
        at,
      );
      const pinned = (alone.get(`${tenantA}/pd-vllm/decode`)?.pods ?? []).reduce(
        (n, p) => n + (p.windows.stable.generationTokensPerSecond ?? NaN),
        0,
      );
      expect(Number(unpinned[0]?.value?.[1]), `${name}: unpinned sum`).toBeGreaterThan(4 * pinned);
    }
  }, 120_000);
});

describe("VictoriaMetrics' defaults", () => {
  beforeAll(async () => {
    // Data must reach back beyond the 30 s offset for the shifted query to find anything.
    const deadline = Date.now() + 60_000;
    while (Date.now() - fleetStartMs < 40_000 && Date.now() < deadline) await sleep(500);
  }, 90_000);

  it("moves a query at the current time 30 s back (-search.latencyOffset): the source reads samples 30 s old", async () => {
    await vmDefault.flush();
    await vm.flush();
    const now = Date.now();
    const scalers = fleetScalers(tenantA);
    const newest = (roles: Map<string, RoleSamples>): number =>
      Math.max(...[...roles.values()].flatMap((r) => r.pods.map((p) => p.lastSampleUnixSeconds * 1000)));
    const lagDefault = now - newest(await samplesOf(onVmDefault, scalers, now));
    const lagZero = now - newest(await samplesOf(onVm, scalers, now));
    expect(lagZero).toBeLessThan(5_000);
    expect(lagDefault).toBeGreaterThanOrEqual(29_000);
    expect(lagDefault).toBeLessThan(35_000);
  }, 90_000);

  it("answers every pass of a period from range queries as its own instant queries answer it, under every plan", async () => {
    // calibrate reads a period this way (RangeAnswers); the store under comparison runs with the offset at 0 s.
    const lastUnixSeconds = Math.floor(Date.now() / 1000) - 3;
    for (const pod of fleet.listPods()) await awaitRemoteWrite(vm, pod.namespace, pod.name, lastUnixSeconds * 1000);
    const grid = { firstUnixSeconds: Math.ceil(fleetStartMs / 1000) + 4, lastUnixSeconds, stepSeconds: 1 };
    const client = new PrometheusClient({ endpoint: vm.url, timeoutMs: 10_000 });
    const scalers = fleetScalers(tenantA);
    for (const queryPlan of ["unions", "parts", "roles"] as const) {
      const config = { ...defaultPrometheusSignalConfig, queryPlan };
      const instant = new PrometheusSignalSource(client, config);
      const answers = new RangeAnswers(client, grid);
      const ranged = new PrometheusSignalSource(answers, config);
      let podsRead = 0;
      for (let t = grid.firstUnixSeconds; t <= grid.lastUnixSeconds; t += grid.stepSeconds) {
        const [want, got] = await Promise.all([instant.sample(scalers, t * 1000), ranged.sample(scalers, t * 1000)]);
        const at = `${queryPlan} plan at ${t - grid.firstUnixSeconds} s`;
        // A role's summed buckets may be added in another order: equal to a relative 1e-9, as between plans.
        expectClose(JSON.parse(JSON.stringify([...got.scalers])), JSON.parse(JSON.stringify([...want.scalers])), at);
        expect({ ...got, scalers: undefined }, at).toEqual({ ...want, scalers: undefined });
        for (const roles of got.scalers.values()) for (const r of roles.values()) podsRead += r.pods.length;
      }
      expect(podsRead, queryPlan).toBeGreaterThan(0);
      expect(answers.rangeQueries, queryPlan).toBeLessThan(100);
    }
  }, 120_000);

  it("refuse a counter query longer than -search.maxQueryLen: counters unknown, not zero", async () => {
    // Under the unions plan the counter query of the fleet's two scalers and fourteen more (deployments without
    // pods, whose names lengthen its selectors) is above VictoriaMetrics' default 16 KiB; the roles plan (the
    // default) splits it into queries that fit.
    const unions = new PrometheusSignalSource(new PrometheusClient({ endpoint: vmDefault.url, timeoutMs: 10_000 }), {
      ...defaultPrometheusSignalConfig,
      queryPlan: "unions",
    });
    const fleet = fleetScalers(tenantA);
    const [model] = fleet;
    if (model === undefined) throw new Error("the fleet has no scaler");
    const padding = Array.from({ length: 14 }, (_, i): ScalerSamplingInput => ({
      ...model,
      key: `${tenantA}/padding-${i}`,
      deployment: `padding-${i}`,
    }));
    const scalers = [...fleet, ...padding];
    expect(unions.queriesFor(scalers).counters.length).toBeGreaterThan(16 * 1024);
    const onFleet = (all: Map<string, RoleSamples>): Map<string, RoleSamples> =>
      new Map([...all].filter(([key]) => !key.includes("/padding-")));
    const roles = onFleet(await samplesOf(unions, scalers, Date.now()));
    expect(roles.size).toBeGreaterThan(0);
    const parts = await samplesOf(onVmDefault, scalers, Date.now());
    for (const [key, samples] of parts) expect(samples.unknownFamilies?.counters, key).toBeUndefined();
    for (const [key, samples] of roles) {
      expect(samples.pods.length, key).toBe(2);
      expect(samples.unknownFamilies?.counters, key).toMatch(/answered 400: too long query.*search\.maxQueryLen=16384/);
      expect(samples.pods[0]?.windows.stable.generationTokensPerSecond, key).toBeUndefined();
    }
    const observation = observeRole({
      kind: "Decode",
      samples: roles.get(`${tenantA}/pd-vllm/decode`) ?? { pods: [] },
      readyReplicas: 2,
      nowMs: Date.now(),
      staleAfterSeconds: 60,
      reads: ["generationTokens"],
    });
    expect(observation.sampledReplicas).toBe(0);
    expect(observation.generationTokensPerSecond).toBeUndefined();
  }, 60_000);
});
