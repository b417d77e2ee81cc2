/**
 * Deterministic decision IDs: a replay with the same inputs reproduces the
 * same IDs, so a simulated timeline and a recorded one can be compared line
 * by line. The hash is FNV-1a (64 bit); it names decisions, it does not
 * protect anything.
 */
import type { DecisionPayload, LeaderToken } from "../api/model-deployment.js";
import type { ReplicaVector } from "../api/scaler.js";

const fnvOffset64 = 0xcbf29ce484222325n;
const fnvPrime64 = 0x100000001b3n;
const mask64 = 0xffffffffffffffffn;

/** FNV-1a over the UTF-16 code units of `text`, as 16 lower-case hex digits. */
export function fnv1a64Hex(text: string): string {
  let hash = fnvOffset64;
  for (let i = 0; i < text.length; i++) {
    hash ^= BigInt(text.charCodeAt(i));
    hash = (hash * fnvPrime64) & mask64;
  }
  return hash.toString(16).padStart(16, "0");
}

/** The vector as `role=count` pairs in name order, so key order never changes the ID. */
export function canonicalVector(vector: ReplicaVector): string {
  return Object.keys(vector)
    .sort()
    .map((role) => `${role}=${vector[role] ?? 0}`)
    .join(",");
}

export interface DecisionIdParts {
  readonly scalerUID: string;
  readonly term: number;
  readonly vector: ReplicaVector;
  readonly nowMs: number;
}

/** `d-` plus the hash of scaler UID, term, vector and time. */
export function decisionID(parts: DecisionIdParts): string {
  return `d-${fnv1a64Hex(`${parts.scalerUID}|${parts.term}|${canonicalVector(parts.vector)}|${parts.nowMs}`)}`;
}

/** The decision as written by one leadership: stamped with its Lease token, or unchanged without leader election. */
export function withLeaderToken(decision: DecisionPayload, token: LeaderToken | undefined): DecisionPayload {
  return token === undefined
    ? decision
    : { ...decision, leader: { holder: token.holder, transitions: token.transitions } };
}
