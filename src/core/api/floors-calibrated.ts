/**
 * As of when a scaler's floors by the hour stand: the annotation `calibrate` writes beside `floorReplicasByUtcHour`
 * (`-o scaler`, `--write-scaler`, `--apply`), the end of the day it read them from (where that day is a `simulate -o
 * json` run, which has no date, the time calibrate ran), read by the controller into
 * `mds_scaler_floors_calibrated_timestamp_seconds`, which the `MdsScalerFloorsStale` alert watches. Floors are
 * yesterday's hours (docs/calibrate.md, "A whole day"), refreshed daily: a refresh that stopped leaves older hours
 * in force, and only their date says so.
 *
 * Rule `floors-calibrated-at` (a warning, never a refusal): a value that is not an RFC 3339 time. The annotation
 * is the tool's record, not a setting, so admission names a malformed one and lets the object through; the
 * controller then exports no time for it, and the alert cannot fire for that scaler. Admission sees it where it
 * reviews the scaler, on a create or a change of the spec (as calibrate writes it, beside the floors): the chart
 * sends no update that leaves the spec alone to the webhook, so that an outage of the controller blocks none.
 */
import { parseTimestampMs } from "../time/timestamp.js";
import { problem, type Problem } from "./problem.js";
import type { ScalerSpec } from "./scaler.js";

export const floorsCalibratedAnnotation = "worker.gpustack.ai/floors-calibrated-at";
export const floorsCalibratedRule = "floors-calibrated-at";

/** The annotation's value for floors dated `datedMs`: RFC 3339 to the second, in UTC. */
export function floorsCalibratedValue(datedMs: number): string {
  return new Date(Math.floor(datedMs / 1000) * 1000).toISOString().replace(".000Z", "Z");
}

/**
 * The date of the floors in force, in Unix seconds: undefined where the scaler writes no floors (a date without
 * floors dates nothing), has no annotation, or its value is not a time.
 */
export function floorsCalibratedAtSeconds(
  spec: { readonly roles: readonly Pick<ScalerSpec["roles"][number], "floorReplicasByUtcHour">[] },
  annotations: Readonly<Record<string, string>> | undefined,
): number | undefined {
  if (!spec.roles.some((r) => r.floorReplicasByUtcHour !== undefined)) return undefined;
  const text = annotations?.[floorsCalibratedAnnotation];
  const ms = text === undefined ? undefined : parseTimestampMs(text);
  return ms === undefined ? undefined : ms / 1000;
}

/** The warning for an annotation that is not a time; none where it is absent or reads as one. */
export function floorsCalibratedWarnings(metadata: unknown): Problem[] {
  const annotations =
    typeof metadata === "object" && metadata !== null
      ? (metadata as Record<string, unknown>)["annotations"]
      : undefined;
  if (typeof annotations !== "object" || annotations === null) return [];
  const value = (annotations as Record<string, unknown>)[floorsCalibratedAnnotation];
  if (value === undefined || (typeof value === "string" && parseTimestampMs(value) !== undefined)) return [];
  return [
    problem(
      floorsCalibratedRule,
      ["metadata", "annotations", floorsCalibratedAnnotation],
      value,
      "is not an RFC 3339 time (2026-12-07T00:05:00Z), so the floors' age is not exported and MdsScalerFloorsStale cannot fire",
    ),
  ];
}
