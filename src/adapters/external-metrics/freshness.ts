/**
 * Whether a scaler's recorded recommendation is still kept current. A steady
 * scaler writes no status, so the status alone cannot say; the rule (see
 * docs/controller.md, "External metrics: the freshness rule") combines two
 * things every replica can see: a leader renews the Lease, and the scaler is
 * one the leader plans for and whose plan is not held by a conflict.
 */
import type { Condition } from "../../core/api/scaler.js";

/** Why a scaler's values are reported as missing. */
export type Staleness = "NoLeader" | "Suspended" | "Deleting" | "NotObserved" | "Unbound" | "BlockedByConflict";

/** The parts of a scaler object the rule reads. */
export interface FreshnessView {
  readonly generation?: number | undefined;
  readonly deleting: boolean;
  readonly suspend: boolean;
  readonly observedGeneration?: number | undefined;
  readonly conditions: readonly Pick<Condition, "type" | "status" | "reason">[];
}

/** Blocked reasons that mean the spec itself cannot be satisfied, so the recommendation is not acted on. */
const conflictReasons: ReadonlySet<string> = new Set(["BoundsConflict", "RatioConflict"]);

/** Undefined when the values are current; otherwise the first reason they are not. */
export function staleness(view: FreshnessView, leaderRenewing: boolean): Staleness | undefined {
  if (!leaderRenewing) return "NoLeader";
  if (view.suspend) return "Suspended";
  if (view.deleting) return "Deleting";
  // The status describes an older spec until the leader's first pass over the new one.
  if (view.generation !== undefined && view.observedGeneration !== view.generation) return "NotObserved";
  const bound = view.conditions.find((c) => c.type === "Bound");
  if (bound?.status !== "True") return "Unbound";
  const blocked = view.conditions.find((c) => c.type === "Blocked");
  if (blocked?.status === "True" && conflictReasons.has(blocked.reason)) return "BlockedByConflict";
  return undefined;
}
