/**
 * Recovery, case 0: rebuild the commit records a status write never stored.
 *
 * A commit is written in two steps, the target (vector and decision) and then
 * the scaler's status (`lastCommit`, `pendingCohort`, `lastScaleDown`). When
 * the process dies between them, or the status write is lost, the status
 * lacks the records that later recoveries depend on: a scale-up without a
 * pending cohort is never rolled back, a scale-down without `lastScaleDown`
 * is never restored. The decision on the target carries its own record
 * (baseline, time, expected generation, reason), so the pass rebuilds what
 * the status misses before the other recovery cases read it.
 *
 * Only a decision written under the term this scaler holds now, newer than
 * the status's `lastCommit`, is rebuilt; a decision without its record (an
 * older controller wrote it) is left alone.
 */
import type { DecisionPayload } from "../api/model-deployment.js";
import type {
  LastCommit,
  LastScaleDown,
  PendingCohort,
  RebalanceStatus,
  RoleStatus,
  ScalerStatus,
} from "../api/scaler.js";
import { formatTimestamp, parseOptionalTimestampMs } from "../time/timestamp.js";
import type { BlockedReason } from "./conditions.js";

export interface RebuildInput {
  /** The status this pass builds on. */
  readonly base: ScalerStatus;
  /** The decision the target carries, when its annotation is valid. */
  readonly decision: DecisionPayload | undefined;
  /** The term this scaler commits under on the target; undefined when it may not commit. */
  readonly term: number | undefined;
  /** Target roles in the spec's order (the first shrunk role names the scale-down). */
  readonly roleOrder: readonly string[];
  /** The scaler's generation, which opens an exhaustion episode after a rollback. */
  readonly generation: number | undefined;
  readonly cooldownAfterAbortSeconds: number;
}

export type RebuiltRecords =
  | { readonly kind: "Unchanged" }
  | {
      readonly kind: "Rebuilt";
      readonly base: ScalerStatus;
      readonly decisionID: string;
      /** `Blocked` reasons of the recovery the lost status recorded. */
      readonly blocked: ReadonlyMap<BlockedReason, string>;
    };

/** A decision with every field of its record. */
interface RecordedDecision extends DecisionPayload {
  readonly baselineVector: NonNullable<DecisionPayload["baselineVector"]>;
  readonly timestamp: string;
  readonly reason: NonNullable<DecisionPayload["reason"]>;
}

function missingRecord(input: RebuildInput): RecordedDecision | undefined {
  const { decision, term, base } = input;
  if (decision === undefined || term === undefined || decision.term !== term) return undefined;
  const { baselineVector, timestamp, reason } = decision;
  if (baselineVector === undefined || timestamp === undefined || reason === undefined) return undefined;
  if (decision.decisionID === base.lastCommit?.decisionID) return undefined;
  const decidedMs = parseOptionalTimestampMs(timestamp);
  const storedMs = parseOptionalTimestampMs(base.lastCommit?.timestamp);
  // Never replace a newer stored record with an older decision.
  if (decidedMs === undefined || (storedMs !== undefined && decidedMs < storedMs)) return undefined;
  return { ...decision, baselineVector, timestamp, reason };
}

function rolesWhere(
  d: RecordedDecision,
  order: readonly string[],
  test: (now: number, before: number) => boolean,
): string[] {
  return order.filter((role) => {
    const now = d.vector[role];
    const before = d.baselineVector[role];
    return now !== undefined && before !== undefined && test(now, before);
  });
}

function cohortOf(
  d: RecordedDecision,
  grown: readonly string[],
  before: PendingCohort | undefined,
): PendingCohort | undefined {
  if (d.reason === "ResourceExhausted") return undefined;
  if (grown.length === 0 || d.reason === "ScaleDownAborted") return before;
  return {
    decisionID: d.decisionID,
    term: d.term,
    baselineVector: { ...d.baselineVector },
    targetVector: { ...d.vector },
    startedAt: d.timestamp,
  };
}

function scaleDownOf(input: RebuildInput, d: RecordedDecision, shrunk: readonly string[]): LastScaleDown | undefined {
  const before = input.base.lastScaleDown;
  const role = shrunk[0];
  if ((d.reason === "Scale" || d.reason === "DonorRelease") && role !== undefined) {
    return { role, ordinal: d.vector[role] ?? 0, preScaleDownVector: { ...d.baselineVector }, outcome: "Committed" };
  }
  if (d.reason === "ScaleDownAborted" && before?.outcome === "Committed") {
    const decidedMs = parseOptionalTimestampMs(d.timestamp) ?? 0;
    const cooldownUntil = formatTimestamp(decidedMs + input.cooldownAfterAbortSeconds * 1000);
    return { ...before, outcome: "Aborted", abortedAt: d.timestamp, cooldownUntil };
  }
  return before;
}

function rebalanceOf(input: RebuildInput, d: RecordedDecision, shrunk: readonly string[]): RebalanceStatus | undefined {
  if (d.reason !== "ResourceExhausted") return input.base.rebalance;
  return {
    receiverRole: shrunk[0] ?? "",
    startedAt: d.timestamp,
    exhaustionEpisodeGeneration: input.generation ?? 0,
    donationAttempted: false,
    reason: "ResourceExhausted",
  };
}

function blockedOf(
  d: RecordedDecision,
  lastScaleDown: LastScaleDown | undefined,
  shrunk: readonly string[],
): Map<BlockedReason, string> {
  const blocked = new Map<BlockedReason, string>();
  if (d.reason === "ResourceExhausted") {
    blocked.set("ResourceExhausted", `${shrunk.join(", ")} not admitted in time; restored the baseline vector`);
  }
  if (d.reason === "ScaleDownAborted" && lastScaleDown?.cooldownUntil !== undefined) {
    blocked.set(
      "ScaleDownAborted",
      `the retirement of ${lastScaleDown.role} was aborted; restored the pre-scale-down vector, scale-down cools down until ${lastScaleDown.cooldownUntil}`,
    );
  }
  return blocked;
}

/** Grown roles remember when they grew (the decode grace period starts there). */
function rolesGrownAt(
  roles: readonly RoleStatus[] | undefined,
  grown: readonly string[],
  at: string,
): RoleStatus[] | undefined {
  return roles?.map((r) => (grown.includes(r.name) ? { ...r, lastScaleUpTime: at } : r));
}

export function rebuildRecords(input: RebuildInput): RebuiltRecords {
  const d = missingRecord(input);
  if (d === undefined) return { kind: "Unchanged" };
  const grown = rolesWhere(d, input.roleOrder, (now, before) => now > before);
  const shrunk = rolesWhere(d, input.roleOrder, (now, before) => now < before);
  const lastCommit: LastCommit = {
    decisionID: d.decisionID,
    term: d.term,
    vector: { ...d.vector },
    baselineVector: { ...d.baselineVector },
    timestamp: d.timestamp,
    targetGeneration: d.targetGeneration ?? input.base.lastCommit?.targetGeneration ?? 0,
  };
  const pendingCohort = cohortOf(d, grown, input.base.pendingCohort);
  const lastScaleDown = scaleDownOf(input, d, shrunk);
  const rebalance = rebalanceOf(input, d, shrunk);
  const roles = d.reason === "Scale" ? rolesGrownAt(input.base.roles, grown, d.timestamp) : input.base.roles;
  const { pendingCohort: _p, lastScaleDown: _s, rebalance: _r, roles: _ro, ...rest } = input.base;
  return {
    kind: "Rebuilt",
    decisionID: d.decisionID,
    base: {
      ...rest,
      lastCommit,
      ...(pendingCohort === undefined ? {} : { pendingCohort }),
      ...(lastScaleDown === undefined ? {} : { lastScaleDown }),
      ...(rebalance === undefined ? {} : { rebalance }),
      ...(roles === undefined ? {} : { roles }),
    },
    blocked: blockedOf(d, lastScaleDown, shrunk),
  };
}
