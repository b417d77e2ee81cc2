/**
 * How much of mds-scaler's distance to the oracle any scaler that reacts to demand would keep
 * (docs/quality.md, twenty-seventh run). Per benchmark table (the trace after its first 15 minutes, as
 * `npm run bench:quality` replays it), in one run: the oracle's search; the reactive bound, the cheapest
 * scaler reaching 99 % that sees every arrival's tokens the moment it arrives and nothing ahead
 * (`src/sim/quality/sighted-search.ts`); the smallest fixed fleet reaching 99 %; and mds-scaler's
 * TokenThroughput at the figures calibrate gives on the first 15 minutes (the default 300 s and the
 * shorter 120 s scale-down window), each as GPU-hours and their ratio to the oracle.
 *
 *   npm run bench:reactive-bound [-- --only azure-conv,servegen-m-large-day] [--native | --scaled]
 *
 * The table goes to stdout, each finished run to stderr.
 */
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
import { loadTrace, overlay, type TraceName } from "../src/sim/quality/traces.js";
import { calibrateOnTraining, splitTraining, userMaxReplicas } from "../src/sim/quality/user-figures.js";

const { values } = parseArgs({
  options: {
    only: { type: "string" },
    native: { type: "boolean", default: false },
    scaled: { type: "boolean", default: false },
    seed: { type: "string", default: "1" },
  },
});
const seed = Number(values.seed);
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

const ratio = (row: Row | undefined, oracle: Row | undefined): string =>
  row === undefined || oracle === undefined ? "–" : (row.gpuHours / oracle.gpuHours).toFixed(2);
const cell = (row: Row | undefined, oracle: Row | undefined): string =>
  row === undefined
    ? "none reached 99 %"
    : `${(100 * row.attainment.both).toFixed(2)} %, ${row.gpuHours.toFixed(2)} (${ratio(row, oracle)})`;

process.stdout.write(
  "| trace, scale | oracle: SLO %, GPU-h | reactive bound: SLO %, GPU-h (÷ oracle) | its member | smallest fixed fleet (÷ oracle) | TokenThroughput calibrated (÷ oracle) | the same, scale-down 120 s (÷ oracle) | calibrated ÷ bound |\n",
);
process.stdout.write("| --- | --- | --- | --- | --- | --- | --- | --- |\n");
for (const name of benchTraces.filter((t) => only === undefined || only.includes(t))) {
  const base = loadTrace(name, { seed });
  const scales = [...(values.scaled ? [] : [1]), ...(values.native ? [] : [benchScaleCopies[name] ?? 10])];
  for (const copies of scales) {
    const { training, evaluated } = splitTraining(overlay(base, copies, seed));
    const label = `${name} ×${copies}`;
    const run = (policy: Policy): Row => {
      const r = runPolicy(evaluated, policy, runOptions);
      process.stderr.write(
        `  ${label}: ${r.policy}: ${(100 * r.attainment.both).toFixed(2)} %, ${r.gpuHours.toFixed(3)} GPU-h\n`,
      );
      return { policy: r.policy, attainment: r.attainment, gpuHours: r.gpuHours, wallSeconds: r.wallSeconds };
    };
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
    process.stdout.write(
      `| ${label} | ${cell(oracle.best, oracle.best)} | ${cell(bound.best, oracle.best)} | ${bound.best?.policy ?? "–"} | ${cell(fleet, oracle.best)} | ${cell(calibrated, oracle.best)} | ${cell(shorter, oracle.best)} | ${ratio(calibrated, bound.best)} |\n`,
    );
  }
}
