/**
 * mds-scaler in the loop: at every `sampling.intervalSeconds` the observation
 * builder turns the scraped engine series into a `RoleObservation`, the real
 * pure core's `plan()` decides, and a commit's vector becomes the fleet's
 * desired count (new replicas then take their cold start). The target the
 * planner reads is the fleet's state: desired, ready and admitted replicas, the
 * binding and decision annotations it wrote, its generation.
 */
import type { ModelDeployment } from "../../../core/api/model-deployment.js";
import { bindingAnnotation, decisionAnnotation } from "../../../core/api/model-deployment.js";
import type { ScalerSpec, ScalerStatus } from "../../../core/api/scaler.js";
import { plan } from "../../../core/planner/plan.js";
import type { PlanResult } from "../../../core/planner/types.js";
import { fieldsRead } from "../../../core/algorithms/reads.js";
import { buildObservation } from "../observations.js";
import type { Policy, PolicyContext } from "../policy.js";

export interface MdsOptions {
  readonly spec: ScalerSpec;
  readonly initialReplicas: number;
  readonly label?: string;
  /** Receives every pass's result (reports, tests). */
  readonly onPass?: (result: PlanResult, nowSeconds: number) => void;
}

/** The one Server role the simulated fleet serves; the scaler must name exactly one role. */
export function serverRoleName(spec: ScalerSpec): string {
  const [role, ...rest] = spec.roles;
  if (role === undefined || rest.length > 0)
    throw new Error(
      `spec.roles: the quality simulator models one Server role, got ${spec.roles.length} roles (${spec.roles.map((r) => r.name).join(", ")})`,
    );
  return role.name;
}

function windowsOf(spec: ScalerSpec): { stable: number; panic: number } {
  const a = spec.algorithm;
  const tt = a.type === "Predictive" ? a.predictive?.tokenThroughput : a.tokenThroughput;
  return { stable: tt?.stableWindowSeconds ?? 180, panic: tt?.panicWindowSeconds ?? 60 };
}

export function mdsPolicy(options: MdsOptions): Policy {
  const spec = options.spec;
  const role = serverRoleName(spec);
  const reads = fieldsRead(spec, { name: role, kind: "Server" });
  const bounds = spec.roles[0] as { minReplicas: number; maxReplicas: number };
  const initial = Math.min(bounds.maxReplicas, Math.max(bounds.minReplicas, options.initialReplicas));
  const windows = windowsOf(spec);
  let status: ScalerStatus | undefined;
  const reasons = new Map<string, number>();
  let passes = 0;
  let generation = 1;
  let resourceVersion = 1;
  const annotations: Record<string, string> = {};

  const targetOf = (ctx: PolicyContext): ModelDeployment => {
    const desired = ctx.fleet.desiredReplicas;
    const ready = ctx.fleet.count("Ready");
    const admitted = ctx.fleet.count("Starting") + ready;
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
      spec: { roles: [{ name: role, kind: "Server", replicas: desired }] },
      status: { roles: [{ name: role, desired, ready, quotaReserved: Math.min(desired, admitted) }] },
    };
  };

  return {
    name: options.label ?? `mds-scaler ${spec.algorithm.type}`,
    family: "mds-scaler",
    intervalSeconds: spec.sampling.intervalSeconds,
    initialReplicas: initial,
    notes() {
      return [...reasons.entries()]
        .sort((a, b) => b[1] - a[1])
        .slice(0, 4)
        .map(([reason, n]) => `${reason} ${Math.round((100 * n) / Math.max(1, passes))}%`)
        .join(", ");
    },
    decide(ctx: PolicyContext) {
      const readyPods = ctx.fleet.replicas.filter((r) => r.phase === "Ready");
      const observation = buildObservation({
        pods: readyPods.flatMap((r) => {
          const history = ctx.scrapes.get(r.name);
          return history === undefined ? [] : [{ pod: r.name, history }];
        }),
        readyReplicas: readyPods.length,
        nowSeconds: ctx.nowSeconds,
        epochMs: ctx.epochMs,
        stableWindowSeconds: windows.stable,
        panicWindowSeconds: windows.panic,
        samplingIntervalSeconds: spec.sampling.intervalSeconds,
        reads,
      });
      const result = plan({
        scaler: {
          metadata: { name: "sim-scaler", namespace: "default", uid: "sim-scaler", generation: 1 },
          spec,
          status,
        },
        target: targetOf(ctx),
        observations: { [role]: observation },
        nowMs: ctx.epochMs + ctx.nowSeconds * 1000,
      });
      status = result.status;
      passes++;
      const reason = result.status.roles?.[0]?.reason ?? "none";
      reasons.set(reason, (reasons.get(reason) ?? 0) + 1);
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
      const wanted = commit.vector[role];
      if (wanted !== undefined && wanted !== ctx.fleet.desiredReplicas) ctx.fleet.setDesired(wanted, ctx.nowSeconds);
    },
  };
}
