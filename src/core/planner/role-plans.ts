/**
 * Phase 4, role plans: for every role, the recommendation raised to the hour's
 * floor where one is written (`hourly-floor.ts`) and clamped to the bounds
 * (`bounds.ts`), the history it joins under the gap and hold rules and the
 * wish after both stabilization windows (`pacing.ts`), the step limits, and
 * the holds on each direction (`guards.ts`).
 */
import type { TargetRole } from "../api/model-deployment.js";
import type { RoleRecommendation } from "../algorithms/types.js";
import type { RoleObservation } from "../signals/types.js";
import { parseOptionalTimestampMs } from "../time/timestamp.js";
import { clampToBounds, type RoleBoundsRange } from "./bounds.js";
import { raiseToHourlyFloor } from "./hourly-floor.js";
import { growthHold, scaleDownHold, type Hold } from "./guards.js";
import {
  continuousHistory,
  historyGapSeconds,
  historyHorizonSeconds,
  provenLastPassMs,
  recordHistory,
  scaleDownStep,
  scaleUpStep,
  stabilize,
  type HistorySample,
} from "./pacing.js";
import { missingObservation, type Pass } from "./pass.js";
import type { AlgorithmHoldReason, GrowthHoldReason, ScaleDownHoldReason } from "./reasons.js";
import type { Recommendations } from "./recommend.js";
import type { RecoveryState } from "./recovery-state.js";
import { historyFromStatus } from "./status.js";

/** Everything one pass needs about one role. */
export interface RolePlan {
  readonly name: string;
  readonly role: TargetRole;
  readonly current: number;
  readonly range: RoleBoundsRange;
  readonly observation: RoleObservation | undefined;
  readonly recommendation: RoleRecommendation | undefined;
  readonly scaled: boolean;
  /** Driven only by a ratio to a driven role (`RatioCoupled`): its own signals gate nothing. */
  readonly coupled: boolean;
  /** Bounds-clamped recommendation (what history records). */
  readonly clamped: { readonly value: number; readonly reason: string };
  /** After the stabilization windows. */
  readonly stabilized: { readonly value: number; readonly reason: string };
  readonly history: HistorySample[];
  readonly upHold: Hold<GrowthHoldReason> | undefined;
  readonly downHold: Hold<ScaleDownHoldReason | AlgorithmHoldReason> | undefined;
  readonly upStepReplicas: number;
  readonly downStepReplicas: number;
  readonly lastScaleUpTime: string | undefined;
}

const ratioCoupledReason = "RatioCoupled";
const waitingForMetricsReason = "WaitingForMetrics";

/**
 * The hold rule: whether this pass holds the role for want of signals, so its
 * recommendation is no recommendation and joins no history. The algorithm
 * said so (`WaitingForMetrics`, which a coupled role inherits from a waiting
 * driver), or the role reads its own signals and they are `Missing` or
 * `Stale` (or it is unobserved). The pass still ran: it is no gap.
 */
export function holdsForSignals(
  rec: RoleRecommendation | undefined,
  observation: RoleObservation | undefined,
  coupled: boolean,
): boolean {
  if (rec?.scaleDownHold?.reason === waitingForMetricsReason) return true;
  if (coupled) return false;
  return observation === undefined || observation.signalState === "Missing" || observation.signalState === "Stale";
}

interface HistoryRule {
  readonly lastPassMs: number | undefined;
  readonly gapSeconds: number;
  readonly horizonSeconds: number;
  readonly windows: { readonly scaleUpSeconds: number; readonly scaleDownSeconds: number };
}

function historyRule(pass: Pass): HistoryRule {
  const histories = [...pass.previousRoles.values()].map((r) => historyFromStatus(r.stabilizationHistory));
  return {
    lastPassMs: provenLastPassMs(parseOptionalTimestampMs(pass.base.lastPassTime), histories, pass.nowMs),
    gapSeconds: historyGapSeconds(pass.spec.sampling.intervalSeconds),
    horizonSeconds: historyHorizonSeconds(pass.spec),
    windows: {
      scaleUpSeconds: pass.spec.behavior.scaleUp.stabilizationWindowSeconds,
      scaleDownSeconds: pass.spec.behavior.scaleDown.stabilizationWindowSeconds,
    },
  };
}

/** The clamped recommendation, the history after this pass, and the stabilized wish. */
function paced(
  pass: Pass,
  role: TargetRole,
  rec: RoleRecommendation | undefined,
  range: RoleBoundsRange,
  rule: HistoryRule,
): Pick<RolePlan, "scaled" | "clamped" | "stabilized" | "history" | "coupled"> {
  const scaled = rec?.scaled === true;
  const coupled = rec?.reason === ratioCoupledReason;
  const recorded = scaled && !holdsForSignals(rec, pass.input.observations[role.name], coupled);
  const wanted = rec?.replicas ?? role.replicas;
  // The floor raises a recommendation the pass records; a hold for signals and a ratio's follower stay as they are.
  const floored =
    recorded && !coupled ? raiseToHourlyFloor(wanted, range.floorByUtcHour, pass.nowMs) : { value: wanted, reason: "" };
  const bounded = clampToBounds(floored.value, range);
  // Stryker disable next-line ObjectLiteral,StringLiteral: equivalent, an unscaled role's clamped and stabilized values are never read (every reader checks scaled first)
  const clamped = !scaled ? { value: role.replicas, reason: "" } : bounded.reason === "" ? floored : bounded;
  const before = pass.previousRoles.get(role.name);
  const past = continuousHistory(
    historyFromStatus(before?.stabilizationHistory),
    rule.lastPassMs,
    pass.nowMs,
    rule.gapSeconds,
  );
  const history = recorded
    ? recordHistory(past, { timestampMs: pass.nowMs, replicas: clamped.value }, rule.horizonSeconds)
    : [...past];
  const stabilized = scaled
    ? stabilize(history, pass.nowMs, role.replicas, clamped.value, rule.windows)
    : // Stryker disable next-line ObjectLiteral,StringLiteral: equivalent, as for clamped above
      { value: role.replicas, reason: "" };
  return { scaled, clamped, stabilized, history, coupled };
}

function planRole(
  pass: Pass,
  role: TargetRole,
  range: RoleBoundsRange,
  recommendations: Recommendations,
  state: RecoveryState,
  rule: HistoryRule,
): RolePlan {
  const rec = recommendations.byRole.get(role.name);
  const observation = pass.input.observations[role.name];
  const lastScaleUpTime = pass.previousRoles.get(role.name)?.lastScaleUpTime;
  const pacing = paced(pass, role, rec, range, rule);
  const { scaleUp, scaleDown } = pass.spec.behavior;
  return {
    name: role.name,
    role,
    current: role.replicas,
    range,
    observation,
    recommendation: rec,
    ...pacing,
    upHold: growthHold({
      cohortPending: state.cohort?.kind === "Pending",
      roleStatus: pass.roleStatuses.get(role.name),
      currentReplicas: role.replicas,
      exhaustedUntilMs: state.exhaustedRole(role) ? state.exhaustedUntilMs : undefined,
      nowMs: pass.nowMs,
    }),
    downHold: scaleDownHold({
      kind: role.kind,
      observation: pacing.coupled ? (observation ?? missingObservation(pass.roleStatuses.get(role.name))) : observation,
      needsOwnSignals: !pacing.coupled,
      algorithmHold: rec?.scaleDownHold,
      retirement: state.retirement,
      abortCooldownUntilMs: state.cooldownUntilMs,
      lastScaleUpMs: parseOptionalTimestampMs(lastScaleUpTime),
      decodeGraceSeconds: scaleDown.decodePostScaleUpGraceSeconds,
      nowMs: pass.nowMs,
    }),
    upStepReplicas: scaleUpStep(scaleUp, role.replicas).value,
    downStepReplicas: scaleDownStep(scaleDown, role.replicas).value,
    lastScaleUpTime,
  };
}

export function planRoles(
  pass: Pass,
  bounds: ReadonlyMap<string, RoleBoundsRange>,
  recommendations: Recommendations,
  state: RecoveryState,
): ReadonlyMap<string, RolePlan> {
  const rule = historyRule(pass);
  const plans = new Map<string, RolePlan>();
  for (const role of pass.roles) {
    const range = bounds.get(role.name) as RoleBoundsRange;
    plans.set(role.name, planRole(pass, role, range, recommendations, state, rule));
  }
  return plans;
}
