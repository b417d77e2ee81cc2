/**
 * The sampling pass on Thanos beside Prometheus, in one run (issue 29): the prepared TSDB of
 * `bench:sampling` (`bench/engine-tsdb.ts`) served by Prometheus 3.5, a Thanos sidecar over the same
 * storage and a Querier over the sidecar. Every pass samples every deployment directly and through the
 * Querier, taking turns, and prints the pass times and the CPU seconds of each process per pass (from
 * /proc). Figures, not pass/fail; it fails only when the two backends answer different samples.
 *
 *   npm run bench:sampling-thanos [-- --size 100 --passes 5]
 */
import { loadavg } from "node:os";
import { PrometheusClient } from "../src/adapters/prometheus/client.js";
import { defaultPrometheusSignalConfig } from "../src/adapters/prometheus/config.js";
import { PrometheusSignalSource } from "../src/adapters/prometheus/source.js";
import { startQuerier, startSidecar, waitForStores } from "../harness/thanos.js";
import { evaluationUnixMs, samplingInputs, servePrepared } from "./engine-tsdb.js";
import { cpuSecondsOf } from "./proc-cpu.js";
import { wholeFlag } from "./flags.js";

const size = wholeFlag("size", 100);
const passes = wholeFlag("passes", 5);
const timeoutMs = 600_000;
const { prometheus, storage } = await servePrepared(size, {
  queryTimeoutSeconds: timeoutMs / 1000,
  externalLabels: { replica: "a" },
});
const sidecar = await startSidecar(prometheus.url, storage);
const querier = await startQuerier({
  endpoints: [sidecar.grpcAddress],
  replicaLabel: "replica",
  extraArgs: ["--query.timeout=600s"],
});
await waitForStores(querier, 1, 60_000);
const scalers = samplingInputs(size, { stableWindowSeconds: 180, panicWindowSeconds: 60 });
const source = (url: string) =>
  new PrometheusSignalSource(new PrometheusClient({ endpoint: url, timeoutMs }), {
    ...defaultPrometheusSignalConfig,
    queryTimeoutMs: timeoutMs,
  });
const backends = { prometheus: source(prometheus.url), thanos: source(querier.httpUrl) };
const cpuMatch = {
  prometheus: `--web.listen-address=127.0.0.1:${prometheus.port}`,
  sidecar: `--grpc-address=${sidecar.grpcAddress}`,
  querier: `--http-address=${querier.httpUrl.replace("http://", "")}`,
};
console.log("load before", loadavg()[0]);
const first = new Map<string, string>();
for (const [name, s] of Object.entries(backends)) {
  const pass = await s.sample(scalers, evaluationUnixMs);
  let pods = 0,
    established = 0;
  for (const roles of pass.scalers.values())
    for (const r of roles.values())
      for (const p of r.pods) {
        pods++;
        if (p.windows.stable.established && p.windows.panic.established) established++;
      }
  console.log(
    name,
    "cold pass: pods",
    pods,
    "both windows established",
    established,
    "unknown",
    JSON.stringify(pass.unknownFamilies),
    "warnings",
    pass.warnings.length,
  );
  first.set(name, JSON.stringify([...pass.scalers.entries()].map(([k, v]) => [k, [...v.entries()]])));
}
const same = first.get("prometheus") === first.get("thanos");
console.log("same samples on both:", same);
const ms: Record<string, number[]> = { prometheus: [], thanos: [] };
const cpu: Record<string, number> = { prometheus: 0, sidecar: 0, querier: 0 };
const cpuThanosRun = { prometheus: 0, sidecar: 0, querier: 0 };
for (let p = 0; p < passes; p++) {
  for (const [name, s] of Object.entries(backends)) {
    const before = Object.fromEntries(
      await Promise.all(Object.entries(cpuMatch).map(async ([k, m]) => [k, await cpuSecondsOf(m)] as const)),
    );
    const t0 = performance.now();
    await s.sample(scalers, evaluationUnixMs);
    ms[name]!.push(performance.now() - t0);
    for (const [k, m] of Object.entries(cpuMatch)) {
      const d = (await cpuSecondsOf(m)) - (before[k] ?? 0);
      if (name === "prometheus") cpu[k]! += d;
      else cpuThanosRun[k as keyof typeof cpuThanosRun] += d;
    }
  }
}
const p50 = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
console.log(
  "passes",
  passes,
  "interleaved; pass p50 ms: prometheus",
  Math.round(p50(ms.prometheus!)!),
  "thanos",
  Math.round(p50(ms.thanos!)!),
);
console.log("all pass ms", JSON.stringify(ms));
console.log(
  "CPU s per pass, direct:",
  JSON.stringify(Object.fromEntries(Object.entries(cpu).map(([k, v]) => [k, +(v / passes).toFixed(2)]))),
);
console.log(
  "CPU s per pass, via thanos:",
  JSON.stringify(Object.fromEntries(Object.entries(cpuThanosRun).map(([k, v]) => [k, +(v / passes).toFixed(2)]))),
);
console.log("load after", loadavg()[0]);
await querier.stop();
await sidecar.stop();
await prometheus.stop();
if (!same) process.exitCode = 1;
