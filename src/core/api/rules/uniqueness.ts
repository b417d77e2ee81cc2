/**
 * Uniqueness rules: role names, `roleTargets` names, ordered ratio pairs and
 * `rebalance.priority` names. The second and later copies are reported,
 * each naming the index of the first.
 */
import { problem, type PathSegment, type Problem } from "../problem.js";
import type { Rule } from "./rule.js";

/** Reports entries whose key repeats an earlier entry's key. */
function duplicates<T>(
  rule: string,
  entries: readonly T[],
  key: (entry: T) => string | undefined,
  at: (entry: T) => { path: PathSegment[]; value: unknown },
  /** The reason, with `#` standing for the index of the first entry. */
  what: string,
): Problem[] {
  const first = new Map<string, number>();
  const problems: Problem[] = [];
  entries.forEach((entry, index) => {
    const k = key(entry);
    if (k === undefined) return;
    const seen = first.get(k);
    if (seen === undefined) first.set(k, index);
    else {
      const { path, value } = at(entry);
      problems.push(problem(rule, path, value, what.replace("#", String(seen))));
    }
  });
  return problems;
}

export const uniqueRoleNames: Rule = {
  id: "unique-role-names",
  summary: "`roles[].name` values are unique.",
  check: ({ spec }) =>
    duplicates(
      "unique-role-names",
      spec.roles,
      (r) => r.name,
      (r) => ({ path: ["spec", "roles", r.index, "name"], value: r.name }),
      "duplicates spec.roles[#].name",
    ),
};

export const uniqueRoleTargets: Rule = {
  id: "unique-role-targets",
  summary: "`algorithm.proportional.roleTargets[].name` values are unique.",
  check: ({ spec }) =>
    duplicates(
      "unique-role-targets",
      spec.algorithm.roleTargets,
      (t) => t.name,
      (t) => ({ path: ["spec", "algorithm", "proportional", "roleTargets", t.index, "name"], value: t.name }),
      "duplicates spec.algorithm.proportional.roleTargets[#].name",
    ),
};

export const uniqueRatioPairs: Rule = {
  id: "unique-ratio-pairs",
  summary: "Each ordered (`numeratorRole`, `denominatorRole`) pair appears once in `ratios[]`.",
  check: ({ spec }) =>
    duplicates(
      "unique-ratio-pairs",
      spec.ratios,
      (r) =>
        r.numeratorRole === undefined || r.denominatorRole === undefined
          ? undefined
          : `${r.numeratorRole}/${r.denominatorRole}`,
      (r) => ({
        path: ["spec", "ratios", r.index],
        value: { numeratorRole: r.numeratorRole, denominatorRole: r.denominatorRole },
      }),
      "repeats the numeratorRole and denominatorRole of spec.ratios[#]",
    ),
};

export const uniquePriorityNames: Rule = {
  id: "unique-priority-names",
  summary: "`rebalance.priority[]` names are unique.",
  check: ({ spec }) =>
    duplicates(
      "unique-priority-names",
      spec.priority,
      (p) => p.name,
      (p) => ({ path: ["spec", "rebalance", "priority", p.index], value: p.name }),
      "duplicates spec.rebalance.priority[#]",
    ),
};
