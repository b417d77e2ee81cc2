/**
 * The reasons the planner writes into `status.roles[].reason` when one of its
 * rules changed a role's count, as one union. The sets the planner needs (which
 * reasons set `Blocked=PacingBounded`, which are holds) derive from the table
 * below; adding a reason without classifying it does not compile.
 */
import type { BlockedReason } from "./conditions.js";

/** Clamping to `[minReplicas, maxReplicas]` (`bounds.ts`). */
export const boundsReasons = ["MinReplicas", "MaxReplicas"] as const;
/** The floor by the hour raised the recommendation (`hourly-floor.ts`). */
export const scheduleReasons = ["HourlyFloor"] as const;
/** Step limits and stabilization windows (`pacing.ts`). */
export const pacingLimitReasons = [
  "ScaleUpLimit",
  "ScaleDownLimit",
  "ScaleUpStabilization",
  "ScaleDownStabilization",
] as const;
/** The planner's own scale-down holds, in their order (`guards.ts`). */
export const scaleDownHoldReasons = [
  "NoReadyReplicas",
  "IncompleteCoverage",
  "RetirementActive",
  "AbortCooldown",
  "DecodePostScaleUpGrace",
] as const;
/** Growth holds (`guards.ts`). */
export const growthHoldReasons = ["PendingAdmission", "ResourceExhausted"] as const;
/** The algorithm's scale-down holds the planner passes through (`src/core/algorithms/reasons.ts`). */
export const algorithmHoldReasons = [
  "Panic",
  "LatencyGuardHold",
  "PredictiveConsolidationHold",
  "WaitingForMetrics",
  "NoReadyReplicas",
] as const;
/** A component's direction or projection moved the role (`components.ts`). */
export const componentReasons = [
  "ComponentScalingUp",
  "ComponentScalingDown",
  "RatioCoupled",
  "RatioConflict",
] as const;
/** A recovery write names itself (`recovery.ts`). */
export const recoveryReasons = [
  "ScaleDownAborted",
  "ResourceExhausted",
  "DonorRelease",
  "ReceiverAcquire",
  "RebalanceInProgress",
] as const;

export type BoundsReason = (typeof boundsReasons)[number];
export type ScheduleReason = (typeof scheduleReasons)[number];
export type PacingLimitReason = (typeof pacingLimitReasons)[number];
export type ScaleDownHoldReason = (typeof scaleDownHoldReasons)[number];
export type GrowthHoldReason = (typeof growthHoldReasons)[number];
export type AlgorithmHoldReason = (typeof algorithmHoldReasons)[number];
export type HoldReason = ScaleDownHoldReason | GrowthHoldReason | AlgorithmHoldReason;
export type ComponentReason = (typeof componentReasons)[number];
export type RecoveryReason = (typeof recoveryReasons)[number];
/** A reason one of the planner's constraints gives for a count that is not the recommendation. */
export type ConstraintReason = BoundsReason | ScheduleReason | PacingLimitReason | HoldReason | ComponentReason;
export type PlannerReason = ConstraintReason | RecoveryReason;

/**
 * What a constraint reason reports on `Blocked` when it keeps a driven role
 * from its recommendation. `undefined`: policy, not a hold (bounds, ratio
 * coupling), or a reason whose phase reports it with its own message (a
 * ratio conflict, a rollback's exhaustion).
 */
export const blockedByReason: Readonly<Record<ConstraintReason, BlockedReason | undefined>> = {
  MinReplicas: undefined,
  MaxReplicas: undefined,
  HourlyFloor: undefined,
  ScaleUpLimit: "PacingBounded",
  ScaleDownLimit: "PacingBounded",
  ScaleUpStabilization: "PacingBounded",
  ScaleDownStabilization: "PacingBounded",
  NoReadyReplicas: "PacingBounded",
  IncompleteCoverage: "PacingBounded",
  RetirementActive: "PacingBounded",
  AbortCooldown: "ScaleDownAborted",
  DecodePostScaleUpGrace: "PacingBounded",
  PendingAdmission: "PacingBounded",
  ResourceExhausted: undefined,
  Panic: "PacingBounded",
  LatencyGuardHold: "PacingBounded",
  PredictiveConsolidationHold: "PacingBounded",
  WaitingForMetrics: "PacingBounded",
  ComponentScalingUp: undefined,
  ComponentScalingDown: undefined,
  RatioCoupled: undefined,
  RatioConflict: undefined,
};

/** Reasons that mean a step limit, window or hold kept a role from its recommendation. */
export const pacingReasons: ReadonlySet<string> = new Set(
  Object.entries(blockedByReason)
    .filter(([, blocked]) => blocked === "PacingBounded")
    .map(([reason]) => reason),
);

export function isConstraintReason(reason: string): reason is ConstraintReason {
  return Object.hasOwn(blockedByReason, reason);
}

/** The `Blocked` reason a role's planned reason reports, if any. */
export function blockedReasonOf(reason: string): BlockedReason | undefined {
  return isConstraintReason(reason) ? blockedByReason[reason] : undefined;
}
