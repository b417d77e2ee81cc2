/**
 * The demo (`npm start`, `demo/main.ts`): starts the whole world on this machine,
 * replays a public trace against it at a speed-up, shows each decision in
 * the terminal and on a live local page, and ends with a summary.
 */
import { parseAllDocuments } from "yaml";
import { formatProblem } from "../src/core/api/problem.js";
import { parseTarget, validateScaler } from "../src/core/api/validation.js";
import { podKey } from "../src/sim/engines/engine-fleet.js";
import { loadTraceRows } from "../src/sim/engines/traces.js";
import { TraceWorkload, type TraceRow } from "../src/sim/engines/workload.js";
import type { CliIo } from "../src/cli/io.js";
import { demoRules, type DemoRules } from "./late-rules.js";
import { Observer } from "./observer.js";
import { demoUsage, parseDemoArgs, type DemoOptions } from "./options.js";
import { startPage, type RunningPage } from "./page.js";
import { missingPieces } from "./preflight.js";
import { notServingYet } from "./serving.js";
import { nonDefaultScalerSettings } from "./settings.js";
import { decisionKey, formatSummary, progressLine, tableHeader, tableRows } from "./terminal.js";
import { DemoWorld, waitFor, type WorldSettings } from "./world.js";

/** The simulated world's settings that differ from a cluster's, with the reason printed beside each. */
export const worldSettings: WorldSettings & { readonly why: readonly [string, string][] } = {
  timings: { coldStartMs: 3_000, admitMs: 0, withdrawMs: 200, drainMs: 500, deleteMs: 200, settleMs: 200 },
  prefillCapacity: { prefillTokensPerSecond: 60_000 },
  scrapeIntervalSeconds: 1,
  controllerTickMs: 500,
  why: [
    ["replica cold start 3 s", "a real engine loads weights for minutes; a minute of demo would see no replica arrive"],
    ["retirement 1.1 s (withdraw, drain, delete, settle)", "so a scale-down completes while you watch"],
    ["simulated prefill engine 60k prompt tokens/s", "one replica of a large GPU, so the sped-up trace fits a few"],
    ["Prometheus scrape every 1 s", "the chart's PodMonitor default is 15 s; short windows need denser samples"],
  ],
};

interface Loaded {
  readonly scaler: Record<string, unknown>;
  readonly target: Record<string, unknown>;
  readonly rows: readonly TraceRow[];
  readonly ttftTargetMs: number;
  readonly itlTargetMs: number;
  /** The rules late first tokens are charged to, named with this scaler's settings. */
  readonly rules: DemoRules;
}

function readYamlObject(path: string, io: CliIo): Record<string, unknown> {
  const docs = parseAllDocuments(io.readFile(path));
  const list = (Array.isArray(docs) ? docs : [docs])
    .map((d) => d.toJS() as unknown)
    .filter((d) => d !== null && d !== undefined);
  if (list.length !== 1 || typeof list[0] !== "object")
    throw new DemoError(`${path}: expected one YAML object, found ${list.length} documents`);
  return list[0] as Record<string, unknown>;
}

class DemoError extends Error {}

async function load(options: DemoOptions, io: CliIo): Promise<Loaded> {
  const scaler = readYamlObject(options.scalerPath, io);
  const target = readYamlObject(options.targetPath, io);
  const parsedTarget = parseTarget(target);
  if (!parsedTarget.ok)
    throw new DemoError(`${options.targetPath}:\n${parsedTarget.problems.map(formatProblem).join("\n")}`);
  const result = validateScaler(scaler, { target: parsedTarget.value });
  if (!result.ok) throw new DemoError(`${options.scalerPath}:\n${result.problems.map(formatProblem).join("\n")}`);
  const tt =
    result.value.spec.algorithm.type === "TokenThroughput" ? result.value.spec.algorithm.tokenThroughput : undefined;
  const rows = await loadTraceRows(options.tracePath);
  if (rows.length === 0) throw new DemoError(`--trace: ${options.tracePath} holds no requests`);
  return {
    scaler,
    target,
    rows,
    ttftTargetMs: Number(tt?.ttftTargetMilliseconds ?? 500),
    itlTargetMs: Number(tt?.itlTargetMilliseconds ?? 50),
    rules: demoRules(result.value.spec, (worldSettings.timings.coldStartMs as number) / 1000),
  };
}

function nameOf(object: Record<string, unknown>): string {
  return String((object["metadata"] as Record<string, unknown> | undefined)?.["name"] ?? "");
}

function namespaceOf(object: Record<string, unknown>): string {
  const ns = (object["metadata"] as Record<string, unknown> | undefined)?.["namespace"];
  return typeof ns === "string" && ns !== "" ? ns : "demo";
}

/**
 * Resolves when SIGINT or SIGTERM arrives. A terminal's Ctrl-C reaches every process of the group, and
 * npm relays it as well, so copies within two seconds count as one; a later one exits at once (the exit
 * hooks still kill the child process groups). `npm start` runs node with tsx's loader, not the tsx
 * command: that one SIGKILLs a child whose acknowledgement of a signal takes over about 60 ms, which on
 * a loaded machine killed the demo midway through its stop.
 */
function interruption(io: CliIo): { promise: Promise<void>; fired: () => boolean; dispose: () => void } {
  let firstMs: number | undefined;
  let resolve: () => void = () => undefined;
  const promise = new Promise<void>((r) => (resolve = r));
  const onSignal = (): void => {
    if (firstMs !== undefined) {
      if (Date.now() - firstMs < 2_000) return;
      io.stderr("\nsecond interrupt: exiting now\n");
      process.exit(130);
    }
    firstMs = Date.now();
    io.stderr("\ninterrupted: ending the replay\n");
    resolve();
  };
  process.on("SIGINT", onSignal);
  process.on("SIGTERM", onSignal);
  return {
    promise,
    fired: () => firstMs !== undefined,
    dispose: () => {
      process.off("SIGINT", onSignal);
      process.off("SIGTERM", onSignal);
    },
  };
}

export async function runDemo(
  args: readonly string[],
  io: CliIo,
  env: NodeJS.ProcessEnv = process.env,
): Promise<number> {
  const options = parseDemoArgs(args, env);
  if (typeof options === "string") {
    if (options === "") {
      io.stdout(demoUsage);
      return 0;
    }
    io.stderr(`${options}\n${demoUsage}`);
    return 2;
  }
  const missing = missingPieces(options, env);
  if (missing.length > 0) {
    io.stderr(`the demo cannot start; missing:\n${missing.map((m) => `  - ${m}`).join("\n")}\n`);
    return 1;
  }
  let loaded: Loaded;
  try {
    loaded = await load(options, io);
  } catch (error) {
    io.stderr(`demo: ${error instanceof Error ? error.message : String(error)}\n`);
    return 1;
  }
  const namespace = namespaceOf(loaded.scaler);
  const targetName = nameOf(loaded.target);
  const scalerName = nameOf(loaded.scaler);
  const traceSpanSeconds = (loaded.rows.at(-1)?.offsetSeconds ?? 0) + 1;

  io.stdout(
    `demo: ${loaded.rows.length} requests of ${options.tracePath}\n` +
      `  replayed at ${options.speedup}x (${Math.round(traceSpanSeconds)} s of trace in ${Math.round(traceSpanSeconds / options.speedup)} s)` +
      `${options.durationSeconds === undefined ? ", looping until Ctrl-C" : `, for ${options.durationSeconds} s`}\n` +
      `  scaler ${options.scalerPath}\n  target ${options.targetPath}\n\n` +
      `settings that differ from the defaults, and why:\n`,
  );
  for (const s of nonDefaultScalerSettings(loaded.scaler["spec"]))
    io.stdout(`  ${s.path} = ${s.value} (default ${s.defaultValue}): ${s.why}\n`);
  for (const [what, why] of worldSettings.why) io.stdout(`  ${what}: ${why}\n`);
  io.stdout("\n");

  const stopSignal = interruption(io);
  let world: DemoWorld | undefined;
  let page: RunningPage | undefined;
  let code = 0;
  try {
    const started = Date.now();
    world = await DemoWorld.start(worldSettings, namespace, (step) => io.stdout(`starting ${step}...\n`));
    io.stdout(`everything is up after ${((Date.now() - started) / 1000).toFixed(1)} s\n`);
    if (stopSignal.fired()) return 130;
    page = await startPage({
      port: options.pagePort,
      prometheusUrl: world.prometheus.url,
      namespace,
      // Grafana's $__rate_interval for a 1 s scrape: four scrapes and a step.
      rateInterval: "5s",
      scaler: scalerName,
    });
    io.stdout(`live page: ${page.url}\nPrometheus: ${world.prometheus.url}\n\n`);

    await world.applyTarget(loaded.target, namespace);
    await world.applyScaler(loaded.scaler, namespace);
    await waitFor(`the scaler ${namespace}/${scalerName} to bind its target and be Active`, 60_000, async () => {
      const s = (await world?.get(namespace, "modeldeploymentscalers", scalerName)) ?? {};
      const conditions = ((s["status"] as Record<string, unknown> | undefined)?.["conditions"] ?? []) as {
        type: string;
        status: string;
      }[];
      return conditions.some((c) => c.type === "Active" && c.status === "True");
    });
    // A fleet being replaced serves before traffic moves to it: without this wait the trace's first burst
    // meets pods still starting, and whether the scaler sees it depends on which finishes first.
    io.stdout("waiting for the target's replicas to serve and the scaler to read them...\n");
    let waiting: string[] = [];
    const live = world;
    await waitFor("the target's replicas to be ready and read by the scaler", 60_000, async () => {
      waiting = notServingYet(
        await live.get(namespace, "modeldeployments", targetName),
        await live.get(namespace, "modeldeploymentscalers", scalerName),
      );
      return waiting.length === 0;
    }).catch((error: unknown) => {
      throw new Error(`${error instanceof Error ? error.message : String(error)} (${waiting.join("; ")})`);
    });

    const replayStartedMs = Date.now();
    world.workload.begin(
      new TraceWorkload(loaded.rows, { startSeconds: replayStartedMs / 1000, speedup: options.speedup, loop: true }),
    );
    const observer = new Observer(
      world,
      world.fleet,
      namespace,
      targetName,
      scalerName,
      replayStartedMs,
      loaded.ttftTargetMs,
      loaded.rules,
    );
    let progress = "replay starting";
    page.status = () => ({ replayStartedMs, progress, commits: observer.commits });
    const offered = (): number => world?.fleet.offered.get(podKey(namespace, targetName))?.requests ?? 0;
    io.stdout(`replaying; decisions as they happen:\n${tableHeader}\n`);
    const tty = process.stdout.isTTY === true;
    let lastKey = "";
    let lastProgressMs = 0;
    const endMs = options.durationSeconds === undefined ? Infinity : replayStartedMs + options.durationSeconds * 1000;
    while (!stopSignal.fired() && Date.now() < endMs) {
      const now = Date.now();
      try {
        const { snapshot, newCommits } = await observer.sample(now);
        const key = decisionKey(snapshot);
        progress = progressLine({
          elapsedSeconds: (now - replayStartedMs) / 1000,
          durationSeconds: options.durationSeconds,
          speedup: options.speedup,
          traceSpanSeconds,
          requests: offered(),
          commits: observer.commits.length,
        });
        if (tty) io.stdout("\r\x1b[2K");
        if (key !== lastKey || newCommits.length > 0) {
          lastKey = key;
          io.stdout(tableRows(snapshot, newCommits.at(-1)).join("\n") + "\n");
        }
        if (tty) io.stdout(progress);
        else if (now - lastProgressMs >= 10_000) {
          lastProgressMs = now;
          io.stdout(`${progress}\n`);
        }
      } catch (error) {
        io.stderr(`(could not read the scaler: ${error instanceof Error ? error.message : String(error)})\n`);
      }
      await Promise.race([
        stopSignal.promise,
        new Promise((r) => setTimeout(r, Math.min(1000, Math.max(0, endMs - Date.now())))),
      ]);
    }
    if (tty) io.stdout("\n");
    const summary = observer.summary({
      nowMs: Date.now(),
      speedup: options.speedup,
      requestsOffered: offered(),
      ttftTargetMs: loaded.ttftTargetMs,
      itlTargetMs: loaded.itlTargetMs,
    });
    const log = world.controllerLog;
    io.stdout(
      formatSummary(
        summary,
        log.count === 0
          ? ["  controller log      no warnings or errors"]
          : [
              `  controller log      ${log.count} ${log.count === 1 ? "warning or error" : "warnings or errors"} (a pass that fails is retried at the next tick); the last:`,
              `    ${briefLog(log.lines.at(-1) ?? "")}`,
            ],
      ),
    );
    code = stopSignal.fired() ? 130 : 0;
  } catch (error) {
    const message = error instanceof Error ? describeError(error) : String(error);
    io.stderr(`the demo failed: ${message}\n`);
    code = 1;
  } finally {
    io.stdout("stopping every process the demo started...\n");
    await page?.stop().catch(() => undefined);
    await world?.stop().catch((error: unknown) => io.stderr(`stop: ${String(error)}\n`));
    stopSignal.dispose();
    io.stdout("stopped.\n");
  }
  return code;
}

/** A JSON log line as "message: error message", cut to one screen line. */
function briefLog(line: string): string {
  try {
    const record = JSON.parse(line) as { msg?: string; error?: { message?: string } };
    return `${record.msg ?? ""}${record.error?.message === undefined ? "" : `: ${record.error.message}`}`.slice(0, 160);
  } catch {
    return line.slice(0, 160);
  }
}

function describeError(error: Error): string {
  let text = error.message;
  let cause: unknown = error.cause;
  while (cause instanceof Error) {
    text += `: ${cause.message}`;
    cause = cause.cause;
  }
  return text;
}
