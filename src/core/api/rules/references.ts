/**
 * Reference rules: names in `roleTargets[]`, `ratios[]` and
 * `rebalance.priority[]` must be scaled roles, that is, roles listed in
 * `roles[]` with bounds.
 */
import { problem } from "../problem.js";
import type { Rule } from "./rule.js";
import { scaledRoleNames } from "./view.js";

const notScaled = "is not a scaled role: add it to spec.roles with bounds";

export const roleTargetsScaled: Rule = {
  id: "role-targets-scaled",
  summary: "`roleTargets[].name` names a role in `roles[]`.",
  check: ({ spec }) => {
    const scaled = scaledRoleNames(spec);
    return spec.algorithm.roleTargets.flatMap((t) =>
      t.name === undefined || scaled.has(t.name)
        ? []
        : [
            problem(
              "role-targets-scaled",
              ["spec", "algorithm", "proportional", "roleTargets", t.index, "name"],
              t.name,
              notScaled,
            ),
          ],
    );
  },
};

export const ratioRolesScaled: Rule = {
  id: "ratio-roles-scaled",
  summary: "`ratios[].numeratorRole` and `denominatorRole` name roles in `roles[]`.",
  check: ({ spec }) => {
    const scaled = scaledRoleNames(spec);
    return spec.ratios.flatMap((r) =>
      (["numeratorRole", "denominatorRole"] as const).flatMap((side) => {
        const name = r[side];
        return name === undefined || scaled.has(name)
          ? []
          : [problem("ratio-roles-scaled", ["spec", "ratios", r.index, side], name, notScaled)];
      }),
    );
  },
};

export const priorityScaled: Rule = {
  id: "priority-scaled",
  summary: "`rebalance.priority[]` names roles in `roles[]`.",
  check: ({ spec }) => {
    const scaled = scaledRoleNames(spec);
    return spec.priority.flatMap((p) =>
      p.name === undefined || scaled.has(p.name)
        ? []
        : [problem("priority-scaled", ["spec", "rebalance", "priority", p.index], p.name, notScaled)],
    );
  },
};
