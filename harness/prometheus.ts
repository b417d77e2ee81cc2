/**
 * Runs Debian's Prometheus (`/usr/bin/prometheus`) on a free loopback port
 * with a generated configuration: file-based discovery of simulated engine
 * pods, a short scrape interval and its own temporary storage. It can be
 * stopped and started again on the same port and storage mid-test.
 */
import { stderrTailOf, waitUntilReady, watchForOrphan } from "./server-process.js";
import { spawn, type ChildProcess } from "node:child_process";
import { mkdtemp, rename, rm, writeFile } from "node:fs/promises";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { FileSdGroup } from "../src/sim/engines/server.js";

export const prometheusBinary = process.env["PROMETHEUS_BIN"] ?? "/usr/bin/prometheus";

/**
 * A remote store Prometheus reads from beside its own TSDB. A store that
 * fails makes Prometheus answer with a warning (a partial answer); one that
 * never answers holds the query until its timeout. `requiredMatchers` limits
 * the store to selectors with these equality matchers (`__name__` included),
 * so the fault reaches only the queries that read that series family.
 */
export interface RemoteReadOptions {
  readonly url: string;
  readonly requiredMatchers?: Readonly<Record<string, string>>;
}

export interface PrometheusHarnessOptions {
  readonly scrapeIntervalSeconds?: number;
  readonly targets?: readonly FileSdGroup[];
  /** Keep the scraped labels on a clash with target labels, as a ServiceMonitor with honorLabels does. */
  readonly honorLabels?: boolean;
  /** How long to wait for readiness. */
  readonly startTimeoutMs?: number;
  readonly remoteRead?: readonly RemoteReadOptions[];
  /** More command-line flags, e.g. `--query.max-samples=1000`. */
  readonly extraArgs?: readonly string[];
  /** Another Prometheus binary, e.g. Prometheus 3 from `findPromBinaries()`. */
  readonly binaryPath?: string;
  /** Serve this TSDB directory (e.g. prepared blocks) instead of an empty one; it is not removed by `stop`. */
  readonly storagePath?: string;
  /**
   * `storagePath` is the caller's temporary copy: should the spawning process die without stopping Prometheus, the
   * watchdog removes it with Prometheus' own directory (a benchmark's copy of 1,000 deployments' blocks is gigabytes).
   */
  readonly storageIsTemporary?: boolean;
  /** `--storage.tsdb.retention.time`, counted back from the newest block; 1h by default (enough for live scrapes). */
  readonly retentionTime?: string;
  /** Remote-write every scraped sample to these URLs (e.g. VictoriaMetrics' `/api/v1/write`), so a second store holds the same samples. */
  readonly remoteWrite?: readonly string[];
  /** Labels this Prometheus adds to what leaves it, e.g. `{ replica: "a" }` for a Thanos sidecar. */
  readonly externalLabels?: Readonly<Record<string, string>>;
  /**
   * More settings of the engines' scrape job, e.g. `{ convert_classic_histograms_to_nhcb: true }` on
   * Prometheus 3 (whose native histograms also need `--enable-feature=native-histograms` in `extraArgs`).
   */
  readonly scrapeSettings?: Readonly<Record<string, unknown>>;
}

export async function freeLoopbackPort(): Promise<number> {
  return await new Promise<number>((resolve, reject) => {
    const s = createServer();
    s.once("error", reject);
    s.listen(0, "127.0.0.1", () => {
      const addr = s.address();
      const port = typeof addr === "object" && addr ? addr.port : 0;
      s.close(() => resolve(port));
    });
  });
}

export class PrometheusHarness {
  private child: ChildProcess | undefined;
  private exited: Promise<void> | undefined;
  private stopWatchdog: () => void = () => undefined;
  private remoteRead: readonly RemoteReadOptions[];
  private extraArgs: readonly string[];

  private constructor(
    readonly dir: string,
    readonly port: number,
    private readonly options: PrometheusHarnessOptions,
  ) {
    this.remoteRead = options.remoteRead ?? [];
    this.extraArgs = options.extraArgs ?? [];
  }

  /** How often it scrapes its targets, seconds: what a controller reading it is told (`--engine-scrape-interval`). */
  get scrapeIntervalSeconds(): number {
    return this.options.scrapeIntervalSeconds ?? 1;
  }

  /** Replaces the extra flags; they apply from the next `resume`. */
  setExtraArgs(args: readonly string[]): void {
    this.extraArgs = args;
  }

  static async start(options: PrometheusHarnessOptions = {}): Promise<PrometheusHarness> {
    const dir = await mkdtemp(join(tmpdir(), "mds-prometheus-"));
    const harness = new PrometheusHarness(dir, await freeLoopbackPort(), options);
    await harness.writeConfig();
    await harness.setTargets(options.targets ?? []);
    await harness.resume();
    return harness;
  }

  get url(): string {
    return `http://127.0.0.1:${this.port}`;
  }

  get running(): boolean {
    return this.child !== undefined;
  }

  private async writeConfig(): Promise<void> {
    const interval = `${this.scrapeIntervalSeconds}s`;
    // JSON is valid YAML; no YAML writer needed.
    const config = {
      global: {
        scrape_interval: interval,
        scrape_timeout: interval,
        evaluation_interval: interval,
        ...(this.options.externalLabels ? { external_labels: this.options.externalLabels } : {}),
      },
      scrape_configs: [
        {
          job_name: "engines",
          honor_labels: this.options.honorLabels ?? false,
          file_sd_configs: [{ files: [join(this.dir, "targets.json")], refresh_interval: "1s" }],
          ...this.options.scrapeSettings,
        },
      ],
      // read_recent: ask the store for recent data too, which Prometheus otherwise serves from its TSDB alone.
      remote_read: this.remoteRead.map((r) => ({
        url: r.url,
        read_recent: true,
        remote_timeout: "60s",
        ...(r.requiredMatchers ? { required_matchers: r.requiredMatchers } : {}),
      })),
      // Sent within a second of the scrape, so a test waits seconds, not the default 5 s batch deadline.
      remote_write: (this.options.remoteWrite ?? []).map((url) => ({
        url,
        queue_config: { batch_send_deadline: "500ms", min_backoff: "100ms", max_backoff: "1s" },
      })),
    };
    await writeFile(join(this.dir, "prometheus.yml"), JSON.stringify(config, null, 2));
  }

  /** Replaces the remote stores and reloads the running Prometheus (SIGHUP), waiting until it applied them and scraped every target again. */
  async setRemoteRead(remoteRead: readonly RemoteReadOptions[], timeoutMs = 15_000): Promise<void> {
    this.remoteRead = remoteRead;
    await this.writeConfig();
    const child = this.child;
    if (!child) return;
    child.kill("SIGHUP");
    const deadline = Date.now() + timeoutMs;
    let last = "no answer";
    while (Date.now() < deadline) {
      try {
        const res = await fetch(`${this.url}/api/v1/status/config`, { signal: AbortSignal.timeout(2000) });
        const body = (await res.json()) as { data: { yaml: string } };
        const urls = [...body.data.yaml.matchAll(/^\s*- url: (\S+)/gm)].map((m) => m[1]);
        last = `remote read urls ${JSON.stringify(urls)}`;
        const want = remoteRead.map((r) => r.url);
        if (urls.length === want.length && want.every((u) => urls.includes(u))) {
          await this.waitForScrapesAfter(Date.now() / 1000, deadline);
          return;
        }
      } catch (err) {
        last = `${last} (then ${String(err)})`;
      }
      await new Promise((r) => setTimeout(r, 100));
    }
    throw new Error(`prometheus did not apply the remote read configuration: ${last}`);
  }

  /**
   * Waits until every target has a successful scrape after `afterSeconds`: a reload can cancel a scrape in
   * flight (`up` 0 and no samples for it), and a test that samples right after would see that target missing.
   */
  private async waitForScrapesAfter(afterSeconds: number, deadline: number): Promise<void> {
    const query = `count(up) - (count(up == 1 and timestamp(up) > ${afterSeconds.toFixed(3)}) or vector(0))`;
    let last = "no answer";
    while (Date.now() < deadline) {
      try {
        const res = await fetch(`${this.url}/api/v1/query?query=${encodeURIComponent(query)}`, {
          signal: AbortSignal.timeout(2000),
        });
        const body = (await res.json()) as { data: { result: { value: [number, string] }[] } };
        const behind = body.data.result[0]?.value[1];
        last = `${behind ?? "no"} targets without a scrape since the reload`;
        if (behind === "0") return;
      } catch (err) {
        last = `${last} (then ${String(err)})`;
      }
      await new Promise((r) => setTimeout(r, 100));
    }
    throw new Error(`targets not scraped again after the reload: ${last} (${query})`);
  }

  /** Replaces the discovered targets (atomically, as file_sd expects). */
  async setTargets(groups: readonly FileSdGroup[]): Promise<void> {
    const tmp = join(this.dir, "targets.json.tmp");
    await writeFile(tmp, JSON.stringify(groups));
    await rename(tmp, join(this.dir, "targets.json"));
  }

  /** Starts the process (again) on the same port and storage. */
  async resume(): Promise<void> {
    if (this.child) return;
    const child = spawn(
      this.options.binaryPath ?? prometheusBinary,
      [
        `--config.file=${join(this.dir, "prometheus.yml")}`,
        `--storage.tsdb.path=${this.options.storagePath ?? join(this.dir, "data")}`,
        `--web.listen-address=127.0.0.1:${this.port}`,
        `--storage.tsdb.retention.time=${this.options.retentionTime ?? "1h"}`,
        "--log.level=warn",
        ...this.extraArgs,
      ],
      { stdio: ["ignore", "ignore", "pipe"] },
    );
    const stderrTail = stderrTailOf(child);
    this.exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
    this.child = child;
    const temporaryStorage = this.options.storageIsTemporary === true ? [this.options.storagePath ?? ""] : [];
    this.stopWatchdog = watchForOrphan(child, [this.dir, ...temporaryStorage]);
    if (await waitUntilReady(child, `${this.url}/-/ready`, this.options.startTimeoutMs ?? 30_000)) return;
    await this.pause();
    throw new Error(`prometheus did not become ready on ${this.url}: ${stderrTail()}`);
  }

  /** Stops the process, keeping its storage for `resume`. */
  async pause(): Promise<void> {
    const child = this.child;
    if (!child) return;
    this.child = undefined;
    if (child.exitCode === null) {
      child.kill("SIGTERM");
      const killed = setTimeout(() => child.kill("SIGKILL"), 10_000);
      await this.exited;
      clearTimeout(killed);
    }
    this.stopWatchdog();
  }

  /** Stops the process and removes its storage. */
  async stop(): Promise<void> {
    await this.pause();
    await rm(this.dir, { recursive: true, force: true });
  }

  /** Waits until `count` targets are healthy, or throws with what is known. */
  async waitForHealthyTargets(count: number, timeoutMs = 30_000): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    let last = "no answer";
    while (Date.now() < deadline) {
      try {
        // A count, not the target list: with a thousand targets the list is large.
        const res = await fetch(`${this.url}/api/v1/query?query=${encodeURIComponent("count(up == 1) or vector(0)")}`, {
          signal: AbortSignal.timeout(5000),
        });
        const body = (await res.json()) as { data: { result: { value: [number, string] }[] } };
        const up = Number(body.data.result[0]?.value[1] ?? 0);
        last = `${up}/${count} up`;
        if (up >= count) return;
      } catch (err) {
        last = `${last} (then ${String(err)})`;
      }
      await new Promise((r) => setTimeout(r, 250));
    }
    throw new Error(`targets not healthy: ${last}`);
  }

  /** Sends a signal to the running process (e.g. SIGSTOP to make it hang, SIGCONT to resume it). */
  signal(name: NodeJS.Signals): void {
    this.child?.kill(name);
  }

  /** Peak resident memory of the Prometheus process (kB), from /proc. */
  async peakRssKb(): Promise<number | undefined> {
    const pid = this.child?.pid;
    if (!pid) return undefined;
    try {
      const { readFile } = await import("node:fs/promises");
      const status = await readFile(`/proc/${pid}/status`, "utf8");
      const m = /VmHWM:\s+(\d+) kB/.exec(status);
      return m ? Number(m[1]) : undefined;
    } catch {
      return undefined;
    }
  }
}
