/**
 * One scaler held in memory with the API server's resourceVersion guard, for unit tests of code that reads and
 * patches a scaler (`getScaler`, `patchScaler` of KubeResources). A patch whose `/metadata/resourceVersion` is not
 * the stored one fails with `ConflictError`, as the API server answers 409; `beforePatch` lets a test move the
 * scaler on (another writer) just before each patch lands.
 */
import { ConflictError, KubeCallError } from "../../src/adapters/kubernetes/resources.js";
import type { JsonPatchOp } from "../../src/core/binding/patch.js";

export interface StoredScaler {
  metadata: { resourceVersion: string; annotations?: Record<string, string> };
  spec: unknown;
  status?: unknown;
}

/** Every write moves the version on, as the API server's does. */
function nextVersion(scaler: StoredScaler): StoredScaler["metadata"] {
  return { ...scaler.metadata, resourceVersion: String(Number(scaler.metadata.resourceVersion) + 1) };
}

export class ScalerStore {
  patches = 0;
  /** Runs before each patch is judged: another writer's change, or `"delete"` to remove the scaler. */
  beforePatch: (scaler: StoredScaler) => StoredScaler | "delete" = (scaler) => scaler;

  constructor(public scaler: StoredScaler | undefined) {}

  /** Another writer's status write: the version moves on, the spec stays. */
  static statusWrite(scaler: StoredScaler): StoredScaler {
    return { ...scaler, metadata: nextVersion(scaler) };
  }

  getScaler(): Promise<unknown | undefined> {
    return Promise.resolve(this.scaler === undefined ? undefined : structuredClone(this.scaler));
  }

  patchScaler(namespace: string, name: string, ops: readonly JsonPatchOp[]): Promise<unknown> {
    this.patches++;
    if (this.scaler !== undefined) {
      const next = this.beforePatch(this.scaler);
      this.scaler = next === "delete" ? undefined : next;
    }
    const what = `patch modeldeploymentscalers ${namespace}/${name}`;
    if (this.scaler === undefined) return Promise.reject(new KubeCallError(`${what}: not found`, 404, { cause: 404 }));
    const guard = ops.find((op) => op.path === "/metadata/resourceVersion");
    if (guard !== undefined && "value" in guard && guard.value !== this.scaler.metadata.resourceVersion)
      return Promise.reject(new ConflictError(`${what}: the object has been modified`, 409, { cause: 409 }));
    const spec = ops.find((op) => op.path === "/spec");
    // Only the whole map is written here (`add` of `/metadata/annotations`), as calibrate writes it.
    const annotations = ops.find((op) => op.path === "/metadata/annotations");
    const metadata = nextVersion(this.scaler);
    if (annotations !== undefined && "value" in annotations)
      metadata.annotations = annotations.value as Record<string, string>;
    this.scaler = {
      ...this.scaler,
      metadata,
      ...(spec !== undefined && "value" in spec ? { spec: spec.value } : {}),
    };
    return Promise.resolve(structuredClone(this.scaler));
  }
}
