/**
 * Issue 27's user, scripted: replacing a fixed fleet with mds-scaler calibrated on the first 15
 * minutes of the trace, through the same commands the docs give a user (docs/calibrate.md, "A
 * user's steps"), on scales of the user's choosing.
 *
 *   npm run bench:replace-fleet -- --scales azure-conv:2,servegen-m-large-day:5 [--scaler FILE]
 *
 * Per scale: `calibrate --trace T --copies C -f SCALER -o scaler` (the load test on the first 15
 * minutes); the replaced fleet `n`, the smallest static fleet keeping 99 % of requests on the rest of
 * the trace (found by bisection, in hindsight: the fleet the issue's user replaces); then the rest
 * replayed from `n` ready replicas three ways: the fleet, the calibrated scaler as written, and the
 * calibrated scaler with `maxReplicas: n` (docs/quality.md, "Amendments for replacing a fixed fleet
 * without exceeding it"), its figure as the load test gave it (`--slice-check off`) and as calibrate's
 * slice check leaves it with `maxReplicas: n` written before calibrating (the docs' steps; "Amendments
 * for calibrate checking its figure on the training slice"); and the oracle on the same replay
 * (`simulate --oracle`, `--oracles off` leaves it out), at 99 % and at the fleet's own attainment: about
 * the most any scaler could save there, and how much of it is more than the fleet's spare attainment.
 * `--checked off` leaves the slice check's column out; `--panic-threshold T` adds the capped scaler with
 * that `panicThreshold` beside the file's (docs/quality.md, fifteenth run). `--filled on` adds the figure of a
 * load test that also served the fleets it stepped over (`calibrate --load-test-fill on`), as written and capped
 * (docs/quality.md, sixteenth run). `--scale-down-window S` adds the capped scaler with a scale-down
 * stabilization window of S seconds beside the file's (docs/quality.md, seventeenth run). `--predictive on` adds
 * the same file as Predictive (its TokenThroughput block as Predictive's fallback), calibrated by the same command,
 * which writes Predictive's forecast capacity and demand noise too, as written and capped (docs/quality.md,
 * eighteenth run). Every row also gives the demand swing (`demandSwing`, docs/calibrate.md "The demand swing") of
 * the training slice, as calibrate reads it there, and of the replay, read from the replaced fleet's minutes. A scale
 * written `TRACE:COPIES:YESTERDAY` also names the same hours of the day before: the docs' step reads its swing on
 * the fleet (`simulate -o json`, then `calibrate --from-simulation`) and keeps the fleet above
 * `keepFleetAboveSwing` (docs/quality.md, nineteenth run), replacing it otherwise with the capped scaler at a target a jump of
 * that limit fits under (calibrate's `--swing-headroom 1.65`, the docs' steps since the twenty-fourth run; until
 * 2026-12-05 this column replaced it at calibrate's figure, which the twenty-fourth run's own column gave).
 * `--swing-target on` adds, where that swing is above the limit, the capped scaler at a target a jump of that swing
 * fits under (calibrate's capacity ÷ the swing, never above its figure) instead of the fleet (twenty-first run);
 * `--swing-target always` at every swing, the fleet always replaced (twenty-second run). `--swing-target limit` keeps
 * the docs' step (the fleet kept above the limit) and, where it replaces the fleet, sizes the capped scaler for a jump
 * of the limit itself, the largest swing the step lets through (twenty-fourth run): the docs' steps since then,
 * calibrate's `--swing-headroom 1.65`. `--swing-target headroom` sizes it for a jump of the limit at every swing, the
 * fleet always replaced (twenty-sixth run, whole days); where yesterday's swing is at most the limit that column is
 * the docs' steps.
 * `--fleet-at-least N` starts the fleet search at N, every smaller fleet taken as missing 99 % unreplayed (whole days).
 * `--headroom H` sizes the `headroom` mode's scaler for a jump of H instead of the limit (twenty-ninth run).
 * `--windows STABLE/PANIC` adds the `--swing-target` column's scaler (the capped one without it) with TokenThroughput's
 * `stableWindowSeconds` and `panicWindowSeconds` written in, the fleet always replaced (twenty-eighth run).
 * `--queue-time-target MS` adds the capped scaler with `queueTimeTargetMilliseconds: MS` written in beside the file's,
 * `--queue-time-target none` with the field removed (docs/quality.md, thirtieth run).
 * The table goes to stdout; each command to stderr as it runs.
 */
import { spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { parseDocument } from "yaml";
import { demandSwing, keepFleetAboveSwing, stepReplacesFleet } from "../src/core/calibrate/demand-swing.js";
import { figureForSwing } from "../src/core/calibrate/swing-headroom.js";
import type { CalibrationMinute } from "../src/core/calibrate/minute.js";
import { doubling, smallestHolding } from "../src/sim/quality/smallest-fleet.js";
import { averagingWindowsOf } from "./flags.js";

const root = join(import.meta.dirname, "..");
const { values } = parseArgs({
  options: {
    scales: { type: "string", default: "azure-conv:3,servegen-m-large-day:3,mooncake-conversation:2" },
    scaler: { type: "string", default: join(root, "docs", "examples", "simulate-scaler.yaml") },
    "user-max-replicas": { type: "string", default: "64" },
    oracles: { type: "string", default: "on" },
    checked: { type: "string", default: "on" },
    "panic-threshold": { type: "string" },
    filled: { type: "string", default: "off" },
    "scale-down-window": { type: "string" },
    predictive: { type: "string", default: "off" },
    "swing-target": { type: "string", default: "off" },
    "fleet-at-least": { type: "string", default: "1" },
    windows: { type: "string" },
    headroom: { type: "string" },
    "queue-time-target": { type: "string" },
  },
});
/** What "reaching the SLO" means for the replaced fleet, as in every table of docs/quality.md. */
const requiredAttainment = 0.99;
const trainingSeconds = 900;

const scales = values.scales.split(",").map((text) => {
  const [trace, copiesText = "1", yesterday, ...rest] = text.split(":");
  const copies = Number(copiesText);
  if (!trace || !Number.isInteger(copies) || copies < 1 || yesterday === "" || rest.length > 0)
    throw new Error(`--scales: ${JSON.stringify(text)} is not TRACE:COPIES[:YESTERDAY] with COPIES a whole number ≥ 1`);
  return { trace, copies, yesterday };
});
/** Whether any scale names the day before, so the table gives the docs' step that reads its swing. */
const withYesterday = scales.some((s) => s.yesterday !== undefined);
/** An on/off flag's value as a boolean; anything else stops the bench, naming the flag and the value. */
function onOff(flag: "oracles" | "checked" | "filled" | "predictive"): boolean {
  const value = values[flag];
  if (value !== "on" && value !== "off") throw new Error(`--${flag}: ${JSON.stringify(value)} is not one of on, off`);
  return value === "on";
}
const withOracles = onOff("oracles");
const withChecked = onOff("checked");
/** A second panic threshold for the capped scaler, side by side with the file's (docs/quality.md, fifteenth run). */
const panicThreshold = values["panic-threshold"];
if (panicThreshold !== undefined && !(Number(panicThreshold) > 0))
  throw new Error(`--panic-threshold: ${JSON.stringify(panicThreshold)} is not a number above 0`);
const withFilled = onOff("filled");
const withPredictive = onOff("predictive");
/**
 * The capped scaler at a target a jump of yesterday's swing fits under: where that swing is above the step's limit
 * (`on`, twenty-first run), or at every swing (`always`, twenty-second run); or, where the step replaces the fleet,
 * a jump of the limit (`limit`, twenty-fourth run); or a jump of the limit at every swing (`headroom`, twenty-sixth).
 */
const swingTargetModes = ["off", "on", "always", "limit", "headroom"] as const;
type SwingTargetMode = (typeof swingTargetModes)[number];
const swingTargetText = values["swing-target"];
if (!(swingTargetModes as readonly string[]).includes(swingTargetText))
  throw new Error(`--swing-target: ${JSON.stringify(swingTargetText)} is not one of ${swingTargetModes.join(", ")}`);
const swingTargetMode = swingTargetText as SwingTargetMode;
const withSwingTarget = swingTargetMode !== "off";
if (withSwingTarget && !withYesterday)
  throw new Error(
    `--swing-target ${swingTargetMode}: no scale names the day before (TRACE:COPIES:YESTERDAY), so there is no swing to size for`,
  );
/** A second scale-down window for the capped scaler, side by side with the file's (docs/quality.md, seventeenth run). */
const scaleDownWindow = values["scale-down-window"];
if (scaleDownWindow !== undefined && !(Number.isInteger(Number(scaleDownWindow)) && Number(scaleDownWindow) >= 0))
  throw new Error(`--scale-down-window: ${JSON.stringify(scaleDownWindow)} is not a whole number of seconds ≥ 0`);
/**
 * The fleet search starts here and takes every smaller fleet as missing 99 % without replaying it. Over a whole day a
 * fleet far too small queues most of the day's requests, so its replay is the slowest of the scale and tells nothing
 * the caller does not know (docs/quality.md, twenty-sixth run).
 */
const fleetAtLeast = Number(values["fleet-at-least"]);
if (!Number.isInteger(fleetAtLeast) || fleetAtLeast < 1)
  throw new Error(`--fleet-at-least: ${JSON.stringify(values["fleet-at-least"])} is not a whole number ≥ 1`);
/** TokenThroughput's averaging windows (not the scale-down window) for the `--windows` column, `STABLE/PANIC` in seconds (docs/quality.md, twenty-eighth run). */
const averagingWindows = values.windows === undefined ? undefined : averagingWindowsOf(values.windows);
const userMaxReplicas = Number(values["user-max-replicas"]);
if (!Number.isInteger(userMaxReplicas) || userMaxReplicas < 1)
  throw new Error(`--user-max-replicas: ${JSON.stringify(values["user-max-replicas"])} is not a whole number ≥ 1`);
/** The jump the `headroom` mode sizes for: the limit unless `--headroom` names another (docs/quality.md, twenty-ninth run). */
const headroomSwing = ((text: string | undefined): number => {
  if (text === undefined) return keepFleetAboveSwing;
  const swing = Number(text);
  if (!(swing >= 1)) throw new Error(`--headroom: ${JSON.stringify(text)} is not a number ≥ 1`);
  if (swingTargetMode !== "headroom") throw new Error(`--headroom ${text}: only with --swing-target headroom`);
  return swing;
})(values.headroom);

/** A queue-time target for the capped scaler, side by side with the file's (docs/quality.md, thirtieth run). */
const queueTimeTarget = values["queue-time-target"];
if (queueTimeTarget !== undefined && queueTimeTarget !== "none" && !(Number(queueTimeTarget) > 0))
  throw new Error(`--queue-time-target: ${JSON.stringify(queueTimeTarget)} is not milliseconds above 0 or none`);

const work = mkdtempSync(join(tmpdir(), "mds-replace-fleet-"));

/** Why calibrate wrote no scaler (`-o scaler` exits 1 with the reason): the user's script stops there and keeps the fleet. */
class NoFigure extends Error {}

/**
 * Runs the CLI as a user would (`npm run mds-scaler -- ARGS`), returning stdout; a failure stops the bench,
 * but for calibrate's exit 1 (no figure), which is a `NoFigure` naming the reason.
 */
function cli(args: readonly string[]): string {
  process.stderr.write(`mds-scaler ${args.join(" ")}\n`);
  const result = spawnSync(join(root, "node_modules", ".bin", "tsx"), [join(root, "src", "cli", "main.ts"), ...args], {
    cwd: root,
    encoding: "utf8",
    maxBuffer: 512 * 1024 * 1024,
  });
  if (result.status === 1 && args[0] === "calibrate" && /no calibrated figure/.test(result.stderr))
    throw new NoFigure(result.stderr.trim());
  if (result.status !== 0)
    throw new Error(`mds-scaler ${args.join(" ")} exited ${result.status}: ${result.stderr.slice(-2000)}`);
  return result.stdout;
}

/** The scaler file with the Server role's bounds set (the first role; the example has one). */
function withBounds(yamlText: string, bounds: { minReplicas?: number; maxReplicas: number }): string {
  const doc = parseDocument(yamlText);
  if (bounds.minReplicas !== undefined) doc.setIn(["spec", "roles", 0, "minReplicas"], bounds.minReplicas);
  doc.setIn(["spec", "roles", 0, "maxReplicas"], bounds.maxReplicas);
  return doc.toString();
}

/**
 * The scaler file with one of TokenThroughput's fields set, or removed when `value` is undefined (Predictive's
 * fallback block where the file is Predictive).
 */
function withTokenThroughputField(yamlText: string, field: string, value: string | undefined): string {
  const doc = parseDocument(yamlText);
  const block = doc.hasIn(["spec", "algorithm", "predictive"])
    ? ["spec", "algorithm", "predictive", "tokenThroughput"]
    : ["spec", "algorithm", "tokenThroughput"];
  if (value === undefined) doc.deleteIn([...block, field]);
  else doc.setIn([...block, field], value);
  return doc.toString();
}

/** The scaler file with its scale-down stabilization window set, in seconds. */
function withScaleDownWindow(yamlText: string, seconds: string): string {
  const doc = parseDocument(yamlText);
  doc.setIn(["spec", "behavior", "scaleDown", "stabilizationWindowSeconds"], Number(seconds));
  return doc.toString();
}

/** The scaler file with TokenThroughput's stable and panic windows set, in seconds. */
function withWindows(yamlText: string, w: { readonly stable: number; readonly panic: number }): string {
  const doc = parseDocument(yamlText);
  doc.setIn(["spec", "algorithm", "tokenThroughput", "stableWindowSeconds"], w.stable);
  doc.setIn(["spec", "algorithm", "tokenThroughput", "panicWindowSeconds"], w.panic);
  return doc.toString();
}

/** The scaler file with the Server role's TokenThroughput target set (tok/s per ready replica). */
function withServerTarget(yamlText: string, tokensPerSecond: number): string {
  const doc = parseDocument(yamlText);
  doc.setIn(["spec", "algorithm", "tokenThroughput", "serverTargetTokensPerSecond"], String(tokensPerSecond));
  return doc.toString();
}

/**
 * The swing `--swing-target` sizes the capped scaler for, given whether the docs' step replaces the fleet and the
 * swing yesterday showed; undefined where the mode leaves the step's own run (or nothing) in its columns.
 */
function swingToSizeFor(replaces: boolean, swingYesterday: number | undefined): number | undefined {
  if (swingYesterday === undefined) return undefined;
  switch (swingTargetMode) {
    case "off":
      return undefined;
    case "on":
      return replaces ? undefined : swingYesterday;
    case "always":
      return swingYesterday;
    case "limit":
      return replaces ? keepFleetAboveSwing : undefined;
    case "headroom":
      return headroomSwing;
  }
}

/** The columns `--swing-target` adds, named for its mode (none are printed under `off`). */
function swingTargetHeader(): string[] {
  const limit = `capacity ÷ ${keepFleetAboveSwing}`;
  const [target, run] = ((): [string, string] => {
    switch (swingTargetMode) {
      case "off":
      case "on":
      case "always":
        return [
          `target for yesterday's swing (capacity ÷ swing, ${swingTargetMode === "always" ? "at every swing" : "where above the limit"})`,
          "the steps with it (replace the fleet everywhere)",
        ];
      case "limit":
        return [
          `target for a jump of the limit (${limit}, where the step replaces the fleet)`,
          `the steps with it (keep the fleet above ${keepFleetAboveSwing})`,
        ];
      case "headroom":
        return [
          headroomSwing === keepFleetAboveSwing
            ? `target for a jump of the limit (${limit}, at every swing)`
            : `target for a jump of ${headroomSwing} (capacity ÷ ${headroomSwing}, at every swing)`,
          "the fleet always replaced with it",
        ];
    }
  })();
  return [target, `${run}: SLO %, GPU-h`, "× fleet"];
}

/**
 * The scaler file as Predictive: its TokenThroughput block becomes Predictive's fallback block, everything else
 * as it is, so calibrate writes the same per-replica figure and Predictive's capacity and noise beside it.
 */
function asPredictive(yamlText: string, path: string): string {
  const doc = parseDocument(yamlText);
  const tokenThroughput: unknown = doc.getIn(["spec", "algorithm", "tokenThroughput"]);
  if (tokenThroughput === undefined)
    throw new Error(`${path}: spec.algorithm.tokenThroughput is missing, so there is no block to make Predictive's`);
  doc.deleteIn(["spec", "algorithm", "tokenThroughput"]);
  doc.setIn(["spec", "algorithm", "predictive"], doc.createNode({ tokenThroughput }));
  return doc.toString();
}

interface Replay {
  readonly attainment: number;
  readonly gpuHours: number;
  readonly notes: string;
  /** The run's demand swing over its Server role's minutes, as calibrate would read it; undefined when too few. */
  readonly swing: number | undefined;
}

/** `simulate` on the replay (the trace from the end of the training slice on), with `decider`'s flags. */
function simulateReplay(trace: string, copies: number, decider: readonly string[]): Replay {
  const from = ["--from", String(trainingSeconds)];
  // The bench reads the summary and the minutes; every request's list is most of a long replay's output.
  const out = cli([
    "simulate",
    "--trace",
    trace,
    "--copies",
    String(copies),
    ...from,
    ...decider,
    "-o",
    "json",
    "--json-requests",
    "off",
  ]);
  const run = JSON.parse(out) as {
    attainment: { both: number };
    gpuHours: number;
    notes?: string;
    minutes?: { minutes: CalibrationMinute[] }[];
  };
  return {
    attainment: run.attainment.both,
    gpuHours: run.gpuHours,
    notes: run.notes ?? "",
    swing: demandSwing(run.minutes?.[0]?.minutes ?? [])?.largestRatio,
  };
}

function replay(trace: string, copies: number, scalerText: string, initialReplicas: number, name: string): Replay {
  const scalerPath = join(work, `${name}.yaml`);
  const fleetPath = join(work, `fleet-${initialReplicas}.yaml`);
  writeFileSync(scalerPath, scalerText);
  writeFileSync(fleetPath, `initialReplicas: ${initialReplicas}\n`);
  return simulateReplay(trace, copies, ["--scaler", scalerPath, "--fleet", fleetPath]);
}

/**
 * The oracle on the replay (`simulate --oracle`, the default preset as the fleet files give it): what a
 * scaler that knew every arrival and cold start would spend there, so about the most replacing the
 * fleet could save.
 */
const oracleReplay = (trace: string, copies: number, attainmentPercent?: number): Replay =>
  simulateReplay(trace, copies, [
    "--oracle",
    ...(attainmentPercent === undefined ? [] : ["--oracle-attainment", String(attainmentPercent)]),
  ]);

/** A run's share of requests within the SLO as a percentage, rounded down to a thousandth of a point. */
const percentFloor = (r: Replay): number => Math.floor(r.attainment * 1e5) / 1e3;

/** The smallest static fleet keeping `requiredAttainment` on the replay, with its run. */
function smallestStatic(trace: string, copies: number, userText: string): { n: number; run: Replay } {
  const runs = new Map<number, Replay>();
  const holds = (n: number): boolean => {
    if (n < fleetAtLeast) return false;
    const run = replay(trace, copies, withBounds(userText, { minReplicas: n, maxReplicas: n }), n, `static-${n}`);
    runs.set(n, run);
    return run.attainment >= requiredAttainment;
  };
  const n = smallestHolding(holds, { from: fleetAtLeast, limit: 1024, grow: doubling });
  const run = n === undefined ? undefined : runs.get(n);
  if (n === undefined || run === undefined)
    throw new Error(`${trace} × ${copies}: no static fleet up to 1024 replicas keeps 99 %`);
  if (n === fleetAtLeast && fleetAtLeast > 1)
    process.stderr.write(`${trace} × ${copies}: --fleet-at-least ${fleetAtLeast} holds, so a smaller fleet may too\n`);
  return { n, run };
}

/**
 * A second calibration's scaler (the filled load test's, or Predictive's) replayed as written and capped at `n`;
 * undefined when calibrate gave no figure. `name` names its files.
 */
function calibratedReplays(
  name: string,
  calibrateIt: () => string,
  trace: string,
  copies: number,
  n: number,
): { scaler: string; asWritten: Replay; capped: Replay } | undefined {
  let scaler: string;
  try {
    scaler = calibrateIt();
  } catch (error) {
    if (error instanceof NoFigure) return undefined;
    throw error;
  }
  return {
    scaler,
    asWritten: replay(trace, copies, scaler, n, name),
    capped: replay(trace, copies, withBounds(scaler, { maxReplicas: n }), n, `${name}-capped`),
  };
}

/** The Server role in `calibrate -o json`'s answer: its demand swing, and the capacity where its targets broke. */
interface CalibrateReading {
  /** Undefined when calibrate had too few minutes. */
  readonly swing: number | undefined;
  /** Undefined when calibrate gave no figure. */
  readonly capacity: number | undefined;
}
function readingOf(calibrateJson: string): CalibrateReading {
  const result = JSON.parse(calibrateJson) as {
    roles: { demandSwing?: { largestRatio: number }; answer: { capacityTokensPerSecondPerReplica?: number } }[];
  };
  const role = result.roles[0];
  return { swing: role?.demandSwing?.largestRatio, capacity: role?.answer.capacityTokensPerSecondPerReplica };
}
const swingOf = (calibrateJson: string): number | undefined => readingOf(calibrateJson).swing;

/** The training slice's demand swing and capacity as calibrate reads them on its load test. */
const sliceReading = (trace: string, copies: number, scalerPath: string): CalibrateReading =>
  readingOf(cli(["calibrate", "--trace", trace, "--copies", String(copies), "-f", scalerPath, "-o", "json"]));
/**
 * The docs' step before replacing the fleet: the same hours of the day before (`yesterday`, whole), served by the
 * fleet `n` from `n` ready replicas (`simulate -o json`), and the swing `calibrate --from-simulation` reads there.
 */
function yesterdaySwing(
  yesterday: string,
  copies: number,
  n: number,
  user: { readonly text: string; readonly path: string },
): number | undefined {
  const scalerPath = join(work, "yesterday-static.yaml");
  const fleetPath = join(work, "yesterday-fleet.yaml");
  const runPath = join(work, "yesterday.json");
  writeFileSync(scalerPath, withBounds(user.text, { minReplicas: n, maxReplicas: n }));
  writeFileSync(fleetPath, `initialReplicas: ${n}\n`);
  const run = cli([
    "simulate",
    "--trace",
    yesterday,
    "--copies",
    String(copies),
    "--scaler",
    scalerPath,
    "--fleet",
    fleetPath,
    "-o",
    "json",
    // calibrate --from-simulation reads the minutes, not the requests.
    "--json-requests",
    "off",
  ]);
  writeFileSync(runPath, run);
  return swingOf(cli(["calibrate", "--from-simulation", runPath, "-f", user.path, "-o", "json"]));
}
const swingText = (swing: number | undefined): string => (swing === undefined ? "not measured" : `${swing} ×`);
const cell = (r: Replay | undefined): string =>
  r === undefined ? "not run" : `${(100 * r.attainment).toFixed(2)} %, ${r.gpuHours.toFixed(2)}`;
const figureOf = (scaler: string): string => /serverTargetTokensPerSecond: "([^"]+)"/.exec(scaler)?.[1] ?? "?";
/** The slice check's verdict as the scaler file's header gives it. */
const checkOutcome = (scaler: string): string =>
  /lowered, and still short, from/.test(scaler) ? "still short" : /lowered from/.test(scaler) ? "lowered" : "held";
/** Predictive's figure, capacity and demand noise as calibrate wrote them. */
const predictiveFiguresOf = (scaler: string): string =>
  [
    figureOf(scaler),
    /serverTokenCapacityPerReplica: "([^"]+)"/.exec(scaler)?.[1] ?? "?",
    /measurementNoise: "([^"]+)"/.exec(scaler)?.[1] ?? "?",
  ].join(", ");
/** A markdown table row of these cells. */
const tableRow = (cells: readonly string[]): string => `| ${cells.join(" | ")} |`;
/**
 * Which optional column groups the table has: one per flag that adds a comparison (`--panic-threshold`,
 * `--scale-down-window`, `--predictive on`, `--filled on`), and the docs' step when a scale names the day before.
 */
const optionalColumns = {
  yesterday: withYesterday,
  swingTarget: withSwingTarget,
  panic: panicThreshold !== undefined,
  queueTime: queueTimeTarget !== undefined,
  scaleDownWindow: scaleDownWindow !== undefined,
  averagingWindows: averagingWindows !== undefined,
  predictive: withPredictive,
  filled: withFilled,
} as const;
/** A group's cells (header or row), or none when the table leaves that group out. */
const columns = (group: keyof typeof optionalColumns, cells: readonly string[]): string[] =>
  optionalColumns[group] ? [...cells] : [];
const header = [
  "trace, scale",
  "calibrate's figure",
  "slice's swing",
  "replay's swing (the fleet's minutes)",
  "replaced fleet n: SLO %, GPU-h",
  "calibrated: SLO %, GPU-h",
  "calibrated, maxReplicas n: SLO %, GPU-h",
  "capped × fleet",
  ...columns("yesterday", [
    "yesterday's swing (the fleet's minutes)",
    `the docs' steps (keep the fleet above ${keepFleetAboveSwing}, else the capped scaler for a jump of ${keepFleetAboveSwing}): SLO %, GPU-h`,
    "× fleet",
  ]),
  ...columns("swingTarget", swingTargetHeader()),
  ...columns("panic", [`calibrated, maxReplicas n, panicThreshold ${panicThreshold}: SLO %, GPU-h`, "× fleet"]),
  ...columns("queueTime", [
    `calibrated, maxReplicas n, ${queueTimeTarget === "none" ? "no queue-time target" : `queue-time target ${queueTimeTarget} ms`}: SLO %, GPU-h`,
    "× fleet",
  ]),
  ...columns("scaleDownWindow", [
    `calibrated, maxReplicas n, scale-down window ${scaleDownWindow} s: SLO %, GPU-h`,
    "× fleet",
  ]),
  ...columns("averagingWindows", [
    `${withSwingTarget ? "the swing-sized" : "the capped"} scaler, windows ${averagingWindows?.stable} s and ${averagingWindows?.panic} s, always replacing: SLO %, GPU-h`,
    "× fleet",
  ]),
  ...columns("predictive", [
    "Predictive's figure, capacity, noise",
    "Predictive: SLO %, GPU-h",
    "Predictive, maxReplicas n: SLO %, GPU-h",
    "Predictive capped × fleet",
  ]),
  ...columns("filled", [
    "filled load test's figure",
    "filled: SLO %, GPU-h",
    "filled, maxReplicas n: SLO %, GPU-h",
    "filled capped × fleet",
  ]),
  "slice-checked figure (outcome)",
  "checked, maxReplicas n: SLO %, GPU-h",
  "checked × fleet",
  "oracle: SLO %, GPU-h",
  "oracle × fleet",
  "oracle at the fleet's SLO %: SLO %, GPU-h",
  "× fleet",
];
const lines = [tableRow(header), tableRow(header.map(() => "---"))];
try {
  const userText = withBounds(readFileSync(values.scaler, "utf8"), { maxReplicas: userMaxReplicas });
  const userPath = join(work, "user.yaml");
  writeFileSync(userPath, userText);
  const predictiveUserPath = join(work, "user-predictive.yaml");
  if (withPredictive) writeFileSync(predictiveUserPath, asPredictive(userText, values.scaler));
  for (const { trace, copies, yesterday } of scales) {
    const calibrate = (scalerPath: string, check: "on" | "off", fill: "on" | "off" = "off"): string =>
      cli([
        "calibrate",
        "--trace",
        trace,
        "--copies",
        String(copies),
        "-f",
        scalerPath,
        "-o",
        "scaler",
        "--slice-check",
        check,
        "--load-test-fill",
        fill,
      ]);
    const fleet = smallestStatic(trace, copies, userText);
    const slice = sliceReading(trace, copies, userPath);
    const swings = [swingText(slice.swing), swingText(fleet.run.swing)];
    let calibrated: string;
    try {
      calibrated = calibrate(userPath, "off");
    } catch (error) {
      if (!(error instanceof NoFigure)) throw error;
      // The docs' script stops here: the user keeps the fleet, which the row says with calibrate's reason.
      const known = [
        `${trace} × ${copies}`,
        `none: ${error.message.replace(/\|/g, "/")}`,
        ...swings,
        `n=${fleet.n}: ${cell(fleet.run)}`,
      ];
      lines.push(tableRow([...known, ...header.slice(known.length).map(() => "")]));
      process.stderr.write(`${lines.at(-1)}\n`);
      continue;
    }
    const asWritten = replay(trace, copies, calibrated, fleet.n, "calibrated");
    const cappedText = withBounds(calibrated, { maxReplicas: fleet.n });
    const capped = replay(trace, copies, cappedText, fleet.n, "capped");
    const swingYesterday =
      yesterday === undefined
        ? undefined
        : yesterdaySwing(yesterday, copies, fleet.n, { text: userText, path: userPath });
    // The docs' step: replace the fleet only where yesterday's swing was read and at most the limit.
    const replaces = stepReplacesFleet(swingYesterday);
    // The capped scaler at a target a jump of the swing `swingToSizeFor` names fits under (each mode's runs there);
    // a target at the figure is the capped run itself, so it is not replayed again.
    const figure = Number(figureOf(calibrated));
    const sizingSwing = swingToSizeFor(replaces, swingYesterday);
    const jumpTarget =
      sizingSwing === undefined || slice.capacity === undefined
        ? undefined
        : figureForSwing(figure, slice.capacity, sizingSwing);
    // Without a target of its own the column shows what the step runs: the capped scaler where it replaces the
    // fleet, and under `limit` the fleet it keeps.
    const stepRun = replaces ? capped : swingTargetMode === "limit" ? fleet.run : undefined;
    const swingSizedText =
      jumpTarget === undefined || jumpTarget === figure ? cappedText : withServerTarget(cappedText, jumpTarget);
    const swingSized =
      jumpTarget === undefined
        ? stepRun
        : jumpTarget === figure
          ? capped
          : replay(trace, copies, swingSizedText, fleet.n, "capped-swing-target");
    // The docs' steps as they are (docs/calibrate.md, "A user's steps"; the twenty-fourth run's verdict): where they
    // replace the fleet, the capped scaler at calibrate's `--swing-headroom 1.65`, a target a jump of the limit fits under.
    const stepTarget =
      replaces && slice.capacity !== undefined
        ? figureForSwing(figure, slice.capacity, keepFleetAboveSwing)
        : undefined;
    const guided = !replaces
      ? fleet.run
      : stepTarget === undefined || stepTarget === figure
        ? capped
        : stepTarget === jumpTarget && swingSized !== undefined
          ? swingSized
          : replay(trace, copies, withServerTarget(cappedText, stepTarget), fleet.n, "capped-docs-step");
    const cappedAveragingWindows =
      averagingWindows === undefined
        ? undefined
        : replay(trace, copies, withWindows(swingSizedText, averagingWindows), fleet.n, "capped-windows");
    /** The capped scaler with one TokenThroughput field set (or removed) beside the file's, when its flag is given. */
    const cappedWith = (field: string, edit: { readonly value: string | undefined } | undefined, name: string) =>
      edit === undefined
        ? undefined
        : replay(trace, copies, withTokenThroughputField(cappedText, field, edit.value), fleet.n, name);
    const cappedPanic = cappedWith(
      "panicThreshold",
      panicThreshold === undefined ? undefined : { value: panicThreshold },
      "capped-panic",
    );
    const cappedQueueTime = cappedWith(
      "queueTimeTargetMilliseconds",
      queueTimeTarget === undefined ? undefined : { value: queueTimeTarget === "none" ? undefined : queueTimeTarget },
      "capped-queue-time",
    );
    const cappedWindow =
      scaleDownWindow === undefined
        ? undefined
        : replay(trace, copies, withScaleDownWindow(cappedText, scaleDownWindow), fleet.n, "capped-window");
    const filled = withFilled
      ? calibratedReplays("filled", () => calibrate(userPath, "off", "on"), trace, copies, fleet.n)
      : undefined;
    const predictive = withPredictive
      ? calibratedReplays("predictive", () => calibrate(predictiveUserPath, "off"), trace, copies, fleet.n)
      : undefined;
    // The docs' steps: maxReplicas at the fleet's size before calibrating, so the check replays the slice from it.
    const cappedUserPath = join(work, "user-capped.yaml");
    writeFileSync(cappedUserPath, withBounds(userText, { maxReplicas: fleet.n }));
    const checkedScaler = withChecked ? calibrate(cappedUserPath, "on") : undefined;
    const checked = checkedScaler === undefined ? undefined : replay(trace, copies, checkedScaler, fleet.n, "checked");
    const oracle = withOracles ? oracleReplay(trace, copies) : undefined;
    // What the oracle saves while keeping the share the fleet keeps: the timing, not the fleet's spare attainment.
    const oracleAtFleet = withOracles ? oracleReplay(trace, copies, percentFloor(fleet.run)) : undefined;
    const perFleet = (r: Replay | undefined): string =>
      r === undefined ? "–" : (r.gpuHours / fleet.run.gpuHours).toFixed(3);
    lines.push(
      tableRow([
        `${trace} × ${copies}`,
        figureOf(calibrated),
        ...swings,
        `n=${fleet.n}: ${cell(fleet.run)}`,
        cell(asWritten),
        cell(capped),
        perFleet(capped),
        ...columns(
          "yesterday",
          yesterday === undefined
            ? ["–", "", ""]
            : [
                swingText(swingYesterday),
                `${cell(guided)} (${replaces ? "replaces it" : "keeps the fleet"})`,
                perFleet(guided),
              ],
        ),
        ...columns("swingTarget", [
          jumpTarget === undefined ? (replaces ? "the figure" : "none") : String(jumpTarget),
          cell(swingSized),
          perFleet(swingSized),
        ]),
        ...columns("panic", [cell(cappedPanic), perFleet(cappedPanic)]),
        ...columns("queueTime", [cell(cappedQueueTime), perFleet(cappedQueueTime)]),
        ...columns("scaleDownWindow", [cell(cappedWindow), perFleet(cappedWindow)]),
        ...columns("averagingWindows", [cell(cappedAveragingWindows), perFleet(cappedAveragingWindows)]),
        ...columns(
          "predictive",
          predictive === undefined
            ? ["none", "", "", ""]
            : [
                predictiveFiguresOf(predictive.scaler),
                cell(predictive.asWritten),
                cell(predictive.capped),
                perFleet(predictive.capped),
              ],
        ),
        ...columns(
          "filled",
          filled === undefined
            ? ["none", "", "", ""]
            : [figureOf(filled.scaler), cell(filled.asWritten), cell(filled.capped), perFleet(filled.capped)],
        ),
        checkedScaler === undefined ? "not run" : `${figureOf(checkedScaler)} (${checkOutcome(checkedScaler)})`,
        cell(checked),
        perFleet(checked),
        cell(oracle),
        perFleet(oracle),
        cell(oracleAtFleet),
        perFleet(oracleAtFleet),
      ]),
    );
    process.stderr.write(
      `${lines.at(-1)}\n  capped reasons: ${capped.notes}\n${cappedPanic === undefined ? "" : `  capped, panicThreshold ${panicThreshold}, reasons: ${cappedPanic.notes}\n`}`,
    );
  }
} finally {
  rmSync(work, { recursive: true, force: true });
}
process.stdout.write(`${lines.join("\n")}\n`);
