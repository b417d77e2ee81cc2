/**
 * Algorithm rules: exactly the parameter block of the chosen type, and (for
 * Proportional) every scaled role has its own target or a direct ratio to a
 * role that has one.
 */
import { problem, type Problem } from "../problem.js";
import type { Rule } from "./rule.js";
import { parameterBlocks } from "./view.js";

export const parameterBlock: Rule = {
  id: "parameter-block",
  summary: "`algorithm` holds only the parameter block of its type; `Proportional` requires its block.",
  check: ({ spec }) => {
    const { type, declaredType, blocks } = spec.algorithm;
    const chosen = parameterBlocks[type];
    const why =
      declaredType === undefined ? `the type inferred from the blocks is ${type}` : `algorithm.type is ${type}`;
    const problems: Problem[] = [];
    for (const block of blocks) {
      if (block !== chosen)
        problems.push(
          problem(
            "parameter-block",
            ["spec", "algorithm", block],
            spec.algorithm.blockValues[block],
            `is not allowed: ${why}, so only algorithm.${chosen} may be set`,
          ),
        );
    }
    // TokenThroughput and Predictive blocks are all-optional and defaulted; Proportional needs a metric.
    if (type === "Proportional" && !blocks.has("proportional")) {
      problems.push(
        problem(
          "parameter-block",
          ["spec", "algorithm", "proportional"],
          undefined,
          "is required when algorithm.type is Proportional",
        ),
      );
    }
    return problems;
  },
};

export const proportionalCoverage: Rule = {
  id: "proportional-coverage",
  summary: "With `Proportional`, every scaled role has a `roleTargets` entry or a direct ratio to a role that has one.",
  check: ({ spec }) => {
    if (spec.algorithm.type !== "Proportional" || !spec.algorithm.blocks.has("proportional")) return [];
    // Named targets only, so a ratio side without a role is never targeted.
    const targeted: ReadonlySet<string | undefined> = new Set(
      spec.algorithm.roleTargets.map((t) => t.name).filter((name) => name !== undefined),
    );
    const coupled = (role: string): boolean =>
      spec.ratios.some(
        (r) =>
          (r.numeratorRole === role && targeted.has(r.denominatorRole)) ||
          (r.denominatorRole === role && targeted.has(r.numeratorRole)),
      );
    return spec.roles.flatMap((r) =>
      r.name === undefined || targeted.has(r.name) || coupled(r.name)
        ? []
        : [
            problem(
              "proportional-coverage",
              ["spec", "roles", r.index, "name"],
              r.name,
              "has no entry in algorithm.proportional.roleTargets and no ratio to a role that has one",
            ),
          ],
    );
  },
};
