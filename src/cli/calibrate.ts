/**
 * `mds-scaler calibrate`: the token throughput per ready replica at which a
 * scaler's latency targets held, per role, from a period of its engine series
 * in Prometheus or from `simulate -o json` runs (docs/calibrate.md). Prints the
 * evidence by load band and the figure, or a scaler with the figures written in.
 * The command in phases: the flags (calibrate/flags.ts), the minutes
 * (calibrate/sources.ts), the steps on the figures, the outputs, `--apply`.
 */
import { writeFileSync } from "node:fs";
import type { LatencyGuardReading } from "../core/algorithms/ttft-reading.js";
import { renderCalibrationReport } from "./calibrate/report.js";
import {
  algorithmSnippet,
  scalerSnippet,
  table,
  calibratedScaler,
  floorsAnnotationsOf,
  withKeptTargets,
  withRoleFigure,
} from "./calibrate/result.js";
import { minutesFromSimulations } from "./calibrate/simulation-minutes.js";
import { floorsFromYesterday } from "./calibrate/hourly-floors.js";
import { fleetStepsFromYesterday } from "./calibrate/fleet-step.js";
import { applyCalibratedSpec } from "./calibrate/apply.js";
import { calibrateUsage, flags, parseDuration } from "./calibrate/flags.js";
import { calibratedFrom, type Calibrated, type DayBefore } from "./calibrate/sources.js";
import { KubeResources } from "../adapters/kubernetes/resources.js";
import { clusterConfigFrom } from "../app/cluster.js";
import { secondsPerDay } from "../core/calibrate/hourly-floors.js";
import { figureForSwing, minHeadroomSwing } from "../core/calibrate/swing-headroom.js";
import { readFlags, UsageError, type FlagValues } from "./flags.js";
import { latencyGuardReadingOf } from "./pass-flags.js";
import { exitCodes, type CliIo, type Command } from "./io.js";

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

/** Phase 2: the minutes read and banded (calibrate/sources.ts), or the exit code of a failure. */
async function readAndCalibrate(invocation: Invocation, io: CliIo, nowMs: number): Promise<Calibrated | number> {
  try {
    return await calibratedFrom({ ...invocation, nowMs }, io);
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
      // Dated by the end of the day read, so floors of an old period read as old; a simulate run's day has no date.
      hourlyFloors: floorsFromYesterday(
        answer.result,
        answer.spec,
        dayBefore.roles,
        dayBefore.source,
        dayBefore.endSeconds === undefined ? nowMs : dayBefore.endSeconds * 1000,
      ),
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
