/**
 * How much of mds-scaler's distance to the oracle any scaler that reacts to demand would keep
 * (docs/quality.md, twenty-seventh run). Per benchmark table (the trace after its first 15 minutes, as
 * `npm run bench:quality` replays it), in one run: the oracle's search; the reactive bound, the cheapest
 * scaler reaching 99 % that sees every arrival's tokens the moment it arrives and nothing ahead
 * (`src/sim/quality/sighted-search.ts`); the smallest fixed fleet reaching 99 %; and mds-scaler's
 * TokenThroughput at the figures calibrate gives on the first 15 minutes (the default 300 s and the
 * shorter 120 s scale-down window), each as GPU-hours and their ratio to the oracle. `--decompose on` adds,
 * per table, TokenThroughput with its per-replica target searched in hindsight (the cheapest reaching 99 %)
 * at the default windows (stable 180 s, panic 60 s) and at shorter ones: what the figure costs apart from
 * what the windows cost. Those targets are read from the replay they are judged on, so no user could write
 * them; they measure, they are not a configuration.
 *
 *   npm run bench:reactive-bound [-- --only azure-conv,servegen-m-large-day] [--native | --scaled] [--decompose on]
 *   npm run bench:reactive-bound -- --replace FILE:COPIES:FLEET[,…]
 *
 * `--replace` runs a user's try instead of the tables (docs/quality.md, twenty-seventh run): the trace file
 * overlaid COPIES times, after its first 15 minutes, from FLEET ready replicas, served by the fixed fleet of FLEET
 * and by the bound's member that was cheapest on every table (measuring 15 s, holding 300 s) capped at FLEET, its
 * headroom searched: whether a scaler that sees demand as it arrives could replace that fleet with fewer
 * GPU-hours at 99 %.
 *
 * The table goes to stdout, each finished run to stderr.
 */
import { basename } from "node:path";
import { parseArgs } from "node:util";
import { defaultLatencyGuardReading } from "../src/core/algorithms/ttft-reading.js";
import { replicaCapacity } from "../src/sim/quality/cluster.js";
import { benchScaleCopies, calibratedVariants } from "../src/sim/quality/matrix.js";
import { fluidNeed, oracleSchedule } from "../src/sim/quality/oracle.js";
import { attainmentGoal, cheapestAtGoal, searchOracle, type SearchedRow } from "../src/sim/quality/oracle-search.js";
import { defaultPresetName, replicaPresets } from "../src/sim/quality/presets.js";
import type { Policy } from "../src/sim/quality/policy.js";
import { runPolicy, type RunOptions } from "../src/sim/quality/run.js";
import { searchSighted } from "../src/sim/quality/sighted-search.js";
import { mdsPolicy } from "../src/sim/quality/policies/mds.js";
import { staticPolicy } from "../src/sim/quality/policies/static.js";
import { defaultScaler, replicaFigures } from "../src/sim/quality/scalers.js";
import { loadTrace, overlay, type Trace, type TraceName } from "../src/sim/quality/traces.js";
import { calibrateOnTraining, splitTraining, userMaxReplicas } from "../src/sim/quality/user-figures.js";

const { values } = parseArgs({
  options: {
    only: { type: "string" },
    native: { type: "boolean", default: false },
    scaled: { type: "boolean", default: false },
    seed: { type: "string", default: "1" },
    decompose: { type: "string", default: "off" },
    replace: { type: "string" },
  },
});
const seed = Number(values.seed);
if (values.decompose !== "on" && values.decompose !== "off")
  throw new Error(`--decompose: ${JSON.stringify(values.decompose)} is not one of on, off`);
const decompose = values.decompose === "on";
/** The windows the hindsight targets are searched at: the specification's defaults, then shorter ones. */
const decomposeWindows = [
  { stable: 180, panic: 60 },
  { stable: 60, panic: 30 },
  { stable: 30, panic: 15 },
] as const;
if (!Number.isInteger(seed)) throw new Error(`--seed: ${JSON.stringify(values.seed)} is not a whole number`);
const benchTraces = Object.keys(benchScaleCopies) as TraceName[];
const only = values.only?.split(",");
for (const name of only ?? [])
  if (!(benchTraces as string[]).includes(name))
    throw new Error(`--only: ${JSON.stringify(name)} is not one of the benchmark's traces ${benchTraces.join(", ")}`);

const capacity = replicaPresets[defaultPresetName].capacity;
const runOptions: RunOptions = { seed, fleet: { capacity } };

interface Row extends SearchedRow {
  readonly wallSeconds: number;
}

/** Runs policies on one replay, each finished run reported on stderr under `label`. */
function runnerOn(evaluated: Trace, label: string): (policy: Policy) => Row {
  return (policy) => {
    const r = runPolicy(evaluated, policy, runOptions);
    process.stderr.write(
      `  ${label}: ${r.policy}: ${(100 * r.attainment.both).toFixed(2)} %, ${r.gpuHours.toFixed(3)} GPU-h\n`,
    );
    return { policy: r.policy, attainment: r.attainment, gpuHours: r.gpuHours, wallSeconds: r.wallSeconds };
  };
}

const ratio = (row: Row | undefined, oracle: Row | undefined): string =>
  row === undefined || oracle === undefined ? "–" : (row.gpuHours / oracle.gpuHours).toFixed(2);
const cell = (row: Row | undefined, oracle: Row | undefined): string =>
  row === undefined
    ? "none reached 99 %"
    : `${(100 * row.attainment.both).toFixed(2)} %, ${row.gpuHours.toFixed(2)} (${ratio(row, oracle)})`;

if (values.replace !== undefined) {
  replaceFleets(values.replace);
  process.exit(0);
}

const windowsLabel = (w: { readonly stable: number; readonly panic: number }): string =>
  `stable ${w.stable} s, panic ${w.panic} s`;
process.stdout.write(
  `| trace, scale | oracle: SLO %, GPU-h | reactive bound: SLO %, GPU-h (÷ oracle) | its member | smallest fixed fleet (÷ oracle) | TokenThroughput calibrated (÷ oracle) | the same, scale-down 120 s (÷ oracle) | calibrated ÷ bound |${decompose ? decomposeWindows.map((w) => ` hindsight target, ${windowsLabel(w)} |`).join("") : ""}\n`,
);
process.stdout.write(
  `| --- | --- | --- | --- | --- | --- | --- | --- |${decompose ? " --- |".repeat(decomposeWindows.length) : ""}\n`,
);
for (const name of benchTraces.filter((t) => only === undefined || only.includes(t))) {
  const base = loadTrace(name, { seed });
  const scales = [...(values.scaled ? [] : [1]), ...(values.native ? [] : [benchScaleCopies[name] ?? 10])];
  for (const copies of scales) {
    const { training, evaluated } = splitTraining(overlay(base, copies, seed));
    const label = `${name} ×${copies}`;
    const run = runnerOn(evaluated, label);
    const need = fluidNeed(evaluated, replicaCapacity({ capacity }));
    const maxReplicas = userMaxReplicas(Math.max(...need));
    const oracle = searchOracle(run, need, maxReplicas);
    // The matrix's warm start for every policy of a table: the oracle's first interval.
    const initialReplicas = oracleSchedule(need, oracle.high ?? 1)[0] ?? 1;
    const fleet = cheapestAtGoal([...oracle.staticRows.values()], attainmentGoal);
    const bound = searchSighted(run, evaluated, capacity, { initialReplicas, maxReplicas });
    const figures = calibrateOnTraining(training, capacity, runOptions, defaultLatencyGuardReading);
    // TokenThroughput as calibrated, then with the 120 s scale-down window: the first two calibrated rows.
    const [calibrated, shorter] = calibratedVariants(figures, evaluated, capacity, initialReplicas)
      .slice(0, 2)
      .map(run);
    const hindsight = decompose
      ? decomposeWindows.map((windowsSeconds) => {
          const best = searchTarget(run, figures.tokensPerSecondPerReplica, (tokensPerSecondPerReplica) =>
            mdsPolicy({
              spec: defaultScaler({
                algorithm: "TokenThroughput",
                figures: replicaFigures(evaluated, capacity),
                maxReplicas: figures.maxReplicas,
                tokensPerSecondPerReplica,
                ttftTargetMilliseconds: figures.ttftTargetMilliseconds,
                itlTargetMilliseconds: figures.itlTargetMilliseconds,
                windowsSeconds,
              }),
              initialReplicas,
              label: `mds-scaler TokenThroughput (target ${tokensPerSecondPerReplica}; ${windowsLabel(windowsSeconds)})`,
              latencyGuardReading: figures.reading,
            }),
          );
          return best === undefined ? " none reached 99 % |" : ` ${best.target}: ${cell(best.row, oracle.best)} |`;
        })
      : [];
    process.stdout.write(
      `| ${label} | ${cell(oracle.best, oracle.best)} | ${cell(bound.best, oracle.best)} | ${bound.best?.policy ?? "–"} | ${cell(fleet, oracle.best)} | ${cell(calibrated, oracle.best)} | ${cell(shorter, oracle.best)} | ${ratio(calibrated, bound.best)} |${hindsight.join("")}\n`,
    );
  }
}

/**
 * The cheapest per-replica target reaching 99 %, searched from calibrate's figure `from` (or 4,000 tok/s without
 * one): factors of it upwards until a run misses after one held (downwards while none holds), then three
 * bisections between the last that held and the first that missed. Attainment falls as the target rises, about.
 */
function searchTarget(
  run: (policy: Policy) => Row,
  from: number | undefined,
  policyAt: (tokensPerSecondPerReplica: number) => Policy,
): { readonly target: number; readonly row: Row } | undefined {
  const start = from ?? 4000;
  const tried: { target: number; row: Row }[] = [];
  const at = (factor: number): boolean => {
    const target = Math.round(start * factor);
    const row = run(policyAt(target));
    tried.push({ target, row });
    return row.attainment.both >= attainmentGoal;
  };
  let held: number | undefined;
  let missed: number | undefined;
  for (const factor of [1, 1.2, 1.4, 1.7, 2, 2.5, 3, 4]) {
    if (at(factor)) held = factor;
    else {
      missed = factor;
      break;
    }
  }
  if (held === undefined)
    for (const factor of [0.8, 0.6, 0.4, 0.25])
      if (at(factor)) {
        held = factor;
        break;
      } else missed = factor;
  if (held !== undefined && missed !== undefined) {
    let [low, high] = [held, missed];
    for (let i = 0; i < 3; i++) {
      const mid = (low + high) / 2;
      if (at(mid)) low = mid;
      else high = mid;
    }
  }
  const best = cheapestAtGoal(
    tried.map((t) => t.row),
    attainmentGoal,
  );
  return tried.find((t) => t.row === best);
}

/** The user's tries of `--replace`: per FILE:COPIES:FLEET, the fixed fleet and the capped bound side by side. */
function replaceFleets(text: string): void {
  const tries = text.split(",").map((item) => {
    const [file, copiesText, fleetText, ...rest] = item.split(":");
    const copies = Number(copiesText);
    const fleet = Number(fleetText);
    if (!file || !Number.isInteger(copies) || copies < 1 || !Number.isInteger(fleet) || fleet < 1 || rest.length > 0)
      throw new Error(`--replace: ${JSON.stringify(item)} is not FILE:COPIES:FLEET with whole numbers ≥ 1`);
    return { file, copies, fleet };
  });
  process.stdout.write(
    "| trace, scale | fixed fleet: SLO %, GPU-h | capped bound: SLO %, GPU-h (÷ fleet) | its member |\n| --- | --- | --- | --- |\n",
  );
  for (const { file, copies, fleet } of tries) {
    const { evaluated } = splitTraining(overlay(loadTrace(file, { seed }), copies, seed));
    const label = `${basename(file)} ×${copies}`;
    const run = runnerOn(evaluated, label);
    const fixed = run(staticPolicy(fleet));
    const bound = searchSighted(
      run,
      evaluated,
      capacity,
      { initialReplicas: fleet, maxReplicas: fleet },
      attainmentGoal,
      [{ measureSeconds: 15, holdSeconds: 300 }],
    );
    process.stdout.write(
      `| ${label} | ${cell(fixed, undefined)} | ${cell(bound.best, fixed)} | ${bound.best?.policy ?? "–"} |\n`,
    );
  }
}
