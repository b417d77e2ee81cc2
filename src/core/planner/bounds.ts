/**
 * Bounds: every target role needs a `[minReplicas, maxReplicas]` entry, and
 * the current vector must already lie inside them. Otherwise nothing is
 * planned (`BoundsConflict`): moving a vector the policy does not contain
 * would be guessing what the user meant.
 */
import type { TargetRole } from "../api/model-deployment.js";
import type { ScalerSpec } from "../api/scaler.js";
import type { Limit } from "./types.js";

export interface RoleBoundsRange {
  readonly min: number;
  readonly max: number;
  /** `floorReplicasByUtcHour` where written (`hourly-floor.ts`). */
  readonly floorByUtcHour?: readonly number[];
}

export type BoundsCheck =
  | { readonly ok: true; readonly bounds: ReadonlyMap<string, RoleBoundsRange> }
  | { readonly ok: false; readonly message: string };

/**
 * Whether a role's count lies below or above `[minReplicas, maxReplicas]`; undefined inside. The gate stops
 * planning on either (`BoundsConflict`); admission warns on it (`target-warnings.ts`).
 * Example: 3 replicas, bounds [5, 8] → "below".
 */
export function countOutsideBounds(
  replicas: number,
  bounds: { readonly minReplicas: number; readonly maxReplicas: number },
): "below" | "above" | undefined {
  if (replicas < bounds.minReplicas) return "below";
  if (replicas > bounds.maxReplicas) return "above";
  return undefined;
}

/**
 * Checks that every target role has consistent bounds containing its current
 * count. Bounds for roles the target lacks are ignored (the role may be on
 * its way in or out); they never plan anything.
 */
export function checkBounds(spec: ScalerSpec, targetRoles: readonly TargetRole[]): BoundsCheck {
  const byName = new Map(spec.roles.map((role) => [role.name, role] as const));
  const bounds = new Map<string, RoleBoundsRange>();
  const problems: string[] = [];
  for (const role of targetRoles) {
    const entry = byName.get(role.name);
    if (entry === undefined) {
      problems.push(`target role ${role.name} has no bounds in spec.roles`);
      continue;
    }
    if (entry.minReplicas > entry.maxReplicas) {
      problems.push(`role ${role.name}: minReplicas ${entry.minReplicas} exceeds maxReplicas ${entry.maxReplicas}`);
      continue;
    }
    if (countOutsideBounds(role.replicas, entry) !== undefined) {
      problems.push(
        `role ${role.name}: current ${role.replicas} replicas is outside [${entry.minReplicas}, ${entry.maxReplicas}]`,
      );
      continue;
    }
    bounds.set(role.name, {
      min: entry.minReplicas,
      max: entry.maxReplicas,
      ...(entry.floorReplicasByUtcHour === undefined ? {} : { floorByUtcHour: entry.floorReplicasByUtcHour }),
    });
  }
  if (targetRoles.length === 0) problems.push("the target has no roles");
  if (problems.length > 0) return { ok: false, message: problems.join("; ") };
  return { ok: true, bounds };
}

/** The recommendation clamped into the role's bounds. */
export function clampToBounds(replicas: number, range: RoleBoundsRange): Limit {
  if (replicas < range.min) return { value: range.min, reason: "MinReplicas" };
  if (replicas > range.max) return { value: range.max, reason: "MaxReplicas" };
  return { value: replicas, reason: "" };
}
