/**
 * Roles the algorithm does not drive from their own signals follow a direct
 * ratio to a role it does drive (`RatioCoupled`): an Encode role under the
 * token algorithms, or a role without a `roleTargets` entry under Proportional.
 */
import { quantityValue } from "../api/quantity.js";
import type { Ratio } from "../api/scaler.js";
import type { AlgorithmRoleInput, RoleRecommendation } from "./types.js";
import { ceilReplicas } from "./round-and-hold.js";
import { algorithmReasons } from "./reasons.js";

/**
 * The ratio a coupled role aims for: the `target`; else the middle of `min`
 * and `max`; else the one bound given. A ratio with none of them constrains
 * nothing and cannot couple.
 */
export function preferredRatio(ratio: Ratio): number | undefined {
  if (ratio.target !== undefined) return quantityValue(ratio.target);
  const min = ratio.min === undefined ? undefined : quantityValue(ratio.min);
  const max = ratio.max === undefined ? undefined : quantityValue(ratio.max);
  if (min !== undefined && max !== undefined) return (min + max) / 2;
  return min ?? max;
}

interface Coupling {
  readonly driver: RoleRecommendation;
  /** Replicas of the coupled role per replica of the driver. */
  readonly perDriverReplica: number;
}

/** The first ratio, in spec order, that ties `role` directly to a driven role. */
function findCoupling(
  role: string,
  ratios: readonly Ratio[],
  driven: ReadonlyMap<string, RoleRecommendation>,
): Coupling | undefined {
  for (const ratio of ratios) {
    // A ratio without bounds, or with a non-positive one, cannot couple.
    const value = preferredRatio(ratio) ?? 0;
    if (!(value > 0)) continue;
    const asNumerator = ratio.numeratorRole === role ? driven.get(ratio.denominatorRole) : undefined;
    if (asNumerator !== undefined) return { driver: asNumerator, perDriverReplica: value };
    const asDenominator = ratio.denominatorRole === role ? driven.get(ratio.numeratorRole) : undefined;
    if (asDenominator !== undefined) return { driver: asDenominator, perDriverReplica: 1 / value };
  }
  return undefined;
}

/**
 * The coupled recommendation: the driver's raw count times the ratio, rounded
 * up. Example: encode/prefill target 0.5 and prefill at 5 → encode ceil(2.5) = 3;
 * prefill/encode target 2 gives the same. A held driver holds its coupled role
 * too (with the same reason), so an encode role never shrinks under a prefill
 * role in panic.
 */
function coupledRecommendation(role: AlgorithmRoleInput, coupling: Coupling): RoleRecommendation {
  const replicas = ceilReplicas(coupling.driver.replicas * coupling.perDriverReplica);
  const hold = coupling.driver.scaleDownHold;
  if (hold === undefined) return { role: role.name, scaled: true, replicas, reason: algorithmReasons.ratioCoupled };
  return {
    role: role.name,
    scaled: true,
    replicas: Math.max(replicas, role.currentReplicas),
    reason: algorithmReasons.ratioCoupled,
    scaleDownHold: hold,
  };
}

function unscaled(role: AlgorithmRoleInput): RoleRecommendation {
  return { role: role.name, scaled: false, replicas: role.currentReplicas, reason: algorithmReasons.noTarget };
}

/**
 * All roles in spec order: driven roles as the algorithm decided, the others
 * coupled through a direct ratio to a driven role, or left unscaled.
 */
export function withCoupledRoles(
  roles: readonly AlgorithmRoleInput[],
  ratios: readonly Ratio[],
  driven: ReadonlyMap<string, RoleRecommendation>,
): RoleRecommendation[] {
  return roles.map((role) => {
    const own = driven.get(role.name);
    if (own !== undefined) return own;
    const coupling = findCoupling(role.name, ratios, driven);
    return coupling === undefined ? unscaled(role) : coupledRecommendation(role, coupling);
  });
}
