/**
 * `npm run calibrate:demo`: re-derives the demo scaler's per-replica targets
 * and bounds (demo/calibration.ts) and prints the load test, calibrate's table,
 * the bounds and the commands a user would type for the same runs.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { calibrateDemo, demoBounds, describeAnswer } from "../demo/calibration.js";
import { repoRoot } from "../demo/options.js";
import { worldSettings } from "../demo/run.js";

const scalerPath = join(repoRoot, "docs", "examples", "demo", "scaler.yaml");
const result = await calibrateDemo(readFileSync(scalerPath, "utf8"), {
  prefillTokensPerSecond: worldSettings.prefillCapacity.prefillTokensPerSecond as number,
  coldStartSeconds: (worldSettings.timings.coldStartMs as number) / 1000,
});
const bounds = demoBounds(result);
const lines = [
  "load test on the training slice (fixed pairs of prefill and decode replicas):",
  ...result.runs.map(
    (r) =>
      `  ${String(r.replicasPerRole).padStart(3)} + ${String(r.replicasPerRole).padEnd(3)} TTFT attainment ${(100 * r.ttftAttainment).toFixed(2)} %${r.pooled ? ", pooled" : ""}`,
  ),
  "",
  "the same, as commands:",
  ...result.commands.map((c) => `  ${c}`),
  "",
  result.table.trimEnd(),
  "",
  "per role:",
  ...result.roles.map((r) => `  ${r.role}: ${describeAnswer(r)}`),
  "",
  `bounds: the target starts at ${bounds.startingReplicasPerRole} replicas per role (the static fleet it replaces), maxReplicas ${bounds.maxReplicasPerRole} per role`,
  "",
];
process.stdout.write(`${lines.join("\n")}\n`);
