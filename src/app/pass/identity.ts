/** How one pass names a scaler: its key in the loop's memory and the labels its metrics carry. */
import type { Scaler } from "../../core/api/scaler.js";

/** `namespace/name`: the key of the scaler's memory, its running pass and its sample request. */
export function scalerKey(scaler: Scaler): string {
  return `${namespaceOf(scaler)}/${scaler.metadata.name}`;
}

/** The uid a scaler's memory belongs to: another uid is a recreated scaler, which starts over. */
export function uidOf(scaler: Scaler): string {
  return scaler.metadata.uid ?? "";
}

export function namespaceOf(scaler: Scaler): string {
  return scaler.metadata.namespace ?? "default";
}

/** The labels of the scaler's counters (commits, conflicts, rollbacks). */
export function labelsOf(scaler: Scaler): { namespace: string; scaler: string; target: string } {
  return { namespace: namespaceOf(scaler), scaler: scaler.metadata.name, target: scaler.spec.targetRef.name };
}
