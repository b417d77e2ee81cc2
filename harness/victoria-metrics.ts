/**
 * VictoriaMetrics single-node, as tools/vm-bin/build.sh caches it, on a free
 * loopback port with its own temporary storage. It takes samples from a
 * Prometheus' remote write (`/api/v1/write`), so both hold the same samples
 * with the same timestamps, and serves the Prometheus query API under `/api/v1/`.
 */
import { stderrTailOf, waitUntilReady, watchForOrphan } from "./server-process.js";
import { spawn, type ChildProcess } from "node:child_process";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { findCachedBinary, type CachedBinary } from "./cached-binary.js";
import { freeLoopbackPort } from "./prometheus.js";

export type VictoriaMetricsBinary = CachedBinary;

/** Finds the binary tools/vm-bin/build.sh caches (MDS_VM_BIN_DIR overrides). Throws, never skips, when it is missing. */
export function findVictoriaMetrics(env: NodeJS.ProcessEnv = process.env): VictoriaMetricsBinary {
  return findCachedBinary(
    {
      tool: "vm-bin",
      versionKey: "VICTORIA_METRICS_VERSION",
      program: "victoria-metrics",
      dirVariable: "MDS_VM_BIN_DIR",
    },
    env,
  );
}

export interface VictoriaMetricsHarnessOptions {
  /** More command-line flags, e.g. `-search.latencyOffset=0s`. */
  readonly extraArgs?: readonly string[];
  readonly startTimeoutMs?: number;
}

export class VictoriaMetricsHarness {
  private child: ChildProcess | undefined;
  private exited: Promise<void> | undefined;
  private stopWatchdog: () => void = () => undefined;

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
    const stderrTail = stderrTailOf(child);
    this.exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
    this.child = child;
    this.stopWatchdog = watchForOrphan(child, [this.dir]);
    if (await waitUntilReady(child, `${this.url}/health`, options.startTimeoutMs ?? 30_000)) return;
    await this.stop();
    throw new Error(`victoria-metrics did not become ready on ${this.url}: ${stderrTail()}`);
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
    this.stopWatchdog();
    await rm(this.dir, { recursive: true, force: true });
  }
}
