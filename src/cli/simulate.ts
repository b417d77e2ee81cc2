/**
 * `mds-scaler simulate --trace NAME|FILE --scaler scaler.yaml|--oracle [--fleet fleet.yaml]
 * [--speedup N] [--copies K] [--seed N] [--report out.html] [-o table|json]`:
 * replays a trace through the simulated fleet with the real planner deciding
 * (src/sim/quality), or the clairvoyant oracle's search (oracle-search.ts), and
 * prints the run's SLO attainment, GPU-hours and scale events. A usage mistake
 * exits 2 and bad input 1, each naming the flag or field and the value.
 */
import { writeFileSync } from "node:fs";
import { formatProblem } from "../core/api/problem.js";
import type { ScalerSpec } from "../core/api/scaler.js";
import { validateScaler } from "../core/api/validation.js";
import { mdsPolicy } from "../sim/quality/policies/mds.js";
import type { LatencyGuardReading } from "../core/algorithms/ttft-reading.js";
import { renderReport } from "../sim/quality/report.js";
import { attainmentGoal, replayOracle } from "../sim/quality/oracle-search.js";
import { defaultScrapeIntervalSeconds, defaultSlo, runPolicy, type RunResult } from "../sim/quality/run.js";
import { firstSeconds, fromSecond, loadTrace, overlay, speedUp, type Trace } from "../sim/quality/traces.js";
import { flagLines, invocationOf, positiveFlag, readFlags, requiredFlag, stringFlag, UsageError } from "./flags.js";
import type { CommandFlag } from "../app/settings.js";
import { exitCodes, type CliIo, type Command } from "./io.js";
import { parseYamlDocuments } from "./yaml-documents.js";
import { fleetOptions, readFleet, type FleetFile } from "./fleet-file.js";
import { latencyGuardReadingFlag, latencyGuardReadingOf } from "./pass-flags.js";

/** simulate's flags: the help and the command line are both read from this table. */
const simulateFlags: readonly CommandFlag[] = [
  {
    flag: "--trace",
    value: "NAME|FILE",
    help: "azure-conv, azure-code, mooncake-conversation, mooncake-synthetic, servegen-m-large-day (from ../shared/traces, or MDS_TRACES_DIR), or a trace file (.gz inflated), its format read from its CSV header or JSONL fields: Azure 2023/2024 and 2025 multimodal, BurstGPT, Splitwise as Vidur writes it, Mooncake, Qwen Bailian, or the plain CSV arrival_seconds,prompt_tokens,output_tokens",
  },
  { flag: "--scaler", value: "FILE", help: "a ModelDeploymentScaler whose roles are the fleet's roles" },
  {
    flag: "--fleet",
    value: "FILE",
    help: "fleet settings: initialReplicas, preset (llama-3.1-70b-4xh100, the default, or llama-3.1-8b-1xh100), gpusPerReplica (default the preset's), routing (leastOutstandingTokens, the default, or leastOutstandingRequests), capacity (overrides the preset's), coldStartSeconds {min,max}, quotaReplicas, roles (one Server role, the default, or a Prefill then a Decode role: [{name, kind}]), kvLink {bytesPerToken, linkBytesPerSecond} (the prefill-to-decode handoff)",
  },
  { flag: "--speedup", value: "N", default: "1", help: "replay N times faster (trace seconds per simulated second)" },
  { flag: "--copies", value: "K", default: "1", help: "overlay K copies of the trace, each delayed by up to 60 s" },
  { flag: "--seed", value: "N", default: "1", help: "seed of cold starts and ServeGen draws" },
  { flag: "--duration", value: "SECONDS", help: "replay only the first SECONDS of the (overlaid, sped-up) trace" },
  {
    flag: "--from",
    value: "SECONDS",
    help: "replay the (overlaid, sped-up) trace from SECONDS on, shifted to start at zero: what a training slice of --duration SECONDS leaves out",
  },
  { flag: "--report", value: "FILE", help: "write a self-contained HTML page with the run's charts" },
  latencyGuardReadingFlag,
  {
    flag: "--output",
    short: "o",
    value: "table|json",
    default: "table",
    help: "output format (json includes per-request TTFT and ITL, the scaler, and per role every minute as `mds-scaler calibrate --from-simulation` reads it)",
  },
  {
    flag: "--json-requests",
    value: "on|off",
    default: "on",
    help: "with -o json: off leaves out the per-request list, most of a long replay's output (a whole day's is hundreds of MB), and `requests` is their count; the summary, the scaler, the series and the minutes `calibrate --from-simulation` reads stay",
  },
  {
    flag: "--oracle",
    value: "",
    help: "replay the clairvoyant oracle instead of a scaler: the cheapest run reaching 99 % of requests within the SLO (or --oracle-attainment) among schedules that know the trace (its per-minute token need times a headroom, searched) and fixed fleets; about the fewest GPU-hours a scaler could spend on this trace and fleet (docs/quality.md, Definitions); runs the replay up to about 40 times; one Server role",
  },
  {
    flag: "--oracle-attainment",
    value: "PERCENT",
    default: String(100 * attainmentGoal),
    help: "with --oracle: the share of requests within the SLO its runs must reach (for example a fixed fleet's own, to see what a scaler could save at the attainment that fleet keeps)",
  },
  { flag: "--help", short: "h", value: "", help: "this help" },
];

export const simulateUsage = `usage: mds-scaler simulate --trace NAME|FILE --scaler scaler.yaml|--oracle [flags]

${flagLines(simulateFlags)}
`;

interface SimulateArgs {
  readonly trace: string;
  /** What decides the replica count: a scaler file, or the oracle's search. */
  readonly decider: { readonly scaler: string } | { readonly oracle: { readonly attainment: number } };
  readonly fleet?: string;
  readonly speedup: number;
  readonly copies: number;
  readonly seed: number;
  readonly durationSeconds?: number;
  readonly fromSeconds?: number;
  readonly report?: string;
  readonly output: "table" | "json";
  /** Whether `-o json` lists every request. */
  readonly jsonRequests: boolean;
  readonly latencyGuardReading: LatencyGuardReading;
}

/** `-o` and whether its JSON lists every request (`--json-requests`, which needs `-o json`); throws `UsageError`. */
function outputOf(values: ReturnType<typeof readFlags>): Pick<SimulateArgs, "output" | "jsonRequests"> {
  const output = stringFlag(values, "output") ?? "table";
  if (output !== "table" && output !== "json")
    throw new UsageError(`-o must be table or json, got ${JSON.stringify(output)}`);
  const jsonRequests = stringFlag(values, "json-requests");
  if (jsonRequests !== undefined && jsonRequests !== "on" && jsonRequests !== "off")
    throw new UsageError(`--json-requests must be on or off, got ${JSON.stringify(jsonRequests)}`);
  if (jsonRequests !== undefined && output !== "json")
    throw new UsageError(
      `--json-requests applies to -o json only, got --json-requests ${jsonRequests} with -o ${output}`,
    );
  return { output, jsonRequests: jsonRequests !== "off" };
}

/** The command line read by the flag table, or `undefined` for `--help`; throws `UsageError`. */
function parseSimulateArgs(args: readonly string[]): SimulateArgs | undefined {
  const values = readFlags(simulateFlags, args, { emptyIsMissing: true });
  if (values["help"] === true) return undefined;
  const reading = latencyGuardReadingOf(values);
  const { output, jsonRequests } = outputOf(values);
  const optional = {
    fleet: stringFlag(values, "fleet"),
    durationSeconds: positiveFlag(values, "duration", false),
    fromSeconds: positiveFlag(values, "from", false),
    report: stringFlag(values, "report"),
  };
  const speedup = positiveFlag(values, "speedup", false) ?? 1;
  const copies = positiveFlag(values, "copies", true) ?? 1;
  const seed = positiveFlag(values, "seed", true) ?? 1;
  const scaler = stringFlag(values, "scaler");
  const attainmentText = stringFlag(values, "oracle-attainment");
  const attainmentPercent = attainmentText === undefined ? 100 * attainmentGoal : Number(attainmentText);
  if (attainmentText !== undefined && values["oracle"] !== true)
    throw new UsageError(
      `--oracle-attainment applies to --oracle only, got --oracle-attainment ${attainmentText} without it`,
    );
  if (!(attainmentPercent > 0 && attainmentPercent <= 100))
    throw new UsageError(
      `--oracle-attainment must be a percentage above 0 and at most 100, got ${JSON.stringify(attainmentText)}`,
    );
  if (values["oracle"] === true && scaler !== undefined)
    throw new UsageError(
      `--oracle replays the oracle instead of a scaler: give --scaler or --oracle, not both (--scaler ${scaler})`,
    );
  return {
    trace: requiredFlag(values, "trace", "--trace is required"),
    decider:
      values["oracle"] === true
        ? // A share to a millionth of a point: 99.9 reads 0.999, not 0.9990000000000001.
          { oracle: { attainment: Math.round(attainmentPercent * 1e6) / 1e8 } }
        : { scaler: requiredFlag(values, "scaler", "--scaler or --oracle is required") },
    ...Object.fromEntries(Object.entries(optional).filter(([, v]) => v !== undefined)),
    speedup,
    copies,
    seed,
    output,
    jsonRequests,
    latencyGuardReading: reading,
  };
}

function readYaml(io: CliIo, path: string): unknown {
  const values = parseYamlDocuments(io.readFile(path), path);
  if (typeof values === "string") throw new Error(values);
  if (values.length !== 1) throw new Error(`${path}: expected one document, found ${values.length}`);
  return values[0];
}

export function summaryOf(result: RunResult): [string, string][] {
  const pct = (x: number): string => `${(100 * x).toFixed(2)}%`;
  const perRequestMicros = (1e6 * result.cpuSeconds) / Math.max(1, result.requests);
  return [
    ["policy", result.policy],
    ["trace", result.trace],
    ["requests", String(result.requests)],
    ["unfinished", String(result.unfinished)],
    ["SLO attainment (TTFT and ITL)", pct(result.attainment.both)],
    ["TTFT attainment", pct(result.attainment.ttft)],
    ["ITL attainment", pct(result.attainment.itl)],
    [
      "GPU-hours",
      `${result.gpuHours.toFixed(3)} (${result.replicaHours.toFixed(3)} replica-hours × ${result.gpusPerReplica} GPUs)`,
    ],
    ...(Object.keys(result.gpuHoursByRole).length > 1
      ? Object.entries(result.gpuHoursByRole).map(([role, hours]): [string, string] => [
          `GPU-hours ${role}`,
          hours.toFixed(3),
        ])
      : []),
    ["scale events", String(result.scaleEvents)],
    ["largest backlog", String(result.maxBacklog)],
    ["most replicas", String(result.maxReplicas)],
    ["simulated", `${(result.spanSeconds / 60).toFixed(1)} min`],
    [
      "simulator run time",
      `${result.wallSeconds.toFixed(2)} s wall, ${result.cpuSeconds.toFixed(2)} s CPU (${perRequestMicros.toFixed(0)} µs CPU per request)`,
    ],
    ...(result.notes === undefined ? [] : ([["planner reasons", result.notes]] as [string, string][])),
  ];
}

/** A scaler file as read and checked. */
interface ScalerFile {
  readonly document: unknown;
  readonly spec: ScalerSpec;
}

/** What decides the replica count (the scaler read, or the oracle's goal), fleet settings and trace, read and checked. */
interface SimulateInputs {
  readonly decider: { readonly scaler: ScalerFile } | { readonly oracle: { readonly attainment: number } };
  readonly fleet: FleetFile;
  readonly trace: Trace;
}

/** The trace overlaid, sped up and cut as the flags say. */
function traceOf(parsed: SimulateArgs): Trace {
  const whole = speedUp(
    overlay(loadTrace(parsed.trace, { seed: parsed.seed }), parsed.copies, parsed.seed),
    parsed.speedup,
  );
  if (parsed.fromSeconds !== undefined && !(parsed.fromSeconds < whole.spanSeconds))
    throw new Error(`--from: ${parsed.fromSeconds} is not before the trace's end (${whole.spanSeconds} s)`);
  return firstSeconds(
    parsed.fromSeconds === undefined ? whole : fromSecond(whole, parsed.fromSeconds),
    parsed.durationSeconds ?? Infinity,
  );
}

/**
 * The scaler file, checked, or exit 1 after naming each problem's field and value. Its warnings go to stderr,
 * a window shorter than two of the simulator's scrapes among them: the run reads nothing from such a window.
 */
function readScaler(io: CliIo, path: string): ScalerFile | number {
  const document = readYaml(io, path);
  const scaler = validateScaler(document, { engineScrapeIntervalSeconds: defaultScrapeIntervalSeconds });
  for (const w of scaler.warnings) io.stderr(`${path}: warning: ${formatProblem(w)}\n`);
  if (scaler.ok) return { document, spec: scaler.value.spec };
  io.stderr(`${path}: ${scaler.problems.length} problem(s)\n`);
  for (const p of scaler.problems) io.stderr(`${formatProblem(p)}\n`);
  return exitCodes.invalid;
}

/** The scaler file read and checked, or the oracle's goal as given; exit 1 for a scaler file with problems. */
function deciderOf(decider: SimulateArgs["decider"], io: CliIo): SimulateInputs["decider"] | number {
  if ("oracle" in decider) return decider;
  const scaler = readScaler(io, decider.scaler);
  return typeof scaler === "number" ? scaler : { scaler };
}

/** Phase 2: the scaler, the fleet file and the trace, or exit 1 after naming the file, field and value. */
function readInputs(parsed: SimulateArgs, io: CliIo): SimulateInputs | number {
  try {
    const decider = deciderOf(parsed.decider, io);
    if (typeof decider === "number") return decider;
    const fleet = readFleet(io, parsed.fleet, (path) => readYaml(io, path));
    if (typeof fleet === "number") return fleet;
    const roles = fleet.roles ?? [];
    if ("oracle" in decider && (roles.length > 1 || roles.some((r) => r.kind !== "Server"))) {
      io.stderr(
        `${parsed.fleet}: roles: the oracle schedules one Server role, got ${JSON.stringify(roles.map((r) => r.kind))}\n`,
      );
      return exitCodes.invalid;
    }
    return { decider, fleet, trace: traceOf(parsed) };
  } catch (error) {
    io.stderr(`${error instanceof Error ? error.message : String(error)}\n`);
    return exitCodes.invalid;
  }
}

/** A run and the summary rows only its kind has (the oracle's search). */
interface Replay {
  readonly result: RunResult;
  readonly summary: [string, string][];
}

/** Phase 3: the replay with the real planner deciding, or exit 1 naming why the fleet cannot run. */
function replay(parsed: SimulateArgs, inputs: SimulateInputs, io: CliIo): Replay | number {
  const { decider } = inputs;
  if ("oracle" in decider) return replayTheOracle(parsed, inputs, decider.oracle.attainment, io);
  try {
    const policy = mdsPolicy({
      spec: decider.scaler.spec,
      initialReplicas: inputs.fleet.initialReplicas ?? 1,
      latencyGuardReading: parsed.latencyGuardReading,
    });
    return {
      result: runPolicy(inputs.trace, policy, { seed: parsed.seed, fleet: fleetOptions(inputs.fleet) }),
      summary: [],
    };
  } catch (error) {
    io.stderr(`${error instanceof Error ? error.message : String(error)}\n`);
    return exitCodes.invalid;
  }
}

/** Phase 3 for `--oracle`: its search, then its run; exit 1 when nothing reached the goal. */
function replayTheOracle(parsed: SimulateArgs, inputs: SimulateInputs, attainment: number, io: CliIo): Replay | number {
  const options = { seed: parsed.seed, fleet: fleetOptions(inputs.fleet) };
  const oracle = replayOracle(inputs.trace, options, attainment);
  const searched = `${oracle.schedulesRun} schedules and ${oracle.fleetsRun} fixed fleets run`;
  const goal = `${Number((100 * attainment).toFixed(3))} %`;
  if (oracle.result === undefined) {
    io.stderr(
      `--oracle: nothing reached ${goal} of requests within the SLO (${searched}: headroom up to 8 and fixed fleets up to ${oracle.maxReplicas} replicas)\n`,
    );
    return exitCodes.invalid;
  }
  const fleet = oracle.smallestFleet;
  const note = `${searched}; the smallest fixed fleet reaching ${goal}: ${fleet === undefined ? `none up to ${oracle.maxReplicas} replicas` : `${fleet.replicas} replicas, ${fleet.gpuHours.toFixed(3)} GPU-hours`}`;
  return { result: oracle.result, summary: [["oracle search", note]] };
}

/** Phase 4: the report page and the summary, as a table or as JSON with every request. */
function writeOutputs(parsed: SimulateArgs, inputs: SimulateInputs, run: Replay, io: CliIo): number {
  const { result } = run;
  // How the trace was read (its format, spreads, overlays, cuts) sits under its name.
  const summary = [
    ...summaryOf(result).flatMap((row): [string, string][] =>
      row[0] === "trace" && inputs.trace.notes.length > 0
        ? [row, ["trace read", inputs.trace.notes.join("; ")]]
        : [row],
    ),
    ...run.summary,
  ];
  if (parsed.report !== undefined) writeFileSync(parsed.report, renderReport({ result, slo: defaultSlo, summary }));
  if (parsed.output === "json") {
    const { records, ...rest } = result;
    // Built only when asked for: over a whole day it is most of the output.
    const requests = parsed.jsonRequests
      ? {
          requests: records.map((r) => ({
            arrivalSeconds: r.arrivalSeconds,
            promptTokens: r.promptTokens,
            outputTokens: r.outputTokens,
            ttftSeconds: r.firstTokenSeconds === undefined ? null : r.firstTokenSeconds - r.arrivalSeconds,
            meanItlSeconds: r.meanItlSeconds ?? null,
          })),
        }
      : {};
    const { decider } = inputs;
    const by = "oracle" in decider ? decider : { scaler: decider.scaler.document };
    io.stdout(`${JSON.stringify({ ...rest, ...by, ...requests })}\n`);
  } else {
    const width = Math.max(...summary.map(([k]) => k.length));
    io.stdout(`${summary.map(([k, v]) => `${k.padEnd(width)}  ${v}`).join("\n")}\n`);
  }
  return exitCodes.ok;
}

export function runSimulate(args: readonly string[], io: CliIo): number {
  // Phase 1: the command line, or the exit code after `--help` (0) or a usage mistake (2, naming the flag).
  const parsed = invocationOf(() => parseSimulateArgs(args), simulateUsage, io);
  if (typeof parsed === "number") return parsed;
  const inputs = readInputs(parsed, io);
  if (typeof inputs === "number") return inputs;
  const run = replay(parsed, inputs, io);
  if (typeof run === "number") return run;
  return writeOutputs(parsed, inputs, run, io);
}

export const simulateCommand: Command = {
  summary: "replay a request trace through a simulated fleet with the real planner; print SLO attainment and GPU-hours",
  usage: simulateUsage,
  run: (args, io) => runSimulate(args, io),
};
