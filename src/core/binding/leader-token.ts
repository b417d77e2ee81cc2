/**
 * Orders the leader tokens of two decisions (spec: Binding fence; docs/controller.md, Leadership): a commit
 * from a leadership older than the one that wrote the stored decision is refused, so a deposed replica that
 * resumes after a pause cannot overwrite its successor's vector. Webhook replicas share no memory: the stored
 * token on the target (`oldObject`) is the only history needed.
 *
 * Lease transitions only grow while the Lease exists, so the larger count is the newer leadership. Two holders
 * with the same count cannot both be current: the later writer is refused. A decision without a token (written
 * without leader election, or before tokens existed) is the oldest.
 */
import type { LeaderToken } from "../api/model-deployment.js";

function describe(token: LeaderToken | undefined): string {
  return token === undefined
    ? "no leader token"
    : `leader ${JSON.stringify(token.holder)} (Lease transition ${token.transitions})`;
}

/** Why `candidate` may not replace a decision written under `stored`; undefined when it may. */
export function staleLeaderReason(
  candidate: LeaderToken | undefined,
  stored: LeaderToken | undefined,
): string | undefined {
  if (stored === undefined) return undefined;
  const older =
    candidate === undefined ||
    candidate.transitions < stored.transitions ||
    (candidate.transitions === stored.transitions && candidate.holder !== stored.holder);
  if (!older) return undefined;
  return `the commit carries ${describe(candidate)}, older than the ${describe(stored)} that wrote the stored decision: a deposed controller replica may not overwrite its successor's commit`;
}
