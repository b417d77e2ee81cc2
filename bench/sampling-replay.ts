/**
 * The controller's side of a sampling pass apart from Prometheus' (docs/prometheus-signals.md, "The controller's
 * side alone"): one pass over the prepared TSDB's deployments (`bench:sampling`'s blocks, every histogram also
 * stored as NHCB) is asked of Prometheus 3.5 through a local proxy that records each answer as it came, gzip and
 * all; Prometheus is stopped, and the timed passes read the recorded answers from the proxy, in a process of its
 * own, so the CPU this process spends is the controller's alone: inflating, parsing and reading the answers and
 * building the pass. Without Prometheus competing for the machine its spread is smaller than `bench:sampling`'s,
 * so it suits a change to the controller's reading (the queries and answers the same).
 *
 *   npm run bench:sampling-replay [-- --deployments 1000 --passes 8 --plan native]
 *   npm run build && node dist/bench/sampling-replay.js [--deployments 1000 ...]   (the JavaScript the image ships)
 *
 * Prints `controller cost at N deployments (<plan> plan, replayed answers): X ms of CPU per deployment per
 * pass`. Exits 1 unless every pod answered and every query was answered from the recording. Never run by CI.
 *
 * `--memory-limit-mib 384,512,768` then runs the same passes once more for each limit, in a process of their own
 * in a memory cgroup with that limit (bench/memory-cgroup.ts: root and the memory controller), as a pod's limit
 * makes a controller run: Node sizes V8's heap from the limit, and the kernel ends the process at it. Each prints
 * whether every pass finished, the process' peak RSS and its CPU per deployment per pass after one untimed pass
 * (docs/controller.md, "Sizing"); a limit too small ends the process, by V8's out-of-memory error or the kernel's
 * OOM killer, and says which. `--node-options "A;B"` runs each limit once per variant of Node's options, in the
 * order given (an empty variant: none), so that two settings are compared on one recording, taking turns.
 */
import { fork, type ChildProcess } from "node:child_process";
import { createServer, request, type IncomingMessage, type ServerResponse } from "node:http";
import { rm } from "node:fs/promises";
import { PrometheusClient } from "../src/adapters/prometheus/client.js";
import { defaultPrometheusSignalConfig } from "../src/adapters/prometheus/config.js";
import { queryPlans, type QueryPlan } from "../src/adapters/prometheus/queries.js";
import { PrometheusSignalSource } from "../src/adapters/prometheus/source.js";
import { findPromBinaries } from "../harness/prom-bin.js";
import { evaluationUnixMs, podsPerRole, roles, samplingInputs, serveBlocks } from "./engine-tsdb.js";
import { positiveNumberOf, wholeFlag } from "./flags.js";
import { heldMemory, limitLabel, nodeOptionVariantsOf, runUnderMemoryLimit } from "./memory-cgroup.js";
import { prepareNhcbTwin } from "./nhcb-tsdb.js";

const queryTimeoutMs = 600_000;

/** The proxy (`--proxy`): forwards to Prometheus and records until told `replay`, then answers from the recording. */
function proxy(): void {
  const recorded = new Map<string, { status: number; encoding: string; body: Buffer }>();
  let upstream: URL | undefined;
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      const form = Buffer.concat(chunks);
      const key = `${req.url?.split("?")[0]} ${new URLSearchParams(form.toString()).get("query") ?? ""}`;
      if (upstream === undefined) {
        const answer = recorded.get(key);
        if (answer === undefined) {
          res.writeHead(400, { "content-type": "application/json" });
          res.end(JSON.stringify({ status: "error", errorType: "bad_data", error: "not in the recording" }));
          return;
        }
        res.writeHead(answer.status, { "content-type": "application/json", "content-encoding": answer.encoding });
        res.end(answer.body);
        return;
      }
      const out = request(
        { hostname: upstream.hostname, port: upstream.port, path: req.url, method: req.method, headers: req.headers },
        (answer) => {
          const body: Buffer[] = [];
          answer.on("data", (c: Buffer) => body.push(c));
          answer.on("end", () => {
            const encoding = String(answer.headers["content-encoding"] ?? "identity");
            recorded.set(key, { status: answer.statusCode ?? 500, encoding, body: Buffer.concat(body) });
            res.writeHead(answer.statusCode ?? 500, answer.headers);
            res.end(Buffer.concat(body));
          });
        },
      );
      out.on("error", (err) => {
        res.writeHead(502);
        res.end(String(err));
      });
      out.end(form);
    });
  });
  // The bench that forked it is gone (it ended, or was killed): nothing is left to answer.
  process.on("disconnect", () => process.exit(0));
  process.on("message", (m: { upstream?: string; replay?: true }) => {
    if (m.upstream !== undefined) upstream = new URL(m.upstream);
    if (m.replay === true) {
      upstream = undefined;
      process.send?.({ recorded: recorded.size });
    }
  });
  server.listen(0, "127.0.0.1", () => process.send?.({ port: (server.address() as { port: number }).port }));
}

interface LimitedAsk {
  readonly port: number;
  readonly deployments: number;
  readonly passes: number;
  readonly plan: QueryPlan;
}
interface LimitedRun {
  /** Each pass's time from its first query to its built samples (a pass's answers replayed, so no Prometheus in it). */
  readonly passP50Ms: number;
  readonly passMaxMs: number;
  readonly peakRssMiB: number;
  readonly heapLimitMiB: number;
  readonly cpuMsPerDeploymentPass: number;
}

/** A limited process (`--limited`): one untimed pass and the passes asked of the proxy, answered with what it spent. */
function limited(): void {
  process.once("message", (ask: LimitedAsk) => {
    void (async () => {
      const source = sourceAt(ask.port, ask.plan);
      const scalers = samplingInputs(ask.deployments, { stableWindowSeconds: 180, panicWindowSeconds: 60 });
      await source.sample(scalers, evaluationUnixMs);
      const from = process.cpuUsage();
      const passMs: number[] = [];
      for (let p = 0; p < ask.passes; p++) {
        const at = performance.now();
        await source.sample(scalers, evaluationUnixMs);
        passMs.push(performance.now() - at);
      }
      const cpu = process.cpuUsage(from);
      passMs.sort((a, b) => a - b);
      const run: LimitedRun = {
        passP50Ms: passMs[Math.floor((passMs.length - 1) / 2)] ?? Number.NaN,
        passMaxMs: passMs.at(-1) ?? Number.NaN,
        ...heldMemory(),
        cpuMsPerDeploymentPass: (cpu.user + cpu.system) / 1000 / ask.passes / ask.deployments,
      };
      process.send?.(run, () => process.disconnect());
    })();
  });
}

function sourceAt(port: number, plan: QueryPlan): PrometheusSignalSource {
  return new PrometheusSignalSource(
    new PrometheusClient({ endpoint: `http://127.0.0.1:${port}`, timeoutMs: queryTimeoutMs }),
    { ...defaultPrometheusSignalConfig, queryTimeoutMs, queryPlan: plan },
  );
}

async function main(): Promise<void> {
  if (process.argv.includes("--help")) {
    process.stdout.write("npm run bench:sampling-replay [-- --deployments 1000 --passes 8 --plan native]\n");
    return;
  }
  const deployments = wholeFlag("deployments", 1000);
  const passes = wholeFlag("passes", 8);
  const planAt = process.argv.indexOf("--plan");
  const plan = (planAt < 0 ? "native" : process.argv[planAt + 1]) as QueryPlan;
  if (!queryPlans.includes(plan))
    throw new Error(`--plan: ${JSON.stringify(plan)} is not one of ${queryPlans.join(", ")}`);

  const limitAt = process.argv.indexOf("--memory-limit-mib");
  const limitsMiB =
    limitAt < 0
      ? []
      : (process.argv[limitAt + 1] ?? "").split(",").map((mib) => positiveNumberOf("--memory-limit-mib", mib));
  const optionsAt = process.argv.indexOf("--node-options");
  const variants = nodeOptionVariantsOf(optionsAt < 0 ? undefined : process.argv[optionsAt + 1]);

  const child = fork(new URL(import.meta.url).pathname, ["--proxy"], { execArgv: process.execArgv });
  try {
    await measure(child, deployments, passes, plan, limitsMiB, variants);
  } finally {
    // Also where preparing the blocks failed: a proxy left behind would hold the caller's pipe open.
    child.kill();
  }
}

/** Records one pass through the proxy, then times `passes` passes replayed from it. */
async function measure(
  child: ChildProcess,
  deployments: number,
  passes: number,
  plan: QueryPlan,
  limitsMiB: readonly number[],
  variants: readonly (readonly string[])[],
): Promise<void> {
  const next = <T>(): Promise<T> => new Promise((resolve) => child.once("message", (m) => resolve(m as T)));
  const { port } = await next<{ port: number }>();
  const bins = findPromBinaries();
  const twin = await prepareNhcbTwin(bins.promtoolPath, deployments, "mixed");
  const served = await serveBlocks({
    blocksPath: twin.blocksPath,
    binaryPath: bins.prometheusPath,
    queryTimeoutSeconds: queryTimeoutMs / 1000,
  });
  const scalers = samplingInputs(deployments, { stableWindowSeconds: 180, panicWindowSeconds: 60 });
  const source = sourceAt(port, plan);
  try {
    child.send({ upstream: served.prometheus.url });
    const live = await source.sample(scalers, evaluationUnixMs);
    child.send({ replay: true });
    const { recorded } = await next<{ recorded: number }>();
    await served.prometheus.stop();
    const replayed = await source.sample(scalers, evaluationUnixMs);
    let pods = 0;
    for (const byRole of replayed.scalers.values()) for (const role of byRole.values()) pods += role.pods.length;
    const failed = Object.keys(replayed.unknownFamilies);
    const from = process.cpuUsage();
    for (let p = 0; p < passes; p++) await source.sample(scalers, evaluationUnixMs);
    const cpu = process.cpuUsage(from);
    const ms = (cpu.user + cpu.system) / 1000 / passes / deployments;
    process.stdout.write(
      [
        `${deployments} deployments, ${plan} plan: ${live.queries} queries recorded (${recorded} answers), ${pods} pods answered from the recording, ${failed.length === 0 ? "every family read" : `unread: ${failed.join(", ")}`}; ${passes} timed passes`,
        `controller cost at ${deployments} deployments (${plan} plan, replayed answers): ${ms.toFixed(3)} ms of CPU per deployment per pass`,
        "",
      ].join("\n"),
    );
    if (failed.length > 0 || replayed.queries !== live.queries || pods !== deployments * roles.length * podsPerRole)
      process.exitCode = 1;
    const ask: LimitedAsk = { port, deployments, passes, plan };
    const script = new URL(import.meta.url).pathname;
    for (const limitMiB of limitsMiB)
      for (const nodeOptions of variants) {
        const run = await runUnderMemoryLimit<LimitedRun>(limitMiB, nodeOptions, script, ["--limited"], ask);
        const at = `controller memory at ${deployments} deployments (${plan} plan, replayed answers), ${limitLabel(limitMiB, nodeOptions)}`;
        process.stdout.write(
          typeof run === "string"
            ? `${at}: ${run}\n`
            : `${at} (V8's heap limit ${run.heapLimitMiB.toFixed(0)} MiB): ${passes} passes after one (p50 ${run.passP50Ms.toFixed(0)} ms, longest ${run.passMaxMs.toFixed(0)} ms), peak RSS ${run.peakRssMiB.toFixed(0)} MiB, ${run.cpuMsPerDeploymentPass.toFixed(3)} ms of CPU per deployment per pass\n`,
        );
        if (typeof run === "string") process.exitCode = 1;
      }
  } finally {
    await served.prometheus.stop();
    await rm(served.storage, { recursive: true, force: true });
  }
}

if (process.argv.includes("--proxy")) proxy();
else if (process.argv.includes("--limited")) limited();
else await main();
