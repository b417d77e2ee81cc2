/**
 * Control-loop benchmark: the pass without the sampling cost. A real
 * kube-apiserver and etcd, N ModelDeployments each with an Active scaler, the
 * controller's own watch caches, and a fake signal source (bench/steady-signals.ts)
 * answering steady readings at once. The clock is advanced one sampling
 * interval per pass so every scaler is due in every pass. Prints, per size,
 * the passes until nothing changes (with their writes), then p50/p99 of a pass
 * with no changes split into list, sampling and reconcile (observe, plan,
 * writes), and the API round trips per pass by call. Each converging pass also
 * prints the CPU of this process and of the API server with etcd, and the
 * connections opened to the API server.
 *
 * `--connections per-request,pooled` (the default: both, side by side in one
 * run, each size in its own namespace) chooses the controller's client: the
 * library's own (a new connection per request, as before `pooledConnections`)
 * or the kept-alive pool the controller uses (src/adapters/kubernetes/connections.ts).
 *
 *   npm run bench:controller [-- --sizes 100,1000 --passes 20 --connections pooled --cpu-profile <dir>]
 *   npm run bench:controller -- --live   # end to end: simulated engines, Prometheus, reconciler (MDS_BENCH_SCALERS)
 *   npm run bench:controller -- --sizes 1000 --connections pooled --memory-limit-mib 512 --node-options ";--max-semi-space-size=32"
 *     # each measurement in a memory cgroup as the chart's pod (root; bench/memory-cgroup.ts), once per variant
 */
import { subscribe } from "node:diagnostics_channel";
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { Session } from "node:inspector/promises";
import { join } from "node:path";
import {
  CoreV1Api,
  CustomObjectsApi,
  KubeConfig,
  loadYaml,
  type V1CustomResourceDefinition,
} from "@kubernetes/client-node";
import { callOptions } from "../src/adapters/kubernetes/call-options.js";
import { pooledConnections } from "../src/adapters/kubernetes/connections.js";
import { KubeResources } from "../src/adapters/kubernetes/resources.js";
import { WatchedResources } from "../src/adapters/kubernetes/watch.js";
import { createLogger } from "../src/adapters/telemetry/logger.js";
import { ScalerMetrics } from "../src/adapters/telemetry/metrics.js";
import type { JsonPatchOp } from "../src/core/binding/patch.js";
import { Controller, type ScalerStore, type GuardedWrite } from "../src/app/controller.js";
import { startControlPlane, type ControlPlane } from "../harness/kube/index.js";
import { loadModelDeploymentCrd } from "../test/support/crds.js";
import { cpuSecondsOfProcess } from "./proc-cpu.js";
import { positiveNumberOf } from "./flags.js";
import { heldMemory, limitLabel, nodeOptionVariantsOf, runUnderMemoryLimit } from "./memory-cgroup.js";
import { SteadySignals } from "./steady-signals.js";

const group = "worker.gpustack.ai";
const version = "v1";
const intervalSeconds = 15;

function flagValue(name: string): string | undefined {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 ? process.argv[i + 1] : undefined;
}

function quantile(sorted: readonly number[], q: number): number {
  if (sorted.length === 0) return Number.NaN;
  return sorted[Math.min(sorted.length - 1, Math.ceil(q * sorted.length) - 1)] ?? Number.NaN;
}

/** Calls that leave the process: the watch caches answer `listScalers` and a non-fresh `getTarget`. */
const roundTripCalls = ["patchTarget", "patchScaler", "writeScalerStatus", "getTarget(fresh)"] as const;

/** Counts and times the store calls a pass makes. */
class CountingStore implements ScalerStore {
  readonly calls = new Map<string, number>();
  listMs = 0;
  constructor(private readonly inner: ScalerStore) {}
  private count(name: string): void {
    this.calls.set(name, (this.calls.get(name) ?? 0) + 1);
  }
  reset(): void {
    this.calls.clear();
    this.listMs = 0;
  }
  roundTrips(): number {
    return roundTripCalls.reduce((n, c) => n + (this.calls.get(c) ?? 0), 0);
  }
  async listScalers(namespace: string): Promise<unknown[]> {
    this.count("listScalers");
    const t0 = performance.now();
    try {
      return await this.inner.listScalers(namespace);
    } finally {
      this.listMs += performance.now() - t0;
    }
  }
  getTarget(namespace: string, name: string, options?: { fresh?: boolean }): Promise<unknown> {
    this.count(options?.fresh === true ? "getTarget(fresh)" : "getTarget");
    return this.inner.getTarget(namespace, name, options);
  }
  patchTarget(namespace: string, name: string, ops: readonly JsonPatchOp[]): Promise<GuardedWrite> {
    this.count("patchTarget");
    return this.inner.patchTarget(namespace, name, ops);
  }
  patchScaler(namespace: string, name: string, ops: readonly JsonPatchOp[]): Promise<unknown> {
    this.count("patchScaler");
    return this.inner.patchScaler(namespace, name, ops);
  }
  writeScalerStatus(
    namespace: string,
    name: string,
    status: unknown,
    options?: { resourceVersion?: string | undefined },
  ): Promise<GuardedWrite> {
    this.count("writeScalerStatus");
    return this.inner.writeScalerStatus(namespace, name, status, options);
  }
}

/** The controller's Kubernetes client: the library's own, or on kept-alive connections. */
const connectionModes = ["per-request", "pooled"] as const;
type ConnectionMode = (typeof connectionModes)[number];

function parseConnectionModes(text: string): ConnectionMode[] {
  const modes = text.split(",");
  const unknown = modes.filter((m) => !(connectionModes as readonly string[]).includes(m));
  if (unknown.length > 0 || modes.length === 0)
    throw new Error(`--connections: ${JSON.stringify(text)} is not a list of ${connectionModes.join(", ")}`);
  return modes as ConnectionMode[];
}

/** Connections undici opened (after the TLS handshake), counted from its diagnostics channel. */
let connectionsOpened = 0;
subscribe("undici:client:connected", () => {
  connectionsOpened += 1;
});

/** Runs `task` over `items` with at most `limit` at once. */
async function bounded<T>(items: readonly T[], limit: number, task: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < items.length) await task(items[next++] as T);
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
}

async function createObjects(kubeConfig: KubeConfig, namespace: string, count: number): Promise<void> {
  const custom = kubeConfig.makeApiClient(CustomObjectsApi);
  await kubeConfig.makeApiClient(CoreV1Api).createNamespace({ body: { metadata: { name: namespace } } });
  const names = Array.from({ length: count }, (_, i) => `model-${String(i).padStart(4, "0")}`);
  await bounded(names, 16, async (name) => {
    await custom.createNamespacedCustomObject({
      group,
      version,
      namespace,
      plural: "modeldeployments",
      body: {
        apiVersion: `${group}/${version}`,
        kind: "ModelDeployment",
        metadata: { name, namespace },
        spec: { roles: [{ name: "server", kind: "Server", replicas: 1, instanceType: "h100" }] },
      },
    });
    // The role's pod is ready: what the operator would report.
    await custom.patchNamespacedCustomObjectStatus(
      {
        group,
        version,
        namespace,
        plural: "modeldeployments",
        name,
        body: { status: { roles: [{ name: "server", desired: 1, ready: 1 }] } },
      },
      callOptions(30_000, "application/merge-patch+json"),
    );
    await custom.createNamespacedCustomObject({
      group,
      version,
      namespace,
      plural: "modeldeploymentscalers",
      body: {
        apiVersion: `${group}/${version}`,
        kind: "ModelDeploymentScaler",
        metadata: { name, namespace },
        spec: {
          targetRef: { name },
          mode: "Active",
          sampling: { intervalSeconds },
          roles: [{ name: "server", minReplicas: 1, maxReplicas: 4 }],
          algorithm: {
            type: "TokenThroughput",
            tokenThroughput: { serverTargetTokensPerSecond: "1000", stableWindowSeconds: 180, panicWindowSeconds: 60 },
          },
        },
      },
    });
  });
}

/** `--cpu-profile <dir>`: a V8 CPU profile of the passes with no changes, one file per size. */
async function startProfile(): Promise<{ stop: (name: string) => Promise<void> } | undefined> {
  const dir = flagValue("cpu-profile");
  if (dir === undefined) return undefined;
  const session = new Session();
  session.connect();
  await session.post("Profiler.enable");
  await session.post("Profiler.start");
  return {
    stop: async (name) => {
      const { profile } = await session.post("Profiler.stop");
      mkdirSync(dir, { recursive: true });
      writeFileSync(join(dir, `${name}.cpuprofile`), JSON.stringify(profile));
      session.disconnect();
    },
  };
}

interface PassFigures {
  readonly ms: number;
  /** CPU of this process, and of the API server with etcd, during the pass. */
  readonly cpuMs: number;
  readonly serverCpuMs: number;
  readonly connectionsOpened: number;
  readonly listMs: number;
  readonly sampleMs: number;
  readonly reconcileMs: number;
  readonly scalers: number;
  readonly roundTrips: number;
  readonly calls: ReadonlyMap<string, number>;
}

/** What a measurement uses of the control plane: its admin client and the API server's and etcd's processes. */
type PlaneInUse = Pick<ControlPlane, "kubeConfig" | "processIds">;

async function measure(
  plane: PlaneInUse,
  count: number,
  passes: number,
  mode: ConnectionMode,
  namespace = `bench-${count}-${mode}`,
): Promise<string[]> {
  const client = mode === "pooled" ? pooledConnections(plane.kubeConfig) : plane.kubeConfig;
  const setup = pooledConnections(plane.kubeConfig);
  const createdAt = performance.now();
  await createObjects(setup, namespace, count);
  await setup.close();
  const createMs = performance.now() - createdAt;
  // Real time plus one sampling interval per pass: every scaler is due in every pass, and the
  // controller's own phase timings (from this clock) stay real durations.
  let skewMs = 0;
  const nowMs = (): number => Date.now() + skewMs;
  const phases: { sampleMs: number; reconcileMs: number }[] = [];
  const logger = createLogger({
    level: "debug",
    write: (line) => {
      const record = JSON.parse(line) as { msg: string; level?: string; sampleMs?: number; reconcileMs?: number };
      if (record.msg === "pass" && record.sampleMs !== undefined && record.reconcileMs !== undefined)
        phases.push({ sampleMs: record.sampleMs, reconcileMs: record.reconcileMs });
      else if (record.level === "error" || record.level === "warn") process.stderr.write(`${line}\n`);
    },
  });
  const resources = new KubeResources(client, { timeoutMs: 30_000 });
  const watched = new WatchedResources({ resources, namespace, logger });
  await watched.start();
  const store = new CountingStore(watched);
  const controller = new Controller({
    store,
    source: new SteadySignals(nowMs),
    metrics: new ScalerMetrics({ defaultMetrics: false }),
    logger,
    nowMs,
    namespace,
  });
  const run = async (): Promise<PassFigures> => {
    store.reset();
    phases.length = 0;
    skewMs += intervalSeconds * 1000;
    const serverCpu0 = await serverCpuSeconds(plane);
    const cpu0 = process.cpuUsage();
    const opened0 = connectionsOpened;
    const t0 = performance.now();
    const passed = await controller.tick();
    const ms = performance.now() - t0;
    const cpu = process.cpuUsage(cpu0);
    const serverCpuMs = ((await serverCpuSeconds(plane)) - serverCpu0) * 1000;
    const phase = phases[0] ?? { sampleMs: NaN, reconcileMs: NaN };
    return {
      ms,
      cpuMs: (cpu.user + cpu.system) / 1000,
      serverCpuMs,
      connectionsOpened: connectionsOpened - opened0,
      listMs: store.listMs,
      sampleMs: phase.sampleMs,
      reconcileMs: phase.reconcileMs,
      scalers: passed.length,
      roundTrips: store.roundTrips(),
      calls: new Map(store.calls),
    };
  };
  const lines: string[] = [];
  try {
    // Converge: bind, commit, write status; the watch caches catch up between passes.
    const converging: PassFigures[] = [];
    for (let i = 0; i < 20; i++) {
      const f = await run();
      converging.push(f);
      if (f.roundTrips === 0 && f.scalers === count) break;
      // Let the watches deliver this pass's writes before the next pass reads the caches.
      await new Promise((r) => setTimeout(r, 2000));
    }
    const steady: PassFigures[] = [];
    const profile = await startProfile();
    for (let i = 0; i < passes; i++) steady.push(await run());
    await profile?.stop(`controller-${count}`);
    const sorted = (pick: (f: PassFigures) => number): number[] => steady.map(pick).sort((a, b) => a - b);
    const ms = sorted((f) => f.ms);
    const trips = steady.map((f) => f.roundTrips);
    const calls = (f: PassFigures): string =>
      [...f.calls.entries()]
        .sort()
        .map(([k, v]) => `${k} ${v}`)
        .join(", ");
    lines.push(`${count} scalers, connections ${mode} (created in ${(createMs / 1000).toFixed(1)} s)`);
    converging.forEach((f, i) =>
      lines.push(
        `  converging pass ${i + 1}: ${f.ms.toFixed(0)} ms, ${f.scalers} scalers, ${f.roundTrips} round trips (${calls(f)});` +
          ` CPU ${f.cpuMs.toFixed(0)} ms here, ${f.serverCpuMs.toFixed(0)} ms in the API server and etcd;` +
          ` ${f.connectionsOpened} connections opened`,
      ),
    );
    lines.push(
      `  pass with no changes (${passes} passes): p50 ${quantile(ms, 0.5).toFixed(1)} ms, p99 ${quantile(ms, 0.99).toFixed(1)} ms;` +
        ` list p50 ${quantile(
          sorted((f) => f.listMs),
          0.5,
        ).toFixed(1)} ms, sampling p50 ${quantile(
          sorted((f) => f.sampleMs),
          0.5,
        ).toFixed(0)} ms, reconcile (observe, plan, writes) p50 ${quantile(
          sorted((f) => f.reconcileMs),
          0.5,
        ).toFixed(0)} ms p99 ${quantile(
          sorted((f) => f.reconcileMs),
          0.99,
        ).toFixed(0)} ms`,
      `  CPU per scaler per pass with no changes: ${(steady.reduce((n, f) => n + f.cpuMs, 0) / steady.length / count).toFixed(3)} ms`,
      `  connections opened in the passes with no changes: ${steady.reduce((n, f) => n + f.connectionsOpened, 0)}`,
      `  round trips per pass with no changes: min ${Math.min(...trips)}, max ${Math.max(...trips)} (${steady[0] ? calls(steady[0]) : ""})`,
      `  heap used ${(process.memoryUsage().heapUsed / 2 ** 20).toFixed(0)} MiB, RSS ${(process.memoryUsage().rss / 2 ** 20).toFixed(0)} MiB`,
    );
    // With `node --expose-gc`: what a full collection leaves, the controller's state and the benchmark's own.
    const gc = (globalThis as { gc?: () => void }).gc;
    if (gc !== undefined) {
      gc();
      lines.push(`  heap after a full collection ${(process.memoryUsage().heapUsed / 2 ** 20).toFixed(0)} MiB`);
    }
  } finally {
    await watched.stop();
    if (client !== plane.kubeConfig) await (client as ReturnType<typeof pooledConnections>).close();
  }
  return lines;
}

/** The API server's and etcd's CPU so far, in seconds. */
async function serverCpuSeconds(plane: PlaneInUse): Promise<number> {
  const each = await Promise.all(plane.processIds.map((pid) => cpuSecondsOfProcess(pid)));
  return each.reduce((a, b) => a + b, 0);
}

/** A measurement asked of a process under a memory limit (`--limited`). */
interface LimitedAsk {
  readonly kubeConfigPath: string;
  readonly processIds: readonly number[];
  readonly size: number;
  readonly passes: number;
  readonly mode: ConnectionMode;
  readonly namespace: string;
}
interface LimitedAnswer {
  readonly lines: readonly string[];
  readonly peakRssMiB: number;
  readonly heapLimitMiB: number;
}

/** The process under a memory limit: one measurement against the parent's control plane, with what it held. */
function limited(): void {
  process.once("message", (ask: LimitedAsk) => {
    void (async () => {
      const kubeConfig = new KubeConfig();
      kubeConfig.loadFromFile(ask.kubeConfigPath);
      const lines = await measure(
        { kubeConfig, processIds: ask.processIds },
        ask.size,
        ask.passes,
        ask.mode,
        ask.namespace,
      );
      const answer: LimitedAnswer = { lines, ...heldMemory() };
      process.send?.(answer, () => process.disconnect());
    })();
  });
}

/**
 * `--memory-limit-mib N [--node-options "A;B"]`: each measurement in a process of its own in a memory cgroup
 * of N MiB (bench/memory-cgroup.ts), as the chart's pod runs the controller, once per variant of Node's options
 * (an empty variant: none); the control plane stays in this process, outside the limit.
 */
async function measureLimited(
  plane: ControlPlane,
  size: number,
  passes: number,
  mode: ConnectionMode,
  limitMiB: number,
  variants: readonly (readonly string[])[],
): Promise<string[]> {
  const out: string[] = [];
  const script = new URL(import.meta.url).pathname;
  for (const [i, nodeOptions] of variants.entries()) {
    const ask: LimitedAsk = {
      kubeConfigPath: plane.kubeConfigPath,
      processIds: plane.processIds,
      size,
      passes,
      mode,
      namespace: `bench-${size}-${mode}-${i}`,
    };
    // --expose-gc: the measurement's last line is the heap a full collection leaves.
    const options = ["--expose-gc", ...nodeOptions];
    const answer = await runUnderMemoryLimit<LimitedAnswer>(limitMiB, options, script, ["--limited"], ask);
    const at = limitLabel(limitMiB, nodeOptions);
    if (typeof answer === "string") {
      out.push(`${size} scalers, connections ${mode}, ${at}: ${answer}`);
      process.exitCode = 1;
      continue;
    }
    out.push(
      ...answer.lines,
      `  ${at} (V8's heap limit ${answer.heapLimitMiB.toFixed(0)} MiB): peak RSS ${answer.peakRssMiB.toFixed(0)} MiB`,
    );
  }
  return out;
}

async function split(): Promise<void> {
  const sizes = (flagValue("sizes") ?? "100,1000").split(",").map(Number);
  if (sizes.some((n) => !Number.isInteger(n) || n < 1))
    throw new Error(`--sizes: ${JSON.stringify(flagValue("sizes"))} is not a list of counts`);
  const passes = Number(flagValue("passes") ?? 20);
  const modes = parseConnectionModes(flagValue("connections") ?? connectionModes.join(","));
  const limit = flagValue("memory-limit-mib");
  const limitMiB = limit === undefined ? undefined : positiveNumberOf("--memory-limit-mib", limit);
  const variants = nodeOptionVariantsOf(flagValue("node-options"));
  const plane = await startControlPlane();
  try {
    const crdText = readFileSync(
      join(import.meta.dirname, "..", "charts", "mds-scaler", "crds", "modeldeploymentscalers.worker.gpustack.ai.yaml"),
      "utf8",
    );
    await plane.applyCrd(loadYaml<V1CustomResourceDefinition>(crdText));
    await plane.applyCrd(await loadModelDeploymentCrd());
    const out: string[] = [];
    for (const size of sizes) {
      for (const mode of modes) {
        out.push(
          ...(limitMiB === undefined
            ? await measure(plane, size, passes, mode)
            : await measureLimited(plane, size, passes, mode, limitMiB, variants)),
        );
        process.stderr.write(`bench:controller: ${size} scalers, connections ${mode}, measured\n`);
      }
    }
    process.stdout.write(
      `\nreal kube-apiserver, fake signal source, clock advanced ${intervalSeconds} s per pass\n${out.join("\n")}\n`,
    );
  } finally {
    await plane.stop();
  }
}

if (process.argv.includes("--live")) await import("./controller-live.js");
else if (process.argv.includes("--limited")) limited();
else await split();
