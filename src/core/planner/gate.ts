/**
 * Phase 2, the policy gate: every target role has bounds containing its count
 * (`bounds.ts`), and the current vector satisfies every ratio band
 * (`ratios.ts`). Otherwise the pass stops with `BoundsConflict` or
 * `RatioConflict`: moving a vector the policy does not contain would be guessing.
 */
import type { ScalerStatus } from "../api/scaler.js";
import { checkBounds, type RoleBoundsRange } from "./bounds.js";
import { setConditions } from "./conditions.js";
import { observedRoles, type Pass } from "./pass.js";
import { describeBand, ratioBands, violatedBands, type RatioBand } from "./ratios.js";
import { controlPlaneMoved } from "./status.js";
import { termField } from "./bind.js";
import type { PlanResult } from "./types.js";
import { withWindowWarnings } from "./window-warnings.js";

export type Gate =
  | { readonly ok: true; readonly bounds: ReadonlyMap<string, RoleBoundsRange>; readonly bands: readonly RatioBand[] }
  | { readonly ok: false; readonly reason: "BoundsConflict" | "RatioConflict"; readonly message: string };

export function gatePolicy(pass: Pass): Gate {
  const boundsCheck = checkBounds(pass.spec, pass.target.spec.roles);
  if (!boundsCheck.ok) return { ok: false, reason: "BoundsConflict", message: boundsCheck.message };
  const bands = ratioBands(pass.spec, new Set(pass.roles.map((r) => r.name)));
  const broken = violatedBands(pass.current, bands);
  if (broken.length > 0) {
    return {
      ok: false,
      reason: "RatioConflict",
      message: `the current vector violates ${broken.map(describeBand).join(", ")}; widen the ratios to include it`,
    };
  }
  return { ok: true, bounds: boundsCheck.bounds, bands };
}

/**
 * The answer of a pass the gate stops: readings, `MetricsReady` and `Blocked`
 * name the conflict. It plans nothing, so it is no planning pass for the gap
 * rule: `lastPassTime` stays.
 */
export function gateStopped(pass: Pass, gate: Extract<Gate, { ok: false }>): PlanResult {
  const { reason, message } = gate;
  const status: ScalerStatus = {
    ...pass.base,
    ...(pass.generation === undefined ? {} : { observedGeneration: pass.generation }),
    binding: pass.bindingStatus,
    roles: observedRoles(pass),
    conditions: setConditions(
      pass.base.conditions,
      [
        ...pass.binding.updates,
        withWindowWarnings(
          { type: "MetricsReady", status: "False", reason, message: `signals were not evaluated: ${message}` },
          pass,
        ),
        { type: "Blocked", status: "True", reason, message },
      ],
      pass.generation,
      pass.nowMs,
    ),
  };
  return {
    status,
    statusChanged: controlPlaneMoved(pass.input.scaler.status, status),
    bindingWrite: pass.binding.outcome.write,
    ...termField(pass.binding.outcome),
  };
}
