/**
 * `calibrate --trace`: the load test a user runs before any cluster, in one command. The first
 * `--duration` seconds of a recorded trace are served by static fleets in the simulator, from the
 * one that carries the slice's 60 s peak twice down by a third at a time, until calibrate's banding
 * answers (up by half at a time first, at most four times, while the targets never held), the same
 * rule the benchmark's calibrated rows use (`runLoadTest` in
 * src/sim/quality/user-figures.ts). The minutes are judged against the scaler's own latency targets.
 */
import type { LatencyGuardReading } from "../../core/algorithms/ttft-reading.js";
import type { ScalerSpec } from "../../core/api/scaler.js";
import type { RoleMinutes } from "../../core/calibrate/minute.js";
import { replicaCapacity } from "../../sim/quality/cluster.js";
import type { RunOptions } from "../../sim/quality/run.js";
import { firstSeconds, loadTrace, overlay, speedUp, type Trace } from "../../sim/quality/traces.js";
import { runLoadTest } from "../../sim/quality/user-figures.js";
import { fleetOptions, type FleetFile } from "../fleet-file.js";
import { latencyTargetsOf } from "./result.js";

export interface LoadTestInput {
  /** A trace name or file, as `simulate --trace` takes it. */
  readonly trace: string;
  readonly durationSeconds: number;
  /** As simulate's `--copies` and `--speedup`: the trace overlaid and sped up before the slice is cut. */
  readonly copies: number;
  readonly speedup: number;
  readonly fleet: FleetFile;
  /** The scaler whose targets judge the minutes: one role, served by the simulator's Server replicas. */
  readonly spec: ScalerSpec;
  readonly reading: LatencyGuardReading;
  readonly seed: number;
  /** `--load-test-fill`: serve the fleets the last step passed over once there is an answer. */
  readonly fill: boolean;
}

export interface LoadTestMinutes {
  /** Where the minutes come from, for the table's first line. */
  readonly source: string;
  readonly roles: readonly RoleMinutes[];
  /** The slice the load test served and how it ran it, for the slice check (slice-check.ts). */
  readonly slice: Trace;
  readonly runOptions: RunOptions;
}

export function minutesFromLoadTest(input: LoadTestInput): LoadTestMinutes {
  const [role, ...others] = input.spec.roles;
  if (role === undefined || others.length > 0)
    throw new Error(
      `--trace: the load test serves one Server role, and the scaler has ${input.spec.roles.length} (${input.spec.roles.map((r) => r.name).join(", ")}); calibrate a prefill/decode scaler from simulated runs (--from-simulation) or Prometheus`,
    );
  if (input.fleet.roles !== undefined && input.fleet.roles.some((r) => r.kind !== "Server"))
    throw new Error(
      `--fleet: roles ${input.fleet.roles.map((r) => `${r.name} (${r.kind})`).join(", ")}: the load test serves one Server role`,
    );
  const loaded = loadTrace(input.trace, { seed: input.seed });
  const whole = speedUp(overlay(loaded, input.copies, input.seed), input.speedup);
  const slice = firstSeconds(whole, input.durationSeconds);
  if (slice.requests.length === 0)
    throw new Error(`--trace ${input.trace}: no request in its first ${input.durationSeconds} s`);
  const options = fleetOptions(input.fleet);
  const capacity = replicaCapacity(options);
  const runOptions: RunOptions = { seed: input.seed, fleet: { ...options, capacity } };
  const test = runLoadTest(slice, capacity, runOptions, latencyTargetsOf(input.spec), input.reading, input.fill);
  return {
    // How the file was read (its format, spreads) tells a user their trace was understood.
    source: `a load test in the simulator on ${slice.name}: static fleets of ${test.loadTestReplicas.join(", ")} replicas${loaded.notes.length > 0 ? ` (the trace: ${loaded.notes.join("; ")})` : ""}`,
    roles: [{ role: role.name, kind: "Server", minutes: test.minutes, skipped: test.skipped }],
    slice,
    runOptions,
  };
}
