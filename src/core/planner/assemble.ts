/**
 * Phase 8, status assembly: each role's readings, recommendation, decided
 * count, reason and history (`status.ts`); the records of the commit and the
 * recovery; `MetricsReady` and `Blocked` (`conditions.ts`); `lastPassTime` for
 * the gap rule; and whether the control plane moved.
 */
import type { TargetRole } from "../api/model-deployment.js";
import type { RoleStatus, ScalerStatus } from "../api/scaler.js";
import type { Committed } from "./commit.js";
import type { PlannedVector } from "./components.js";
import { blockedCondition, setConditions, type BlockedReason, type ConditionUpdate } from "./conditions.js";
import type { Pass } from "./pass.js";
import type { Recommendations } from "./recommend.js";
import type { Recovery } from "./recovery.js";
import type { RolePlan } from "./role-plans.js";
import { controlPlaneMoved, historyToStatus, observedRoleStatus } from "./status.js";
import { termField } from "./bind.js";
import type { PlanResult } from "./types.js";
import { withWindowWarnings } from "./window-warnings.js";

export interface Assembly {
  readonly pass: Pass;
  readonly plans: ReadonlyMap<string, RolePlan>;
  readonly planned: PlannedVector;
  readonly recovery: Recovery;
  readonly committed: Committed;
  readonly recommendations: Recommendations;
  /** The `Blocked` reasons of every phase. */
  readonly blocked: ReadonlyMap<BlockedReason, string>;
}

/** A role's reason: the plan's, unless a recovery write or a transaction hold changed its count. */
function roleReason(a: Assembly, plan: RolePlan, value: number): string {
  // Stryker disable next-line OptionalChaining,StringLiteral: unreachable, the component phase explains every role's count
  const planned = a.planned.reasons.get(plan.name) ?? plan.recommendation?.reason ?? "NotScaled";
  if (value === a.planned.vector[plan.name]) return planned;
  if (a.recovery.write !== undefined) return a.recovery.write.reason;
  // Stryker disable next-line ConditionalExpression: equivalent, without a recovery write the count differs from the plan only under a transaction hold
  if (a.recovery.holdAll !== undefined) return "RebalanceInProgress";
  return planned;
}

function roleStatus(a: Assembly, role: TargetRole): RoleStatus {
  const p = a.plans.get(role.name) as RolePlan;
  const value = a.committed.finalVector[role.name] ?? role.replicas;
  const lastScaleUpTime = a.committed.scaledUp.has(role.name) ? a.pass.nowIso : p.lastScaleUpTime;
  return {
    ...observedRoleStatus(role.name, role.replicas, p.observation, a.pass.roleStatuses.get(role.name)),
    ...(p.recommendation === undefined ? {} : { rawRecommendedReplicas: p.recommendation.replicas }),
    ...(p.recommendation?.latencyGuard === undefined ? {} : { latencyGuard: p.recommendation.latencyGuard }),
    constrainedReplicas: value,
    reason: roleReason(a, p, value),
    ...(lastScaleUpTime === undefined ? {} : { lastScaleUpTime }),
    ...(p.history.length === 0 ? {} : { stabilizationHistory: historyToStatus(p.history) }),
  };
}

function waitingFor(obs: RolePlan["observation"], name: string): string | undefined {
  if (obs === undefined) return `${name} (unobserved)`;
  if (obs.signalState === "Missing" || obs.signalState === "Stale") return `${name} (${obs.signalState})`;
  if (obs.sampledReplicas < obs.readyReplicas)
    return `${name} (${obs.sampledReplicas} of ${obs.readyReplicas} sampled)`;
  return undefined;
}

/**
 * `Observed` when every role driven by its own signals has current readings
 * from all its ready replicas (a ratio-coupled role follows its driver and
 * needs none); otherwise `WaitingForMetrics`, or `ResourceExhausted` while
 * capacity that was never admitted is the cause.
 */
export function metricsReady(
  roles: readonly TargetRole[],
  plans: ReadonlyMap<string, RolePlan>,
  exhausted: boolean,
): ConditionUpdate {
  // Stryker disable next-line OptionalChaining: equivalent, every target role has a plan
  const driven = roles.filter((r) => plans.get(r.name)?.scaled === true && plans.get(r.name)?.coupled !== true);
  const required = driven.length > 0 ? driven : roles;
  // Stryker disable next-line OptionalChaining: equivalent, every target role has a plan
  const waiting = required.flatMap((role) => waitingFor(plans.get(role.name)?.observation, role.name) ?? []);
  if (waiting.length === 0)
    return {
      type: "MetricsReady",
      status: "True",
      reason: "Observed",
      message: "all required role signals are available",
    };
  if (exhausted)
    return {
      type: "MetricsReady",
      status: "False",
      reason: "ResourceExhausted",
      message: `replicas were not admitted; waiting for ${waiting.join(", ")}`,
    };
  return {
    type: "MetricsReady",
    status: "False",
    reason: "WaitingForMetrics",
    message: `waiting for ${waiting.join(", ")}`,
  };
}

export function assembleStatus(a: Assembly): PlanResult {
  const { pass, committed, recovery } = a;
  const { lastCommit, pendingCohort, lastScaleDown } = committed;
  const { rebalance } = recovery;
  const predictors = a.recommendations.predictors;
  const {
    lastCommit: _lc,
    pendingCohort: _pc,
    rebalance: _rb,
    lastScaleDown: _ls,
    predictors: _pr,
    ...rest
  } = pass.base;
  const metrics = withWindowWarnings(metricsReady(pass.roles, a.plans, a.blocked.has("ResourceExhausted")), pass);
  const status: ScalerStatus = {
    ...rest,
    ...(pass.generation === undefined ? {} : { observedGeneration: pass.generation }),
    binding: pass.bindingStatus,
    roles: pass.roles.map((role) => roleStatus(a, role)),
    ...(lastCommit === undefined ? {} : { lastCommit }),
    ...(pendingCohort === undefined ? {} : { pendingCohort }),
    ...(rebalance === undefined ? {} : { rebalance }),
    ...(lastScaleDown === undefined ? {} : { lastScaleDown }),
    ...(predictors.length === 0 ? {} : { predictors: [...predictors] }),
    lastPassTime: pass.nowIso,
    conditions: setConditions(
      pass.base.conditions,
      [...pass.binding.updates, metrics, blockedCondition(a.blocked)],
      pass.generation,
      pass.nowMs,
    ),
  };
  const commit = committed.commit;
  return {
    status,
    // Stryker disable next-line ConditionalExpression: equivalent, a commit records a new lastCommit (its ID hashes the time), which moves the control plane
    statusChanged: commit !== undefined || controlPlaneMoved(pass.input.scaler.status, status),
    ...(commit === undefined ? {} : { commit }),
    bindingWrite: pass.binding.outcome.write,
    ...termField(pass.binding.outcome),
  };
}
