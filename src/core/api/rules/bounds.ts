/**
 * Bounds rules: each role's `minReplicas` (default 1) is at most its `maxReplicas`, and each floor of
 * `floorReplicasByUtcHour` too (a floor above the ceiling would be clamped every pass of its hour: written,
 * it is a mistake to name, not a setting to honour silently).
 */
import { problem } from "../problem.js";
import type { Rule } from "./rule.js";

export const boundsOrder: Rule = {
  id: "bounds-order",
  summary: "`roles[].minReplicas` (default 1) is at most `roles[].maxReplicas`.",
  check: ({ spec }) =>
    spec.roles.flatMap((r) =>
      // A missing bound is the schema's to report: no minimum is above no maximum.
      (r.minReplicas ?? 0) > (r.maxReplicas ?? Infinity)
        ? [
            problem(
              "bounds-order",
              ["spec", "roles", r.index, "minReplicas"],
              r.minReplicas,
              `must be at most maxReplicas (${r.maxReplicas})`,
            ),
          ]
        : [],
    ),
};

export const floorWithinBounds: Rule = {
  id: "floor-within-bounds",
  summary: "each `roles[].floorReplicasByUtcHour` entry is at most `roles[].maxReplicas`.",
  check: ({ spec }) =>
    spec.roles.flatMap((r) =>
      r.floorByUtcHour.flatMap((floor, hour) =>
        // A missing or refused count is the schema's to report.
        floor !== undefined && floor > (r.maxReplicas ?? Infinity)
          ? [
              problem(
                "floor-within-bounds",
                ["spec", "roles", r.index, "floorReplicasByUtcHour", hour],
                floor,
                `the floor of ${String(hour).padStart(2, "0")}:00 UTC must be at most maxReplicas (${r.maxReplicas})`,
              ),
            ]
          : [],
      ),
    ),
};
