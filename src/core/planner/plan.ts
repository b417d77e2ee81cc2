/**
 * One planning pass: (scaler, target, observations, now) -> (status, commit).
 * The controller, the simulator, `mds-scaler plan` and the tests all call
 * this function; nothing else decides replica counts or status. The pass is
 * the list of its phases, each in its own file with a typed input and output:
 *
 *   1. binding (`bind.ts`): may the scaler plan, may it commit, under which term;
 *   2. the policy gate (`gate.ts`): bounds and ratio bands contain the current vector;
 *   3. recommendations (`recommend.ts`): the algorithm recommends every role;
 *   4. role plans (`role-plans.ts`): bounds, history, windows, steps and holds per role;
 *   5. components (`components.ts`, `projection.ts`): one direction per ratio
 *      component, projected onto its bands;
 *   6. recovery (`recovery.ts`): restore, roll back, advance or release, ahead of the plan;
 *      before anything reads the records, `rebuild-records.ts` restores those a lost
 *      status write never stored, from the decision the target carries;
 *   7. the commit (`commit.ts`): one write at most;
 *   8. status assembly (`assemble.ts`).
 */
import type { BlockedReason } from "./conditions.js";
import { assembleStatus } from "./assemble.js";
import { bindingPhase, bindingStopped } from "./bind.js";
import { commitPhase } from "./commit.js";
import { planComponents } from "./components.js";
import { gatePolicy, gateStopped } from "./gate.js";
import { readPass, withBase } from "./pass.js";
import { parseDecisionAnnotation } from "../binding/binding.js";
import { rebuildRecords } from "./rebuild-records.js";
import { recommend, undrivenRoles } from "./recommend.js";
import { recover } from "./recovery.js";
import { readRecoveryState } from "./recovery-state.js";
import { planRoles } from "./role-plans.js";
import type { PlanInput, PlanResult } from "./types.js";

/** Plans one pass. Pure: the same input gives the same output. */
export function plan(input: PlanInput): PlanResult {
  const binding = bindingPhase(input);
  // Stryker disable next-line ConditionalExpression: equivalent, the binding never plans without a target (TargetNotFound); the check narrows the type
  if (!binding.outcome.plan || input.target === undefined) return bindingStopped(input, binding);
  const read = readPass(input, input.target, binding);
  const decision = parseDecisionAnnotation(input.target.metadata.annotations ?? {});
  const rebuilt = rebuildRecords({
    base: read.base,
    // Stryker disable next-line ConditionalExpression: equivalent, an absent or invalid annotation carries no value
    decision: decision.state === "valid" ? decision.value : undefined,
    term: binding.outcome.commit ? binding.outcome.term : undefined,
    roleOrder: read.roles.map((r) => r.name),
    generation: read.generation,
    cooldownAfterAbortSeconds: read.spec.behavior.scaleDown.cooldownAfterAbortSeconds,
  });
  const pass = rebuilt.kind === "Rebuilt" ? withBase(read, rebuilt.base) : read;

  const gate = gatePolicy(pass);
  if (!gate.ok) return gateStopped(pass, gate);

  const recommendations = recommend(pass);
  const state = readRecoveryState(pass);
  const plans = planRoles(pass, gate.bounds, recommendations, state);
  const planned = planComponents(
    pass.roles.map((r) => r.name),
    plans,
    gate.bands,
    pass.current,
  );
  const recovery = recover({ pass, state, bounds: gate.bounds, bands: gate.bands, plans });
  const committed = commitPhase(pass, planned.vector, recovery);

  // Later phases' messages replace earlier ones for the same reason.
  const blocked = new Map<BlockedReason, string>([
    ...planned.blocked,
    ...undrivenRoles(pass, recommendations),
    ...(rebuilt.kind === "Rebuilt" ? rebuilt.blocked : []),
    ...recovery.blocked,
  ]);
  return assembleStatus({ pass, plans, planned, recovery, committed, recommendations, blocked });
}
