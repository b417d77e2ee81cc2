/** Bounds rule: each role's `minReplicas` (default 1) is at most its `maxReplicas`. */
import { problem } from "../problem.js";
import type { Rule } from "./rule.js";

export const boundsOrder: Rule = {
  id: "bounds-order",
  summary: "`roles[].minReplicas` (default 1) is at most `roles[].maxReplicas`.",
  check: ({ spec }) =>
    spec.roles.flatMap((r) =>
      r.minReplicas !== undefined && r.maxReplicas !== undefined && r.minReplicas > r.maxReplicas
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
