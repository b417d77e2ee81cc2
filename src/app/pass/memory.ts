/** What the loop keeps of one scaler between passes. */
import type { Scaler, ScalerStatus } from "../../core/api/scaler.js";
import { uidOf } from "./identity.js";

export interface ScalerMemory {
  /** The last planned status, newer than the object's when a pass wrote nothing. */
  status: ScalerStatus | undefined;
  lastPassMs: number;
  uid: string;
  /**
   * What of the planned status has not reached the API server: the next pass writes it even if nothing
   * moved; while a commit's records are missing (`Record`) no new commit is made.
   */
  unwritten: "Nothing" | "Status" | "Record";
  /** The scaler's resourceVersion this pass read (or its own finalizer patch produced). */
  scalerVersion?: string | undefined;
}

/**
 * The scaler's memory for this pass: the one kept while the uid is the same, a new one from the object's
 * status for a new or recreated scaler. Either way it records the pass's time and the resourceVersion the
 * status write is guarded by: a status planned from an older read is never forced.
 */
export function memoryForPass(kept: ScalerMemory | undefined, scaler: Scaler, nowMs: number): ScalerMemory {
  const uid = uidOf(scaler);
  const memory: ScalerMemory =
    kept?.uid === uid ? kept : { status: scaler.status, lastPassMs: nowMs, uid, unwritten: "Nothing" };
  memory.lastPassMs = nowMs;
  memory.scalerVersion = scaler.metadata.resourceVersion;
  return memory;
}
