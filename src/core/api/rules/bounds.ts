/** Bounds rule: each role's `minReplicas` (default 1) is at most its `maxReplicas`. */
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
