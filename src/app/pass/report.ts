/** What a pass reports to the scaler's metrics: pure, from the plan and the observations it planned on. */
import type { ModelDeployment } from "../../core/api/model-deployment.js";
import type { Scaler, ScalerSpec } from "../../core/api/scaler.js";
import type { PlanResult } from "../../core/planner/types.js";
import type { RoleObservation } from "../../core/signals/types.js";
import type { ScalerReport } from "../../adapters/telemetry/metrics.js";
import { roleReports } from "../../adapters/telemetry/role-reports.js";
import { floorsCalibratedAtSeconds } from "../../core/api/floors-calibrated.js";
import { namespaceOf } from "./identity.js";

export function reportOf(
  scaler: Scaler,
  spec: ScalerSpec,
  result: PlanResult,
  target: ModelDeployment | undefined,
  observations: Readonly<Record<string, RoleObservation>>,
): ScalerReport {
  return {
    namespace: namespaceOf(scaler),
    scaler: scaler.metadata.name,
    target: spec.targetRef.name,
    mode: spec.mode,
    ...(result.bindingTerm !== undefined ? { bindingTerm: result.bindingTerm } : {}),
    ...floorsDateOf(spec, scaler),
    conditions: (result.status.conditions ?? []).map((c) => ({ type: c.type, status: c.status, reason: c.reason })),
    roles: roleReports(
      spec,
      result.status,
      Object.fromEntries((target?.spec.roles ?? []).map((r) => [r.name, r.kind])),
      observations,
    ),
  };
}

/** The floors' date, where the scaler writes floors and its annotation reads as a time. */
function floorsDateOf(spec: ScalerSpec, scaler: Scaler): Pick<ScalerReport, "floorsCalibratedAtSeconds"> {
  const seconds = floorsCalibratedAtSeconds(spec, scaler.metadata.annotations);
  return seconds === undefined ? {} : { floorsCalibratedAtSeconds: seconds };
}
