/**
 * Sampling-pass benchmark: a simulated fleet of 100 deployments x 3 roles x 4
 * pods (1200 engine pods, vLLM and SGLang alternating) scraped by a real
 * Prometheus; passes for 10 and for 100 scalers. Prints queries per pass, pass
 * latency p50/p99 and peak RSS. The query count must not depend on the
 * number of scalers.
 *
 *   npm run bench:sampling [-- --passes 20 --scrape-interval 10]
 */
import { spawn } from "node:child_process";
import { createInterface } from "node:readline";
import { PrometheusClient, type PrometheusQueryClient } from "../src/adapters/prometheus/client.js";
import { defaultPrometheusSignalConfig } from "../src/adapters/prometheus/config.js";
import { PrometheusSignalSource, type ScalerSamplingInput } from "../src/adapters/prometheus/source.js";
import { EngineFleet, FleetServer, SyntheticWorkload, type FileSdGroup } from "../src/sim/engines/index.js";
import { PrometheusHarness } from "../src/harness/prometheus.js";

function flag(name: string, fallback: number): number {
  const i = process.argv.indexOf(`--${name}`);
  const v = i >= 0 ? Number(process.argv[i + 1]) : NaN;
  return Number.isFinite(v) ? v : fallback;
}

const deployments = flag("deployments", 100);
const podsPerRole = flag("pods", 4);
const passes = flag("passes", 20);
const scrapeIntervalSeconds = flag("scrape-interval", 10);
const stableWindowSeconds = flag("stable-window", 30);
const panicWindowSeconds = flag("panic-window", 10);
const roles = ["server", "prefill", "decode"] as const;

function percentile(sorted: readonly number[], p: number): number {
  if (sorted.length === 0) return NaN;
  return sorted[Math.min(sorted.length - 1, Math.ceil(p * sorted.length) - 1)] ?? NaN;
}

const peakRssMb = (): number => process.resourceUsage().maxRSS / 1024;

/** Child process: serves the simulated fleet so the sampling side is measured alone. */
async function serveFleet(): Promise<void> {
  const startSeconds = Date.now() / 1000;
  const fleet = new EngineFleet({ startSeconds, stepSeconds: 0.1 });
  for (let i = 0; i < deployments; i++) {
    fleet.addDeployment({
      namespace: `team-${i % 10}`,
      name: `model-${i}`,
      engine: i % 2 === 0 ? "vllm" : "sglang",
      roles: roles.map((name) => ({ name, serving: name === "server" ? "unified" : name, replicas: podsPerRole })),
      workload: new SyntheticWorkload({
        seed: i,
        startSeconds,
        requestsPerSecond: 1,
        arrivals: "poisson",
        promptTokens: { kind: "uniform", minTokens: 200, maxTokens: 2000 },
        outputTokens: { kind: "uniform", minTokens: 16, maxTokens: 256 },
      }),
    });
  }
  const server = new FleetServer({ fleet, servedHistory: 0, tickMs: 250 });
  await server.start();
  process.stdout.write(`${JSON.stringify(server.fileSdGroups())}\n`);
  // Runs until the parent closes stdin.
  process.stdin.resume();
  process.stdin.on("end", () => {
    void server.stop().then(() => process.exit(0));
  });
}

async function startFleetProcess(): Promise<{ groups: FileSdGroup[]; stop: () => void }> {
  const script = process.argv[1] ?? "";
  const child = spawn(process.execPath, [...process.execArgv, script, "--serve-fleet", ...process.argv.slice(2)], {
    stdio: ["pipe", "pipe", "inherit"],
  });
  const lines = createInterface({ input: child.stdout });
  const first = await new Promise<string>((resolve, reject) => {
    lines.once("line", resolve);
    child.once("exit", (code) => reject(new Error(`fleet process exited with ${code}`)));
  });
  return { groups: JSON.parse(first) as FileSdGroup[], stop: () => child.stdin.end() };
}

/** Times each query so the report can say where a pass spends its time. */
class TimedClient implements PrometheusQueryClient {
  readonly latenciesMs: number[] = [];
  constructor(private readonly inner: PrometheusQueryClient) {}
  async instantQuery(query: string, atUnixMs: number): ReturnType<PrometheusQueryClient["instantQuery"]> {
    const t0 = performance.now();
    try {
      return await this.inner.instantQuery(query, atUnixMs);
    } finally {
      this.latenciesMs.push(performance.now() - t0);
    }
  }
}

async function main(): Promise<void> {
  const fleetProcess = await startFleetProcess();
  const prometheus = await PrometheusHarness.start({ scrapeIntervalSeconds, targets: fleetProcess.groups });
  try {
    const pods = fleetProcess.groups.length;
    console.log(
      `fleet: ${deployments} deployments x ${roles.length} roles x ${podsPerRole} pods = ${pods} pods; scrape every ${scrapeIntervalSeconds}s`,
    );
    await prometheus.waitForHealthyTargets(pods, 180_000);
    const warmupMs = (stableWindowSeconds + 2 * scrapeIntervalSeconds) * 1000;
    console.log(`all targets up; filling the ${stableWindowSeconds}s window (${Math.round(warmupMs / 1000)}s)`);
    await new Promise((r) => setTimeout(r, warmupMs));

    const client = new TimedClient(new PrometheusClient({ endpoint: prometheus.url, timeoutMs: 60_000 }));
    const source = new PrometheusSignalSource(client, defaultPrometheusSignalConfig);
    const rows: string[] = [];
    const queryCounts = new Set<number>();
    for (const scalerCount of [10, deployments]) {
      const scalers: ScalerSamplingInput[] = Array.from({ length: scalerCount }, (_, i) => ({
        key: `team-${i % 10}/model-${i}`,
        namespace: `team-${i % 10}`,
        deployment: `model-${i}`,
        roles: [...roles],
        stableWindowSeconds,
        panicWindowSeconds,
        intervalSeconds: 15,
      }));
      const latenciesMs: number[] = [];
      client.latenciesMs.length = 0;
      let queries = 0;
      let podsSeen = 0;
      let failures = 0;
      for (let p = 0; p < passes; p++) {
        const t0 = performance.now();
        const pass = await source.sample(scalers, Date.now());
        latenciesMs.push(performance.now() - t0);
        queries = pass.queries;
        podsSeen = 0;
        for (const byRole of pass.scalers.values()) {
          for (const r of byRole.values()) {
            podsSeen += r.pods.length;
            if (r.queryFailed) failures++;
          }
        }
      }
      queryCounts.add(queries);
      latenciesMs.sort((a, b) => a - b);
      const perQuery = [...client.latenciesMs].sort((a, b) => a - b);
      const promRss = await prometheus.peakRssKb();
      rows.push(
        [
          String(scalerCount).padStart(9),
          String(queries).padStart(15),
          `${podsSeen}/${scalerCount * roles.length * podsPerRole}`.padStart(11),
          percentile(latenciesMs, 0.5).toFixed(1).padStart(9),
          percentile(latenciesMs, 0.99).toFixed(1).padStart(9),
          peakRssMb().toFixed(0).padStart(16),
          (promRss === undefined ? "?" : (promRss / 1024).toFixed(0)).padStart(19),
          `${percentile(perQuery, 0.5).toFixed(1)}/${percentile(perQuery, 0.99).toFixed(1)}`.padStart(22),
          String(failures).padStart(8),
        ].join(" "),
      );
    }
    console.log(`\n${passes} passes each, windows ${stableWindowSeconds}s/${panicWindowSeconds}s`);
    console.log(
      "  scalers queries/pass  pods seen   p50 ms    p99 ms  peak RSS MB (bench)  peak RSS MB (prom)  query p50/p99 ms  failed",
    );
    for (const r of rows) console.log(r);
    if (queryCounts.size !== 1) {
      console.error(`query count differs between 10 and ${deployments} scalers: ${[...queryCounts].join(", ")}`);
      process.exitCode = 1;
    }
  } finally {
    await prometheus.stop();
    fleetProcess.stop();
  }
}

(process.argv.includes("--serve-fleet") ? serveFleet() : main()).catch((err: unknown) => {
  console.error(err);
  process.exitCode = 1;
});
