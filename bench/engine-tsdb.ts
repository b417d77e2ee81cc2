/**
 * A Prometheus TSDB filled ahead of time with engine series, so that the
 * sampling benchmark times the queries alone, not the simulation and scraping
 * of thousands of pods on the same cores.
 *
 * Each deployment has 3 roles x 4 pods (server, prefill, decode), vLLM and
 * SGLang alternating. The series are the simulator's own expositions
 * (`renderExposition`, the same names, labels and buckets as the captures in
 * fixtures/engine-expositions), rendered every scrape interval from a few
 * simulated template deployments and relabelled per deployment with the labels
 * the chart's PodMonitor adds (`namespace`, `pod`, `app_kubernetes_io_instance`,
 * `app_kubernetes_io_component`, `instance`, `job`, ...). The OpenMetrics text
 * goes through `promtool tsdb create-blocks-from openmetrics` and the blocks are
 * cached under `~/.cache/mds-scaler/bench-tsdb/<version-hash>/<deployments>/`:
 * built once on a developer's machine (the 1,000 size takes minutes), never by CI.
 */
import { execFile } from "node:child_process";
import { createHash } from "node:crypto";
import { closeSync, existsSync, openSync, readFileSync, writeSync } from "node:fs";
import { cp, mkdir, mkdtemp, readdir, rename, rm, writeFile } from "node:fs/promises";
import { homedir, tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { promisify } from "node:util";
import type { ScalerSamplingInput } from "../src/adapters/prometheus/source.js";
import { PrometheusHarness } from "../harness/prometheus.js";
import { findPromBinaries } from "../harness/prom-bin.js";
import { repoRoot } from "../harness/repo-root.js";
import { EngineFleet, renderExposition, SyntheticWorkload, type SimEngineKind } from "../src/sim/engines/index.js";

const run = promisify(execFile);

export const roles = ["server", "prefill", "decode"] as const;
export const podsPerRole = 4;

/** The shape of the prepared data; a change of any of these is a new cache entry. */
export const tsdbShape = {
  /** 2026-01-01T00:00:00Z: aligned to a 2 h block, so one block per size. */
  startUnixSeconds: 1_767_225_600,
  /** Long enough for the default 180 s stable window, with a margin for the lookback. */
  spanSeconds: 300,
  /** The chart's PodMonitor default. */
  scrapeIntervalSeconds: 15,
  /** Simulated before the first scrape, so every counter and histogram exists and moves. */
  warmupSeconds: 180,
  /** Distinct simulated deployments per engine whose series the deployments reuse. */
  templatesPerEngine: 2,
  requestsPerSecond: 2,
} as const;

/** The time inside the data a pass is evaluated at: the last scrape. */
export const evaluationUnixMs = (tsdbShape.startUnixSeconds + tsdbShape.spanSeconds) * 1000;

export const namespaceOf = (i: number): string => `team-${i % 10}`;
export const deploymentOf = (i: number): string => `model-${i}`;
export const engineOf = (i: number): SimEngineKind => (i % 2 === 0 ? "vllm" : "sglang");

/** One scaler per deployment of the prepared data, every role, sampled with these windows. */
export function samplingInputs(
  deployments: number,
  windows: { readonly stableWindowSeconds: number; readonly panicWindowSeconds: number },
): ScalerSamplingInput[] {
  return Array.from({ length: deployments }, (_, i) => ({
    key: `${namespaceOf(i)}/${deploymentOf(i)}`,
    namespace: namespaceOf(i),
    deployment: deploymentOf(i),
    roles: [...roles],
    ...windows,
    intervalSeconds: tsdbShape.scrapeIntervalSeconds,
  }));
}

/** Bump when this file changes what it writes (the hash covers the rest). */
const generatorVersion = 1;

/** What the cached blocks depend on: the generator's version, the exposition code, the buckets, the shape, promtool. */
export function versionHash(promtoolVersion: string): string {
  const h = createHash("sha256");
  h.update(`generator ${generatorVersion}\n`);
  for (const file of ["src/sim/engines/exposition.ts", "src/sim/engines/buckets.ts"])
    h.update(readFileSync(join(repoRoot, file)));
  h.update(JSON.stringify(tsdbShape));
  h.update(promtoolVersion);
  return h.digest("hex").slice(0, 16);
}

export interface ParsedLine {
  readonly name: string;
  /** The engine's own labels, inside the braces. */
  readonly labels: string;
  readonly value: string;
}

/** One template pod's exposition at every scrape time. */
export type PodScrapes = readonly (readonly ParsedLine[])[];

function parseExposition(text: string): ParsedLine[] {
  const out: ParsedLine[] = [];
  for (const line of text.split("\n")) {
    if (line === "" || line.startsWith("#")) continue;
    const brace = line.indexOf("{");
    const space = line.lastIndexOf(" ");
    if (brace < 0 || brace > space) {
      out.push({ name: line.slice(0, space), labels: "", value: line.slice(space + 1) });
      continue;
    }
    const close = line.lastIndexOf("}", space);
    out.push({ name: line.slice(0, brace), labels: line.slice(brace + 1, close), value: line.slice(space + 1) });
  }
  return out;
}

/** Simulates one template deployment and keeps each pod's exposition at every scrape time. */
function simulateTemplate(engine: SimEngineKind, seed: number): PodScrapes[] {
  const shape = tsdbShape;
  const simStart = shape.startUnixSeconds - shape.warmupSeconds;
  const fleet = new EngineFleet({ startSeconds: simStart, stepSeconds: 0.1 });
  fleet.addDeployment({
    namespace: "template",
    name: "template",
    engine,
    roles: roles.map((name) => ({
      name,
      serving: name === "server" ? "unified" : name,
      replicas: podsPerRole,
    })),
    workload: new SyntheticWorkload({
      seed,
      startSeconds: simStart,
      requestsPerSecond: shape.requestsPerSecond,
      arrivals: "poisson",
      promptTokens: { kind: "uniform", minTokens: 200, maxTokens: 2000 },
      outputTokens: { kind: "uniform", minTokens: 16, maxTokens: 256 },
    }),
  });
  const pods = fleet.listPods();
  const scrapes: ParsedLine[][][] = pods.map(() => []);
  for (
    let t = shape.startUnixSeconds;
    t <= shape.startUnixSeconds + shape.spanSeconds;
    t += shape.scrapeIntervalSeconds
  ) {
    fleet.advanceTo(t);
    pods.forEach((p, i) => {
      const pod = fleet.pod(p.namespace, p.name);
      if (!pod) throw new Error(`template pod ${p.name} vanished`);
      scrapes[i]?.push(parseExposition(renderExposition(pod.replica, { createdUnixSeconds: simStart })));
    });
  }
  return scrapes;
}

/** The labels Prometheus adds to a pod's series under the chart's PodMonitor (sorted by name). */
function targetLabels(deployment: number, role: string, podIndex: number, engine: SimEngineKind): string {
  const ns = namespaceOf(deployment);
  const name = deploymentOf(deployment);
  const ip = `10.${(deployment >> 8) & 255}.${deployment & 255}.${podIndex}`;
  return [
    `app_kubernetes_io_component="${role}"`,
    `app_kubernetes_io_instance="${name}"`,
    `container="${engine}"`,
    `endpoint="http"`,
    `instance="${ip}:8000"`,
    `job="${ns}/${name}-engines"`,
    `namespace="${ns}"`,
    `pod="${name}-${role}-${podIndex % podsPerRole}"`,
  ].join(",");
}

export interface GeneratedText {
  readonly series: number;
  readonly samples: number;
  readonly bytes: number;
}

/** The pods of the prepared data: each deployment's pods, their target labels and their template's scrapes. */
export interface PreparedPods {
  /** How many scrapes the data holds, `tsdbShape.scrapeIntervalSeconds` apart from `tsdbShape.startUnixSeconds`. */
  readonly scrapeCount: number;
  /** Deployment `d`'s pods: the labels the PodMonitor adds (rendered, without braces) and the pod's scrapes. */
  pods(d: number): readonly { readonly target: string; readonly scrapes: PodScrapes }[];
}

/** Simulates the templates (seconds of CPU) and names every pod of `deployments` deployments. */
export function preparedPods(deployments: number): PreparedPods {
  const templates = new Map<SimEngineKind, PodScrapes[][]>();
  for (const engine of ["vllm", "sglang"] as const) {
    templates.set(
      engine,
      Array.from({ length: tsdbShape.templatesPerEngine }, (_, k) => simulateTemplate(engine, 1000 * k + 7)),
    );
  }
  const targets = Array.from({ length: deployments }, (_, d) =>
    roles.flatMap((role, r) =>
      Array.from({ length: podsPerRole }, (_, i) => targetLabels(d, role, r * podsPerRole + i, engineOf(d))),
    ),
  );
  return {
    scrapeCount: Math.floor(tsdbShape.spanSeconds / tsdbShape.scrapeIntervalSeconds) + 1,
    pods(d) {
      const template = templates.get(engineOf(d))?.[d % tsdbShape.templatesPerEngine];
      if (!template) throw new Error(`no template for deployment ${d}`);
      return template.map((scrapes, p) => ({ target: targets[d]?.[p] ?? "", scrapes }));
    },
  };
}

/** Writes the OpenMetrics text for `deployments` deployments: scrape after scrape, so every series is in time order. */
export function writeOpenMetrics(path: string, deployments: number): GeneratedText {
  const prepared = preparedPods(deployments);
  const fd = openSync(path, "w");
  let series = 0;
  let samples = 0;
  let bytes = 0;
  try {
    for (let s = 0; s < prepared.scrapeCount; s++) {
      const ts = String(tsdbShape.startUnixSeconds + s * tsdbShape.scrapeIntervalSeconds);
      for (let d = 0; d < deployments; d++) {
        const chunk: string[] = [];
        for (const { target, scrapes } of prepared.pods(d)) {
          for (const line of scrapes[s] ?? []) {
            const labels = line.labels === "" ? target : `${target},${line.labels}`;
            chunk.push(`${line.name}{${labels}} ${line.value} ${ts}\n`);
          }
        }
        const text = chunk.join("");
        bytes += writeSync(fd, text);
        samples += chunk.length;
        if (s === 0) series += chunk.length;
      }
    }
    bytes += writeSync(fd, "# EOF\n");
  } finally {
    closeSync(fd);
  }
  return { series, samples, bytes };
}

export interface PreparedTsdb {
  /** Cached blocks; copy before serving, Prometheus writes into its storage directory. */
  readonly blocksPath: string;
  readonly deployments: number;
  readonly built: boolean;
}

/** The project's cache directory for prepared benchmark data, `~/.cache/mds-scaler/<name>`. */
export function benchCacheDir(name: string): string {
  const cacheHome = process.env["XDG_CACHE_HOME"] || join(process.env["HOME"] || homedir(), ".cache");
  return join(cacheHome, "mds-scaler", name);
}

/** Writes the series of `deployments` deployments as TSDB blocks into `blocksPath` (which must not exist). */
export async function buildBlocks(promtoolPath: string, deployments: number, blocksPath: string): Promise<void> {
  const dir = dirname(blocksPath);
  await mkdir(dir, { recursive: true });
  const started = performance.now();
  const textPath = `${blocksPath}.om`;
  process.stderr.write(`bench-tsdb: generating ${deployments} deployments into ${dir}\n`);
  const text = writeOpenMetrics(textPath, deployments);
  process.stderr.write(
    `bench-tsdb: ${text.series} series, ${text.samples} samples, ${(text.bytes / 2 ** 20).toFixed(0)} MiB of OpenMetrics in ${((performance.now() - started) / 1000).toFixed(0)} s; promtool create-blocks-from openmetrics\n`,
  );
  const tmp = `${blocksPath}.tmp`;
  try {
    await run("nice", ["-n", "10", promtoolPath, "tsdb", "create-blocks-from", "openmetrics", textPath, tmp], {
      maxBuffer: 64 * 2 ** 20,
    });
    await rename(tmp, blocksPath);
  } finally {
    await rm(textPath, { force: true });
  }
  process.stderr.write(
    `bench-tsdb: ${deployments} deployments ready in ${((performance.now() - started) / 1000).toFixed(0)} s\n`,
  );
}

/** The cached blocks for this size, built first when absent (announced on stderr with the time it took). */
export async function prepareTsdb(promtoolPath: string, deployments: number): Promise<PreparedTsdb> {
  const { stdout } = await run(promtoolPath, ["--version"]);
  const version = /version (\S+)/.exec(stdout)?.[1] ?? stdout.trim();
  const dir = join(benchCacheDir("bench-tsdb"), versionHash(version), String(deployments));
  const blocksPath = join(dir, "blocks");
  if (existsSync(join(dir, "done"))) return { blocksPath, deployments, built: false };
  // Two benchmarks started together on a cold cache would each clear the directory the other builds in:
  // one builds, the other waits for the lock and then finds its "done".
  const release = await buildLock(`${dir}.lock`);
  if (existsSync(join(dir, "done"))) {
    await release();
    return { blocksPath, deployments, built: false };
  }
  try {
    await rm(dir, { recursive: true, force: true });
    await buildBlocks(promtoolPath, deployments, blocksPath);
    await writeFile(join(dir, "done"), "");
  } finally {
    await release();
  }
  return { blocksPath, deployments, built: true };
}

/**
 * The right to build: waits until `lockPath` is ours and returns its release. A lock whose process is gone
 * (killed mid-build) is taken over.
 */
async function buildLock(lockPath: string): Promise<() => Promise<void>> {
  await mkdir(dirname(lockPath), { recursive: true });
  let announced = false;
  for (;;) {
    try {
      const fd = openSync(lockPath, "wx");
      writeSync(fd, String(process.pid));
      closeSync(fd);
      return () => rm(lockPath, { force: true });
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error;
    }
    let holderText: string;
    try {
      holderText = readFileSync(lockPath, "utf8");
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === "ENOENT") continue; // released meanwhile
      throw error;
    }
    const holder = Number(holderText);
    // An empty lock is one being written: its holder is alive.
    if (holderText !== "" && !processAlive(holder)) {
      await rm(lockPath, { force: true });
      continue;
    }
    if (!announced) process.stderr.write(`bench-tsdb: process ${holder} holds ${lockPath}; waiting\n`);
    announced = true;
    await new Promise((resolve) => setTimeout(resolve, 2_000));
  }
}

function processAlive(pid: number): boolean {
  if (!Number.isInteger(pid) || pid <= 0) return false;
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "EPERM";
  }
}

/** A fresh storage directory holding a copy of the blocks (Prometheus may rewrite a block's meta.json). */
export async function copyBlocks(blocksPath: string, into: string): Promise<void> {
  await mkdir(into, { recursive: true });
  for (const entry of await readdir(blocksPath)) {
    await cp(join(blocksPath, entry), join(into, entry), { recursive: true });
  }
}

/** A Prometheus serving a copy of prepared blocks, and the copy: stop the server, then remove `storage`. */
export interface ServedBlocks {
  readonly prometheus: PrometheusHarness;
  readonly storage: string;
}

/**
 * Prometheus over a copy of `blocksPath` (it writes into its storage directory), with the benchmarks' query
 * timeout as its own `--query.timeout` (its default, 2 minutes, a 1,000-deployment pass outlasts on a loaded machine).
 */
export async function serveBlocks(options: {
  readonly blocksPath: string;
  readonly binaryPath: string;
  readonly queryTimeoutSeconds: number;
  readonly externalLabels?: Readonly<Record<string, string>>;
  readonly storagePrefix?: string;
}): Promise<ServedBlocks> {
  const storage = await mkdtemp(join(tmpdir(), options.storagePrefix ?? "mds-bench-tsdb-"));
  await copyBlocks(options.blocksPath, storage);
  const prometheus = await PrometheusHarness.start({
    binaryPath: options.binaryPath,
    storagePath: storage,
    storageIsTemporary: true,
    startTimeoutMs: 300_000,
    scrapeIntervalSeconds: tsdbShape.scrapeIntervalSeconds,
    extraArgs: [`--query.timeout=${options.queryTimeoutSeconds}s`],
    ...(options.externalLabels === undefined ? {} : { externalLabels: options.externalLabels }),
  });
  return { prometheus, storage };
}

/**
 * The version a running Prometheus reports (`/api/v1/status/buildinfo`): the binary's own, which may not be the one
 * `tools/prom-bin/versions.env` names where `MDS_PROM_BIN_DIR` points elsewhere; "unstamped" for a build without
 * version flags (a plain `go build`).
 */
export async function servedVersion(url: string): Promise<string> {
  const res = await fetch(`${url}/api/v1/status/buildinfo`);
  if (!res.ok) throw new Error(`${url}/api/v1/status/buildinfo answered ${res.status}`);
  const body = (await res.json()) as { data?: { version?: unknown } };
  const version = body.data?.version;
  return typeof version === "string" && version !== "" ? version : "unstamped";
}

/** `deployments`' prepared blocks (built first where not cached), served by the cached Prometheus 3. */
export async function servePrepared(
  deployments: number,
  options: { readonly queryTimeoutSeconds: number; readonly externalLabels?: Readonly<Record<string, string>> },
): Promise<ServedBlocks> {
  const bins = findPromBinaries();
  const prepared = await prepareTsdb(bins.promtoolPath, deployments);
  return serveBlocks({ blocksPath: prepared.blocksPath, binaryPath: bins.prometheusPath, ...options });
}
