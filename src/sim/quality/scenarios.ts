/**
 * The cluster rules the main comparison leaves out, on one trace: a quota that
 * withholds replicas (the planner's pending-cohort rule in the loop) and a
 * disaggregated Prefill/Decode fleet scaled by the pd-sglang-style scaler.
 * Each run reports its attainment, GPU-hours (per role for the disaggregated
 * fleet), scale events and the planner's rollbacks (`ResourceExhausted`
 * commits).
 */
import type { EngineCapacity } from "../engines/model.js";
import { disaggregatedRoles } from "./cluster.js";
import { sloTtftMilliseconds } from "./matrix.js";
import { defaultPresetName, replicaPresets } from "./presets.js";
import { fluidNeed } from "./oracle.js";
import { mdsPolicy } from "./policies/mds.js";
import { staticVectorPolicy } from "./policies/static.js";
import type { Policy } from "./policy.js";
import { runPolicy, type RunOptions, type RunResult } from "./run.js";
import { defaultScaler, disaggregatedScaler, replicaFigures, roleNeeds } from "./scalers.js";
import type { Trace } from "./traces.js";
import type { PlanResult } from "../../core/planner/types.js";
import { defaultLatencyGuardReading, type LatencyGuardReading } from "../../core/algorithms/ttft-reading.js";

type OnPass = (result: PlanResult, nowSeconds: number) => void;

export interface ScenarioRow {
  readonly scenario: "quota" | "disaggregated";
  readonly run: RunResult;
  /** Commits that restored a pending cohort's baseline (`ResourceExhausted`). */
  readonly rollbacks: number;
  /** Passes whose role reason was `PendingAdmission` (growth held while a cohort waits). */
  readonly pendingPasses: number;
  readonly quotaReplicas?: number;
}

export interface ScenarioResult {
  readonly trace: string;
  readonly requests: number;
  readonly spanSeconds: number;
  readonly rows: readonly ScenarioRow[];
  readonly wallSeconds: number;
}

export interface ScenarioOptions {
  readonly seed: number;
  readonly capacity?: EngineCapacity;
  readonly onRow?: (row: ScenarioRow) => void;
  /** The latency guard's readings each mds-scaler run uses, side by side (the default reading alone when absent). */
  readonly latencyGuardReadings?: readonly LatencyGuardReading[];
}

/** Fluid prefill and decode replicas per oracle interval. */
export function roleNeedSeries(trace: Trace, capacity: EngineCapacity): { prefill: number[]; decode: number[] } {
  const prefillOnly = fluidNeed(trace, { ...capacity, decodeTokensPerSecond: Infinity });
  const decodeOnly = fluidNeed(trace, { ...capacity, prefillTokensPerSecond: Infinity });
  return { prefill: prefillOnly, decode: decodeOnly };
}

/** Counts the planner's rollbacks and pending holds while a policy runs. */
function counted(make: (onPass: OnPass) => Policy): {
  policy: Policy;
  rollbacks: () => number;
  pendingPasses: () => number;
} {
  let rollbacks = 0;
  let pending = 0;
  const policy = make((result) => {
    if (result.commit?.reason === "ResourceExhausted") rollbacks++;
    if ((result.status.roles ?? []).some((r) => r.reason === "PendingAdmission")) pending++;
  });
  return { policy, rollbacks: () => rollbacks, pendingPasses: () => pending };
}

export function runScenarios(trace: Trace, options: ScenarioOptions): ScenarioResult {
  const start = performance.now();
  // The benchmark's replica: the default preset (docs/quality.md, "Replica presets").
  const capacity = options.capacity ?? replicaPresets[defaultPresetName].capacity;
  const rows: ScenarioRow[] = [];
  const sloTtft = sloTtftMilliseconds(trace, capacity);
  const readings = options.latencyGuardReadings ?? [defaultLatencyGuardReading];
  const need = fluidNeed(trace, capacity);
  const peakNeed = Math.max(...need);
  const maxReplicas = Math.min(1024, Math.ceil(8 * peakNeed) + 4);
  const initialReplicas = Math.max(1, Math.ceil(1.5 * Math.max(need[0] ?? 0, need[1] ?? 0)));
  const run = (
    scenario: ScenarioRow["scenario"],
    make: (onPass: OnPass) => Policy,
    runOptions: RunOptions,
    quotaReplicas?: number,
  ): ScenarioRow => {
    const c = counted(make);
    const result = runPolicy(trace, c.policy, runOptions);
    const row: ScenarioRow = {
      scenario,
      run: result,
      rollbacks: c.rollbacks(),
      pendingPasses: c.pendingPasses(),
      ...(quotaReplicas === undefined ? {} : { quotaReplicas }),
    };
    rows.push(row);
    options.onRow?.(row);
    return row;
  };

  // Quota: the peak fluid need rounded up, enough for the mean load and short of what a
  // scaler with headroom asks for at the peaks.
  const figures = replicaFigures(trace, capacity);
  const quota = Math.max(2, Math.ceil(peakNeed));
  for (const algorithm of ["TokenThroughput", "Predictive"] as const) {
    const spec = defaultScaler({ algorithm, figures, maxReplicas, ttftTargetMilliseconds: sloTtft });
    const label = `mds-scaler ${algorithm} (ttft target = SLO)`;
    const unified: RunOptions = { seed: options.seed, fleet: { capacity } };
    const quotaRun: RunOptions = { seed: options.seed, fleet: { capacity, quotaReplicas: quota } };
    for (const [suffix, runOptions, quotaReplicas] of [
      ["no quota", unified, undefined],
      [`quota ${quota}`, quotaRun, quota],
    ] as const) {
      for (const reading of readings) {
        const named = readings.length > 1 ? `${label}, ${suffix}, ${reading} guard` : `${label}, ${suffix}`;
        run(
          "quota",
          (onPass) => mdsPolicy({ spec, initialReplicas, label: named, onPass, latencyGuardReading: reading }),
          runOptions,
          quotaReplicas,
        );
      }
    }
  }

  // Disaggregated: a Prefill and a Decode role; a user's ratio is the measured need ratio.
  const roles = roleNeedSeries(trace, capacity);
  const mean = roleNeeds(trace, capacity);
  const pd: RunOptions = { seed: options.seed, fleet: { capacity, roles: disaggregatedRoles } };
  const initialPd = {
    prefill: Math.max(1, Math.ceil(1.5 * Math.max(roles.prefill[0] ?? 0, roles.prefill[1] ?? 0))),
    decode: Math.max(1, Math.ceil(1.5 * Math.max(roles.decode[0] ?? 0, roles.decode[1] ?? 0))),
  };
  const pdMax = Math.min(1024, Math.ceil(8 * Math.max(...roles.prefill, ...roles.decode)) + 4);
  // Peak provisioning in hindsight: each role at k times its own peak fluid need, the smallest k
  // on a grid that reaches 99 % (the disaggregated counterpart of the best static fleet).
  const peakPrefill = Math.max(...roles.prefill);
  const peakDecode = Math.max(...roles.decode);
  for (const k of [1, 1.25, 1.5, 2, 3]) {
    const vector = { prefill: Math.max(1, Math.ceil(k * peakPrefill)), decode: Math.max(1, Math.ceil(k * peakDecode)) };
    const row = run("disaggregated", () => staticVectorPolicy(vector, `static ×${k} peak`), pd);
    if (row.run.attainment.both >= 0.99) break;
  }
  const variants: { algorithm: "TokenThroughput" | "Predictive"; ttft?: number; label: string }[] = [
    { algorithm: "TokenThroughput", label: "defaults" },
    { algorithm: "TokenThroughput", ttft: sloTtft, label: "ttft target = SLO" },
    { algorithm: "Predictive", ttft: sloTtft, label: "ttft target = SLO" },
  ];
  for (const v of variants) {
    const spec = disaggregatedScaler({
      algorithm: v.algorithm,
      capacity,
      ratio: mean.prefill / Math.max(1e-9, mean.decode),
      maxReplicas: pdMax,
      ...(v.ttft === undefined ? {} : { ttftTargetMilliseconds: v.ttft }),
    });
    for (const reading of readings) {
      const named = readings.length > 1 ? `${v.label}; ${reading} guard` : v.label;
      run(
        "disaggregated",
        (onPass) =>
          mdsPolicy({
            spec,
            initialReplicas: initialPd,
            label: `mds-scaler ${v.algorithm} P/D (${named})`,
            onPass,
            latencyGuardReading: reading,
          }),
        pd,
      );
    }
  }
  return {
    trace: trace.name,
    requests: trace.requests.length,
    spanSeconds: trace.spanSeconds,
    rows,
    wallSeconds: (performance.now() - start) / 1000,
  };
}
