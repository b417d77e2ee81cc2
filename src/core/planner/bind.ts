/**
 * Phase 1, binding: may the scaler plan, may it commit, under which term, and
 * what the binding writes on the target (`decideBinding` in
 * `src/core/binding/binding.ts` reads the annotations). This phase also sets
 * `Bound` and `Active`, clears a replaced target's state once the replacement
 * is acknowledged, and answers the whole pass when planning stops here.
 */
import type { ScalerStatus } from "../api/scaler.js";
import { decideBinding, type BindingOutcome } from "../binding/binding.js";
import { setConditions, type ConditionUpdate } from "./conditions.js";
import { controlPlaneMoved } from "./status.js";
import type { PlanInput, PlanResult } from "./types.js";

export interface BindingPhase {
  readonly outcome: BindingOutcome;
  /** `Bound` and `Active` for this pass. */
  readonly updates: readonly ConditionUpdate[];
  /** The status this pass builds on: the previous one, without a replaced target's state. */
  readonly base: ScalerStatus;
}

/** Status without anything that belonged to a replaced target. */
export function withoutTargetState(status: ScalerStatus | undefined): ScalerStatus {
  if (status === undefined) return {};
  const {
    lastCommit: _c,
    pendingCohort: _p,
    rebalance: _r,
    lastScaleDown: _s,
    predictors: _pr,
    roles: _ro,
    binding: _b,
    ...rest
  } = status;
  return rest;
}

export function bindingPhase(input: PlanInput): BindingPhase {
  const { scaler, target } = input;
  let outcome = decideBinding(
    {
      name: scaler.metadata.name,
      uid: scaler.metadata.uid ?? "",
      generation: scaler.metadata.generation ?? 0,
      mode: scaler.spec.mode,
      suspend: scaler.spec.suspend,
      deleting: scaler.metadata.deletionTimestamp !== undefined,
      status: scaler.status,
    },
    target === undefined
      ? undefined
      : { uid: target.metadata.uid ?? "", name: target.metadata.name, annotations: target.metadata.annotations ?? {} },
  );
  // A caller that installed the binding itself says under which term it holds it.
  if (outcome.commit && input.bindingTerm !== undefined) outcome = { ...outcome, term: input.bindingTerm };
  return {
    outcome,
    updates: [
      { type: "Bound", ...outcome.bound },
      { type: "Active", ...outcome.active },
    ],
    base: outcome.clearTargetState ? withoutTargetState(scaler.status) : { ...(scaler.status ?? {}) },
  };
}

/** The term a pass may commit under, for the result. */
export function termField(outcome: BindingOutcome): { bindingTerm?: number } {
  // Stryker disable next-line LogicalOperator,ConditionalExpression: equivalent, decideBinding gives a term exactly when it allows commits; the check narrows the type
  return outcome.commit && outcome.term !== undefined ? { bindingTerm: outcome.term } : {};
}

/** The answer of a pass the binding stops: `Bound`, `Active` and the binding write, nothing planned. */
export function bindingStopped(input: PlanInput, phase: BindingPhase): PlanResult {
  const generation = input.scaler.metadata.generation;
  const status: ScalerStatus = {
    ...phase.base,
    ...(generation === undefined ? {} : { observedGeneration: generation }),
    conditions: setConditions(phase.base.conditions, phase.updates, generation, input.nowMs),
  };
  return {
    status,
    statusChanged: controlPlaneMoved(input.scaler.status, status),
    bindingWrite: phase.outcome.write,
    ...termField(phase.outcome),
  };
}
