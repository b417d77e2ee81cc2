/**
 * The floor by the hour (an extension: `spec.roles[].floorReplicasByUtcHour`; docs/planner.md, "The floor by
 * the hour"). Over whole days a scaler capped at the fleet it replaces loses the SLO in the day's rises, while the
 * replicas a rise needs are still starting; the floor keeps through each UTC hour the replicas yesterday's busiest
 * minutes of that hour asked for (`calibrate --hourly-floors-from`, `src/core/calibrate/hourly-floors.ts`), so they
 * are ready before today's arrive (docs/quality.md, thirty-first run).
 *
 * It raises a recommendation and never makes one: a pass that holds for signals still holds, and a role driven
 * only by a ratio follows its ratio. The bounds clamp the raised count as they clamp any other, so the floor never
 * takes a role past `maxReplicas`, and the stabilization windows pace the way down after the hour as after a peak.
 * Example: floors[14] = 6 and the algorithm recommends 4 at 14:20 UTC → 6, reason `HourlyFloor`.
 */
import type { Limit } from "./types.js";

/** The floor of the UTC hour `nowMs` falls in; undefined where no floors are written. */
export function hourlyFloorAt(floorByUtcHour: readonly number[] | undefined, nowMs: number): number | undefined {
  return floorByUtcHour?.[new Date(nowMs).getUTCHours()];
}

/** `replicas` raised to the hour's floor, with the reason where the floor raised it. */
export function raiseToHourlyFloor(
  replicas: number,
  floorByUtcHour: readonly number[] | undefined,
  nowMs: number,
): Limit {
  const floor = hourlyFloorAt(floorByUtcHour, nowMs);
  return floor !== undefined && replicas < floor
    ? { value: floor, reason: "HourlyFloor" }
    : { value: replicas, reason: "" };
}
