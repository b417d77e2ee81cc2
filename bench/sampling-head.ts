/**
 * A sampling pass against Prometheus' head, where a live Prometheus holds the last three minutes, beside
 * `bench:sampling`, which serves them from prepared blocks (docs/prometheus-signals.md, "The prepared
 * blocks against Prometheus' head"). Prometheus 3.5, two ways of filling its head:
 *
 * - live (the default): the benchmark's own simulated fleet (`bench/sampling.ts --serve-fleet`, 3 roles × 4
 *   pods per deployment) is scraped every 15 s for the stable window and half a minute more; its targets are
 *   then dropped, so the passes, all evaluated at the last scrape, compete with no scrape. The fleet does not
 *   run beside Prometheus on two cores past a few hundred deployments.
 * - `--prepared`: the prepared blocks' own samples, served as scrapes with their timestamps
 *   (bench/prepared-scrapes.ts, 50 deployments a target, a scrape every 10 s), so the head holds exactly what
 *   the blocks hold; the blocks are then served too, and the passes take turns between the two, the same
 *   pass asked of each at the same point of the data. Exits 1 unless both read the same pass.
 *
 * The Prometheus CPU an idle Prometheus still spends, measured over 10 s before the passes, is subtracted.
 *
 *   npm run bench:sampling-head [-- --deployments 100 --passes 10 --plan roles]
 *   npm run bench:sampling-head -- --prepared --deployments 1000 --passes 8 --plan native
 *
 * Prints the same line as `bench:sampling` (`sampling cost at N deployments (<plan> plan, head): …`, and with
 * `--prepared` the blocks' line after it), the pods that answered Fresh, and the samples a pass touches
 * (`stats=all`, each query alone). Never run by CI.
 */
import { spawn } from "node:child_process";
import { loadavg } from "node:os";
import { createInterface } from "node:readline";
import { PrometheusClient } from "../src/adapters/prometheus/client.js";
import { defaultPrometheusSignalConfig } from "../src/adapters/prometheus/config.js";
import { PrometheusSignalSource, type SamplingPass } from "../src/adapters/prometheus/source.js";
import type { FileSdGroup } from "../src/sim/engines/index.js";
import { PrometheusHarness } from "../harness/prometheus.js";
import { findPromBinaries } from "../harness/prom-bin.js";
import {
  evaluationUnixMs,
  podsPerRole,
  prepareTsdb,
  roles,
  samplingInputs,
  serveBlocks,
  tsdbShape,
} from "./engine-tsdb.js";
import { wholeFlag } from "./flags.js";
import { isFreshPod } from "./fresh-pod.js";
import { prepareNhcbTwin } from "./nhcb-tsdb.js";
import { passFromItsTime, PreparedScrapes } from "./prepared-scrapes.js";
import { cpuSecondsOf } from "./proc-cpu.js";
import { instantQuery } from "./prometheus-query.js";

const usage = "npm run bench:sampling-head [-- [--prepared] --deployments 100 --passes 10 --plan roles|native]\n";
if (process.argv.includes("--help")) {
  process.stdout.write(usage);
  process.exit(0);
}
const deployments = wholeFlag("deployments", 100);
const passes = wholeFlag("passes", 10);
const plan = planFlag();
const fromPrepared = process.argv.includes("--prepared");
const scrapeIntervalSeconds = tsdbShape.scrapeIntervalSeconds;
const stableWindowSeconds = 180;
const panicWindowSeconds = 60;
/** The stable window and two scrapes more, so every pod's windows are established at the last scrape. */
const fillMs = (stableWindowSeconds + 2 * scrapeIntervalSeconds) * 1000;
/**
 * How often the prepared data's targets are scraped (`--prepared`): a scrape of 50 deployments (66,600 series)
 * while the others are scraped takes seconds on two cores. The data's own timestamps, 15 s apart, are kept.
 */
const preparedScrapeIntervalSeconds = 10;
const queryTimeoutMs = 600_000;
const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

function planFlag(): "roles" | "native" {
  const i = process.argv.indexOf("--plan");
  if (i < 0) return "roles";
  const value = process.argv[i + 1];
  if (value !== "roles" && value !== "native")
    throw new Error(`--plan: ${JSON.stringify(value)} is not roles or native`);
  return value;
}

/** Where a pass is asked, and how much CPU its Prometheus has spent so far. */
interface Side {
  readonly name: string;
  readonly url: string;
  readonly atMs: number;
  readonly cpuSeconds: () => Promise<number>;
}

/** What every pass asks, of either side: every deployment of the data, with the plan the run measures. */
const scalers = samplingInputs(deployments, { stableWindowSeconds, panicWindowSeconds });
const sourceOf = (url: string): PrometheusSignalSource =>
  new PrometheusSignalSource(new PrometheusClient({ endpoint: url, timeoutMs: queryTimeoutMs }), {
    ...defaultPrometheusSignalConfig,
    queryTimeoutMs,
    queryPlan: plan,
  });
const cpuOf = (url: string) => (): Promise<number> =>
  cpuSecondsOf(`--web.listen-address=127.0.0.1:${new URL(url).port}`);
// Native histograms are stored from the classic ones where the plan reads them (`native`), as the `mixed` twin holds them.
const nativeSettings =
  plan === "native"
    ? {
        scrapeSettings: { convert_classic_histograms_to_nhcb: true, always_scrape_classic_histograms: true },
        nativeArgs: ["--enable-feature=native-histograms"],
      }
    : { scrapeSettings: {}, nativeArgs: [] };

/** The live fleet scraped for the stable window, its targets then dropped; the passes asked at its last scrape. */
async function liveHead(): Promise<{ side: Side; stop: () => Promise<void> }> {
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
    scrapeSettings: nativeSettings.scrapeSettings,
    extraArgs: [`--query.timeout=${queryTimeoutMs / 1000}s`, ...nativeSettings.nativeArgs],
  });
  const stop = async (): Promise<void> => {
    await prometheus.stop();
    fleet.kill();
  };
  try {
    await prometheus.waitForHealthyTargets(groups.length, 300_000);
    process.stderr.write(`${groups.length} targets up; scraping for ${fillMs / 1000} s\n`);
    await sleep(fillMs);
    // A second before now: the last scrape of every target is in, and no later one will come.
    const atMs = Date.now() - 1000;
    await prometheus.setTargets([]);
    fleet.stdin.end();
    await sleep(2 * scrapeIntervalSeconds * 1000);
    return { side: { name: "head", url: prometheus.url, atMs, cpuSeconds: cpuOf(prometheus.url) }, stop };
  } catch (err) {
    await stop();
    throw err;
  }
}

/** The prepared blocks' samples scraped into a head until every scrape is in; the blocks served beside it. */
async function preparedHeadAndBlocks(): Promise<{ sides: Side[]; stop: () => Promise<void> }> {
  const bins = findPromBinaries();
  const blocksPath =
    plan === "native"
      ? (await prepareNhcbTwin(bins.promtoolPath, deployments, "mixed")).blocksPath
      : (await prepareTsdb(bins.promtoolPath, deployments)).blocksPath;
  const scrapes = await PreparedScrapes.start(deployments, {
    deploymentsPerTarget: 50,
    lastScrapeUnixMs: Date.now(),
  });
  const prometheus = await PrometheusHarness.start({
    binaryPath: bins.prometheusPath,
    scrapeIntervalSeconds: preparedScrapeIntervalSeconds,
    targets: scrapes.groups,
    honorLabels: true,
    scrapeSettings: { honor_timestamps: true, ...nativeSettings.scrapeSettings },
    extraArgs: [`--query.timeout=${queryTimeoutMs / 1000}s`, ...nativeSettings.nativeArgs],
  });
  let blocks: Awaited<ReturnType<typeof serveBlocks>> | undefined;
  const stop = async (): Promise<void> => {
    await prometheus.stop();
    await scrapes.stop();
    await blocks?.prometheus.stop();
  };
  try {
    const deadline = Date.now() + 1_800_000;
    for (let p = scrapes.progress(); p.served < p.of; p = scrapes.progress()) {
      if (Date.now() > deadline) throw new Error(`${p.served} of ${p.of} scrapes served in 30 minutes`);
      await sleep(1000);
    }
    // The last scrapes stored: one interval past the last request.
    await sleep(preparedScrapeIntervalSeconds * 1000);
    await prometheus.setTargets([]);
    process.stderr.write(`${scrapes.progress().of} scrapes served to ${scrapes.groups.length} targets\n`);
    blocks = await serveBlocks({
      blocksPath,
      binaryPath: bins.prometheusPath,
      queryTimeoutSeconds: queryTimeoutMs / 1000,
    });
    const blocksUrl = blocks.prometheus.url;
    return {
      sides: [
        { name: "head", url: prometheus.url, atMs: scrapes.lastScrapeUnixMs, cpuSeconds: cpuOf(prometheus.url) },
        { name: "blocks", url: blocksUrl, atMs: evaluationUnixMs, cpuSeconds: cpuOf(blocksUrl) },
      ],
      stop,
    };
  } catch (err) {
    await stop();
    throw err;
  }
}

function freshOf(pass: SamplingPass, atMs: number): { fresh: number; pods: number } {
  let pods = 0;
  let fresh = 0;
  for (const byRole of pass.scalers.values())
    for (const role of byRole.values())
      for (const pod of role.pods) {
        pods++;
        if (isFreshPod(pod, atMs / 1000, scrapeIntervalSeconds)) fresh++;
      }
  return { fresh, pods };
}

const { sides, stop } = fromPrepared
  ? await preparedHeadAndBlocks()
  : await liveHead().then(({ side, stop }) => ({ sides: [side], stop }));
try {
  // One source per side for every pass, as a controller keeps one (its client's connections kept alive).
  const sources = new Map(sides.map((side) => [side.name, sourceOf(side.url)]));
  const colds = new Map<string, SamplingPass>();
  for (const side of sides) colds.set(side.name, await sources.get(side.name)!.sample(scalers, side.atMs));
  const idlePerSecond = new Map<string, number>();
  for (const side of sides) {
    const from = await side.cpuSeconds();
    await sleep(10_000);
    idlePerSecond.set(side.name, ((await side.cpuSeconds()) - from) / 10);
  }
  const loadBefore = loadavg()[0] ?? NaN;
  const spent = new Map(sides.map((side) => [side.name, { prometheus: 0, controller: 0, wall: 0 }]));
  // Pass by pass, the sides taking turns, the first side first on even passes: neither always follows the other.
  for (let p = 0; p < passes; p++)
    for (const side of p % 2 === 0 ? sides : [...sides].reverse()) {
      const source = sources.get(side.name)!;
      const cpuFrom = await side.cpuSeconds();
      const ownFrom = process.cpuUsage();
      const wallFrom = performance.now();
      await source.sample(scalers, side.atMs);
      const wall = (performance.now() - wallFrom) / 1000;
      const own = process.cpuUsage(ownFrom);
      const s = spent.get(side.name)!;
      s.prometheus += (await side.cpuSeconds()) - cpuFrom - (idlePerSecond.get(side.name) ?? 0) * wall;
      s.controller += (own.user + own.system) / 1e6;
      s.wall += wall;
    }
  const perDeploymentMs = (seconds: number): string => ((1000 * seconds) / passes / deployments).toFixed(2);
  const lines = [
    fromPrepared
      ? `Prometheus' head filled with the prepared blocks' samples (${deployments} deployments of ${roles.length * podsPerRole} pods, scraped with their timestamps), beside the blocks; ${passes} passes of each, taking turns, after a cold one`
      : `Prometheus' head, ${deployments} deployments of ${roles.length * podsPerRole} pods scraped every ${scrapeIntervalSeconds} s, targets dropped before the passes; ${passes} passes at the last scrape after a cold one`,
    `load average ${loadBefore.toFixed(1)}-${(loadavg()[0] ?? NaN).toFixed(1)}`,
  ];
  let allFresh = true;
  for (const side of sides) {
    const cold = colds.get(side.name)!;
    const { fresh, pods } = freshOf(cold, side.atMs);
    if (fresh !== pods) allFresh = false;
    let touched = 0;
    for (const query of sources.get(side.name)!.issuedFor(scalers))
      touched +=
        (await instantQuery(side.url, query.text, side.atMs, { timeoutMs: queryTimeoutMs, stats: true })).stats
          ?.samplesTouched ?? 0;
    const s = spent.get(side.name)!;
    lines.push(
      `${side.name}: cold pass ${cold.queries} queries, ${fresh}/${pods} pods Fresh, ${cold.warnings.length} warnings; idle Prometheus CPU ${(1000 * (idlePerSecond.get(side.name) ?? 0)).toFixed(1)} ms a second, subtracted; pass ${(s.wall / passes).toFixed(2)} s; samples touched per deployment per pass ${(touched / deployments).toFixed(0)}`,
      `sampling cost at ${deployments} deployments (${plan} plan, ${side.name}): Prometheus ${perDeploymentMs(s.prometheus)} ms and controller ${perDeploymentMs(s.controller)} ms of CPU per deployment per pass`,
    );
  }
  const [head, blocks] = sides.map((side) => colds.get(side.name)!);
  const same = blocks === undefined || passFromItsTime(head!) === passFromItsTime(blocks);
  if (blocks !== undefined) lines.push(`the head and the blocks read ${same ? "the same pass" : "different passes"}`);
  process.stdout.write(lines.join("\n") + "\n");
  if (!allFresh || !same) process.exitCode = 1;
} finally {
  await stop();
}
