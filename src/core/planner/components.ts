/**
 * Phase 5, components and ratios: each ratio-connected component (`ratios.ts`)
 * takes one direction from its recommendations, gives every role an allowed
 * interval (bounds, steps, holds, direction) and is projected onto its bands
 * (`projection.ts`). Each role's reason names the constraint that changed its
 * count; holds and limits report on `Blocked` (`reasons.ts`).
 */
import type { ReplicaVector } from "../api/scaler.js";
import type { BlockedReason } from "./conditions.js";
import { projectComponent } from "./projection.js";
import { describeBand, ratioComponents, type RatioBand } from "./ratios.js";
import { blockedReasonOf } from "./reasons.js";
import type { RolePlan } from "./role-plans.js";

export interface PlannedVector {
  readonly vector: ReplicaVector;
  /** Role -> reason for its planned count. */
  readonly reasons: ReadonlyMap<string, string>;
  readonly blocked: ReadonlyMap<BlockedReason, string>;
}

type Direction = "up" | "down";
type Projected = "exact" | "moved" | "conflict";

interface Box {
  readonly lo: number;
  readonly hi: number;
}

/** The reason of a count held at the edge of its interval: the hold, the direction, or the step. */
function edgeReason(plan: RolePlan, wanted: number, hi: number, direction: Direction): string {
  // Stryker disable next-line EqualityOperator: equivalent, the caller asks only for a count held at an edge, so wanted is never hi
  if (wanted > hi) {
    if (plan.upHold !== undefined) return plan.upHold.reason;
    return direction === "down" ? "ComponentScalingDown" : "ScaleUpLimit";
  }
  if (plan.downHold !== undefined) return plan.downHold.reason;
  return direction === "up" ? "ComponentScalingUp" : "ScaleDownLimit";
}

/** Where a role's planned count came from when it is not the raw recommendation. */
export function explain(plan: RolePlan, planned: number, box: Box, direction: Direction, projected: Projected): string {
  const algorithmReason = plan.recommendation?.reason ?? "NotScaled";
  if (plan.recommendation?.replicas === planned || !plan.scaled) return algorithmReason;
  if (projected === "conflict") return "RatioConflict";
  if (planned === plan.clamped.value && plan.clamped.reason !== "") return plan.clamped.reason;
  const wanted = plan.stabilized.value;
  const boxed = Math.min(Math.max(wanted, box.lo), box.hi);
  if (planned === boxed && planned !== wanted) return edgeReason(plan, wanted, box.hi, direction);
  if (projected === "moved") return "RatioCoupled";
  return plan.stabilized.reason !== "" ? plan.stabilized.reason : algorithmReason;
}

/**
 * The spec: "an upward recommendation gives the component an upward
 * direction". The bounds-clamped recommendation decides, not the paced count:
 * a role whose growth waits for its window still keeps its partners from
 * shrinking, and a role pinned at its maximum does not.
 */
export function componentDirection(members: readonly RolePlan[]): Direction {
  return members.some((m) => m.scaled && m.clamped.value > m.current) ? "up" : "down";
}

/** A role's allowed interval: bounds and steps, closed on a side by a hold or the direction. */
export function allowedBox(m: RolePlan, direction: Direction): Box {
  if (!m.scaled) return { lo: m.current, hi: m.current };
  let hi = Math.min(m.range.max, m.current + m.upStepReplicas);
  let lo = Math.max(m.range.min, m.current - m.downStepReplicas);
  if (m.upHold !== undefined || direction === "down") hi = m.current;
  if (m.downHold !== undefined || direction === "up") lo = m.current;
  return { lo: Math.min(lo, m.current), hi: Math.max(hi, m.current) };
}

function blockedMessage(blocked: BlockedReason, m: RolePlan, reason: string, planned: number): string {
  if (blocked === "ScaleDownAborted") return `${m.name}: scale-down waits for the cooldown after an aborted retirement`;
  return `${m.name}: ${reason} holds ${planned} of ${m.recommendation?.replicas ?? planned} recommended`;
}

/** Plans one ratio component: one direction, allowed intervals, projection. */
export function planComponent(members: readonly RolePlan[], bands: readonly RatioBand[]): PlannedVector {
  const direction = componentDirection(members);
  const boxes = members.map((m) => allowedBox(m, direction));
  const names = new Set(members.map((m) => m.name));
  const componentBands = bands.filter((b) => names.has(b.numerator) && names.has(b.denominator));
  // Stryker disable next-line OptionalChaining,LogicalOperator: equivalent, there is one box per member
  const roles = members.map((m, i) => ({
    name: m.name,
    // Stryker disable next-line OptionalChaining,LogicalOperator: equivalent, there is one box per member
    lo: boxes[i]?.lo ?? m.current,
    // Stryker disable next-line OptionalChaining,LogicalOperator: equivalent, there is one box per member
    hi: boxes[i]?.hi ?? m.current,
    target: m.scaled ? m.stabilized.value : m.current,
    current: m.current,
  }));
  const projected =
    // Stryker disable next-line ConditionalExpression: equivalent, without bands the projection returns the clamped targets (its own fast path)
    componentBands.length === 0
      ? roles.map((r) => Math.min(Math.max(r.target, r.lo), r.hi))
      : projectComponent(roles, componentBands).vector;
  const vector: ReplicaVector = {};
  const reasons = new Map<string, string>();
  const blocked = new Map<BlockedReason, string>();
  if (projected === undefined) {
    blocked.set(
      "RatioConflict",
      `no vector satisfies ${componentBands.map(describeBand).join(", ")} within pacing and guards; ${[...names].join(", ")} hold`,
    );
  }
  members.forEach((m, i) => {
    const planned = projected?.[i] ?? m.current;
    vector[m.name] = planned;
    const box = boxes[i] ?? { lo: m.current, hi: m.current };
    const boxed = Math.min(Math.max(roles[i]?.target ?? m.current, box.lo), box.hi);
    const how: Projected = projected === undefined ? "conflict" : planned === boxed ? "exact" : "moved";
    const reason = explain(m, planned, box, direction, how);
    reasons.set(m.name, reason);
    const reported = blockedReasonOf(reason);
    if (reported !== undefined && planned !== m.recommendation?.replicas && m.scaled)
      blocked.set(reported, blockedMessage(reported, m, reason, planned));
  });
  return { vector, reasons, blocked };
}

/** Every component of the target, in spec order; the first message per `Blocked` reason wins. */
export function planComponents(
  roleNames: readonly string[],
  plans: ReadonlyMap<string, RolePlan>,
  bands: readonly RatioBand[],
  current: ReplicaVector,
): PlannedVector {
  const vector: ReplicaVector = { ...current };
  const reasons = new Map<string, string>();
  const blocked = new Map<BlockedReason, string>();
  for (const component of ratioComponents(roleNames, bands)) {
    const outcome = planComponent(
      component.map((name) => plans.get(name) as RolePlan),
      bands,
    );
    Object.assign(vector, outcome.vector);
    for (const [role, reason] of outcome.reasons) reasons.set(role, reason);
    for (const [reason, message] of outcome.blocked) if (!blocked.has(reason)) blocked.set(reason, message);
  }
  return { vector, reasons, blocked };
}
