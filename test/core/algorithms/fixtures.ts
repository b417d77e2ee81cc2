/** Builders for algorithm tests: defaulted specs, observations and one-call runs through the registry. */
import { algorithmFor } from "../../../src/core/algorithms/index.js";
import type { AlgorithmResult, AlgorithmRoleInput, RoleRecommendation } from "../../../src/core/algorithms/types.js";
import type { RoleKind } from "../../../src/core/api/model-deployment.js";
import {
  ScalerSpecSchema,
  withInferredAlgorithm,
  type PredictorStatus,
  type ScalerSpec,
  type ScalerSpecInput,
} from "../../../src/core/api/scaler.js";
import type { RoleObservation } from "../../../src/core/signals/types.js";

export const t0Ms = Date.UTC(2026, 10, 29, 12, 0, 0);

/** A defaulted spec; every role gets wide bounds unless given. */
export function spec(
  input: Partial<ScalerSpecInput> & Pick<ScalerSpecInput, "algorithm">,
  roleNames: readonly string[] = ["server"],
): ScalerSpec {
  return withInferredAlgorithm(
    ScalerSpecSchema.parse({
      targetRef: { name: "llm" },
      roles: roleNames.map((name) => ({ name, minReplicas: 1, maxReplicas: 1024 })),
      ...input,
    }),
  );
}

/** A Fresh observation of `ready` replicas, all sampled. */
export function observation(fields: Partial<RoleObservation> = {}, ready = 2): RoleObservation {
  return { readyReplicas: ready, sampledReplicas: ready, signalState: "Fresh", ...fields };
}

export function role(name: string, kind: RoleKind, currentReplicas: number, obs: RoleObservation): AlgorithmRoleInput {
  return { name, kind, currentReplicas, observation: obs };
}

export function run(
  s: ScalerSpec,
  roles: readonly AlgorithmRoleInput[],
  predictors: readonly PredictorStatus[] = [],
  nowMs = t0Ms,
): AlgorithmResult {
  return algorithmFor(s.algorithm.type).recommend({ spec: s, roles, predictors, nowMs });
}

/** The recommendation for one role of a result. */
export function recommendationOf(result: AlgorithmResult, name: string): RoleRecommendation {
  const found = result.roles.find((r) => r.role === name);
  if (found === undefined) throw new Error(`no recommendation for ${name}`);
  return found;
}

/** A compact view for table assertions: replicas, reason and the hold reason (or undefined). */
export function brief(rec: RoleRecommendation): { replicas: number; reason: string; hold: string | undefined } {
  return { replicas: rec.replicas, reason: rec.reason, hold: rec.scaleDownHold?.reason };
}
