/**
 * The facts of one pass, read once from the input after the binding allowed
 * planning: the target's roles in spec order, their counts and status, the
 * status this pass builds on, and the binding it records.
 */
import type { ModelDeployment, TargetRole, TargetRoleStatus } from "../api/model-deployment.js";
import type { ReplicaVector, RoleStatus, ScalerSpec, ScalerStatus } from "../api/scaler.js";
import type { RoleObservation } from "../signals/types.js";
import { formatTimestamp } from "../time/timestamp.js";
import type { BindingPhase } from "./bind.js";
import { observedRoleStatus } from "./status.js";
import type { PlanInput } from "./types.js";

export interface Pass {
  readonly input: PlanInput;
  readonly spec: ScalerSpec;
  readonly generation: number | undefined;
  readonly nowMs: number;
  readonly nowIso: string;
  readonly target: ModelDeployment;
  /** The previous status, without a replaced target's state. */
  readonly base: ScalerStatus;
  /** Target roles in the spec's role order. */
  readonly roles: readonly TargetRole[];
  readonly current: ReplicaVector;
  readonly roleStatuses: ReadonlyMap<string, TargetRoleStatus>;
  readonly previousRoles: ReadonlyMap<string, RoleStatus>;
  readonly bindingStatus: NonNullable<ScalerStatus["binding"]>;
  readonly binding: BindingPhase;
}

function specIndex(roles: readonly { readonly name: string }[], name: string): number {
  const at = roles.findIndex((r) => r.name === name);
  // Stryker disable next-line ConditionalExpression: equivalent, a target role the spec does not list stops the pass at the gate (no bounds), where order does not matter
  return at < 0 ? roles.length : at;
}

export function vectorOf(roles: readonly TargetRole[]): ReplicaVector {
  const out: ReplicaVector = {};
  for (const role of roles) out[role.name] = role.replicas;
  return out;
}

export function readPass(input: PlanInput, target: ModelDeployment, binding: BindingPhase): Pass {
  const spec = input.scaler.spec;
  const base = binding.base;
  const { outcome } = binding;
  return {
    input,
    spec,
    generation: input.scaler.metadata.generation,
    nowMs: input.nowMs,
    nowIso: formatTimestamp(input.nowMs),
    target,
    base,
    roles: [...target.spec.roles].sort((a, b) => specIndex(spec.roles, a.name) - specIndex(spec.roles, b.name)),
    current: vectorOf(target.spec.roles),
    // Stryker disable next-line ArrayDeclaration: equivalent, these maps are read by role name and a placeholder entry has none
    roleStatuses: new Map((target.status?.roles ?? []).map((r) => [r.name, r] as const)),
    // Stryker disable next-line ArrayDeclaration: equivalent, as above
    previousRoles: new Map((base.roles ?? []).map((r) => [r.name, r] as const)),
    bindingStatus: {
      targetUID: target.metadata.uid ?? "",
      targetName: target.metadata.name,
      // Stryker disable next-line LogicalOperator,ConditionalExpression: equivalent, decideBinding gives a term exactly when it allows commits; the check narrows the type
      ...(outcome.commit && outcome.term !== undefined ? { term: outcome.term } : {}),
    },
    binding,
  };
}

/** The pass on another base status (records rebuilt from the target's decision). */
export function withBase(pass: Pass, base: ScalerStatus): Pass {
  // Stryker disable next-line ArrayDeclaration: equivalent, the map is read by role name and a placeholder entry has none
  return { ...pass, base, previousRoles: new Map((base.roles ?? []).map((r) => [r.name, r] as const)) };
}

/** An unobserved role as the algorithm sees it: `Missing`, with the target's ready count. */
export function missingObservation(status: TargetRoleStatus | undefined): RoleObservation {
  return { readyReplicas: status?.ready ?? 0, sampledReplicas: 0, signalState: "Missing" };
}

/** Role statuses with readings only, carrying history and growth times (a pass that planned nothing). */
export function observedRoles(pass: Pass): RoleStatus[] {
  return pass.target.spec.roles.map((role) => {
    const before = pass.previousRoles.get(role.name);
    return {
      ...observedRoleStatus(
        role.name,
        role.replicas,
        pass.input.observations[role.name],
        pass.roleStatuses.get(role.name),
      ),
      ...(before?.lastScaleUpTime === undefined ? {} : { lastScaleUpTime: before.lastScaleUpTime }),
      ...(before?.stabilizationHistory === undefined ? {} : { stabilizationHistory: before.stabilizationHistory }),
    };
  });
}
