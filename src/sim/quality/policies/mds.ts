/**
 * mds-scaler in the loop: at every `sampling.intervalSeconds` the observation
 * builder turns each role's scraped engine series into a `RoleObservation`, the real
 * pure core's `plan()` decides, and a commit's vector becomes the fleet's
 * desired counts (new replicas then take their cold start). The target the
 * planner reads is the fleet's state: desired, ready and admitted replicas, the
 * binding and decision annotations it wrote, its generation.
 */
import type { ModelDeployment } from "../../../core/api/model-deployment.js";
import { bindingAnnotation, decisionAnnotation } from "../../../core/api/model-deployment.js";
import type { ScalerSpec, ScalerStatus } from "../../../core/api/scaler.js";
import { plan } from "../../../core/planner/plan.js";
import type { PlanResult } from "../../../core/planner/types.js";
import { fieldsRead } from "../../../core/algorithms/reads.js";
import type { LatencyGuardReading } from "../../../core/algorithms/ttft-reading.js";
import { buildObservation } from "../observations.js";
import type { FleetRole, QualityFleet } from "../cluster.js";
import type { RoleObservation } from "../../../core/signals/types.js";
import type { Policy, PolicyContext } from "../policy.js";
import { samplingWindowsOf } from "../../../core/algorithms/windows.js";

export interface MdsOptions {
  readonly spec: ScalerSpec;
  /** The warm fleet at time zero: a count for a one-role scaler, or one per scaler role name (clamped to its bounds). */
  readonly initialReplicas: number | Readonly<Record<string, number>>;
  readonly label?: string;
  /** Receives every pass's result (reports, tests). */
  readonly onPass?: (result: PlanResult, nowSeconds: number) => void;
  /** How the latency guard reads TTFT (`queueing`, the default, when absent), as the controller's `--latency-guard-reading`. */
  readonly latencyGuardReading?: LatencyGuardReading;
  /**
   * The spec a pass plans with, when it varies from pass to pass (a benchmark's measurement, such as
   * the error budget's factor on the per-replica target); `spec` when absent. Its notes join the row's.
   */
  readonly specAt?: { readonly at: (ctx: PolicyContext) => ScalerSpec; readonly notes: () => string };
}

/**
 * The fleet role a scaler role drives: the fleet's only role when both have
 * one (whatever its name), otherwise the fleet role of the same name.
 */
function fleetRoleOf(fleet: QualityFleet, scalerRoles: readonly string[], role: string): FleetRole {
  const only = fleet.roles.length === 1 && scalerRoles.length === 1 ? fleet.roles[0] : undefined;
  const match = only ?? fleet.roles.find((r) => r.name === role);
  if (match === undefined)
    throw new Error(
      `spec.roles: role ${JSON.stringify(role)} is not a role of the simulated fleet (${fleet.roles.map((r) => r.name).join(", ")})`,
    );
  return match;
}

/** The spec each pass plans with: `spec`, or what `specAt` makes of it. */
function passSpec(options: MdsOptions): (ctx: PolicyContext) => ScalerSpec {
  const { spec, specAt } = options;
  return specAt === undefined ? () => spec : (ctx) => specAt.at(ctx);
}

export function mdsPolicy(options: MdsOptions): Policy {
  const spec = options.spec;
  const roles = spec.roles.map((r) => r.name);
  if (roles.length === 0) throw new Error("spec.roles: the scaler names no role");
  const specOf = passSpec(options);
  const clamp = (role: string, n: number): number => {
    const b = spec.roles.find((r) => r.name === role) as { minReplicas: number; maxReplicas: number };
    return Math.min(b.maxReplicas, Math.max(b.minReplicas, n));
  };
  const requested = options.initialReplicas;
  const initial: number | Record<string, number> =
    typeof requested === "number"
      ? roles.length === 1
        ? clamp(roles[0] as string, requested)
        : Object.fromEntries(roles.map((r) => [r, clamp(r, requested)]))
      : Object.fromEntries(roles.map((r) => [r, clamp(r, requested[r] ?? 1)]));
  const windows = samplingWindowsOf(spec);
  let status: ScalerStatus | undefined;
  const reasons = new Map<string, number>();
  let passes = 0;
  let generation = 1;
  let resourceVersion = 1;
  const annotations: Record<string, string> = {};

  const targetOf = (ctx: PolicyContext): ModelDeployment => {
    const fleet = ctx.fleet;
    const per = roles.map((name) => {
      const fleetRole = fleetRoleOf(fleet, roles, name);
      const desired = fleet.desiredOf(fleetRole.name);
      const ready = fleet.count("Ready", fleetRole.name);
      const admitted = fleet.count("Starting", fleetRole.name) + ready;
      return { name, kind: fleetRole.kind, desired, ready, quotaReserved: Math.min(desired, admitted) };
    });
    return {
      apiVersion: "worker.gpustack.ai/v1",
      kind: "ModelDeployment",
      metadata: {
        name: spec.targetRef.name,
        namespace: "default",
        uid: "sim-target",
        generation,
        resourceVersion: String(resourceVersion),
        annotations: { ...annotations },
      },
      spec: { roles: per.map((r) => ({ name: r.name, kind: r.kind, replicas: r.desired })) },
      status: {
        roles: per.map((r) => ({ name: r.name, desired: r.desired, ready: r.ready, quotaReserved: r.quotaReserved })),
      },
    };
  };

  return {
    name: options.label ?? `mds-scaler ${spec.algorithm.type}`,
    family: "mds-scaler",
    intervalSeconds: spec.sampling.intervalSeconds,
    initialReplicas: initial,
    roles,
    notes() {
      const shares = [...reasons.entries()]
        .sort((a, b) => b[1] - a[1])
        .slice(0, 4)
        .map(([reason, n]) => `${reason} ${Math.round((100 * n) / Math.max(1, passes))}%`)
        .join(", ");
      return options.specAt === undefined ? shares : `${shares}; ${options.specAt.notes()}`;
    },
    decide(ctx: PolicyContext) {
      const planned = specOf(ctx);
      const observations: Record<string, RoleObservation> = {};
      for (const name of roles) {
        const fleetRole = fleetRoleOf(ctx.fleet, roles, name);
        const readyPods = ctx.fleet.replicas.filter((r) => r.phase === "Ready" && r.role === fleetRole.name);
        observations[name] = buildObservation({
          kind: fleetRole.kind,
          pods: readyPods.flatMap((r) => {
            const history = ctx.scrapes.get(r.name);
            return history === undefined ? [] : [{ pod: r.name, history }];
          }),
          readyReplicas: readyPods.length,
          nowSeconds: ctx.nowSeconds,
          epochMs: ctx.epochMs,
          ...windows,
          samplingIntervalSeconds: spec.sampling.intervalSeconds,
          reads: fieldsRead(spec, { name, kind: fleetRole.kind }),
        });
      }
      const result = plan({
        scaler: {
          metadata: { name: "sim-scaler", namespace: "default", uid: "sim-scaler", generation: 1 },
          spec: planned,
          status,
        },
        target: targetOf(ctx),
        observations,
        nowMs: ctx.epochMs + ctx.nowSeconds * 1000,
        latencyGuardReading: options.latencyGuardReading,
      });
      status = result.status;
      passes++;
      for (const role of result.status.roles ?? []) {
        const reason = role.reason ?? "none";
        reasons.set(reason, (reasons.get(reason) ?? 0) + 1 / roles.length);
      }
      options.onPass?.(result, ctx.nowSeconds);
      const write = result.bindingWrite;
      if (write?.kind === "acquire") annotations[bindingAnnotation] = JSON.stringify(write.binding);
      if (write?.kind === "release") delete annotations[bindingAnnotation];
      if (write !== undefined && write.kind !== "none") resourceVersion++;
      const commit = result.commit;
      if (commit === undefined) return;
      if (commit.binding !== undefined) annotations[bindingAnnotation] = JSON.stringify(commit.binding);
      annotations[decisionAnnotation] = JSON.stringify(commit.decision);
      generation = commit.targetGeneration;
      resourceVersion++;
      const vector: Record<string, number> = {};
      for (const name of roles) {
        const wanted = commit.vector[name];
        if (wanted !== undefined) vector[fleetRoleOf(ctx.fleet, roles, name).name] = wanted;
      }
      ctx.fleet.setDesiredVector(vector, ctx.nowSeconds);
    },
  };
}
