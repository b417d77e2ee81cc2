/**
 * `calibrate --swing-from`: the docs' step for replacing a fixed fleet, written into the scaler. Per role, the
 * demand swing of the same hours of the day before, served by the fleet (a `simulate -o json` run, or the
 * `--swing-period` read from Prometheus), and what the
 * step does there (`fleetStep`, src/core/calibrate/demand-swing.ts): where it keeps the fleet, or calibrate gave
 * the role no figure, the scaler holds the role at its `maxReplicas` (the fleet the steps cap the scaler at); where
 * it replaces the fleet, the role is written as calibrated. So the steps are one command from a day's run to the
 * file to deploy, whichever way they go (docs/calibrate.md, "The demand swing").
 */
import { demandSwing, fleetStep, type FleetStep } from "../../core/calibrate/demand-swing.js";
import type { RoleMinutes } from "../../core/calibrate/minute.js";
import type { ScalerSpec } from "../../core/api/scaler.js";
import { runningFigureOf, type CalibrationResult } from "./result.js";

export interface FleetSteps {
  /** Where the day before's minutes came from, in words. */
  readonly source: string;
  readonly roles: readonly {
    readonly role: string;
    /** The day before's largest swing; absent where too few adjacent minutes measured none. */
    readonly swing?: number;
    readonly step: FleetStep;
    /** The fleet: the role's `maxReplicas`, which the scaler holds where the step keeps it. */
    readonly fleetReplicas: number;
  }[];
}

/**
 * The fleet a role replaces: its `maxReplicas`, which the steps set to the fleet's size, and which a role held at
 * its fleet keeps as `minReplicas` too.
 */
export function fleetReplicasOf(spec: ScalerSpec, role: string): number {
  const bounds = spec.roles.find((b) => b.name === role);
  if (bounds === undefined) throw new Error(`spec.roles: role ${role} has no bounds`);
  return bounds.maxReplicas;
}

/** The step for every role of the answer; an error names a role the day before's run does not have. */
export function fleetStepsFromYesterday(
  result: CalibrationResult,
  spec: ScalerSpec,
  yesterday: readonly RoleMinutes[],
  source: string,
): FleetSteps {
  const roles = result.roles.map((r) => {
    const minutes = yesterday.find((y) => y.role === r.role);
    if (minutes === undefined)
      throw new Error(`--swing-from: role ${r.role} is not in the day before's run (${source})`);
    const swing = demandSwing(minutes.minutes);
    const step: FleetStep =
      runningFigureOf(result, r.role) !== undefined
        ? fleetStep(swing)
        : { kind: "keep the fleet", why: `calibrate gave no figure (${r.answer.kind})` };
    return {
      role: r.role,
      ...(swing === undefined ? {} : { swing: swing.largestRatio }),
      step,
      fleetReplicas: fleetReplicasOf(spec, r.role),
    };
  });
  return { source, roles };
}
