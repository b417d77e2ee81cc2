/**
 * Ratio band rules: the two roles differ, `min` is at most `max`, and
 * `target` lies inside the supplied bounds. Comparisons are exact.
 * Joint feasibility over the role bounds is in `../ratio-feasibility.ts`.
 */
import { problem, type Problem } from "../problem.js";
import { compareRational } from "../rational.js";
import type { Rule } from "./rule.js";

export const ratioDistinctRoles: Rule = {
  id: "ratio-distinct-roles",
  summary: "`ratios[].numeratorRole` and `denominatorRole` differ.",
  check: ({ spec }) =>
    spec.ratios.flatMap((r) =>
      r.numeratorRole !== undefined && r.numeratorRole === r.denominatorRole
        ? [
            problem(
              "ratio-distinct-roles",
              ["spec", "ratios", r.index, "denominatorRole"],
              r.denominatorRole,
              "must differ from numeratorRole",
            ),
          ]
        : [],
    ),
};

export const ratioBand: Rule = {
  id: "ratio-band",
  summary: "`ratios[].min` is at most `max`, and `target` lies within the supplied `min` and `max`.",
  check: ({ spec }) =>
    spec.ratios.flatMap((r) => {
      const problems: Problem[] = [];
      const at = (key: string) => ["spec", "ratios", r.index, key];
      if (r.min !== undefined && r.max !== undefined && compareRational(r.min.value, r.max.value) > 0) {
        problems.push(problem("ratio-band", at("min"), r.min.raw, `must be at most max (${String(r.max.raw)})`));
      }
      if (r.target !== undefined && r.min !== undefined && compareRational(r.target.value, r.min.value) < 0) {
        problems.push(problem("ratio-band", at("target"), r.target.raw, `must be at least min (${String(r.min.raw)})`));
      }
      if (r.target !== undefined && r.max !== undefined && compareRational(r.target.value, r.max.value) > 0) {
        problems.push(problem("ratio-band", at("target"), r.target.raw, `must be at most max (${String(r.max.raw)})`));
      }
      return problems;
    }),
};
