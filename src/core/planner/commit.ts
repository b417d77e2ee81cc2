/**
 * Phase 7, the commit: the vector this pass stands for (a recovery's write,
 * the current counts while a transaction holds everything, or the planned
 * vector) is written when it differs from the current one and the binding
 * allows commits (`Active`, under a term). A commit records `lastCommit`, a
 * pending cohort when it grows roles, and `lastScaleDown` when it shrinks one.
 */
import type { LastCommit, LastScaleDown, PendingCohort, ReplicaVector } from "../api/scaler.js";
import { decisionID } from "./decision-id.js";
import type { Pass } from "./pass.js";
import type { Recovery } from "./recovery.js";
import type { Commit } from "./types.js";

export interface Committed {
  readonly finalVector: ReplicaVector;
  readonly commit: Commit | undefined;
  readonly lastCommit: LastCommit | undefined;
  readonly pendingCohort: PendingCohort | undefined;
  readonly lastScaleDown: LastScaleDown | undefined;
  /** Roles this commit grows (their `lastScaleUpTime` moves to now). */
  readonly scaledUp: ReadonlySet<string>;
}

export function sameVector(a: ReplicaVector, b: ReplicaVector): boolean {
  const keys = new Set([...Object.keys(a), ...Object.keys(b)]);
  for (const key of keys) if (a[key] !== b[key]) return false;
  return true;
}

/** The vector this pass stands for: a recovery's write first, then a hold, then the plan. */
export function finalVectorOf(pass: Pass, planned: ReplicaVector, recovery: Recovery): ReplicaVector {
  if (recovery.write !== undefined) return recovery.write.vector;
  return recovery.holdAll !== undefined ? { ...pass.current } : planned;
}

function records(pass: Pass, id: string, term: number, finalVector: ReplicaVector, recovery: Recovery): Committed {
  const expectedGeneration = (pass.target.metadata.generation ?? 0) + 1;
  const grown = pass.roles.filter((r) => (finalVector[r.name] ?? 0) > r.replicas).map((r) => r.name);
  const shrunk = pass.roles.filter((r) => (finalVector[r.name] ?? 0) < r.replicas).map((r) => r.name);
  const write = pass.binding.outcome.write;
  const reason = recovery.write?.reason ?? "Scale";
  // A restore creates no cohort: the replica never left.
  const cohort: PendingCohort | undefined =
    grown.length > 0 && reason !== "ScaleDownAborted"
      ? {
          decisionID: id,
          term,
          baselineVector: { ...pass.current },
          targetVector: { ...finalVector },
          startedAt: pass.nowIso,
        }
      : recovery.pendingCohort;
  // A rollback returns replicas that never served: nothing to restore if their retirement aborts.
  const shrinking = shrunk[0];
  const lastScaleDown: LastScaleDown | undefined =
    shrinking !== undefined && recovery.write === undefined
      ? {
          role: shrinking,
          ordinal: finalVector[shrinking] ?? 0,
          preScaleDownVector: { ...pass.current },
          outcome: "Committed",
        }
      : recovery.lastScaleDown;
  return {
    finalVector,
    commit: {
      vector: { ...finalVector },
      // The decision carries its own commit record, so a status write that never lands loses nothing.
      decision: {
        decisionID: id,
        term,
        vector: { ...finalVector },
        baselineVector: { ...pass.current },
        timestamp: pass.nowIso,
        targetGeneration: expectedGeneration,
        reason,
      },
      ...(write.kind === "acquire" ? { binding: write.binding } : {}),
      baselineVector: { ...pass.current },
      ...(pass.target.metadata.resourceVersion === undefined
        ? {}
        : { resourceVersion: pass.target.metadata.resourceVersion }),
      targetGeneration: expectedGeneration,
      reason,
    },
    lastCommit: {
      decisionID: id,
      term,
      vector: { ...finalVector },
      baselineVector: { ...pass.current },
      timestamp: pass.nowIso,
      targetGeneration: expectedGeneration,
    },
    pendingCohort: cohort,
    lastScaleDown,
    scaledUp: new Set(grown),
  };
}

export function commitPhase(pass: Pass, planned: ReplicaVector, recovery: Recovery): Committed {
  const finalVector = finalVectorOf(pass, planned, recovery);
  const { outcome } = pass.binding;
  const unwritten: Committed = {
    finalVector,
    commit: undefined,
    lastCommit: pass.base.lastCommit,
    pendingCohort: recovery.pendingCohort,
    lastScaleDown: recovery.lastScaleDown,
    scaledUp: new Set(),
  };
  if (!outcome.commit || outcome.term === undefined || sameVector(finalVector, pass.current)) return unwritten;
  const term = outcome.term;
  const id = decisionID({
    scalerUID: pass.input.scaler.metadata.uid ?? "",
    term,
    vector: finalVector,
    nowMs: pass.nowMs,
  });
  return records(pass, id, term, finalVector, recovery);
}
