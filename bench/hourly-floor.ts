/**
 * The floors by the hour of the day, read from yesterday, on whole days (docs/quality.md, the thirty-first run,
 * and the lead before it): the measurement that kept `floorReplicasByUtcHour`. Per scale, the rest of
 * today's trace after its first 15 minutes, overlaid COPIES times as `simulate --copies` overlays it, is
 * replayed from the fleet's N ready replicas three ways: the fixed fleet of N; the scaler capped at N (one
 * Server role, TokenThroughput at TARGET tokens/s per replica, the given windows and TTFT target, every
 * other field at its default); and the same scaler with `floorReplicasByUtcHour` written in, read from yesterday's
 * trace overlaid the same way (`arrivalMinutes` in `src/sim/quality/hourly-floor.ts`, the rule `hourlyFloors` in
 * `src/core/calibrate/hourly-floors.ts`; the planner applies it, `src/core/planner/hourly-floor.ts`). TARGET and N
 * are given: `bench:replace-fleet -- --swing-target headroom --windows 30/30` prints both (its (w) column's target
 * and the fleet `n`). The floors here are read from yesterday's arrivals; `calibrate --hourly-floors-from` reads the
 * same rule from the minutes the engines served.
 *
 *   npm run bench:hourly-floor -- --scales TODAY.csv:COPIES:YESTERDAY.csv:TARGET:N[,…] [--windows 30/30]
 *     [--ttft-target 1500] [--queue-time-target MS] [--margin 1800]
 *
 * `--queue-time-target MS` writes `queueTimeTargetMilliseconds: MS` into the scaler, as the docs' steps do since the
 * thirtieth run (without it the scaler has none, as in the development table).
 *
 * The table goes to stdout, each finished replay to stderr.
 */
import { basename } from "node:path";
import { parseArgs } from "node:util";
import { defaultScalerSpec } from "../src/core/api/defaulting.js";
import { floorMarginSeconds, hourlyFloors } from "../src/core/calibrate/hourly-floors.js";
import { arrivalMinutes } from "../src/sim/quality/hourly-floor.js";
import { mdsPolicy } from "../src/sim/quality/policies/mds.js";
import { staticPolicy } from "../src/sim/quality/policies/static.js";
import type { Policy } from "../src/sim/quality/policy.js";
import { runPolicy } from "../src/sim/quality/run.js";
import { fromSecond, loadTrace, overlay, type Trace } from "../src/sim/quality/traces.js";
import { trainingSeconds } from "../src/sim/quality/user-figures.js";
import { averagingWindowsOf, positiveNumberOf } from "./flags.js";

const { values } = parseArgs({
  options: {
    scales: { type: "string" },
    windows: { type: "string", default: "30/30" },
    "ttft-target": { type: "string", default: "1500" },
    "queue-time-target": { type: "string" },
    margin: { type: "string", default: String(floorMarginSeconds) },
  },
});
const seed = 1;

interface Scale {
  readonly today: string;
  readonly copies: number;
  readonly yesterday: string;
  readonly targetTokensPerSecond: number;
  readonly fleet: number;
}

function scalesOf(text: string | undefined): Scale[] {
  if (text === undefined) throw new Error("--scales: required, TODAY.csv:COPIES:YESTERDAY.csv:TARGET:N[,…]");
  return text.split(",").map((item) => {
    const [today, copies, yesterday, target, fleet, ...rest] = item.split(":");
    if (today === undefined || yesterday === undefined || rest.length > 0)
      throw new Error(`--scales: ${JSON.stringify(item)} is not TODAY.csv:COPIES:YESTERDAY.csv:TARGET:N`);
    const n = positiveNumberOf("--scales", fleet);
    if (!Number.isInteger(n)) throw new Error(`--scales: fleet ${JSON.stringify(fleet)} is not a whole number`);
    return {
      today,
      copies: positiveNumberOf("--scales", copies),
      yesterday,
      targetTokensPerSecond: positiveNumberOf("--scales", target),
      fleet: n,
    };
  });
}

const { stable, panic } = averagingWindowsOf(values.windows ?? "");
const ttftTarget = positiveNumberOf("--ttft-target", values["ttft-target"]);
const margin = positiveNumberOf("--margin", values.margin);
const queueTimeTarget =
  values["queue-time-target"] === undefined
    ? undefined
    : positiveNumberOf("--queue-time-target", values["queue-time-target"]);

function scaler(scale: Scale) {
  const spec = defaultScalerSpec({
    targetRef: { name: "llm" },
    mode: "Active",
    roles: [{ name: "server", maxReplicas: scale.fleet }],
    algorithm: {
      tokenThroughput: {
        serverTargetTokensPerSecond: String(scale.targetTokensPerSecond),
        ttftTargetMilliseconds: String(ttftTarget),
        ...(queueTimeTarget === undefined ? {} : { queueTimeTargetMilliseconds: String(queueTimeTarget) }),
        stableWindowSeconds: stable,
        panicWindowSeconds: panic,
      },
    },
  });
  if (!spec.ok) throw new Error(`the scaler: ${JSON.stringify(spec.problems)}`);
  return spec.value;
}

const overlaid = (path: string, copies: number): Trace => overlay(loadTrace(path, { seed }), copies, seed);

interface Replayed {
  readonly attainment: number;
  readonly gpuHours: number;
}

function replay(label: string, trace: Trace, policy: Policy): Replayed {
  const started = performance.now();
  const r = runPolicy(trace, policy, { seed, fleet: {} });
  console.error(
    `  ${label}: ${(100 * r.attainment.both).toFixed(3)} %, ${r.gpuHours.toFixed(2)} GPU-h (${((performance.now() - started) / 1000).toFixed(0)} s)`,
  );
  return { attainment: r.attainment.both, gpuHours: r.gpuHours };
}

const cell = (r: Replayed, fleet?: Replayed): string =>
  `${(100 * r.attainment).toFixed(3)} %, ${r.gpuHours.toFixed(2)}` +
  (fleet === undefined ? "" : ` (${(r.gpuHours / fleet.gpuHours).toFixed(3)})`);

console.log(
  `| scale | fleet n: SLO %, GPU-h | capped at n, target, ${stable} s / ${panic} s windows | with yesterday's floor by the hour | floors, hours 0–23 |`,
);
console.log("| --- | --- | --- | --- | --- |");
for (const scale of scalesOf(values.scales)) {
  const name = `${basename(scale.today)} × ${scale.copies}`;
  console.error(
    `${name}, yesterday ${basename(scale.yesterday)}, target ${scale.targetTokensPerSecond}, n=${scale.fleet}`,
  );
  const today = fromSecond(overlaid(scale.today, scale.copies), trainingSeconds);
  const floors = hourlyFloors(
    arrivalMinutes(overlaid(scale.yesterday, scale.copies)),
    scale.targetTokensPerSecond,
    scale.fleet,
    margin,
  );
  const spec = scaler(scale);
  const fleet = replay("the fleet", today, staticPolicy(scale.fleet));
  const capped = replay("capped", today, mdsPolicy({ spec, initialReplicas: scale.fleet }));
  const floored = replay(
    "capped, floor",
    today,
    mdsPolicy({
      spec: { ...spec, roles: spec.roles.map((r) => ({ ...r, floorReplicasByUtcHour: floors })) },
      initialReplicas: scale.fleet,
    }),
  );
  console.log(
    `| ${name} | n=${scale.fleet}: ${cell(fleet)} | ${cell(capped, fleet)} | ${cell(floored, fleet)} | ${floors.join(",")} |`,
  );
}
