/**
 * Phase 3, recommendations: the algorithm from the registry (`algorithm.ts`)
 * or the input's override recommends every role; an unobserved role reaches
 * it as `Missing`. Without an algorithm every role holds (`AlgorithmUnavailable`).
 */
import type { AlgorithmResult, AlgorithmRoleInput, RoleRecommendation } from "../algorithms/types.js";
import { algorithmFor } from "./algorithm.js";
import { missingObservation, type Pass } from "./pass.js";

export interface Recommendations {
  readonly byRole: ReadonlyMap<string, RoleRecommendation>;
  /** Predictor state to persist. */
  readonly predictors: AlgorithmResult["predictors"];
}

export function recommend(pass: Pass): Recommendations {
  const algorithmRoles: AlgorithmRoleInput[] = pass.roles.map((role) => ({
    name: role.name,
    kind: role.kind,
    currentReplicas: role.replicas,
    observation: pass.input.observations[role.name] ?? missingObservation(pass.roleStatuses.get(role.name)),
  }));
  const algorithm = pass.input.algorithm ?? algorithmFor(pass.spec.algorithm.type);
  const predictors = pass.base.predictors ?? [];
  const result: AlgorithmResult =
    algorithm === undefined
      ? {
          roles: pass.roles.map((r) => ({
            role: r.name,
            scaled: false,
            replicas: r.replicas,
            reason: "AlgorithmUnavailable",
          })),
          predictors,
        }
      : algorithm.recommend({
          spec: pass.spec,
          roles: algorithmRoles,
          predictors,
          nowMs: pass.nowMs,
          latencyGuardReading: pass.input.latencyGuardReading,
        });
  return { byRole: new Map(result.roles.map((r) => [r.role, r] as const)), predictors: result.predictors };
}

const noTargetReason = "NoTarget";

/** The spec field that would drive a role the algorithm leaves alone (`NoTarget`). */
export function missingDriverField(pass: Pass, kind: string, role: string): string {
  const ratio = "a spec.ratios entry tying it to a driven role";
  const type = pass.spec.algorithm.type;
  if (type === "Proportional")
    return `a spec.algorithm.proportional.roleTargets entry named ${JSON.stringify(role)} or ${ratio}`;
  if (kind === "Encode") return ratio;
  const block = type === "Predictive" ? "spec.algorithm.predictive.tokenThroughput" : "spec.algorithm.tokenThroughput";
  return `${block}.${kind.toLowerCase()}TargetTokensPerSecond or ${ratio}`;
}

/**
 * A scaled role nothing drives (`NoTarget`) is reported in the spec's words:
 * `Blocked=BoundsConflict`, "bounds are missing", naming the field that would
 * drive it. The other roles still plan.
 */
export function undrivenRoles(pass: Pass, recommendations: Recommendations): ReadonlyMap<"BoundsConflict", string> {
  const undriven = pass.roles.filter((r) => recommendations.byRole.get(r.name)?.reason === noTargetReason);
  if (undriven.length === 0) return new Map();
  const needs = undriven.map((r) => `${r.name} needs ${missingDriverField(pass, r.kind, r.name)}`);
  return new Map([["BoundsConflict", `bounds are missing: ${needs.join("; ")}`]]);
}
