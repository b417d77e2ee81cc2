/**
 * Resource rebalancing after a scale-up timed out: one role (the donor)
 * releases a replica so another (the receiver) can take its place on the
 * same instance type. The transaction has two writes: donor -1 first, and
 * receiver +1 only after the donor's retirement finished and its workload is
 * gone. Both vectors must satisfy bounds and ratios, or nothing moves.
 */
import type { ModelDeployment, TargetRoleStatus } from "../api/model-deployment.js";
import type { RebalancePolicy, RebalanceStatus, ReplicaVector } from "../api/scaler.js";
import type { RoleBoundsRange } from "./bounds.js";
import { violatedBands, describeBand, type RatioBand } from "./ratios.js";

/** A role as donor selection sees it. */
export interface RebalanceRole {
  readonly name: string;
  readonly instanceType: string | undefined;
  readonly currentReplicas: number;
  /** Bounds-clamped recommendation; undefined when the algorithm does not drive the role. */
  readonly recommendedReplicas: number | undefined;
}

export interface DonationInput {
  readonly policy: RebalancePolicy;
  /** `rebalance.priority`, highest first (Priority policy). */
  readonly priority: readonly string[] | undefined;
  readonly receiver: string;
  /** Roles in the spec's order. */
  readonly roles: readonly RebalanceRole[];
  readonly bounds: ReadonlyMap<string, RoleBoundsRange>;
  readonly bands: readonly RatioBand[];
  readonly current: ReplicaVector;
  /** A Priority donation already happened in this exhaustion episode. */
  readonly donationAttempted: boolean;
}

export type DonationChoice =
  | {
      readonly kind: "Donate";
      readonly donor: string;
      readonly donorVector: ReplicaVector;
      readonly receiverVector: ReplicaVector;
    }
  | { readonly kind: "NotApplicable"; readonly message: string }
  | {
      readonly kind: "Blocked";
      readonly rebalanceReason: "RebalanceBlocked" | "DonationAttempted";
      readonly message: string;
    };

/** Why a vector is not acceptable as a transaction step, or undefined when it is. */
export function stepViolation(
  vector: ReplicaVector,
  bounds: ReadonlyMap<string, RoleBoundsRange>,
  bands: readonly RatioBand[],
): string | undefined {
  for (const [role, range] of bounds) {
    const count = vector[role] ?? 0;
    if (count < range.min || count > range.max)
      return `${role} would have ${count} replicas, outside [${range.min}, ${range.max}]`;
  }
  const broken = violatedBands(vector, bands);
  if (broken[0] !== undefined) return `ratio ${describeBand(broken[0])} would break`;
  return undefined;
}

/** Candidate donors in the order the policy tries them. */
function candidates(input: DonationInput): { readonly names: readonly string[] } | { readonly notApplicable: string } {
  const others = input.roles.map((r) => r.name).filter((name) => name !== input.receiver);
  if (input.policy !== "Priority") return { names: others };
  const list = input.priority ?? [];
  const at = list.indexOf(input.receiver);
  if (at < 0) return { notApplicable: `receiver ${input.receiver} is not listed in rebalance.priority` };
  return { names: list.slice(at + 1).filter((name) => others.includes(name)) };
}

/**
 * Picks the donor: the first candidate on the receiver's non-empty instance
 * type that stays above its minimum, whose own recommendation shrinks
 * (`Opposing`) or at least does not grow (`Priority`), and for which both
 * transaction vectors are acceptable.
 */
export function chooseDonation(input: DonationInput): DonationChoice {
  if (input.policy === "Disabled") return { kind: "NotApplicable", message: "rebalance.policy is Disabled" };
  if (input.policy === "Priority" && input.donationAttempted) {
    return {
      kind: "Blocked",
      rebalanceReason: "DonationAttempted",
      message: "a Priority donation was already attempted in this exhaustion episode",
    };
  }
  const receiver = input.roles.find((r) => r.name === input.receiver);
  const pool = receiver?.instanceType ?? "";
  if (receiver === undefined || pool === "")
    return { kind: "NotApplicable", message: `receiver ${input.receiver} has no instanceType` };
  const listed = candidates(input);
  if ("notApplicable" in listed) return { kind: "NotApplicable", message: listed.notApplicable };

  const byName = new Map(input.roles.map((r) => [r.name, r] as const));
  let blocked: string | undefined;
  for (const name of listed.names) {
    const donor = byName.get(name);
    if (donor === undefined || !eligibleDonor(input, donor, pool)) continue;
    const donorVector: ReplicaVector = { ...input.current, [name]: donor.currentReplicas - 1 };
    const receiverVector: ReplicaVector = {
      ...donorVector,
      [input.receiver]: (input.current[input.receiver] ?? 0) + 1,
    };
    const violation =
      stepViolation(donorVector, input.bounds, input.bands) ?? stepViolation(receiverVector, input.bounds, input.bands);
    if (violation !== undefined) {
      blocked ??= `donor ${name}: ${violation}`;
      continue;
    }
    return { kind: "Donate", donor: name, donorVector, receiverVector };
  }
  if (blocked !== undefined) return { kind: "Blocked", rebalanceReason: "RebalanceBlocked", message: blocked };
  return { kind: "NotApplicable", message: `no role on instance type ${pool} can donate to ${input.receiver}` };
}

/**
 * A donor shares the receiver's pool, is above its minimum, and its own
 * recommendation agrees with giving: `Opposing` donors shrink, `Priority`
 * donors do not grow.
 */
function eligibleDonor(input: DonationInput, donor: RebalanceRole, pool: string): boolean {
  const range = input.bounds.get(donor.name);
  if (range === undefined || donor.instanceType !== pool || donor.currentReplicas <= range.min) return false;
  const wants = donor.recommendedReplicas;
  if (input.policy === "Opposing") return wants !== undefined && wants < donor.currentReplicas;
  return !(input.policy === "Priority" && wants !== undefined && wants > donor.currentReplicas);
}

/**
 * The donor's replica is gone: no retirement is running, and the donor's
 * status no longer counts more ready or reserved replicas than its new target.
 */
export function donorReleased(
  rebalance: RebalanceStatus,
  target: ModelDeployment,
  roleStatuses: ReadonlyMap<string, TargetRoleStatus>,
): boolean {
  const donor = rebalance.donorRole;
  const donorTarget = rebalance.donorTargetReplicas;
  if (donor === undefined || donorTarget === undefined) return false;
  const retirement = target.status?.retirement ?? undefined;
  if (
    retirement !== undefined &&
    retirement !== null &&
    retirement.state !== "Completed" &&
    retirement.state !== "Aborted"
  )
    return false;
  const status = roleStatuses.get(donor);
  if (status?.quotaReserved !== undefined && status.quotaReserved > donorTarget) return false;
  if (status?.ready !== undefined && status.ready > donorTarget) return false;
  return true;
}

/** Transaction phases during which the planner writes nothing else. */
export function transactionInFlight(rebalance: RebalanceStatus | undefined): boolean {
  return rebalance?.reason === "DonorRelease";
}

/** Reasons of an exhaustion episode that still looks for a donor. */
const seekingReasons: ReadonlySet<string> = new Set([
  "ResourceExhausted",
  "RebalanceNotApplicable",
  "RebalanceBlocked",
  "DonationAttempted",
]);

export function seekingDonor(rebalance: RebalanceStatus | undefined): boolean {
  return rebalance?.reason !== undefined && seekingReasons.has(rebalance.reason);
}
