/**
 * A sampling pass against Prometheus' head, where a live Prometheus holds the last three minutes, beside
 * `bench:sampling`, which serves them from prepared blocks (docs/prometheus-signals.md, "The prepared
 * blocks against Prometheus' head"). The benchmark's own simulated fleet (`bench/sampling.ts
 * --serve-fleet`, 3 roles × 4 pods per deployment) is scraped by Prometheus 3.5 every 15 s for the stable
 * window and half a minute more; its targets are then dropped, so the passes, all evaluated at the last
 * scrape, compete with no scrape. The Prometheus CPU the dropped targets' failing scrapes still cost,
 * measured over 10 s before the passes, is subtracted.
 *
 *   npm run bench:sampling-head [-- --deployments 100 --passes 10]
 *
 * Prints the same line as `bench:sampling` (`sampling cost at N deployments (roles plan, head): …`), the
 * pods that answered Fresh, and the samples a pass touches (`stats=all`, each query alone). Never run by CI.
 */
import { spawn } from "node:child_process";
import { loadavg } from "node:os";
import { createInterface } from "node:readline";
import { PrometheusClient } from "../src/adapters/prometheus/client.js";
import { defaultPrometheusSignalConfig } from "../src/adapters/prometheus/config.js";
import { PrometheusSignalSource } from "../src/adapters/prometheus/source.js";
import type { FileSdGroup } from "../src/sim/engines/index.js";
import { PrometheusHarness } from "../harness/prometheus.js";
import { findPromBinaries } from "../harness/prom-bin.js";
import { podsPerRole, roles, samplingInputs, tsdbShape } from "./engine-tsdb.js";
import { wholeFlag } from "./flags.js";
import { isFreshPod } from "./fresh-pod.js";
import { cpuSecondsOf } from "./proc-cpu.js";
import { instantQuery } from "./prometheus-query.js";

if (process.argv.includes("--help")) {
  process.stdout.write("npm run bench:sampling-head [-- --deployments 100 --passes 10]\n");
  process.exit(0);
}
const deployments = wholeFlag("deployments", 100);
const passes = wholeFlag("passes", 10);
const scrapeIntervalSeconds = tsdbShape.scrapeIntervalSeconds;
const stableWindowSeconds = 180;
const panicWindowSeconds = 60;
/** The stable window and two scrapes more, so every pod's windows are established at the last scrape. */
const fillMs = (stableWindowSeconds + 2 * scrapeIntervalSeconds) * 1000;
const queryTimeoutMs = 600_000;
const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

const fleet = spawn(
  process.execPath,
  [
    ...process.execArgv,
    new URL("./sampling.ts", import.meta.url).pathname,
    "--serve-fleet",
    "--deployments",
    String(deployments),
    "--pods",
    String(podsPerRole),
  ],
  { stdio: ["pipe", "pipe", "inherit"] },
);
const groups = JSON.parse(
  await new Promise<string>((resolve, reject) => {
    createInterface({ input: fleet.stdout }).once("line", resolve);
    fleet.once("exit", (code) => reject(new Error(`fleet process exited with ${code}`)));
  }),
) as FileSdGroup[];
const prometheus = await PrometheusHarness.start({
  binaryPath: findPromBinaries().prometheusPath,
  scrapeIntervalSeconds,
  targets: groups,
  extraArgs: [`--query.timeout=${queryTimeoutMs / 1000}s`],
});
const port = new URL(prometheus.url).port;
const prometheusCpuSeconds = (): Promise<number> => cpuSecondsOf(`--web.listen-address=127.0.0.1:${port}`);
try {
  await prometheus.waitForHealthyTargets(groups.length, 300_000);
  process.stderr.write(`${groups.length} targets up; scraping for ${fillMs / 1000} s\n`);
  await sleep(fillMs);
  // A second before now: the last scrape of every target is in, and no later one will come.
  const atMs = Date.now() - 1000;
  await prometheus.setTargets([]);
  fleet.stdin.end();
  await sleep(2 * scrapeIntervalSeconds * 1000);
  // The names the fleet's pods carry are the prepared TSDB's (`bench/sampling.ts --serve-fleet`).
  const scalers = samplingInputs(deployments, { stableWindowSeconds, panicWindowSeconds });
  const source = new PrometheusSignalSource(
    new PrometheusClient({ endpoint: prometheus.url, timeoutMs: queryTimeoutMs }),
    {
      ...defaultPrometheusSignalConfig,
      queryTimeoutMs,
      queryPlan: "roles",
    },
  );
  const cold = await source.sample(scalers, atMs);
  let pods = 0;
  let fresh = 0;
  for (const byRole of cold.scalers.values())
    for (const role of byRole.values())
      for (const pod of role.pods) {
        pods++;
        if (isFreshPod(pod, atMs / 1000, scrapeIntervalSeconds)) fresh++;
      }
  const idleFrom = await prometheusCpuSeconds();
  await sleep(10_000);
  const idlePerSecond = ((await prometheusCpuSeconds()) - idleFrom) / 10;
  const loadBefore = loadavg()[0] ?? NaN;
  const cpuFrom = await prometheusCpuSeconds();
  const ownFrom = process.cpuUsage();
  const wallFrom = performance.now();
  for (let p = 0; p < passes; p++) await source.sample(scalers, atMs);
  const wallSeconds = (performance.now() - wallFrom) / 1000;
  const prometheusSeconds = (await prometheusCpuSeconds()) - cpuFrom - idlePerSecond * wallSeconds;
  const own = process.cpuUsage(ownFrom);
  const controllerSeconds = (own.user + own.system) / 1e6;
  let touched = 0;
  for (const query of source.issuedFor(scalers))
    touched +=
      (await instantQuery(prometheus.url, query.text, atMs, { timeoutMs: queryTimeoutMs, stats: true })).stats
        ?.samplesTouched ?? 0;
  const perDeploymentMs = (seconds: number): string => ((1000 * seconds) / passes / deployments).toFixed(2);
  process.stdout.write(
    [
      `Prometheus' head, ${deployments} deployments of ${roles.length * podsPerRole} pods scraped every ${scrapeIntervalSeconds} s, targets dropped before the passes; ${passes} passes at the last scrape after a cold one`,
      `cold pass: ${cold.queries} queries, ${fresh}/${pods} pods Fresh, ${cold.warnings.length} warnings`,
      `load average ${loadBefore.toFixed(1)}-${(loadavg()[0] ?? NaN).toFixed(1)}; idle Prometheus CPU ${(1000 * idlePerSecond).toFixed(1)} ms a second, subtracted`,
      `pass ${(wallSeconds / passes).toFixed(2)} s; samples touched per deployment per pass ${(touched / deployments).toFixed(0)}`,
      `sampling cost at ${deployments} deployments (roles plan, head): Prometheus ${perDeploymentMs(prometheusSeconds)} ms and controller ${perDeploymentMs(controllerSeconds)} ms of CPU per deployment per pass`,
      "",
    ].join("\n"),
  );
  if (fresh !== pods) process.exitCode = 1;
} finally {
  await prometheus.stop();
  fleet.kill();
}
