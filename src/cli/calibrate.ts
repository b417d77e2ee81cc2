/**
 * `mds-scaler calibrate`: the token throughput per ready replica at which a
 * scaler's latency targets held, per role, from a period of its engine series
 * in Prometheus or from `simulate -o json` runs (docs/calibrate.md). Prints the
 * evidence by load band and the figure, or a scaler with the figures written in.
 */
import { writeFileSync } from "node:fs";
import { parse as parseYaml } from "yaml";
import type { z } from "zod";
import {
  parsePrometheusSettings,
  prometheusClientOf,
  prometheusSettingFlags,
  prometheusSignalConfigOf,
  type PrometheusSettingName,
} from "../app/config.js";
import { formatProblem } from "../core/api/problem.js";
import {
  defaultLatencyGuardReading,
  latencyGuardReadings,
  type LatencyGuardReading,
} from "../core/algorithms/ttft-reading.js";
import { validateScaler } from "../core/api/validation.js";
import type { ScalerSpec } from "../core/api/scaler.js";
import { minutesFromPrometheus } from "./calibrate/prometheus-minutes.js";
import { renderCalibrationReport } from "./calibrate/report.js";
import {
  algorithmSnippet,
  calibrate,
  scalerSnippet,
  table,
  calibratedScaler,
  floorsAnnotationsOf,
  withKeptTargets,
  withRoleFigure,
  type CalibrationResult,
} from "./calibrate/result.js";
import { minutesFromSimulations } from "./calibrate/simulation-minutes.js";
import { minutesFromLoadTest, type LoadTestMinutes } from "./calibrate/load-test.js";
import { checkOnSlice } from "./calibrate/slice-check.js";
import { floorsFromYesterday } from "./calibrate/hourly-floors.js";
import { fleetStepsFromYesterday } from "./calibrate/fleet-step.js";
import { applyCalibratedSpec } from "./calibrate/apply.js";
import { KubeResources } from "../adapters/kubernetes/resources.js";
import { clusterConfigFrom } from "../app/cluster.js";
import type { RoleMinutes } from "../core/calibrate/minute.js";
import { secondsPerDay } from "../core/calibrate/hourly-floors.js";
import { keepFleetAboveSwing } from "../core/calibrate/demand-swing.js";
import { figureForSwing, minHeadroomSwing } from "../core/calibrate/swing-headroom.js";
import { readFleet } from "./fleet-file.js";
import { flagLines, positiveFlag, readFlags, UsageError, type FlagValues } from "./flags.js";
import { latencyGuardReadingOf } from "./pass-flags.js";
import { settings as controllerSettings, type CommandFlag } from "../app/settings.js";
import { exitCodes, type CliIo, type Command } from "./io.js";
import { loadObjects, scalerAndTarget } from "./observe.js";
import { parseYamlDocuments } from "./yaml-documents.js";

/** calibrate's own flags; the Prometheus flags are the controller's (src/app/config.ts), appended below. */
const ownFlags: readonly CommandFlag[] = [
  {
    flag: "--from-simulation",
    value: "FILE",
    multiple: true,
    help: "a `simulate -o json` run; repeat to pool runs (say, static fleets of several sizes)",
  },
  {
    flag: "--trace",
    value: "NAME|FILE",
    help: "load-test in the simulator: serve the trace's first --duration seconds with static fleets, from twice its peak need down by a third at a time, until the targets break (up by half at a time, at most 4 times, while even the first breaks in its lowest band) (a trace name or file, as simulate takes it; needs -f)",
  },
  {
    flag: "--duration",
    value: "SECONDS",
    default: "900",
    help: "with --trace: the slice of the trace the load test serves",
  },
  { flag: "--fleet", value: "FILE", help: "with --trace: simulate's fleet settings (preset, capacity, routing, ...)" },
  { flag: "--copies", value: "K", default: "1", help: "with --trace: overlay K copies of the trace, as simulate does" },
  { flag: "--speedup", value: "N", default: "1", help: "with --trace: replay N times faster, as simulate does" },
  {
    flag: "--load-test-fill",
    value: "on|off",
    default: "off",
    help: "with --trace: once the targets break, also serve the fleets the last step passed over (at most 3, evenly spaced), so the bands between the figure and the break are judged on their own minutes",
  },
  {
    flag: "--slice-check",
    value: "on|off",
    default: "off",
    help: 'with --trace: replay the slice with the calibrated scaler from maxReplicas ready replicas (the fleet it replaces) and lower the figure by 10 % at a time, at most 4 times, while it breaks a minute that fleet keeps (off by default: docs/calibrate.md, "The slice check")',
  },
  {
    flag: "--swing-headroom",
    value: "SWING",
    help: `lower each role's figure to at most its capacity (where the targets broke) ÷ SWING, so a minute carrying SWING × the three before it stays below that load while new replicas start (the docs' steps for replacing a fleet: ${keepFleetAboveSwing}; at least ${minHeadroomSwing})`,
  },
  {
    flag: "--filename",
    short: "f",
    value: "FILE",
    help: "the ModelDeploymentScaler: its targets judge the minutes and the scaler output is this file with the figures written in (with --from-simulation: default the run's scaler)",
  },
  { flag: "--scaler", value: "NAMESPACE/NAME", help: "the ModelDeploymentScaler, read from the cluster" },
  {
    flag: "--target",
    short: "t",
    value: "FILE",
    help: "its ModelDeployment from a file (no cluster needed); without it the target is read from the cluster",
  },
  { flag: "--kubeconfig", value: "FILE", help: "the cluster (default: $KUBECONFIG, ~/.kube/config, or in-cluster)" },
  {
    flag: controllerSettings.kubeTimeoutMs.flag,
    value: "MS",
    default: "10000",
    help: `${controllerSettings.kubeTimeoutMs.help} (the controller's flag)`,
  },
  {
    flag: controllerSettings.targetApiVersion.flag,
    value: "VERSION",
    default: "v1",
    help: `${controllerSettings.targetApiVersion.help} read from the cluster (the controller's flag)`,
  },
  { flag: "--start", value: "TIME", help: "start of the period: RFC 3339 or Unix seconds" },
  { flag: "--end", value: "TIME", help: "end of the period: RFC 3339 or Unix seconds (default now)" },
  { flag: "--last", value: "DURATION", help: "the period ending at --end: 15m, 2h, 900s (instead of --start)" },
  {
    flag: "--output",
    short: "o",
    value: "FORMAT",
    default: "table",
    help: "table, json, or scaler (the scaler with the calibrated targets)",
  },
  {
    flag: "--latency-guard-reading",
    value: "READING",
    default: defaultLatencyGuardReading,
    help: `how a minute's TTFT is judged, as the controller's latency guard with this reading judges it: ${latencyGuardReadings.join(" or ")} (queueing: a TTFT above target breaks a minute only when waiting is a material part of it)`,
  },
  {
    flag: "--hourly-floors-from",
    value: "FILE|prometheus",
    help: "also write each calibrated role's floorReplicasByUtcHour: at each UTC hour, the replicas its figure gives the busiest minute of that hour ± 30 min of the day before, at most maxReplicas; read from a `simulate -o json` run of that whole day (FILE, its second 0 at 00:00), or with --prometheus-url from the 24 hours before the period (prometheus); a role without a figure is held at its maxReplicas (minReplicas = maxReplicas: the fleet, as the whole-day steps keep it); the scaler written carries the time calibrate ran in the annotation worker.gpustack.ai/floors-calibrated-at, which the MdsScalerFloorsStale alert reads",
  },
  {
    flag: "--swing-from",
    value: "FILE|prometheus",
    help: `the docs' step for replacing a fixed fleet, in the scaler written: the same hours of the day before, served by that fleet, from a \`simulate -o json\` run of them (FILE), or with --prometheus-url from the --swing-period that starts 24 hours before the period (prometheus); each role whose demand swung above ${keepFleetAboveSwing} there (or where no swing was measured, or calibrate gave no figure) is held at its maxReplicas (minReplicas = maxReplicas: the fleet), the others written as calibrated, capped at maxReplicas`,
  },
  {
    flag: "--swing-period",
    value: "DURATION",
    default: "2h",
    help: "with --swing-from prometheus: the hours the scaler will replace the fleet for, read the day before from the period's start (15m, 2h, 900s; at most 24h; 2h: the two-hour replays the step was measured on)",
  },
  {
    flag: "--keep-targets",
    value: "",
    help: "keep each role's per-replica target as the scaler writes it, and size the steps (--hourly-floors-from, --swing-from) by it instead of the figure measured: the daily refresh of the floors once the scaler runs, whose own minutes do not give back the figure the first run measured (not with --swing-headroom)",
  },
  { flag: "--write-scaler", value: "FILE", help: "also write the scaler with the calibrated targets to FILE" },
  {
    flag: "--apply",
    value: "",
    help: "also write that scaler's spec (and the floors' date annotation) back to the cluster, to the scaler read with --scaler, only if its spec has not changed since calibrate read it (a daily job's last step: docs/calibrate.md, \"A whole day\")",
  },
  { flag: "--report", value: "FILE", help: "write a self-contained HTML page with the minutes plotted by load" },
  { flag: "--help", short: "h", value: "", help: "this help" },
];

const promFlags = prometheusSettingFlags();
const flags: readonly CommandFlag[] = [
  ...ownFlags,
  ...promFlags.map((p) => ({
    flag: p.flag,
    value: "VALUE",
    help: `${p.help} (the controller's flag)`,
    ...(p.default === undefined ? {} : { default: p.default }),
  })),
];

export const calibrateUsage = `usage: mds-scaler calibrate --from-simulation run.json [--from-simulation run2.json ...] [-f scaler.yaml] [flags]
       mds-scaler calibrate --trace NAME|FILE -f scaler.yaml [--duration 900] [--fleet fleet.yaml] [flags]
       mds-scaler calibrate --prometheus-url URL (-f scaler.yaml | --scaler NS/NAME) [--target md.yaml] (--last 15m | --start T [--end T]) [flags]

${flagLines(flags)}
`;

/**
 * Longest period read from Prometheus: a week. Each minute is a sampling pass answered from range queries
 * over six hours at a time (prometheus-minutes.ts), so a week is 28 stretches of a few dozen queries each.
 */
const maxMinutes = 7 * 24 * 60;

function parseTime(flag: string, text: string): number {
  const seconds = /^\d+(\.\d+)?$/.test(text) ? Number(text) : Date.parse(text) / 1000;
  if (!Number.isFinite(seconds))
    throw new UsageError(`--${flag}: ${JSON.stringify(text)} is not RFC 3339 or Unix seconds`);
  return seconds;
}

function parseDuration(flag: string, text: string): number {
  const m = /^(\d+)(s|m|h)$/.exec(text);
  if (m === null || Number(m[1]) === 0)
    throw new UsageError(`--${flag}: ${JSON.stringify(text)} is not a duration such as 900s, 15m or 2h`);
  return Number(m[1]) * { s: 1, m: 60, h: 3600 }[m[2] as "s" | "m" | "h"];
}

function readYaml(io: CliIo, path: string, what: string): unknown {
  const values = parseYamlDocuments(io.readFile(path), path);
  if (typeof values === "string") throw new Error(values);
  if (values.length !== 1) throw new Error(`${path}: expected one ${what}, found ${values.length} documents`);
  return values[0];
}

function specOf(document: unknown, where: string): ScalerSpec {
  const v = validateScaler(document);
  if (!v.ok) throw new Error(`${where}: ${v.problems.map(formatProblem).join("\n")}`);
  return v.value.spec;
}

/** The answer, the scaler document the figures are written into, and its validated spec. */
interface Calibrated {
  readonly result: CalibrationResult;
  readonly document: unknown;
  readonly spec: ScalerSpec;
  /** `--hourly-floors-from prometheus`: the minutes of the 24 hours before the period, where they came from, its warnings. */
  readonly dayBefore?: DayBefore;
  /** `--swing-from prometheus`: the minutes of the `--swing-period` starting 24 hours before the period. */
  readonly swingDayBefore?: DayBefore;
  /** Where the scaler was read from when `--scaler` named it in the cluster: where `--apply` writes it back. */
  readonly cluster?: ClusterScaler;
}

interface ClusterScaler {
  readonly namespace: string;
  readonly name: string;
  readonly kubeconfig: string | undefined;
  readonly timeoutMs: number;
}

interface DayBefore {
  readonly roles: readonly RoleMinutes[];
  readonly source: string;
  /** Partial answers and failed passes of the day before's read, each with its minute. */
  readonly warnings: readonly string[];
}

function fromSimulation(values: FlagValues, io: CliIo, reading: LatencyGuardReading): Calibrated {
  const paths = values["from-simulation"] as string[];
  const sim = minutesFromSimulations(paths.map((path) => ({ path, text: io.readFile(path) })));
  const file = values["filename"] as string | undefined;
  const document = file === undefined ? sim.scaler : readYaml(io, file, "ModelDeploymentScaler");
  const spec = specOf(document, file === undefined ? `--from-simulation ${paths[0]}: scaler` : `-f ${file}`);
  return {
    result: calibrate(`simulated runs ${sim.runs.join("; ")}`, spec, sim.roles, [], reading),
    document,
    spec,
  };
}

function fromLoadTest(values: FlagValues, io: CliIo, reading: LatencyGuardReading): Calibrated {
  const file = values["filename"] as string | undefined;
  if (file === undefined) throw new UsageError("--trace needs -f <scaler.yaml>: its targets judge the load test");
  // Off unless asked: on traces no run had seen it changed no figure and missed what the unchecked missed (docs/quality.md, thirteenth run).
  const check = (values["slice-check"] as string | undefined) ?? "off";
  if (check !== "on" && check !== "off")
    throw new UsageError(`--slice-check: ${JSON.stringify(check)} is not one of on, off`);
  const fill = (values["load-test-fill"] as string | undefined) ?? "off";
  if (fill !== "on" && fill !== "off")
    throw new UsageError(`--load-test-fill: ${JSON.stringify(fill)} is not one of on, off`);
  const slice = {
    durationSeconds: positiveFlag(values, "duration", false) ?? 900,
    copies: positiveFlag(values, "copies", true) ?? 1,
    speedup: positiveFlag(values, "speedup", false) ?? 1,
  };
  const fleet = readFleet(io, values["fleet"] as string | undefined, (path) => readYaml(io, path, "fleet"));
  if (typeof fleet === "number") throw new Error(`--fleet ${String(values["fleet"])}: not a fleet settings file`);
  const document = readYaml(io, file, "ModelDeploymentScaler");
  const spec = specOf(document, `-f ${file}`);
  const test = minutesFromLoadTest({
    trace: values["trace"] as string,
    ...slice,
    fleet,
    spec,
    reading,
    seed: 1,
    fill: fill === "on",
  });
  const answer = { result: calibrate(test.source, spec, test.roles, [], reading), document, spec };
  return check === "on" ? checkedOnSlice(answer, test, reading) : answer;
}

/** The load test's answer after the slice check (calibrate/slice-check.ts): its figure, or a lower one that held the slice. */
function checkedOnSlice(answer: Calibrated, test: LoadTestMinutes, reading: LatencyGuardReading): Calibrated {
  const role = answer.spec.roles[0];
  const calibration = answer.result.roles.find((r) => r.role === role?.name);
  if (role === undefined || calibration === undefined || calibration.answer.kind !== "calibrated") return answer;
  const figure = calibration.answer.tokensPerSecondPerReplica;
  const check = checkOnSlice({
    slice: test.slice,
    runOptions: test.runOptions,
    reading,
    targets: answer.result.targets,
    role: { name: role.name, kind: calibration.kind },
    fleetReplicas: role.maxReplicas,
    figure,
    // The replay runs the file -o scaler would write, with the figure tried.
    specWithFigure: (tried) =>
      specOf(
        parseYaml(scalerSnippet(withRoleFigure(answer.result, role.name, tried), answer.document, answer.spec)),
        `the scaler with ${tried} tok/s per ready replica written in`,
      ),
  });
  const why =
    check.outcome === "held"
      ? undefined
      : `${check.outcome === "lowered" ? "lowered" : "lowered, and still short,"} from ${figure} by the slice check`;
  return {
    ...answer,
    result: {
      ...withRoleFigure(answer.result, role.name, check.figure, why),
      sliceCheck: { ...check, role: role.name },
    },
  };
}

/** The period read from Prometheus, in Unix seconds: `--start`/`--last` and `--end`, at most a week. */
function periodOf(values: FlagValues, nowMs: number): { readonly start: number; readonly end: number } {
  const end = values["end"] === undefined ? nowMs / 1000 : parseTime("end", values["end"] as string);
  const last = values["last"] as string | undefined;
  const startText = values["start"] as string | undefined;
  if ((last === undefined) === (startText === undefined))
    throw new UsageError("give the period with exactly one of --start and --last");
  const start = last !== undefined ? end - parseDuration("last", last) : parseTime("start", startText as string);
  if (!(end > start))
    throw new UsageError(
      `--start ${JSON.stringify(startText)} is not before --end (${new Date(end * 1000).toISOString()})`,
    );
  if ((end - start) / 60 > maxMinutes)
    throw new UsageError(`the period is ${((end - start) / 3600).toFixed(1)} h; at most ${maxMinutes / 60} h (a week)`);
  return { start, end };
}

async function fromPrometheus(
  values: FlagValues,
  io: CliIo,
  nowMs: number,
  reading: LatencyGuardReading,
  swingPeriodSeconds: number | undefined,
): Promise<Calibrated> {
  const raw: Partial<Record<PrometheusSettingName, string>> = {};
  for (const p of promFlags) {
    const v = values[p.flag.slice(2)];
    if (typeof v === "string") raw[p.name] = v;
  }
  if (raw.prometheusUrl === undefined) throw new UsageError("give --prometheus-url, --from-simulation or --trace");
  const settings = parsePrometheusSettings(raw);
  const scaler = scalerSourceOf(values);
  const { start, end } = periodOf(values, nowMs);
  const target = values["target"] as string | undefined;
  const kubeconfig = values["kubeconfig"] as string | undefined;
  const kubeTimeoutMs = controllerSetting(values, "kubeTimeoutMs");
  const objects = await loadObjects(
    {
      scaler,
      ...(target === undefined ? {} : { target }),
      ...(kubeconfig === undefined ? {} : { kubeconfig }),
      timeoutMs: kubeTimeoutMs,
      targetApiVersion: controllerSetting(values, "targetApiVersion"),
    },
    io,
  );
  const { target: md, spec, namespace } = scalerAndTarget(objects.scaler, objects.target);
  const read = (startUnixSeconds: number, endUnixSeconds: number) =>
    minutesFromPrometheus({
      client: prometheusClientOf(settings),
      config: prometheusSignalConfigOf(settings),
      namespace,
      deployment: spec.targetRef.name,
      // Encode roles serve no tokens of their own: they follow a ratio and have no per-replica target.
      roles: md.spec.roles
        .filter((r) => r.kind !== "Encode" && spec.roles.some((s) => s.name === r.name))
        .map((r) => ({ name: r.name, kind: r.kind })),
      samplingIntervalSeconds: spec.sampling.intervalSeconds,
      startUnixSeconds,
      endUnixSeconds,
    });
  const minutes = await read(start, end);
  const sourceOf = (from: number, to: number) =>
    `${namespace}/${spec.targetRef.name} in ${settings.prometheusUrl}, ${new Date(from * 1000).toISOString()} to ${new Date(to * 1000).toISOString()}`;
  const readDayBefore = async (from: number, to: number): Promise<DayBefore> => ({
    ...(await read(from, to)),
    source: sourceOf(from, to),
  });
  const dayBefore =
    values["hourly-floors-from"] === "prometheus" ? await readDayBefore(start - secondsPerDay, start) : undefined;
  const swingDayBefore =
    swingPeriodSeconds === undefined
      ? undefined
      : await readDayBefore(start - secondsPerDay, start - secondsPerDay + swingPeriodSeconds);
  return {
    result: calibrate(sourceOf(start, end), spec, minutes.roles, minutes.warnings, reading),
    document: objects.scaler,
    spec,
    ...(dayBefore === undefined ? {} : { dayBefore }),
    ...(swingDayBefore === undefined ? {} : { swingDayBefore }),
    ...("file" in scaler ? {} : { cluster: { ...scaler, kubeconfig, timeoutMs: kubeTimeoutMs } }),
  };
}

/** One of the controller's Kubernetes settings calibrate takes as a flag, checked as the controller checks it. */
function controllerSetting<K extends "kubeTimeoutMs" | "targetApiVersion">(
  values: FlagValues,
  name: K,
): z.output<(typeof controllerSettings)[K]["schema"]> {
  const setting = controllerSettings[name];
  const text = values[setting.flag.slice(2)] as string | undefined;
  const parsed = setting.schema.safeParse(text);
  if (!parsed.success)
    throw new UsageError(
      `${setting.flag}: ${JSON.stringify(text)} ${parsed.error.issues[0]?.message ?? "is not valid"}`,
    );
  return parsed.data as z.output<(typeof controllerSettings)[K]["schema"]>;
}

/** The scaler's file (`-f`), or its namespace and name in the cluster (`--scaler`): exactly one. */
function scalerSourceOf(
  values: FlagValues,
): { readonly file: string } | { readonly namespace: string; readonly name: string } {
  const file = values["filename"] as string | undefined;
  const scalerRef = values["scaler"] as string | undefined;
  if ((file === undefined) === (scalerRef === undefined))
    throw new UsageError("give the scaler with exactly one of -f <scaler.yaml> and --scaler <namespace>/<name>");
  if (file !== undefined) return { file };
  const ref = /^([a-z0-9]([-a-z0-9]*[a-z0-9])?)\/([a-z0-9]([-.a-z0-9]*[a-z0-9])?)$/.exec(scalerRef ?? "");
  if (!ref) throw new UsageError(`--scaler: ${JSON.stringify(scalerRef)} is not <namespace>/<name>`);
  return { namespace: ref[1] ?? "", name: ref[3] ?? "" };
}

/**
 * `--swing-period` under `--swing-from prometheus`: how long the day before's read for the swing lasts, from the
 * period's start less 24 hours. At most a day, so it ends before the period it stands for begins; undefined where
 * the swing is not read from Prometheus.
 */
function swingPeriodOf(values: FlagValues): number | undefined {
  const text = values["swing-period"] as string | undefined;
  if (values["swing-from"] !== "prometheus") {
    if (text !== undefined)
      throw new UsageError(`--swing-period ${JSON.stringify(text)}: only with --swing-from prometheus`);
    return undefined;
  }
  const durationSeconds = parseDuration("swing-period", text ?? "2h");
  if (durationSeconds > secondsPerDay)
    throw new UsageError(`--swing-period: ${JSON.stringify(text)} is longer than the day before (at most 24h)`);
  return durationSeconds;
}

/** The command line read and checked: the flags' values, the output format and the guard reading. */
interface Invocation {
  readonly values: FlagValues;
  readonly output: "table" | "json" | "scaler";
  readonly reading: LatencyGuardReading;
  /** `--swing-headroom`: the jump each role's figure must leave room for; undefined leaves the figures as measured. */
  readonly headroomSwing: number | undefined;
  /** `--swing-period` in seconds under `--swing-from prometheus`; undefined where the swing is not read from Prometheus. */
  readonly swingPeriodSeconds: number | undefined;
}

/** Phase 1: the flags, or the exit code after `--help` or a usage mistake (named flag and value). */
function parseInvocation(args: readonly string[], io: CliIo): Invocation | number {
  let values: FlagValues;
  try {
    values = readFlags(flags, args);
  } catch (error) {
    io.stderr(`${error instanceof Error ? error.message : String(error)}\n${calibrateUsage}`);
    return exitCodes.usage;
  }
  if (values["help"] === true) {
    io.stdout(calibrateUsage);
    return exitCodes.ok;
  }
  const output = (values["output"] as string | undefined) ?? "table";
  if (output !== "table" && output !== "json" && output !== "scaler") {
    io.stderr(`-o: ${JSON.stringify(output)} is not one of table, json, scaler\n`);
    return exitCodes.usage;
  }
  let reading: LatencyGuardReading;
  let swingPeriodSeconds: number | undefined;
  try {
    reading = latencyGuardReadingOf(values);
    swingPeriodSeconds = swingPeriodOf(values);
  } catch (error) {
    if (!(error instanceof UsageError)) throw error;
    io.stderr(`${error.message}\n`);
    return exitCodes.usage;
  }
  const headroomText = values["swing-headroom"] as string | undefined;
  const headroomSwing = headroomText === undefined ? undefined : Number(headroomText);
  if (headroomSwing !== undefined && !(headroomSwing >= minHeadroomSwing)) {
    io.stderr(`--swing-headroom: ${JSON.stringify(headroomText)} is not a swing of at least ${minHeadroomSwing}\n`);
    return exitCodes.usage;
  }
  if (values["apply"] === true && values["scaler"] === undefined) {
    io.stderr(
      "--apply writes back the scaler read from the cluster with --scaler NAMESPACE/NAME; with -f, apply the file -o scaler prints\n",
    );
    return exitCodes.usage;
  }
  if (headroomSwing !== undefined && values["keep-targets"] === true) {
    io.stderr(
      `--swing-headroom ${JSON.stringify(headroomText)}: lowers measured figures, and --keep-targets keeps the scaler's own; give one of them\n`,
    );
    return exitCodes.usage;
  }
  return { values, output, reading, headroomSwing, swingPeriodSeconds };
}

/** A phase's failure reported on stderr: a usage error with the usage, anything else as invalid input; the exit code. */
function failed(error: unknown, io: CliIo): number {
  io.stderr(
    `${error instanceof Error ? error.message : String(error)}\n${error instanceof UsageError ? calibrateUsage : ""}`,
  );
  return error instanceof UsageError ? exitCodes.usage : exitCodes.invalid;
}

/** Phase 2: the minutes read and banded, from simulated runs or Prometheus, or the exit code of a failure. */
async function readAndCalibrate(invocation: Invocation, io: CliIo, nowMs: number): Promise<Calibrated | number> {
  const { values, reading } = invocation;
  try {
    const sources = ["from-simulation", "prometheus-url", "trace"].filter((f) => values[f] !== undefined);
    if (sources.length > 1)
      throw new UsageError(
        `give one of --from-simulation, --prometheus-url and --trace, not ${sources.map((f) => `--${f}`).join(" and ")}`,
      );
    if (values["trace"] !== undefined) return fromLoadTest(values, io, reading);
    return values["from-simulation"] !== undefined
      ? fromSimulation(values, io, reading)
      : await fromPrometheus(values, io, nowMs, reading, invocation.swingPeriodSeconds);
  } catch (error) {
    return failed(error, io);
  }
}

/** Phase 3a: under `--keep-targets`, the scaler's own per-replica targets, which the steps read in place of the figures. */
function withTargetsKept(answer: Calibrated, keep: boolean): Calibrated {
  return keep ? { ...answer, result: withKeptTargets(answer.result, answer.spec) } : answer;
}

/** Phase 3b: each role's figure lowered to leave room for a jump of `--swing-headroom` (core/calibrate/swing-headroom.ts). */
function withSwingHeadroom(answer: Calibrated, swing: number | undefined): Calibrated {
  if (swing === undefined) return answer;
  let result = answer.result;
  for (const role of answer.result.roles) {
    if (role.answer.kind !== "calibrated") continue;
    const measured = role.answer.tokensPerSecondPerReplica;
    const figure = figureForSwing(measured, role.answer.capacityTokensPerSecondPerReplica, swing);
    if (figure < measured)
      result = withRoleFigure(
        result,
        role.role,
        figure,
        `lowered from ${measured} to the capacity ÷ ${swing} by --swing-headroom, so a jump of ${swing} × stays below where the targets broke`,
      );
  }
  return { ...answer, result };
}

/** The day before a step reads: a `simulate -o json` run of it (FILE), or the minutes phase 2 read from Prometheus. */
function dayBeforeOf(flag: string, from: string, fromPrometheus: DayBefore | undefined, io: CliIo): DayBefore {
  if (from !== "prometheus") {
    const run = minutesFromSimulations([{ path: from, text: io.readFile(from) }], flag);
    return { roles: run.roles, source: run.runs.join("; "), warnings: [] };
  }
  if (fromPrometheus === undefined)
    throw new UsageError(`${flag} prometheus: reads the day before from --prometheus-url; give a FILE here`);
  return fromPrometheus;
}

/**
 * Phase 4: each calibrated role's floors by the UTC hour, at the figure phase 3 left, from the day before: a
 * `simulate -o json` run of it, or the Prometheus minutes phase 2 read (calibrate/hourly-floors.ts).
 */
function withHourlyFloors(answer: Calibrated, from: string | undefined, io: CliIo, nowMs: number): Calibrated {
  if (from === undefined) return answer;
  const dayBefore = dayBeforeOf("--hourly-floors-from", from, answer.dayBefore, io);
  return {
    ...answer,
    result: {
      ...answer.result,
      // A minute the day before's read lost is no evidence: its hour's floor reads only the minutes that answered.
      warnings: [...answer.result.warnings, ...dayBefore.warnings.map((w) => `the day before, ${w}`)],
      hourlyFloors: floorsFromYesterday(answer.result, answer.spec, dayBefore.roles, dayBefore.source, nowMs),
    },
  };
}

/**
 * Phase 5: the docs' step for replacing a fleet, from the same hours of the day before (calibrate/fleet-step.ts): a
 * `simulate -o json` run of them, or the `--swing-period` phase 2 read from Prometheus; which roles the scaler holds
 * at their fleet.
 */
function withFleetSteps(answer: Calibrated, from: string | undefined, io: CliIo): Calibrated {
  if (from === undefined) return answer;
  const dayBefore = dayBeforeOf("--swing-from", from, answer.swingDayBefore, io);
  return {
    ...answer,
    result: {
      ...answer.result,
      // A minute the day before's read lost is no evidence: the swing's windows span only minutes that answered.
      warnings: [...answer.result.warnings, ...dayBefore.warnings.map((w) => `the day before (swing), ${w}`)],
      fleetSteps: fleetStepsFromYesterday(answer.result, answer.spec, dayBefore.roles, dayBefore.source),
    },
  };
}

/**
 * Phase 6: the report page, the scaler file and the chosen output; a role without a figure fails `-o scaler`
 * unless a step for replacing a fleet (`--swing-from`, `--hourly-floors-from`) holds it at its fleet.
 */
function writeOutputs(invocation: Invocation, answer: Calibrated, io: CliIo): number {
  const { values, output } = invocation;
  const { result, document, spec } = answer;
  const report = values["report"] as string | undefined;
  if (report !== undefined) writeFileSync(report, renderCalibrationReport(result));
  const writeScaler = values["write-scaler"] as string | undefined;
  let snippet: string | undefined;
  if (output === "scaler" || writeScaler !== undefined) {
    try {
      snippet = scalerSnippet(result, document, spec);
    } catch (error) {
      if (output !== "scaler") io.stdout(table(result));
      io.stderr(`${error instanceof Error ? error.message : String(error)}\n`);
      return exitCodes.invalid;
    }
    if (writeScaler !== undefined) writeFileSync(writeScaler, snippet);
  }
  if (output === "json") {
    const printable = JSON.parse(JSON.stringify(result, (_k, v: unknown) => (v === Infinity ? "+Inf" : v))) as unknown;
    io.stdout(`${JSON.stringify(printable, null, 2)}\n`);
  } else if (output === "scaler") io.stdout(snippet ?? "");
  else {
    const paste = algorithmSnippet(result, spec);
    io.stdout(
      paste === undefined
        ? table(result)
        : `${table(result)}\nunder the scaler's spec: (the whole file: -o scaler or --write-scaler FILE)\n${paste.replace(/^/gm, "  ").trimEnd()}\n`,
    );
  }
  return exitCodes.ok;
}

export async function runCalibrate(
  args: readonly string[],
  io: CliIo,
  nowMs: () => number = Date.now,
): Promise<number> {
  const invocation = parseInvocation(args, io);
  if (typeof invocation === "number") return invocation;
  const startedMs = nowMs();
  const answer = await readAndCalibrate(invocation, io, startedMs);
  if (typeof answer === "number") return answer;
  let stepped: Calibrated;
  try {
    const floored = withHourlyFloors(
      withSwingHeadroom(withTargetsKept(answer, invocation.values["keep-targets"] === true), invocation.headroomSwing),
      invocation.values["hourly-floors-from"] as string | undefined,
      io,
      startedMs,
    );
    stepped = withFleetSteps(floored, invocation.values["swing-from"] as string | undefined, io);
  } catch (error) {
    return failed(error, io);
  }
  const written = writeOutputs(invocation, stepped, io);
  if (written !== exitCodes.ok || invocation.values["apply"] !== true) return written;
  return applyToCluster(stepped, io);
}

/** Phase 7, `--apply`: the scaler's spec, as `-o scaler` writes it, written back where `--scaler` read it (calibrate/apply.ts). */
async function applyToCluster(answer: Calibrated, io: CliIo): Promise<number> {
  const cluster = answer.cluster;
  if (cluster === undefined) {
    io.stderr("--apply: the scaler was not read from the cluster (give --scaler NAMESPACE/NAME)\n");
    return exitCodes.usage;
  }
  try {
    const { document } = calibratedScaler(answer.result, answer.document, answer.spec);
    const kube = new KubeResources(
      clusterConfigFrom({ kubeconfig: cluster.kubeconfig ?? "" }, process.env).kubeConfig,
      {
        timeoutMs: cluster.timeoutMs,
        fieldManager: "mds-scaler-calibrate",
      },
    );
    const done = await applyCalibratedSpec(kube, {
      namespace: cluster.namespace,
      name: cluster.name,
      read: answer.document,
      spec: document.spec,
      annotations: floorsAnnotationsOf(answer.result) ?? {},
    });
    io.stderr(
      `applied: ModelDeploymentScaler ${cluster.namespace}/${cluster.name}, its spec written against resourceVersion ${done.resourceVersion}${done.attempts > 1 ? ` (attempt ${done.attempts}: its status moved on meanwhile)` : ""}\n`,
    );
    return exitCodes.ok;
  } catch (error) {
    io.stderr(`${error instanceof Error ? error.message : String(error)}\n`);
    return exitCodes.invalid;
  }
}

export const calibrateCommand: Command = {
  summary:
    "measure per role the token throughput per ready replica at which the latency targets held; print the figures",
  usage: calibrateUsage,
  run: (args, io) => runCalibrate(args, io),
};
