/**
 * What earlier passes left that this pass must respect, read before planning
 * (`guards.ts`, `rebalance.ts`): a running retirement, the abort cooldown, the
 * pending cohort, and the exhaustion episode with the pool it keeps from growing.
 */
import type { Retirement, TargetRole } from "../api/model-deployment.js";
import type { RebalanceStatus } from "../api/scaler.js";
import { parseOptionalTimestampMs } from "../time/timestamp.js";
import { activeRetirement, cohortState, type CohortState } from "./guards.js";
import type { Pass } from "./pass.js";
import { seekingDonor, transactionInFlight } from "./rebalance.js";

export interface RecoveryState {
  readonly retirement: Retirement | undefined;
  /** End of the scale-down cooldown after an aborted retirement. */
  readonly cooldownUntilMs: number | undefined;
  readonly cohort: CohortState | undefined;
  /** The exhaustion episode, unless a spec edit or an external change ended it. */
  readonly rebalance: RebalanceStatus | undefined;
  /** After a rollback the exhausted pool does not retry growth before this time. */
  readonly exhaustedUntilMs: number | undefined;
  /** Whether a role belongs to the exhausted pool (the receiver, or its instance type). */
  readonly exhaustedRole: (role: TargetRole) => boolean;
}

/** A spec edit or someone else's change to the target starts a new exhaustion episode. */
function currentEpisode(pass: Pass): RebalanceStatus | undefined {
  const { base, target } = pass;
  const rebalance = base.rebalance;
  if (rebalance === undefined || transactionInFlight(rebalance)) return rebalance;
  const targetGeneration = target.metadata.generation;
  const externalChange =
    base.lastCommit !== undefined &&
    targetGeneration !== undefined &&
    targetGeneration !== base.lastCommit.targetGeneration;
  return rebalance.exhaustionEpisodeGeneration !== (pass.generation ?? 0) || externalChange ? undefined : rebalance;
}

export function readRecoveryState(pass: Pass): RecoveryState {
  const { base, spec, nowMs } = pass;
  const lastScaleDown = base.lastScaleDown;
  const rebalance = currentEpisode(pass);
  const receiverPool =
    rebalance?.receiverRole === undefined ? undefined : pass.roles.find((r) => r.name === rebalance.receiverRole);
  const pendingTimeoutMs = spec.sampling.pendingTimeoutSeconds * 1000;
  return {
    retirement: activeRetirement(pass.target),
    cooldownUntilMs:
      lastScaleDown?.outcome === "Aborted" ? parseOptionalTimestampMs(lastScaleDown.cooldownUntil) : undefined,
    cohort:
      base.pendingCohort === undefined
        ? undefined
        : cohortState(base.pendingCohort, pass.current, pass.roleStatuses, nowMs, spec.sampling.pendingTimeoutSeconds),
    rebalance,
    exhaustedUntilMs:
      seekingDonor(rebalance) && rebalance?.startedAt !== undefined
        ? (parseOptionalTimestampMs(rebalance.startedAt) ?? nowMs) + pendingTimeoutMs
        : undefined,
    exhaustedRole: (role) =>
      rebalance?.receiverRole === role.name ||
      (receiverPool?.instanceType !== undefined &&
        receiverPool.instanceType !== "" &&
        role.instanceType === receiverPool.instanceType),
  };
}
