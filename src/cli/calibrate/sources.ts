/**
 * Phase 2 of `mds-scaler calibrate`: where the minutes come from (`simulate -o json` runs, a load test in the
 * simulator, or a period of the scaler's engine series in Prometheus, with the scaler and its target from files or
 * the cluster), banded into the answer with the scaler document its figures are written into.
 */
import { parse as parseYaml } from "yaml";
import type { z } from "zod";
import {
  parsePrometheusSettings,
  prometheusClientOf,
  prometheusSignalConfigOf,
  type PrometheusSettingName,
} from "../../app/config.js";
import { settings as controllerSettings } from "../../app/settings.js";
import { formatProblem } from "../../core/api/problem.js";
import type { ScalerSpec } from "../../core/api/scaler.js";
import { validateScaler } from "../../core/api/validation.js";
import type { LatencyGuardReading } from "../../core/algorithms/ttft-reading.js";
import { secondsPerDay } from "../../core/calibrate/hourly-floors.js";
import type { RoleMinutes } from "../../core/calibrate/minute.js";
import { readFleet } from "../fleet-file.js";
import { positiveFlag, UsageError, type FlagValues } from "../flags.js";
import type { CliIo } from "../io.js";
import { loadObjects, scalerAndTarget } from "../observe.js";
import { parseYamlDocuments } from "../yaml-documents.js";
import { maxMinutes, parseDuration, parseTime, promFlags } from "./flags.js";
import { minutesFromLoadTest, type LoadTestMinutes } from "./load-test.js";
import { minutesFromPrometheus } from "./prometheus-minutes.js";
import { calibrate, scalerSnippet, withRoleFigure, type CalibrationResult } from "./result.js";
import { minutesFromSimulations } from "./simulation-minutes.js";
import { checkOnSlice } from "./slice-check.js";

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
export interface Calibrated {
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

export interface DayBefore {
  readonly roles: readonly RoleMinutes[];
  readonly source: string;
  /** The end of the hours read, in Unix seconds; absent for a `simulate -o json` run, whose day has no date. */
  readonly endSeconds?: number;
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

async function fromPrometheus(request: SourceRequest, io: CliIo): Promise<Calibrated> {
  const { values, nowMs, reading, swingPeriodSeconds } = request;
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
    endSeconds: to,
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

/** What the sources read from: the flags, the time now, the guard reading, and the swing's hours of the day before. */
export interface SourceRequest {
  readonly values: FlagValues;
  readonly nowMs: number;
  readonly reading: LatencyGuardReading;
  /** `--swing-period` in seconds under `--swing-from prometheus`: those hours of the day before are read too. */
  readonly swingPeriodSeconds: number | undefined;
}

/** The minutes read and banded: from `--trace`, `--from-simulation` or `--prometheus-url`, exactly one. */
export async function calibratedFrom(request: SourceRequest, io: CliIo): Promise<Calibrated> {
  const { values, reading } = request;
  const sources = ["from-simulation", "prometheus-url", "trace"].filter((f) => values[f] !== undefined);
  if (sources.length > 1)
    throw new UsageError(
      `give one of --from-simulation, --prometheus-url and --trace, not ${sources.map((f) => `--${f}`).join(" and ")}`,
    );
  if (values["trace"] !== undefined) return fromLoadTest(values, io, reading);
  return values["from-simulation"] !== undefined
    ? fromSimulation(values, io, reading)
    : await fromPrometheus(request, io);
}
