/**
 * Thanos, as tools/thanos-bin/build.sh caches it: a sidecar beside each
 * Prometheus replica (its store API over the replica's remote read) and a
 * Querier over the sidecars, on free loopback ports. Each process can be
 * signalled (SIGSTOP, SIGKILL) to make a store hang or fail for real.
 */
import { stderrTailOf, waitUntilReady, watchForOrphan } from "./server-process.js";
import { spawn, type ChildProcess } from "node:child_process";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { findCachedBinary, type CachedBinary } from "./cached-binary.js";
import { freeLoopbackPort } from "./prometheus.js";

/** Finds the binary tools/thanos-bin/build.sh caches (MDS_THANOS_BIN_DIR overrides). Throws, never skips, when it is missing. */
export function findThanos(env: NodeJS.ProcessEnv = process.env): CachedBinary {
  return findCachedBinary(
    { tool: "thanos-bin", versionKey: "THANOS_VERSION", program: "thanos", dirVariable: "MDS_THANOS_BIN_DIR" },
    env,
  );
}

/** One Thanos component process, ready once its HTTP `/-/ready` answers. */
export class ThanosProcess {
  private constructor(
    readonly name: string,
    readonly httpUrl: string,
    readonly grpcAddress: string,
    private readonly child: ChildProcess,
    private readonly exited: Promise<void>,
    private readonly dir: string,
    private readonly stopWatchdog: () => void,
  ) {}

  static async start(component: "sidecar" | "query", args: readonly string[], startTimeoutMs = 30_000) {
    const binary = findThanos();
    const dir = await mkdtemp(join(tmpdir(), `mds-thanos-${component}-`));
    const [httpPort, grpcPort] = [await freeLoopbackPort(), await freeLoopbackPort()];
    const child = spawn(
      binary.path,
      [
        component,
        `--http-address=127.0.0.1:${httpPort}`,
        `--grpc-address=127.0.0.1:${grpcPort}`,
        "--log.level=warn",
        ...args,
      ],
      { stdio: ["ignore", "ignore", "pipe"], cwd: dir },
    );
    const stderrTail = stderrTailOf(child);
    const exited = new Promise<void>((done) => child.once("exit", () => done()));
    const p = new ThanosProcess(
      component,
      `http://127.0.0.1:${httpPort}`,
      `127.0.0.1:${grpcPort}`,
      child,
      exited,
      dir,
      watchForOrphan(child, [dir]),
    );
    if (await waitUntilReady(child, `${p.httpUrl}/-/ready`, startTimeoutMs)) return p;
    await p.stop();
    throw new Error(`thanos ${component} did not become ready on ${p.httpUrl}: ${stderrTail()}`);
  }

  /** Sends a signal (SIGSTOP makes the store hang, SIGCONT resumes it, SIGKILL ends it). */
  signal(name: NodeJS.Signals): void {
    this.child.kill(name);
  }

  async stop(): Promise<void> {
    if (this.child.exitCode === null && this.child.signalCode === null) {
      this.child.kill("SIGCONT");
      this.child.kill("SIGTERM");
      const killed = setTimeout(() => this.child.kill("SIGKILL"), 10_000);
      await this.exited;
      clearTimeout(killed);
    }
    this.stopWatchdog();
    await rm(this.dir, { recursive: true, force: true });
  }
}

/** A sidecar serving one Prometheus replica's series over the store API. */
export async function startSidecar(prometheusUrl: string, tsdbPath: string): Promise<ThanosProcess> {
  return await ThanosProcess.start("sidecar", [`--prometheus.url=${prometheusUrl}`, `--tsdb.path=${tsdbPath}`]);
}

export interface QuerierOptions {
  /** Store API addresses, dropped from the set while their health check fails. */
  readonly endpoints?: readonly string[];
  /** Store API addresses always queried, even while their health check fails. */
  readonly strictEndpoints?: readonly string[];
  /** The label that tells replicas apart, deduplicated. */
  readonly replicaLabel: string;
  readonly extraArgs?: readonly string[];
}

export async function startQuerier(options: QuerierOptions): Promise<ThanosProcess> {
  return await ThanosProcess.start("query", [
    ...(options.endpoints ?? []).map((e) => `--endpoint=${e}`),
    ...(options.strictEndpoints ?? []).map((e) => `--endpoint-strict=${e}`),
    `--query.replica-label=${options.replicaLabel}`,
    ...(options.extraArgs ?? []),
  ]);
}

/** Waits until the Querier lists `count` store API endpoints, or throws with what it lists. */
export async function waitForStores(querier: ThanosProcess, count: number, timeoutMs = 30_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let last = "no answer";
  while (Date.now() < deadline) {
    try {
      const res = await fetch(`${querier.httpUrl}/api/v1/stores`, { signal: AbortSignal.timeout(2000) });
      const body = (await res.json()) as { data?: Record<string, { lastError?: string | null }[]> };
      const stores = Object.values(body.data ?? {}).flat();
      const healthy = stores.filter((s) => !s.lastError);
      last = `${healthy.length} healthy of ${stores.length}`;
      if (healthy.length === count) return;
    } catch (err) {
      last = `${last} (then ${String(err)})`;
    }
    await new Promise((r) => setTimeout(r, 250));
  }
  throw new Error(`thanos querier stores: ${last}, want ${count}`);
}
