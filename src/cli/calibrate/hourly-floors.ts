/**
 * `calibrate --hourly-floors-from`: each calibrated role's floors by the UTC hour (`floorReplicasByUtcHour`), read
 * from the minutes of the day before at the figure calibrate writes (after `--swing-headroom`), at most the role's
 * `maxReplicas`. The rule is `hourlyFloors` (src/core/calibrate/hourly-floors.ts); this file only pairs each role's
 * figure with its minutes of yesterday and says where they came from. A role calibrate gave no figure is held at
 * its fleet (`maxReplicas`), as the whole-day steps keep the fleet there (docs/calibrate.md, "A whole day").
 */
import { hourlyFloors, type DemandMinute } from "../../core/calibrate/hourly-floors.js";
import type { RoleMinutes } from "../../core/calibrate/minute.js";
import type { ScalerSpec } from "../../core/api/scaler.js";
import { floorsCalibratedValue } from "../../core/api/floors-calibrated.js";
import { runningFigureOf, type CalibrationResult, type HourlyFloors } from "./result.js";
import { fleetReplicasOf } from "./fleet-step.js";

/** The role's demand in each minute: the kind's tokens per second per ready replica × ready replicas. */
const demandOf = (minutes: RoleMinutes): DemandMinute[] =>
  minutes.minutes.map((m) => ({
    endSeconds: m.endSeconds,
    tokensPerSecond: m.tokensPerSecondPerReplica * m.readyReplicas,
  }));

/**
 * The floors of every calibrated role, and the roles without a figure held at their fleet; an error names a role
 * the day before's minutes do not have.
 */
export function floorsFromYesterday(
  result: CalibrationResult,
  spec: ScalerSpec,
  yesterday: readonly RoleMinutes[],
  source: string,
  datedMs: number,
): HourlyFloors {
  const held = result.roles.flatMap((r) =>
    runningFigureOf(result, r.role) !== undefined
      ? []
      : [
          {
            role: r.role,
            fleetReplicas: fleetReplicasOf(spec, r.role),
            why: `calibrate gave no figure (${r.answer.kind}); the whole-day steps keep the fleet`,
          },
        ],
  );
  const roles = result.roles.flatMap((r) => {
    const figure = runningFigureOf(result, r.role);
    if (figure === undefined) return [];
    const minutes = yesterday.find((y) => y.role === r.role);
    if (minutes === undefined || minutes.minutes.length === 0)
      throw new Error(
        `--hourly-floors-from: role ${r.role}: no minutes of the day before were read (${source}), so no floor can be written`,
      );
    return [
      {
        role: r.role,
        floorReplicasByUtcHour: hourlyFloors(demandOf(minutes), figure, fleetReplicasOf(spec, r.role)),
      },
    ];
  });
  return { source, calibratedAt: floorsCalibratedValue(datedMs), roles, held };
}
