/**
 * `mds-scaler simulate --trace NAME|FILE --scaler scaler.yaml [--fleet fleet.yaml]
 * [--speedup N] [--copies K] [--seed N] [--report out.html] [-o table|json]`:
 * replays a trace through the simulated fleet with the real planner deciding
 * (src/sim/quality) and prints the run's SLO attainment, GPU-hours and scale
 * events. Bad input exits 1 naming the flag or field and the value.
 */
import { writeFileSync } from "node:fs";
import { z } from "zod";
import { formatProblem } from "../core/api/problem.js";
import { validateScaler } from "../core/api/validation.js";
import { routingRules } from "../sim/quality/cluster.js";
import { mdsPolicy } from "../sim/quality/policies/mds.js";
import { replicaPresetNames } from "../sim/quality/presets.js";
import {
  defaultLatencyGuardReading,
  isLatencyGuardReading,
  latencyGuardReadings,
  type LatencyGuardReading,
} from "../core/algorithms/ttft-reading.js";
import { renderReport } from "../sim/quality/report.js";
import { defaultSlo, runPolicy, type RunResult } from "../sim/quality/run.js";
import { firstSeconds, fromSecond, loadTrace, overlay, type Trace } from "../sim/quality/traces.js";
import { exitCodes, type CliIo, type Command } from "./io.js";
import { parseYamlDocuments } from "./yaml-documents.js";

export const simulateUsage = `usage: mds-scaler simulate --trace NAME|FILE --scaler scaler.yaml [flags]

  --trace NAME|FILE   azure-conv, azure-code, mooncake-conversation, mooncake-synthetic,
                      servegen-m-large-day (from ../shared/traces, or MDS_TRACES_DIR), or an
                      Azure 2023 .csv or Mooncake .jsonl file
  --scaler FILE       a ModelDeploymentScaler whose roles are the fleet's roles
  --fleet FILE        fleet settings: initialReplicas, preset (llama-3.1-70b-4xh100, the default, or
                      llama-3.1-8b-1xh100), gpusPerReplica (default the preset's), routing
                      (leastOutstandingTokens, the default, or leastOutstandingRequests), capacity
                      (overrides the preset's), coldStartSeconds {min,max}, quotaReplicas,
                      roles (one Server role, the default, or a Prefill then a Decode role: [{name, kind}]),
                      kvLink {bytesPerToken, linkBytesPerSecond} (the prefill-to-decode handoff)
  --speedup N         replay N times faster (trace seconds per simulated second), default 1
  --copies K          overlay K copies of the trace, each delayed by up to 60 s, default 1
  --seed N            seed of cold starts and ServeGen draws, default 1
  --duration SECONDS  replay only the first SECONDS of the (overlaid, sped-up) trace
  --from SECONDS      replay the (overlaid, sped-up) trace from SECONDS on, shifted to start at zero:
                      what a training slice of --duration SECONDS leaves out
  --report FILE       write a self-contained HTML page with the run's charts
  --latency-guard-reading literal|queueing
                      how the latency guard reads TTFT: as the specification words it (literal, the
                      default), or counting a breach only when waiting is a material part of it (queueing)
  -o table|json       output format, default table (json includes per-request TTFT and ITL, the scaler,
                      and per role every minute as \`mds-scaler calibrate --from-simulation\` reads it)
`;

const FleetSchema = z.strictObject({
  initialReplicas: z.number().int().min(1).max(1024).optional(),
  preset: z.enum(replicaPresetNames).optional(),
  gpusPerReplica: z.number().int().min(1).max(64).optional(),
  routing: z.enum(routingRules).optional(),
  roles: z
    .array(z.strictObject({ name: z.string().min(1), kind: z.enum(["Server", "Prefill", "Decode"]) }))
    .min(1)
    .optional(),
  kvLink: z
    .strictObject({ bytesPerToken: z.number().positive(), linkBytesPerSecond: z.number().positive() })
    .optional(),
  quotaReplicas: z.number().int().min(1).max(1024).optional(),
  coldStartSeconds: z
    .strictObject({ min: z.number().min(0), max: z.number().min(0) })
    .refine((c) => c.max >= c.min, "max must be at least min")
    .optional(),
  capacity: z
    .strictObject({
      prefillTokensPerSecond: z.number().positive().optional(),
      decodeTokensPerSecond: z.number().positive().optional(),
      maxTokensPerSecondPerRequest: z.number().positive().optional(),
      maxRunningRequests: z.number().int().positive().optional(),
      kvCacheTokens: z.number().int().positive().optional(),
      prefixCacheBlocks: z.number().int().min(0).optional(),
    })
    .optional(),
});
type FleetFile = z.infer<typeof FleetSchema>;

interface SimulateArgs {
  trace?: string;
  scaler?: string;
  fleet?: string;
  speedup: number;
  copies: number;
  seed: number;
  durationSeconds?: number;
  fromSeconds?: number;
  report?: string;
  output: "table" | "json";
  latencyGuardReading: LatencyGuardReading;
}

const valueFlags = new Set([
  "--trace",
  "--scaler",
  "--fleet",
  "--speedup",
  "--copies",
  "--seed",
  "--duration",
  "--from",
  "--report",
  "--latency-guard-reading",
  "-o",
  "--output",
]);

function parseArgs(args: readonly string[]): SimulateArgs | string {
  const out: SimulateArgs = {
    speedup: 1,
    copies: 1,
    seed: 1,
    output: "table",
    latencyGuardReading: defaultLatencyGuardReading,
  };
  for (let i = 0; i < args.length; i++) {
    const arg = args[i] as string;
    if (arg === "-h" || arg === "--help") return "";
    const eq = arg.startsWith("--") ? arg.indexOf("=") : -1;
    const flag = eq > 0 ? arg.slice(0, eq) : arg;
    if (!valueFlags.has(flag)) return `unknown argument ${JSON.stringify(arg)}`;
    const value = eq > 0 ? arg.slice(eq + 1) : args[++i];
    if (value === undefined || value === "") return `${flag} needs a value`;
    const positive = (name: string, integer: boolean): number | string => {
      const n = Number(value);
      return Number.isFinite(n) && n > 0 && (!integer || Number.isInteger(n))
        ? n
        : `${name} must be a positive ${integer ? "integer" : "number"}, got ${JSON.stringify(value)}`;
    };
    switch (flag) {
      case "--trace":
        out.trace = value;
        break;
      case "--scaler":
        out.scaler = value;
        break;
      case "--fleet":
        out.fleet = value;
        break;
      case "--report":
        out.report = value;
        break;
      case "--latency-guard-reading":
        if (!isLatencyGuardReading(value)) {
          return `--latency-guard-reading must be ${latencyGuardReadings.join(" or ")}, got ${JSON.stringify(value)}`;
        }
        out.latencyGuardReading = value;
        break;
      case "--duration":
      case "--from": {
        const n = positive(flag, false);
        if (typeof n === "string") return n;
        if (flag === "--duration") out.durationSeconds = n;
        else out.fromSeconds = n;
        break;
      }
      case "--speedup":
      case "--copies":
      case "--seed": {
        const n = positive(flag, flag !== "--speedup");
        if (typeof n === "string") return n;
        if (flag === "--speedup") out.speedup = n;
        else if (flag === "--copies") out.copies = n;
        else out.seed = n;
        break;
      }
      default:
        if (value !== "table" && value !== "json") return `-o must be table or json, got ${JSON.stringify(value)}`;
        out.output = value;
    }
  }
  if (out.trace === undefined) return "--trace is required";
  if (out.scaler === undefined) return "--scaler is required";
  return out;
}

function readYaml(io: CliIo, path: string): unknown {
  const values = parseYamlDocuments(io.readFile(path), path);
  if (typeof values === "string") throw new Error(values);
  if (values.length !== 1) throw new Error(`${path}: expected one document, found ${values.length}`);
  return values[0];
}

function speedUp(trace: Trace, speedup: number): Trace {
  if (speedup === 1) return trace;
  return {
    ...trace,
    name: `${trace.name} at ${speedup}x`,
    requests: trace.requests.map((r) => ({ ...r, arrivalSeconds: r.arrivalSeconds / speedup })),
    spanSeconds: trace.spanSeconds / speedup,
    notes: [...trace.notes, `replayed ${speedup}x faster`],
  };
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

export function runSimulate(args: readonly string[], io: CliIo): number {
  const parsed = parseArgs(args);
  if (typeof parsed === "string") {
    io.stderr(parsed === "" ? simulateUsage : `${parsed}\n${simulateUsage}`);
    return parsed === "" ? exitCodes.ok : exitCodes.usage;
  }
  let fleet: FleetFile = {};
  let trace: Trace;
  let spec;
  let scalerDocument: unknown;
  try {
    scalerDocument = readYaml(io, parsed.scaler as string);
    const scaler = validateScaler(scalerDocument);
    if (!scaler.ok) {
      io.stderr(`${parsed.scaler}: ${scaler.problems.length} problem(s)\n`);
      for (const p of scaler.problems) io.stderr(`${formatProblem(p)}\n`);
      return exitCodes.invalid;
    }
    spec = scaler.value.spec;
    if (parsed.fleet !== undefined) {
      const f = FleetSchema.safeParse(readYaml(io, parsed.fleet));
      if (!f.success) {
        for (const issue of f.error.issues)
          io.stderr(`${parsed.fleet}: ${issue.path.join(".") || "(document)"}: ${issue.message}\n`);
        return exitCodes.invalid;
      }
      fleet = f.data;
    }
    const whole = speedUp(
      overlay(loadTrace(parsed.trace as string, { seed: parsed.seed }), parsed.copies, parsed.seed),
      parsed.speedup,
    );
    if (parsed.fromSeconds !== undefined && !(parsed.fromSeconds < whole.spanSeconds))
      throw new Error(`--from: ${parsed.fromSeconds} is not before the trace's end (${whole.spanSeconds} s)`);
    trace = firstSeconds(
      parsed.fromSeconds === undefined ? whole : fromSecond(whole, parsed.fromSeconds),
      parsed.durationSeconds ?? Infinity,
    );
  } catch (error) {
    io.stderr(`${error instanceof Error ? error.message : String(error)}\n`);
    return exitCodes.invalid;
  }
  let result: RunResult;
  try {
    const policy = mdsPolicy({
      spec,
      initialReplicas: fleet.initialReplicas ?? 1,
      latencyGuardReading: parsed.latencyGuardReading,
    });
    result = runPolicy(trace, policy, {
      seed: parsed.seed,
      fleet: {
        ...(fleet.preset === undefined ? {} : { preset: fleet.preset }),
        ...(fleet.gpusPerReplica === undefined ? {} : { gpusPerReplica: fleet.gpusPerReplica }),
        ...(fleet.routing === undefined ? {} : { routing: fleet.routing }),
        ...(fleet.capacity === undefined
          ? {}
          : { capacity: Object.fromEntries(Object.entries(fleet.capacity).filter(([, v]) => v !== undefined)) }),
        ...(fleet.coldStartSeconds === undefined ? {} : { coldStartSeconds: fleet.coldStartSeconds }),
        ...(fleet.quotaReplicas === undefined ? {} : { quotaReplicas: fleet.quotaReplicas }),
        ...(fleet.roles === undefined ? {} : { roles: fleet.roles }),
        ...(fleet.kvLink === undefined ? {} : { kvLink: fleet.kvLink }),
      },
    });
  } catch (error) {
    io.stderr(`${error instanceof Error ? error.message : String(error)}\n`);
    return exitCodes.invalid;
  }
  const summary = summaryOf(result);
  if (parsed.report !== undefined) writeFileSync(parsed.report, renderReport({ result, slo: defaultSlo, summary }));
  if (parsed.output === "json") {
    const { records, ...rest } = result;
    const requests = records.map((r) => ({
      arrivalSeconds: r.arrivalSeconds,
      promptTokens: r.promptTokens,
      outputTokens: r.outputTokens,
      ttftSeconds: r.firstTokenSeconds === undefined ? null : r.firstTokenSeconds - r.arrivalSeconds,
      meanItlSeconds: r.meanItlSeconds ?? null,
    }));
    io.stdout(`${JSON.stringify({ ...rest, scaler: scalerDocument, requests })}\n`);
  } else {
    const width = Math.max(...summary.map(([k]) => k.length));
    io.stdout(`${summary.map(([k, v]) => `${k.padEnd(width)}  ${v}`).join("\n")}\n`);
  }
  return exitCodes.ok;
}

export const simulateCommand: Command = {
  summary: "replay a request trace through a simulated fleet with the real planner; print SLO attainment and GPU-hours",
  usage: simulateUsage,
  run: (args, io) => runSimulate(args, io),
};
