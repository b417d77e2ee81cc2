/** A pass's role observations of one target, from the samples of its scaler: pure, the clock passed in. */
import type { ModelDeployment } from "../../core/api/model-deployment.js";
import type { ScalerSpec } from "../../core/api/scaler.js";
import { fieldsRead } from "../../core/algorithms/reads.js";
import { observeRole, staleAfterSeconds } from "../../core/signals/observe.js";
import type { RoleObservation, RoleSamples } from "../../core/signals/types.js";

/** Every role of the target; a role without samples is unknown (`no sample this pass`), never zero. */
export function observeTarget(
  spec: ScalerSpec,
  target: ModelDeployment | undefined,
  samples: ReadonlyMap<string, RoleSamples> | undefined,
  nowMs: number,
): Readonly<Record<string, RoleObservation>> {
  const observations: Record<string, RoleObservation> = {};
  if (target === undefined) return observations;
  const staleAfter = staleAfterSeconds(spec.sampling.intervalSeconds);
  for (const role of target.spec.roles) {
    const ready = target.status?.roles?.find((r) => r.name === role.name)?.ready ?? 0;
    const roleSamples = samples?.get(role.name) ?? { pods: [], queryFailed: { reason: "no sample this pass" } };
    observations[role.name] = observeRole({
      kind: role.kind,
      samples: roleSamples,
      readyReplicas: ready,
      nowMs,
      staleAfterSeconds: staleAfter,
      reads: fieldsRead(spec, role),
    });
  }
  return observations;
}
