/**
 * The ports the control loop needs, owned here by their consumer: adapters
 * implement them (`WatchedResources`, the PromQL source), tests pass fakes
 * (`test/fakes/controller.ts`). A stale-`resourceVersion` answer is a value
 * the loop re-plans on, not an adapter's exception class.
 */
import type { JsonPatchOp } from "../core/binding/patch.js";
import type { RoleSamples } from "../core/signals/types.js";

/** The answer to a guarded write (target or scaler status). */
export type GuardedWrite =
  | { readonly kind: "Written"; readonly object: unknown }
  /** The object (target or scaler) changed since it was read: nothing was applied. */
  | { readonly kind: "Conflict"; readonly message: string };

/** The Kubernetes calls the controller needs. Every other failure rejects. */
export interface ScalerStore {
  /** A changed scaler comes back as a new object: the controller keeps its validation per object. */
  listScalers(namespace: string): Promise<unknown[]>;
  /** `fresh` reads the API server itself rather than a watch cache (after a conflict, or to read a write back). */
  getTarget(namespace: string, name: string, options?: { fresh?: boolean }): Promise<unknown | undefined>;
  patchTarget(namespace: string, name: string, ops: readonly JsonPatchOp[]): Promise<GuardedWrite>;
  patchScaler(namespace: string, name: string, ops: readonly JsonPatchOp[]): Promise<unknown>;
  /** With `resourceVersion`, a write over a newer scaler is answered `Conflict` and applies nothing. */
  writeScalerStatus(
    namespace: string,
    name: string,
    status: unknown,
    options?: { resourceVersion?: string | undefined },
  ): Promise<GuardedWrite>;
}

/** One scaler's sampling request. */
export interface SampleRequest {
  readonly key: string;
  readonly namespace: string;
  readonly deployment: string;
  readonly roles: readonly string[];
  readonly stableWindowSeconds: number;
  readonly panicWindowSeconds: number;
  readonly intervalSeconds: number;
}

/** Engine signals for many scalers in one batch: key → role → samples. */
export interface SignalSource {
  sample(requests: readonly SampleRequest[]): Promise<ReadonlyMap<string, ReadonlyMap<string, RoleSamples>>>;
}

/** Time for the loop: the clock it plans with and the waits it makes (retries, deadlines, ticks). */
export interface Clock {
  nowMs(): number;
  sleep(ms: number): Promise<void>;
}

/** A wait that does not keep the process alive on its own. */
export function unrefSleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms).unref());
}
