/**
 * The sampling pass on VictoriaMetrics beside Prometheus, in one run (issue 28: what the store costs per
 * deployment, and whether another store than Prometheus meets the goal). The data is `bench:sampling`'s
 * (`bench/engine-tsdb.ts`): Prometheus 3.5 serves the prepared blocks, and VictoriaMetrics single-node
 * (`tools/vm-bin`) is given the same OpenMetrics text the blocks were built from, through its Prometheus
 * text import, so both hold the same samples at the same timestamps. Every pass samples every deployment
 * from each store in turn, with the query plan the controller uses by default, and the bench prints for
 * each store the line `bench:sampling` prints, from the CPU seconds of the store (from /proc, less what it
 * spends idle once its import has settled) and of this process (`process.cpuUsage`), with the pass times. Figures, not pass/fail: it fails only when a store
 * leaves a pod unsampled or a family unknown. VictoriaMetrics' `rate()` and `increase()` do not
 * extrapolate (docs/prometheus-signals.md, VictoriaMetrics), so its token rates differ from Prometheus'
 * by design; the bench prints the largest difference.
 *
 *   npm run bench:sampling-victoria-metrics [-- --size 100 --passes 5]
 */
import { createReadStream } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import { loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { PrometheusClient } from "../src/adapters/prometheus/client.js";
import { defaultPrometheusSignalConfig } from "../src/adapters/prometheus/config.js";
import { PrometheusSignalSource, type SamplingPass } from "../src/adapters/prometheus/source.js";
import { VictoriaMetricsHarness } from "../harness/victoria-metrics.js";
import { evaluationUnixMs, samplingInputs, servePrepared, writeOpenMetrics } from "./engine-tsdb.js";
import { cpuSecondsOf } from "./proc-cpu.js";
import { wholeFlag } from "./flags.js";

const size = wholeFlag("size", 100);
const passes = wholeFlag("passes", 5);
const timeoutMs = 600_000;
/** One import request carries about this much text: whole lines, so each body parses on its own. */
const importBodyBytes = 32 * 1024 * 1024;

const { prometheus, storage } = await servePrepared(size, {
  queryTimeoutSeconds: timeoutMs / 1000,
});
// The flags docs/prometheus-signals.md gives for the scaler (latency offset, query length), and for a
// benchmark: no cache of results (every pass asks the same queries at the same time, which a live
// controller never does), samples of 2026-01-01 kept, and 42 queries run side by side, none refused.
const victoria = await VictoriaMetricsHarness.start({
  extraArgs: [
    "-search.latencyOffset=0s",
    "-search.maxQueryLen=1MiB",
    "-search.disableCache",
    "-retentionPeriod=100y",
    "-search.maxUniqueTimeseries=100000000",
    "-search.maxConcurrentRequests=64",
    "-search.maxQueueDuration=600s",
  ],
  startTimeoutMs: 60_000,
});

/** The OpenMetrics text (timestamps in seconds) as the Prometheus text format VictoriaMetrics imports (milliseconds). */
async function importText(path: string): Promise<number> {
  const lines = createInterface({ input: createReadStream(path), crlfDelay: Infinity });
  let body: string[] = [];
  let bytes = 0;
  let samples = 0;
  const post = async (): Promise<void> => {
    const res = await fetch(`${victoria.url}/api/v1/import/prometheus`, { method: "POST", body: body.join("") });
    if (!res.ok) throw new Error(`victoria-metrics import: HTTP ${res.status}: ${await res.text()}`);
    body = [];
    bytes = 0;
  };
  for await (const line of lines) {
    if (line.startsWith("#") || line === "") continue;
    const text = `${line}000\n`;
    body.push(text);
    bytes += text.length;
    samples++;
    if (bytes >= importBodyBytes) await post();
  }
  if (body.length > 0) await post();
  return samples;
}

const textDir = await mkdtemp(join(tmpdir(), "mds-bench-text-"));
const textPath = join(textDir, "engines.txt");
let t0 = performance.now();
const text = writeOpenMetrics(textPath, size);
const imported = await importText(textPath);
await rm(textDir, { recursive: true, force: true });
await victoria.flush();
console.log(
  `VictoriaMetrics ${await victoria.reportedVersion()}: imported ${imported} samples of ${text.series} series (${(text.bytes / 1e6).toFixed(0)} MB of text) in ${((performance.now() - t0) / 1000).toFixed(0)} s`,
);

const scalers = samplingInputs(size, { stableWindowSeconds: 180, panicWindowSeconds: 60 });
const source = (url: string) =>
  new PrometheusSignalSource(new PrometheusClient({ endpoint: url, timeoutMs }), {
    ...defaultPrometheusSignalConfig,
    queryTimeoutMs: timeoutMs,
  });
const stores = {
  prometheus: { source: source(prometheus.url), cpuMatch: `--web.listen-address=127.0.0.1:${prometheus.port}` },
  victoriaMetrics: { source: source(victoria.url), cpuMatch: `-httpListenAddr=127.0.0.1:${victoria.port}` },
} as const;
type Store = keyof typeof stores;

interface Counted {
  readonly pods: number;
  readonly established: number;
  readonly rates: Map<string, number>;
  readonly unknown: string;
  readonly warnings: number;
}

/** Pods, pods with both windows established, and every pod's stable-window token rates keyed by pod and field. */
function count(pass: SamplingPass): Counted {
  let pods = 0;
  let established = 0;
  const rates = new Map<string, number>();
  for (const [scaler, roles] of pass.scalers)
    for (const [role, samples] of roles)
      for (const p of samples.pods) {
        pods++;
        if (p.windows.stable.established && p.windows.panic.established) established++;
        for (const field of ["promptTokensPerSecond", "generationTokensPerSecond"] as const) {
          const v = p.windows.stable[field];
          if (v !== undefined) rates.set(`${scaler}/${role}/${p.pod}/${field}`, v);
        }
      }
  return {
    pods,
    established,
    rates,
    unknown: JSON.stringify(pass.unknownFamilies),
    warnings: pass.warnings.length,
  };
}

/** CPU seconds a second a process spends while nothing asks it anything, over `seconds`. */
async function idleCpuPerSecond(cpuMatch: string, seconds: number): Promise<number> {
  const before = await cpuSecondsOf(cpuMatch);
  await new Promise((resolve) => setTimeout(resolve, seconds * 1000));
  return ((await cpuSecondsOf(cpuMatch)) - before) / seconds;
}

// A store still merging what it was given spends CPU no pass asked for: wait (at most 5 minutes) until
// VictoriaMetrics is nearly idle, then measure each store's idle rate and take it off its passes' CPU.
const settleUntil = performance.now() + 300_000;
while (performance.now() < settleUntil && (await idleCpuPerSecond(stores.victoriaMetrics.cpuMatch, 5)) > 0.02);
const idle: Record<Store, number> = {
  prometheus: await idleCpuPerSecond(stores.prometheus.cpuMatch, 10),
  victoriaMetrics: await idleCpuPerSecond(stores.victoriaMetrics.cpuMatch, 10),
};
console.log(
  `idle CPU, taken off each pass: Prometheus ${(1000 * idle.prometheus).toFixed(1)} ms/s, VictoriaMetrics ${(1000 * idle.victoriaMetrics).toFixed(1)} ms/s`,
);
console.log("load before", loadavg()[0]?.toFixed(2));
const cold = new Map<Store, Counted>();
for (const name of Object.keys(stores) as Store[]) {
  t0 = performance.now();
  const c = count(await stores[name].source.sample(scalers, evaluationUnixMs));
  cold.set(name, c);
  console.log(
    `${name} cold pass ${Math.round(performance.now() - t0)} ms: pods ${c.pods}, both windows established ${c.established}, unknown ${c.unknown}, warnings ${c.warnings}`,
  );
}
const expectedPods = size * 12;
const complete = [...cold.values()].every((c) => c.established === expectedPods && c.unknown === "{}");
const [p, v] = [cold.get("prometheus"), cold.get("victoriaMetrics")];
if (p !== undefined && v !== undefined) {
  let largest = 0;
  let missing = 0;
  for (const [key, rate] of p.rates) {
    const other = v.rates.get(key);
    if (other === undefined) missing++;
    else if (rate > 0) largest = Math.max(largest, Math.abs(other - rate) / rate);
  }
  console.log(
    `stable-window token rates: ${p.rates.size} on Prometheus, ${v.rates.size} on VictoriaMetrics, ${missing} missing there; largest relative difference ${(100 * largest).toFixed(2)} %`,
  );
}

const ms: Record<Store, number[]> = { prometheus: [], victoriaMetrics: [] };
const storeCpu: Record<Store, number> = { prometheus: 0, victoriaMetrics: 0 };
const controllerCpu: Record<Store, number> = { prometheus: 0, victoriaMetrics: 0 };
for (let pass = 0; pass < passes; pass++) {
  for (const name of Object.keys(stores) as Store[]) {
    const { source: s, cpuMatch } = stores[name];
    const storeBefore = await cpuSecondsOf(cpuMatch);
    const mine = process.cpuUsage();
    const start = performance.now();
    await s.sample(scalers, evaluationUnixMs);
    const seconds = (performance.now() - start) / 1000;
    ms[name].push(1000 * seconds);
    const used = process.cpuUsage(mine);
    controllerCpu[name] += (used.user + used.system) / 1e6;
    storeCpu[name] += (await cpuSecondsOf(cpuMatch)) - storeBefore - idle[name] * seconds;
  }
}
const p50 = (xs: readonly number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? NaN;
const perDeploymentMs = (seconds: number) => ((1000 * seconds) / passes / size).toFixed(2);
for (const name of Object.keys(stores) as Store[]) {
  const label = name === "prometheus" ? "Prometheus" : "VictoriaMetrics";
  console.log(
    `sampling cost at ${size} deployments (roles plan, ${label}): ${label} ${perDeploymentMs(storeCpu[name])} ms and controller ${perDeploymentMs(controllerCpu[name])} ms of CPU per deployment per pass`,
  );
  console.log(`  ${label}: ${passes} passes, taking turns; pass p50 ${Math.round(p50(ms[name]))} ms`);
}
console.log("load after", loadavg()[0]?.toFixed(2));
await victoria.stop();
await prometheus.stop();
await rm(storage, { recursive: true, force: true });
if (!complete) {
  console.error(`a store left pods unsampled or a family unknown (${expectedPods} pods expected)`);
  process.exitCode = 1;
}
