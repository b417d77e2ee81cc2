/**
 * The demo scaler's per-replica targets are calibrate's answer on the part of
 * the trace `npm start -- --duration 60` does not replay (demo/calibration.ts):
 * re-derived here with the real simulator and calibrate, so a change to the
 * engines, the trace, calibrate or the scaler that moves the answer fails until
 * the scaler file carries the new figures.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { parse } from "yaml";
import { describe, expect, it } from "vitest";
import {
  calibrateDemo,
  demoBounds,
  fixedScaler,
  replayedSeconds,
  targetOf,
  ttftTargetOf,
} from "../../demo/calibration.js";
import { countsWithin } from "../../demo/observer.js";
import { defaultSpeedup, tracesDir } from "../../demo/options.js";
import { worldSettings } from "../../demo/run.js";
import { EngineFleet } from "../../src/sim/engines/engine-fleet.js";
import { loadTraceRows } from "../../src/sim/engines/traces.js";
import { TraceWorkload } from "../../src/sim/engines/workload.js";

const root = join(import.meta.dirname, "..", "..");
const scalerYaml = readFileSync(join(root, "docs", "examples", "demo", "scaler.yaml"), "utf8");
const targetYaml = readFileSync(join(root, "docs", "examples", "demo", "target.yaml"), "utf8");
const world = {
  prefillTokensPerSecond: worldSettings.prefillCapacity.prefillTokensPerSecond as number,
  coldStartSeconds: (worldSettings.timings.coldStartMs as number) / 1000,
};

/**
 * A fixed pair in the demo's own engine fleet (`EngineFleet`, its 50 ms steps, its 50 ms KV handoff), stepped
 * in virtual time over the training slice: the share of first tokens within `targetSeconds`, read from the
 * prefill engines' TTFT histograms as the demo's summary reads it.
 */
async function demoWorldAttainment(replicasPerRole: number, targetSeconds: number): Promise<number> {
  const rows = await loadTraceRows(join(tracesDir(), "azure_llm_2023", "AzureLLMInferenceTrace_code.csv"));
  const fromTraceSeconds = replayedSeconds * defaultSpeedup;
  const slice = rows
    .filter((r) => r.offsetSeconds >= fromTraceSeconds)
    .map((r) => ({ ...r, offsetSeconds: r.offsetSeconds - fromTraceSeconds }));
  const fleet = new EngineFleet({ startSeconds: 0, stepSeconds: 0.05 });
  fleet.addDeployment({
    namespace: "demo",
    name: "code-assistant",
    engine: "vllm",
    roles: [
      { name: "prefill", serving: "prefill", replicas: replicasPerRole, capacity: worldSettings.prefillCapacity },
      { name: "decode", serving: "decode", replicas: replicasPerRole },
    ],
    workload: new TraceWorkload(slice, { startSeconds: 0, speedup: defaultSpeedup }),
  });
  // The slice's span at the speed-up, and time for the last requests to finish.
  fleet.advanceTo(((slice.at(-1)?.offsetSeconds ?? 0) + 1) / defaultSpeedup + 30);
  const prefill = fleet.listPods().filter((p) => p.replica.spec.serving === "prefill");
  const counts = countsWithin(
    prefill.map((p) => p.replica.totals().ttftCumulative),
    targetSeconds,
  );
  return counts.within / counts.total;
}

describe("the demo scaler's calibrated targets", () => {
  let calibration: ReturnType<typeof calibrateDemo> | undefined;
  const calibrated = (): ReturnType<typeof calibrateDemo> => (calibration ??= calibrateDemo(scalerYaml, world));

  it("equal calibrate's answer on the training slice, and the file records how it was reached", async () => {
    const result = await calibrated();
    const spec = (
      parse(scalerYaml) as {
        spec: { algorithm: { tokenThroughput: Record<string, string> } };
      }
    ).spec.algorithm.tokenThroughput;
    const written = {
      prefill: Number(spec["prefillTargetTokensPerSecond"]),
      decode: Number(spec["decodeTargetTokensPerSecond"]),
    };
    const derived = Object.fromEntries(result.roles.map((r) => [r.role, targetOf(r)]));
    expect(derived).toEqual(written);
    // The comment names the pairs pooled and each figure, as the examples record theirs.
    const pooled = result.pooledReplicas;
    expect(scalerYaml).toContain(`Pairs of ${pooled.slice(0, -1).join(", ")} and ${pooled.at(-1)}`);
    for (const [role, figure] of Object.entries(written))
      expect(scalerYaml).toMatch(new RegExp(`${role}\\b.*${figure}`, "s"));
    // The load test started at a pair that kept the target for 99 % of first tokens, and one below it did not.
    const starting = result.runs.find((r) => r.replicasPerRole === pooled[0]);
    expect(starting?.ttftAttainment).toBeGreaterThanOrEqual(0.99);
    expect(result.runs.some((r) => r.replicasPerRole === (pooled[0] as number) / 2 && r.ttftAttainment < 0.99)).toBe(
      true,
    );
  }, 180_000);

  it("start the target at the load test's starting pair, the static fleet a user replaces, and cap each role there", async () => {
    const bounds = demoBounds(await calibrated());
    const scaler = parse(scalerYaml) as { spec: { roles: { name: string; maxReplicas: number }[] } };
    const target = parse(targetYaml) as { spec: { roles: { name: string; replicas: number }[] } };
    expect(scaler.spec.roles.map((r) => [r.name, r.maxReplicas])).toEqual([
      ["prefill", bounds.maxReplicasPerRole],
      ["decode", bounds.maxReplicasPerRole],
    ]);
    expect(target.spec.roles.map((r) => [r.name, r.replicas])).toEqual([
      ["prefill", bounds.startingReplicasPerRole],
      ["decode", bounds.startingReplicasPerRole],
    ]);
    expect(() => demoBounds({ pooledReplicas: [] })).toThrow(/no starting pair/);
  }, 180_000);

  it("comes from simulate, which serves a fixed pair as the demo's own engines do (within 2 points of first tokens in time)", async () => {
    const result = await calibrated();
    for (const replicasPerRole of [4, 8]) {
      const simulated = result.runs.find((r) => r.replicasPerRole === replicasPerRole)?.ttftAttainment;
      const demo = await demoWorldAttainment(replicasPerRole, ttftTargetOf(scalerYaml) / 1000);
      expect(
        Math.abs((simulated ?? -1) - demo),
        `${replicasPerRole} + ${replicasPerRole}: simulate ${simulated}, demo ${demo}`,
      ).toBeLessThan(0.02);
    }
  }, 180_000);

  it("holds each role at a fixed count and reads the schema's default TTFT target", () => {
    const fixed = parse(fixedScaler(scalerYaml, 3)) as {
      spec: { roles: { minReplicas: number; maxReplicas: number }[] };
    };
    expect(fixed.spec.roles.map((r) => [r.minReplicas, r.maxReplicas])).toEqual([
      [3, 3],
      [3, 3],
    ]);
    expect(ttftTargetOf(scalerYaml)).toBe(500);
    expect(() => ttftTargetOf("apiVersion: worker.gpustack.ai/v1\nkind: ModelDeploymentScaler\n")).toThrow(
      /the demo scaler/,
    );
  });
});
