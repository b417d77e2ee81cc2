/**
 * Guards: the holds that keep a role where it is for now, and the two
 * recoveries that undo a commit (an admission timeout, an aborted
 * retirement). Each hold answers with a reason; the first that applies wins.
 */
import type { ModelDeployment, Retirement, RoleKind, TargetRoleStatus } from "../api/model-deployment.js";
import type { LastScaleDown, PendingCohort, ReplicaVector } from "../api/scaler.js";
import type { RoleObservation } from "../signals/types.js";
import { parseOptionalTimestampMs } from "../time/timestamp.js";
import type { AlgorithmHoldReason, GrowthHoldReason, HoldReason, ScaleDownHoldReason } from "./reasons.js";

/** A hold on one direction of one role. */
export interface Hold<R extends HoldReason = HoldReason> {
  readonly reason: R;
  readonly message: string;
}

/** Retirement states after which nothing is being removed any more. */
const finishedRetirementStates: ReadonlySet<string> = new Set(["Aborted", "Completed"]);

/** The target's retirement while it is still running. */
export function activeRetirement(target: ModelDeployment): Retirement | undefined {
  const retirement = target.status?.retirement ?? undefined;
  if (retirement === undefined) return undefined;
  return finishedRetirementStates.has(retirement.state) ? undefined : retirement;
}

export interface ScaleDownHoldInput {
  readonly kind: RoleKind;
  readonly observation: RoleObservation | undefined;
  /**
   * False for a role driven only by a ratio: it follows its driver, whose own
   * coverage holds it through the algorithm, so its own coverage holds nothing.
   */
  readonly needsOwnSignals: boolean;
  /** The algorithm's own hold (panic, latency guard, missing signals). */
  readonly algorithmHold: { readonly reason: string } | undefined;
  readonly retirement: Retirement | undefined;
  /** `lastScaleDown.cooldownUntil` after an abort. */
  readonly abortCooldownUntilMs: number | undefined;
  readonly lastScaleUpMs: number | undefined;
  readonly decodeGraceSeconds: number;
  readonly nowMs: number;
}

/** Why a role may not shrink this pass, in the specification's order; undefined when it may. */
export function scaleDownHold(input: ScaleDownHoldInput): Hold<ScaleDownHoldReason | AlgorithmHoldReason> | undefined {
  const obs = input.observation;
  if (obs === undefined || obs.readyReplicas === 0) {
    return { reason: "NoReadyReplicas", message: "no ready replica is observed" };
  }
  if (input.needsOwnSignals && (obs.signalState === "Missing" || obs.signalState === "Stale")) {
    return { reason: "IncompleteCoverage", message: `signals are ${obs.signalState}` };
  }
  if (input.needsOwnSignals && obs.sampledReplicas < obs.readyReplicas) {
    return {
      reason: "IncompleteCoverage",
      message: `${obs.sampledReplicas} of ${obs.readyReplicas} ready replicas sampled`,
    };
  }
  if (input.algorithmHold !== undefined) {
    // Algorithms hold with the reasons of `algorithmHoldReasons` (src/core/algorithms/reasons.ts).
    const reason = input.algorithmHold.reason as AlgorithmHoldReason;
    return {
      reason,
      message: `the algorithm holds scale-down (${input.algorithmHold.reason})`,
    };
  }
  if (input.retirement !== undefined) {
    const r = input.retirement;
    return {
      reason: "RetirementActive",
      message: `retirement of ${r.roleName} ordinal ${r.replicaOrdinal} is ${r.state}`,
    };
  }
  // An absent time is one long past: no cooldown, no grace.
  const cooldownUntilMs = input.abortCooldownUntilMs ?? Number.NEGATIVE_INFINITY;
  if (input.nowMs < cooldownUntilMs) {
    return {
      reason: "AbortCooldown",
      message: `scale-down cooldown after an aborted retirement until ${new Date(cooldownUntilMs).toISOString()}`,
    };
  }
  const lastScaleUpMs = input.lastScaleUpMs ?? Number.NEGATIVE_INFINITY;
  if (input.kind === "Decode" && input.nowMs < lastScaleUpMs + input.decodeGraceSeconds * 1000) {
    return {
      reason: "DecodePostScaleUpGrace",
      message: `decode replicas added at ${new Date(lastScaleUpMs).toISOString()} are settling`,
    };
  }
  return undefined;
}

export interface GrowthHoldInput {
  /** A committed scale-up cohort is still waiting for admission (the ceiling applies target-wide). */
  readonly cohortPending: boolean;
  readonly roleStatus: TargetRoleStatus | undefined;
  readonly currentReplicas: number;
  /** After a rollback the exhausted roles do not retry growth before this time. */
  readonly exhaustedUntilMs: number | undefined;
  readonly nowMs: number;
}

/** Why a role may not grow this pass; undefined when it may. */
export function growthHold(input: GrowthHoldInput): Hold<GrowthHoldReason> | undefined {
  if (input.cohortPending)
    return { reason: "PendingAdmission", message: "a committed scale-up is waiting for admission" };
  // A role whose status reports no reservation has no admission step.
  const reserved = input.roleStatus?.quotaReserved ?? input.currentReplicas;
  if (reserved < input.currentReplicas) {
    return { reason: "PendingAdmission", message: `${input.currentReplicas - reserved} replicas wait for admission` };
  }
  const exhaustedUntilMs = input.exhaustedUntilMs ?? Number.NEGATIVE_INFINITY;
  if (input.nowMs < exhaustedUntilMs) {
    return {
      reason: "ResourceExhausted",
      message: `growth was rolled back; retrying after ${new Date(exhaustedUntilMs).toISOString()}`,
    };
  }
  return undefined;
}

export type CohortState =
  | { readonly kind: "Admitted" }
  | { readonly kind: "Pending"; readonly unadmittedRoles: readonly string[] }
  | { readonly kind: "TimedOut"; readonly unadmittedRoles: readonly string[] };

/**
 * Where a committed scale-up stands. A grown role is admitted once its
 * `quotaReserved` covers the count committed (or the current count, if that
 * is lower now); a role whose status reports no reservation has no admission
 * step and counts as admitted.
 */
export function cohortState(
  cohort: PendingCohort,
  current: ReplicaVector,
  roleStatuses: ReadonlyMap<string, TargetRoleStatus>,
  nowMs: number,
  pendingTimeoutSeconds: number,
): CohortState {
  const unadmitted: string[] = [];
  for (const [role, wanted] of Object.entries(cohort.targetVector)) {
    const baseline = cohort.baselineVector[role] ?? 0;
    // A role the cohort did not grow needs nothing: needed <= wanted <= baseline.
    const needed = Math.min(wanted, current[role] ?? 0);
    if (needed <= baseline) continue;
    // No reservation reported: no admission step.
    const reserved = roleStatuses.get(role)?.quotaReserved ?? needed;
    if (reserved < needed) unadmitted.push(role);
  }
  if (unadmitted.length === 0) return { kind: "Admitted" };
  const startedMs = parseOptionalTimestampMs(cohort.startedAt) ?? nowMs;
  if (nowMs - startedMs >= pendingTimeoutSeconds * 1000) return { kind: "TimedOut", unadmittedRoles: unadmitted };
  return { kind: "Pending", unadmittedRoles: unadmitted };
}

/** The whole cohort's baseline restored: every grown role goes back, others keep their counts. */
export function rollbackVector(cohort: PendingCohort, current: ReplicaVector): ReplicaVector {
  const out: ReplicaVector = { ...current };
  for (const [role, baseline] of Object.entries(cohort.baselineVector)) {
    const now = out[role];
    // Stryker disable next-line EqualityOperator,ConditionalExpression: equivalent, at equality the assignment writes the same count and a comparison with undefined is false already
    if (now !== undefined && now > baseline) out[role] = baseline;
  }
  return out;
}

/**
 * Whether the retirement we started by shrinking ended `Aborted`: the
 * retired ordinal belongs to a role our scale-down reduced and lies above
 * its current count. Only a scale-down still marked `Committed` can abort.
 */
export function scaleDownAborted(
  lastScaleDown: LastScaleDown,
  target: ModelDeployment,
  current: ReplicaVector,
): boolean {
  if (lastScaleDown.outcome !== "Committed") return false;
  const retirement = target.status?.retirement ?? undefined;
  if (retirement === undefined || retirement.state !== "Aborted") return false;
  const before = lastScaleDown.preScaleDownVector[retirement.roleName];
  const now = current[retirement.roleName];
  // Stryker disable next-line ConditionalExpression,LogicalOperator: equivalent, a comparison with undefined is false already; the check narrows the types
  if (before === undefined || now === undefined) return false;
  return before > now && retirement.replicaOrdinal >= now;
}

/** The pre-scale-down counts restored for every role the scale-down reduced; roles grown since keep theirs. */
export function restoreVector(lastScaleDown: LastScaleDown, current: ReplicaVector): ReplicaVector {
  const out: ReplicaVector = { ...current };
  for (const [role, before] of Object.entries(lastScaleDown.preScaleDownVector)) {
    const now = out[role];
    // Stryker disable next-line EqualityOperator,ConditionalExpression: equivalent, at equality the assignment writes the same count and a comparison with undefined is false already
    if (now !== undefined && before > now) out[role] = before;
  }
  return out;
}
