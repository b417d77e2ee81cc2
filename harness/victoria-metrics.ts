/**
 * VictoriaMetrics single-node, as tools/vm-bin/build.sh caches it, on a free
 * loopback port with its own temporary storage. It takes samples from a
 * Prometheus' remote write (`/api/v1/write`), so both hold the same samples
 * with the same timestamps, and serves the Prometheus query API under `/api/v1/`.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { accessSync, constants, readFileSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import { homedir, tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { freeLoopbackPort } from "./prometheus.js";

const repoRoot = resolve(dirname(fileURLToPath(import.meta.url)), "..");
const versionsFilePath = join(repoRoot, "tools/vm-bin/versions.env");
const buildHint = "run tools/vm-bin/build.sh (it caches it), or set MDS_VM_BIN_DIR to a directory holding it";

export interface VictoriaMetricsBinary {
  readonly path: string;
  /** e.g. v1.151.0. */
  readonly version: string;
}

function readVersion(): string {
  for (const line of readFileSync(versionsFilePath, "utf8").split("\n")) {
    const match = /^VICTORIA_METRICS_VERSION=([^\s#]+)/.exec(line);
    if (match?.[1]) return match[1];
  }
  throw new Error(`victoria-metrics binary: ${versionsFilePath} must set VICTORIA_METRICS_VERSION`);
}

/** Finds the binary: MDS_VM_BIN_DIR, else the build script's cache. Throws, never skips, when it is missing. */
export function findVictoriaMetrics(env: NodeJS.ProcessEnv = process.env): VictoriaMetricsBinary {
  const version = readVersion();
  const cacheHome = env["XDG_CACHE_HOME"] || join(env["HOME"] || homedir(), ".cache");
  const dirPath = env["MDS_VM_BIN_DIR"] || join(cacheHome, "mds-scaler", "vm-bin", `victoria-metrics-${version}`);
  const path = join(dirPath, "victoria-metrics");
  try {
    accessSync(path, constants.X_OK);
  } catch (cause) {
    throw new Error(`victoria-metrics binary: ${path} is missing or not executable; ${buildHint}`, { cause });
  }
  return { path, version };
}

export interface VictoriaMetricsHarnessOptions {
  /** More command-line flags, e.g. `-search.latencyOffset=0s`. */
  readonly extraArgs?: readonly string[];
  readonly startTimeoutMs?: number;
}

export class VictoriaMetricsHarness {
  private child: ChildProcess | undefined;
  private exited: Promise<void> | undefined;
  private stderrTail = "";

  private constructor(
    readonly dir: string,
    readonly port: number,
    readonly binary: VictoriaMetricsBinary,
  ) {}

  static async start(options: VictoriaMetricsHarnessOptions = {}): Promise<VictoriaMetricsHarness> {
    const binary = findVictoriaMetrics();
    const dir = await mkdtemp(join(tmpdir(), "mds-victoria-metrics-"));
    const harness = new VictoriaMetricsHarness(dir, await freeLoopbackPort(), binary);
    await harness.run(options);
    return harness;
  }

  get url(): string {
    return `http://127.0.0.1:${this.port}`;
  }

  /** Where a Prometheus remote-writes to this store. */
  get remoteWriteUrl(): string {
    return `${this.url}/api/v1/write`;
  }

  private async run(options: VictoriaMetricsHarnessOptions): Promise<void> {
    const child = spawn(
      this.binary.path,
      [
        `-storageDataPath=${join(this.dir, "data")}`,
        `-httpListenAddr=127.0.0.1:${this.port}`,
        "-retentionPeriod=1d",
        "-loggerLevel=WARN",
        ...(options.extraArgs ?? []),
      ],
      { stdio: ["ignore", "ignore", "pipe"] },
    );
    child.stderr?.setEncoding("utf8");
    child.stderr?.on("data", (chunk: string) => {
      this.stderrTail = (this.stderrTail + chunk).slice(-4000);
    });
    this.exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
    this.child = child;
    const deadline = Date.now() + (options.startTimeoutMs ?? 30_000);
    while (Date.now() < deadline) {
      if (child.exitCode !== null) break;
      try {
        const res = await fetch(`${this.url}/health`, { signal: AbortSignal.timeout(1000) });
        if (res.ok) return;
      } catch {
        // not listening yet
      }
      await new Promise((r) => setTimeout(r, 100));
    }
    await this.stop();
    throw new Error(`victoria-metrics did not become ready on ${this.url}: ${this.stderrTail}`);
  }

  /** Makes the samples received so far searchable now, instead of at the next in-memory flush (about a second). */
  async flush(): Promise<void> {
    const res = await fetch(`${this.url}/internal/force_flush`, { signal: AbortSignal.timeout(5000) });
    if (!res.ok) throw new Error(`victoria-metrics force_flush: HTTP ${res.status}`);
  }

  /**
   * The version the running process reports in its own metrics (`vm_app_version`), e.g. `v1.151.0`.
   * `/api/v1/status/buildinfo` answers a fixed Prometheus version (2.24.0) instead.
   */
  async reportedVersion(): Promise<string> {
    const res = await fetch(`${this.url}/metrics`, { signal: AbortSignal.timeout(5000) });
    return /^vm_app_version\{.*short_version="([^"]+)"/m.exec(await res.text())?.[1] ?? "";
  }

  /** Stops the process and removes its storage. */
  async stop(): Promise<void> {
    const child = this.child;
    this.child = undefined;
    if (child && child.exitCode === null) {
      child.kill("SIGTERM");
      const killed = setTimeout(() => child.kill("SIGKILL"), 10_000);
      await this.exited;
      clearTimeout(killed);
    }
    await rm(this.dir, { recursive: true, force: true });
  }
}
