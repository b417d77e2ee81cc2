/**
 * Sampling-pass benchmark.
 *
 * Default: the queries alone. A real Prometheus 3 serves a TSDB prepared ahead
 * of time (bench/engine-tsdb.ts: 3 roles x 4 pods per deployment, vLLM and
 * SGLang, 15 s scrapes, cached, never built by CI) for 10, 100 and 1,000
 * deployments; every pass samples every deployment at a time inside the data,
 * with each query plan (`--plans`), the plans taking turns pass by pass.
 * Prints per plan the pass p50/p99, CPU per pass and series answered per
 * deployment per pass (what the controller decodes), per family the samples
 * touched (query stats) and the series it answered, the Prometheus RSS, and checks every pod is Fresh
 * with the same fields as at the smallest size and that every plan read the
 * same pass as the first.
 *
 *   npm run bench:sampling [-- --sizes 10,100,1000 --passes 20 --plans unions,parts,roles --compression gzip,none --query-timeout 600]
 *   npm run bench:sampling -- --tsdb mixed --plans roles,native    (the histograms stored as NHCB beside the classic series)
 *
 * `--live`: the end-to-end figure, a simulated fleet scraped by Debian's
 * Prometheus while the passes run (simulation and scraping share the cores).
 *
 *   npm run bench:sampling -- --live [--deployments 100 --passes 20 --scrape-interval 10]
 */
import { spawn } from "node:child_process";
import { createInterface } from "node:readline";
import {
  PrometheusClient,
  prometheusCompressions,
  type PrometheusCompression,
  type PrometheusQueryClient,
} from "../src/adapters/prometheus/client.js";
import { defaultPrometheusSignalConfig } from "../src/adapters/prometheus/config.js";
import { queryNames, queryPlans, sumsByRole, type QueryPlan } from "../src/adapters/prometheus/queries.js";
import {
  PrometheusSignalSource,
  type SamplingPass,
  type ScalerSamplingInput,
} from "../src/adapters/prometheus/source.js";
import { EngineFleet, FleetServer, SyntheticWorkload, type FileSdGroup } from "../src/sim/engines/index.js";
import { PrometheusHarness } from "../harness/prometheus.js";
import { findPromBinaries } from "../harness/prom-bin.js";
import { isFreshPod } from "./fresh-pod.js";
import type { PodSample } from "../src/core/signals/types.js";
import { rm } from "node:fs/promises";
import { loadavg } from "node:os";
import {
  engineOf,
  evaluationUnixMs,
  podsPerRole as preparedPodsPerRole,
  prepareTsdb,
  samplingInputs,
  roles as preparedRoles,
  serveBlocks,
  servedVersion,
  tsdbShape,
} from "./engine-tsdb.js";
import { cpuSecondsOf } from "./proc-cpu.js";
import { instantQuery, type QueryStats } from "./prometheus-query.js";
import { observationsOf, withoutBucketsAndSums } from "../test/support/plan-observations.js";
import { positiveNumberFlag } from "./flags.js";
import { prepareNhcbTwin } from "./nhcb-tsdb.js";

const help = `npm run bench:sampling [-- options]

Times the sampling queries alone against prepared TSDBs (bench/engine-tsdb.ts).

  --sizes <list>          deployments per prepared TSDB (default 10,100,1000)
  --passes <n>            timed passes per size and plan, after one cold pass (default 20)
  --plans <list>          query plans to measure side by side, taking turns pass by
                          pass, and to compare pass by pass (default unions,parts,roles;
                          roles is compared by every observation and the samples
                          but for buckets)
  --tsdb <kind>           classic (default), or mixed: the prepared TSDB's twin with every
                          histogram also stored as a native histogram with custom buckets
                          (bench/nhcb-tsdb.ts, built from the Go module proxy on first use),
                          what a Prometheus 3 with convert_classic_histograms_to_nhcb and
                          always_scrape_classic_histograms stores; the native plan needs it
  --stable-window <s>     stable window in seconds (default 180; 30 with --live)
  --panic-window <s>      panic window in seconds (default 60; 10 with --live)
  --compression <list>    how answers travel, each a run beside the plans: gzip
                          and/or none (uncompressed; default gzip)
  --query-timeout <s>     budget of one query in seconds: the client's deadline, the
                          timeout sent with the query and Prometheus' --query.timeout
                          (default 600; Prometheus' own default is 120)
  --live                  end to end: a simulated fleet scraped by Debian's Prometheus
    --deployments <n>     fleet size (default 100)
    --pods <n>            pods per role (default 4)
    --scrape-interval <s> scrape interval in seconds (default 10)
  --help                  this text
`;

const deployments = positiveNumberFlag("deployments", 100);
const podsPerRole = positiveNumberFlag("pods", 4);
const passes = positiveNumberFlag("passes", 20);
const scrapeIntervalSeconds = positiveNumberFlag("scrape-interval", 10);
const stableWindowSeconds = positiveNumberFlag("stable-window", 30);
const panicWindowSeconds = positiveNumberFlag("panic-window", 10);
const roles = ["server", "prefill", "decode"] as const;
/** A pass at 1,000 deployments on a loaded 2-core machine outlasts Prometheus' 2-minute default. */
const queryTimeoutMs = positiveNumberFlag("query-timeout", 600) * 1000;

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
  /** By query text. */
  readonly byQuery = new Map<string, number[]>();
  /** Series answered, what the controller decodes. */
  answeredSeries = 0;
  /** The same, by the family the source names with each query. */
  readonly answeredByFamily = new Map<string, number>();
  constructor(private readonly inner: PrometheusQueryClient) {}
  async instantQuery(
    query: string,
    atUnixMs: number,
    name?: string,
  ): ReturnType<PrometheusQueryClient["instantQuery"]> {
    const t0 = performance.now();
    try {
      const result = await this.inner.instantQuery(query, atUnixMs);
      this.answeredSeries += result.samples.length;
      const family = name ?? "?";
      this.answeredByFamily.set(family, (this.answeredByFamily.get(family) ?? 0) + result.samples.length);
      return result;
    } finally {
      const ms = performance.now() - t0;
      this.latenciesMs.push(ms);
      const list = this.byQuery.get(query);
      if (list) list.push(ms);
      else this.byQuery.set(query, [ms]);
    }
  }
}

async function live(): Promise<void> {
  const fleetProcess = await startFleetProcess();
  const prometheus = await PrometheusHarness.start({
    scrapeIntervalSeconds,
    targets: fleetProcess.groups,
    extraArgs: [`--query.timeout=${queryTimeoutMs / 1000}s`],
  });
  try {
    const pods = fleetProcess.groups.length;
    console.log(
      `fleet: ${deployments} deployments x ${roles.length} roles x ${podsPerRole} pods = ${pods} pods; scrape every ${scrapeIntervalSeconds}s`,
    );
    await prometheus.waitForHealthyTargets(pods, 180_000);
    const warmupMs = (stableWindowSeconds + 2 * scrapeIntervalSeconds) * 1000;
    console.log(`all targets up; filling the ${stableWindowSeconds}s window (${Math.round(warmupMs / 1000)}s)`);
    await new Promise((r) => setTimeout(r, warmupMs));

    const client = new TimedClient(new PrometheusClient({ endpoint: prometheus.url, timeoutMs: queryTimeoutMs }));
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

(process.argv.includes("--help")
  ? Promise.resolve(void process.stdout.write(help))
  : process.argv.includes("--serve-fleet")
    ? serveFleet()
    : process.argv.includes("--live")
      ? live()
      : prepared()
).catch((err: unknown) => {
  console.error(err);
  process.exitCode = 1;
});

function sizesFlag(): number[] {
  const i = process.argv.indexOf("--sizes");
  const raw = i >= 0 ? (process.argv[i + 1] ?? "") : "10,100,1000";
  const sizes = raw.split(",").map(Number);
  if (sizes.some((n) => !Number.isInteger(n) || n < 1))
    throw new Error(`--sizes: ${JSON.stringify(raw)} is not a list of counts`);
  return sizes;
}

/** The fields a pod answered with, as one string: the same at every size, or a size lost some. */
function fieldSignature(pod: PodSample): string {
  const keys = (o: object): string => Object.keys(o).sort().join(",");
  return `${keys(pod)} | stable: ${keys(pod.windows.stable)} | panic: ${keys(pod.windows.panic)}`;
}

/** One query with `stats=all`: what Prometheus itself says the query read. */
async function queryStats(url: string, query: string, atUnixMs: number): Promise<QueryStats> {
  const { stats } = await instantQuery(url, query, atUnixMs, { timeoutMs: queryTimeoutMs, stats: true });
  if (!stats) throw new Error("stats query answered no statistics");
  return stats;
}

/** CPU seconds the Prometheus serving `port` has used so far. */
const prometheusCpuSeconds = (port: number): Promise<number> => cpuSecondsOf(`--web.listen-address=127.0.0.1:${port}`);

const expectedPods = (size: number): number => size * preparedRoles.length * preparedPodsPerRole;

/** A comma-separated flag whose every item is one of `allowed`. */
function listFlag<T extends string>(name: string, allowed: readonly T[], fallback: string): T[] {
  const i = process.argv.indexOf(`--${name}`);
  const list = (i >= 0 ? (process.argv[i + 1] ?? "") : fallback).split(",");
  for (const item of list)
    if (!(allowed as readonly string[]).includes(item))
      throw new Error(`--${name}: ${JSON.stringify(item)} is not one of ${allowed.join(", ")}`);
  return list as T[];
}

const plansFlag = (): QueryPlan[] => listFlag("plans", queryPlans, "unions,parts,roles");
/** Which prepared TSDB a run serves (a function, so the entry above may call it before this line runs). */
function tsdbFlag(): "classic" | "mixed" {
  const [kind, ...rest] = listFlag("tsdb", ["classic", "mixed"] as const, "classic");
  if (kind === undefined || rest.length > 0) throw new Error("--tsdb: one of classic, mixed");
  return kind;
}
const compressionsFlag = (): PrometheusCompression[] => listFlag("compression", prometheusCompressions, "gzip");

interface SizeResult {
  readonly size: number;
  /** The served Prometheus' own version (`servedVersion`). */
  readonly version: string;
  readonly lines: string[];
  /** Queries per pass, by plan. */
  readonly queries: ReadonlyMap<QueryPlan, number>;
}

/** What one plan measured at one size. */
interface PlanRun {
  readonly plan: QueryPlan;
  readonly compression: PrometheusCompression;
  /** The plan, and `/none` for uncompressed answers. */
  readonly label: string;
  readonly source: PrometheusSignalSource;
  readonly client: TimedClient;
  readonly issued: readonly { readonly family: string; readonly text: string }[];
  coldMs: number;
  readonly passMs: number[];
  promCpuSeconds: number;
  benchCpuSeconds: number;
  queries: number;
  first?: SamplingPass;
}

/** Everything a pass read, in a form two plans' passes can be compared by (the query count apart). */
function passContent(pass: SamplingPass): string {
  const scalers = [...pass.scalers].map(([key, roles]) => [key, [...roles]]);
  return JSON.stringify([scalers, pass.warnings, pass.unknownFamilies]);
}

/**
 * Where two plans' passes differ, for the report; undefined when they read the same. With the
 * `roles` plan on either side, the samples but for buckets and every role's observation
 * (test/support/plan-observations.ts); otherwise every sample.
 */
function difference(
  a: SamplingPass,
  b: SamplingPass,
  summed: boolean,
  scalers: readonly ScalerSamplingInput[],
): string | undefined {
  if (!summed) return passContent(a) === passContent(b) ? undefined : firstDifference(a, b);
  if (JSON.stringify(withoutBucketsAndSums(a)) !== JSON.stringify(withoutBucketsAndSums(b)))
    return `the samples but for buckets: ${firstDifference(a, b)}`;
  const expected = observationsOf(a, scalers);
  for (const [key, observation] of observationsOf(b, scalers)) {
    const other = expected.get(key);
    if (JSON.stringify(observation) !== JSON.stringify(other))
      return `${key}: ${JSON.stringify(other).slice(0, 300)} against ${JSON.stringify(observation).slice(0, 300)}`;
  }
  return undefined;
}

/** The first role whose samples differ, for the report. */
function firstDifference(a: SamplingPass, b: SamplingPass): string {
  for (const [key, roles] of a.scalers) {
    for (const [role, samples] of roles) {
      const other = b.scalers.get(key)?.get(role);
      if (JSON.stringify(samples) !== JSON.stringify(other))
        return `${key}/${role}: ${JSON.stringify(samples).slice(0, 300)} against ${JSON.stringify(other).slice(0, 300)}`;
    }
  }
  return "warnings or unknown families differ";
}

async function measureSize(
  size: number,
  prometheusPath: string,
  promtoolPath: string,
  signatures: Map<string, Set<string>>,
): Promise<SizeResult> {
  const prepared =
    tsdbFlag() === "mixed" ? await prepareNhcbTwin(promtoolPath, size, "mixed") : await prepareTsdb(promtoolPath, size);
  const loadBefore = loadavg()[0] ?? NaN;
  const { prometheus, storage } = await serveBlocks({
    blocksPath: prepared.blocksPath,
    binaryPath: prometheusPath,
    queryTimeoutSeconds: queryTimeoutMs / 1000,
  });
  try {
    const version = await servedVersion(prometheus.url);
    const scalers = samplingInputs(size, {
      stableWindowSeconds: positiveNumberFlag("stable-window", 180),
      panicWindowSeconds: positiveNumberFlag("panic-window", 60),
    });
    const planRuns = plansFlag().flatMap((plan) => compressionsFlag().map((compression) => ({ plan, compression })));
    const runs: PlanRun[] = planRuns.map(({ plan, compression }) => {
      const client = new TimedClient(
        new PrometheusClient({ endpoint: prometheus.url, timeoutMs: queryTimeoutMs, compression }),
      );
      const source = new PrometheusSignalSource(client, {
        ...defaultPrometheusSignalConfig,
        queryTimeoutMs,
        queryPlan: plan,
      });
      return {
        plan,
        compression,
        label: compression === "gzip" ? plan : `${plan}/none`,
        source,
        client,
        issued: source.issuedFor(scalers),
        coldMs: NaN,
        passMs: [],
        promCpuSeconds: 0,
        benchCpuSeconds: 0,
        queries: 0,
      };
    });
    for (const run of runs) {
      const t0 = performance.now();
      await run.source.sample(scalers, evaluationUnixMs);
      run.coldMs = performance.now() - t0;
      run.client.latenciesMs.length = 0;
      run.client.byQuery.clear();
      run.client.answeredSeries = 0;
      run.client.answeredByFamily.clear();
    }
    // The plans take turns, pass by pass, so the load of the shared machine falls on both alike.
    for (let p = 0; p < passes; p++) {
      for (const run of runs) {
        const cpuBefore = await prometheusCpuSeconds(prometheus.port);
        const benchCpuBefore = process.cpuUsage();
        const started = performance.now();
        const pass = await run.source.sample(scalers, evaluationUnixMs);
        run.passMs.push(performance.now() - started);
        const benchCpu = process.cpuUsage(benchCpuBefore);
        run.benchCpuSeconds += (benchCpu.user + benchCpu.system) / 1e6;
        run.promCpuSeconds += (await prometheusCpuSeconds(prometheus.port)) - cpuBefore;
        run.queries = pass.queries;
        run.first ??= pass;
      }
    }
    const problems: string[] = [];
    const lines: string[] = [];
    const perQuery: string[] = [];
    const reference = runs[0];
    for (const run of runs) {
      const pass = run.first;
      if (!pass) continue;
      const summed = sumsByRole(run.plan) || (reference !== undefined && sumsByRole(reference.plan));
      const differs = reference?.first && difference(reference.first, pass, summed, scalers);
      if (differs) problems.push(`${size} deployments: the ${run.label} plan read a different pass: ${differs}`);
      problems.push(...pass.warnings, ...Object.values(pass.unknownFamilies));
      let fresh = 0;
      let pods = 0;
      for (const [i, s] of scalers.entries()) {
        for (const role of preparedRoles) {
          const samples = pass.scalers.get(s.key)?.get(role);
          if (samples?.queryFailed) problems.push(`${s.key}/${role}: ${samples.queryFailed.reason}`);
          for (const pod of samples?.pods ?? []) {
            pods++;
            if (isFreshPod(pod, evaluationUnixMs / 1000, s.intervalSeconds)) fresh++;
            const key = `${engineOf(i)}/${role}`;
            let seen = signatures.get(key);
            if (!seen) signatures.set(key, (seen = new Set()));
            const sig = fieldSignature(pod);
            if (!seen.has(sig)) {
              if (size !== Math.min(...sizesFlag()) || run !== runs[0])
                problems.push(`${s.key}/${role}/${pod.pod}: fields differ from the smallest size: ${sig}`);
              seen.add(sig);
            }
          }
        }
      }
      if (fresh !== expectedPods(size))
        problems.push(`${size} deployments, ${run.label} plan: ${fresh} of ${expectedPods(size)} pods Fresh`);
      const promCpuPerPass = run.promCpuSeconds / passes;
      const benchCpuPerPass = run.benchCpuSeconds / passes;
      const passMs = [...run.passMs].sort((a, b) => a - b);
      lines.push(
        `${String(size).padStart(11)} ${run.label.padEnd(6)} ${String(run.queries).padStart(7)} ${`${fresh}/${pods}/${expectedPods(size)}`.padStart(20)} ${run.coldMs.toFixed(0).padStart(7)} ${percentile(passMs, 0.5).toFixed(0).padStart(7)} ${percentile(passMs, 0.99).toFixed(0).padStart(7)} ${promCpuPerPass.toFixed(3).padStart(10)} ${benchCpuPerPass.toFixed(3).padStart(11)} ${(run.client.answeredSeries / passes / size).toFixed(0).padStart(10)}`,
      );
      lines.push(
        `=sampling cost at ${size} deployments (${run.plan} plan${run.compression === "none" ? ", uncompressed" : ""}): Prometheus ${((promCpuPerPass * 1000) / size).toFixed(2)} ms and controller ${((benchCpuPerPass * 1000) / size).toFixed(2)} ms of CPU per deployment per pass`,
      );
      // Per family: its queries' latencies in the passes, and Prometheus' own statistics of each query run alone.
      for (const family of queryNames) {
        const texts = run.issued.filter((q) => q.family === family).map((q) => q.text);
        const ms = texts.flatMap((t) => run.client.byQuery.get(t) ?? []).sort((a, b) => a - b);
        let samplesTouched = 0;
        let peakSamples = 0;
        let evalMs = 0;
        for (const text of texts) {
          const st = await queryStats(prometheus.url, text, evaluationUnixMs);
          samplesTouched += st.samplesTouched;
          peakSamples = Math.max(peakSamples, st.peakSamples);
          evalMs += st.evalMs;
        }
        perQuery.push(
          `${String(size).padStart(11)} ${run.label.padEnd(6)} ${family.padEnd(8)} ${String(texts.length).padStart(7)} ${percentile(ms, 0.5).toFixed(0).padStart(7)} ${percentile(ms, 0.99).toFixed(0).padStart(7)} ${String(samplesTouched).padStart(15)} ${String(peakSamples).padStart(12)} ${evalMs.toFixed(0).padStart(8)} ${((samplesTouched / evalMs) * 1000).toFixed(0).padStart(13)} ${((run.client.answeredByFamily.get(family) ?? 0) / passes / size).toFixed(0).padStart(10)}`,
        );
      }
    }
    const peakRss = await prometheus.peakRssKb();
    const loadAfter = loadavg()[0] ?? NaN;
    lines.push(
      `+${String(size).padStart(11)} ${(peakRss === undefined ? "?" : (peakRss / 1024).toFixed(0)).padStart(13)} ${peakRssMb().toFixed(0).padStart(14)} ${`${loadBefore.toFixed(1)}-${loadAfter.toFixed(1)}`.padStart(12)}`,
    );
    return {
      size,
      version,
      lines: [...lines, ...perQuery.map((l) => `q${l}`), ...problems.slice(0, 5).map((l) => `!${l}`)],
      queries: new Map(runs.map((r) => [r.plan, r.queries])),
    };
  } finally {
    await prometheus.stop();
    await rm(storage, { recursive: true, force: true });
  }
}

/** The queries alone, against prepared TSDBs of each size. */
async function prepared(): Promise<void> {
  const bins = findPromBinaries();
  const sizes = sizesFlag();
  const signatures = new Map<string, Set<string>>();
  const results: SizeResult[] = [];
  for (const size of sizes) {
    results.push(await measureSize(size, bins.prometheusPath, bins.promtoolPath, signatures));
    process.stderr.write(`bench:sampling: ${size} deployments measured\n`);
  }
  const kind = (l: string): string => (/^[q!=+]/.test(l) ? (l[0] ?? "") : "");
  console.log(
    `\nPrometheus ${[...new Set(results.map((r) => r.version))].join(", ")}${bins.overridden ? ` (${bins.prometheusPath})` : ""} over prepared blocks${tsdbFlag() === "mixed" ? " with every histogram also stored as NHCB" : ""} (${tsdbShape.scrapeIntervalSeconds}s scrapes, ${preparedRoles.length} roles x ${preparedPodsPerRole} pods per deployment); ${passes} passes per size and plan after one cold pass each, the plans taking turns; windows ${positiveNumberFlag("stable-window", 180)}s/${positiveNumberFlag("panic-window", 60)}s; CPU seconds per timed pass (Prometheus, this process); series answered per deployment per timed pass`,
  );
  console.log(
    "deployments plan   queries  fresh/pods/expected cold ms  p50 ms  p99 ms prom CPU s bench CPU s series/dep",
  );
  for (const r of results) for (const l of r.lines) if (kind(l) === "") console.log(l);
  console.log("\ndeployments prom RSS MiB bench RSS MiB  load 1m b-a");
  for (const r of results) for (const l of r.lines) if (kind(l) === "+") console.log(l.slice(1));
  console.log("");
  for (const r of results) for (const l of r.lines) if (kind(l) === "=") console.log(l.slice(1));
  console.log(
    "\nper family (its queries in the passes; samples touched and eval time from stats=all, each query alone, summed)",
  );
  console.log(
    "deployments plan   family   queries  p50 ms  p99 ms samples touched peak samples  eval ms samples/s eval series/dep",
  );
  for (const r of results) for (const l of r.lines) if (kind(l) === "q") console.log(l.slice(1));
  const problems = results.flatMap((r) => r.lines.filter((l) => kind(l) === "!").map((l) => l.slice(1)));
  for (const p of problems) console.error(`problem: ${p}`);
  for (const plan of plansFlag()) {
    const counts = new Set(results.map((r) => r.queries.get(plan)));
    if (counts.size !== 1) {
      console.error(`${plan} plan: query count differs between sizes: ${[...counts].join(", ")}`);
      process.exitCode = 1;
    }
  }
  if (problems.length > 0) process.exitCode = 1;
}
