/**
 * Every cross-field rule that needs only the scaler, in reporting order.
 * Field-level limits live in `../scaler.ts` (reported by `./schema.ts`);
 * ratio feasibility is `../ratio-feasibility.ts`; checks that need the
 * target are `../target-checks.ts`. docs/api.md maps every rule id to its file.
 */
import { parameterBlock, proportionalCoverage } from "./algorithm.js";
import { boundsOrder, floorWithinBounds } from "./bounds.js";
import { targetRefImmutable } from "./immutability.js";
import { ratioBand, ratioDistinctRoles } from "./ratios.js";
import { priorityScaled, ratioRolesScaled, roleTargetsScaled } from "./references.js";
import type { Rule } from "./rule.js";
import { uniquePriorityNames, uniqueRatioPairs, uniqueRoleNames, uniqueRoleTargets } from "./uniqueness.js";

export const specRules: readonly Rule[] = [
  uniqueRoleNames,
  boundsOrder,
  floorWithinBounds,
  parameterBlock,
  uniqueRoleTargets,
  roleTargetsScaled,
  proportionalCoverage,
  ratioDistinctRoles,
  ratioRolesScaled,
  uniqueRatioPairs,
  ratioBand,
  uniquePriorityNames,
  priorityScaled,
  targetRefImmutable,
];

export type { Rule, RuleContext } from "./rule.js";
