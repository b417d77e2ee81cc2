/**
 * How TokenThroughput answers its per-replica figure on one replay: the
 * figure calibrate gives on the first 15 minutes, then each figure given, on
 * the rest of the trace, beside static fleets. An analysis of the algorithm
 * (docs/quality.md, "A scale-down floor that remembers bursts"), never a way
 * to pick a figure: a figure chosen from this table would be tuned on the
 * replay it is judged on.
 *
 *   npm run bench:figure-response -- --trace azure-code --copies 1 --figures 500,700,1000 --initial 7 --statics 6,7
 *
 * `--figures` are tokens/s per replica; `--initial` is the fleet the scaler
 * starts from (default: the calibrated figure's fleet for the replay's first
 * minute); `--scale-down` sets the scale-down stabilization window (seconds);
 * `--min-replicas` a floor, to see what a floor known in advance would do.
 */
import { parseArgs } from "node:util";
import { fluidNeed } from "../src/sim/quality/oracle.js";
import { mdsPolicy } from "../src/sim/quality/policies/mds.js";
import { staticPolicy } from "../src/sim/quality/policies/static.js";
import { defaultPresetName, replicaPresets } from "../src/sim/quality/presets.js";
import { runPolicy, type RunOptions, type RunResult } from "../src/sim/quality/run.js";
import { defaultScaler, replicaFigures } from "../src/sim/quality/scalers.js";
import { loadTrace, overlay, type TraceName } from "../src/sim/quality/traces.js";
import { calibrateOnTraining, splitTraining } from "../src/sim/quality/user-figures.js";

const { values } = parseArgs({
  options: {
    trace: { type: "string", default: "azure-code" },
    copies: { type: "string", default: "1" },
    figures: { type: "string", default: "" },
    initial: { type: "string" },
    statics: { type: "string", default: "" },
    "scale-down": { type: "string" },
    "min-replicas": { type: "string" },
  },
});
const numbers = (text: string, flag: string): number[] =>
  text
    .split(",")
    .filter((t) => t.trim() !== "")
    .map((t) => {
      const n = Number(t);
      if (!(n > 0)) throw new Error(`--${flag}: ${JSON.stringify(t)} is not a positive number`);
      return n;
    });

const seed = 1;
const capacity = replicaPresets[defaultPresetName].capacity;
const copies = numbers(values.copies, "copies")[0] ?? 1;
const { training, evaluated } = splitTraining(overlay(loadTrace(values.trace as TraceName, { seed }), copies, seed));
const runOptions: RunOptions = { seed, fleet: { capacity } };
const calibrated = calibrateOnTraining(training, capacity, runOptions, "queueing");
if (calibrated.tokensPerSecondPerReplica === undefined) throw new Error(`calibrate gave no figure: ${calibrated.why}`);
const scaleDown = values["scale-down"] === undefined ? undefined : numbers(values["scale-down"], "scale-down")[0];
const minReplicas =
  values["min-replicas"] === undefined ? undefined : numbers(values["min-replicas"], "min-replicas")[0];
const initial =
  values.initial === undefined
    ? Math.max(1, Math.ceil(fluidNeed(evaluated, capacity)[0] ?? 1))
    : (numbers(values.initial, "initial")[0] ?? 1);

const row = (label: string, r: RunResult): string =>
  `| ${label} | ${(100 * r.attainment.both).toFixed(2)} | ${r.gpuHours.toFixed(2)} | ${r.notes ?? ""} |`;
const lines = [
  `${values.trace} × ${copies}, after the first 15 min; calibrate: ${calibrated.tokensPerSecondPerReplica} tok/s per replica (${calibrated.why})`,
  "",
  "| run | SLO % | GPU-h | reasons |",
  "| --- | --- | --- | --- |",
];
for (const figure of [calibrated.tokensPerSecondPerReplica, ...numbers(values.figures, "figures")]) {
  const spec = defaultScaler({
    algorithm: "TokenThroughput",
    figures: replicaFigures(evaluated, capacity),
    maxReplicas: calibrated.maxReplicas,
    tokensPerSecondPerReplica: figure,
    ttftTargetMilliseconds: calibrated.ttftTargetMilliseconds,
    itlTargetMilliseconds: calibrated.itlTargetMilliseconds,
    ...(scaleDown === undefined ? {} : { scaleDownStabilizationSeconds: scaleDown }),
    ...(minReplicas === undefined ? {} : { minReplicas }),
  });
  const policy = mdsPolicy({ spec, initialReplicas: initial, label: "tt", latencyGuardReading: "queueing" });
  const floor = minReplicas === undefined ? "" : `, minReplicas ${minReplicas}`;
  lines.push(
    row(`TokenThroughput at ${figure} tok/s, from ${initial}${floor}`, runPolicy(evaluated, policy, runOptions)),
  );
}
for (const n of numbers(values.statics, "statics"))
  lines.push(row(`static n=${n}`, runPolicy(evaluated, staticPolicy(n), runOptions)));
process.stdout.write(`${lines.join("\n")}\n`);
