/**
 * An in-memory `ScalerStore` with the API server's optimistic concurrency: every object carries a
 * resourceVersion, a write guarded by an older one is answered `Conflict`, and a test may move an
 * object between a read and a write (`beforeStatusWrite`) or refuse writes as a deposed leader would
 * (`refuseWrites`). For fast unit tests of the controller's write path only; the real API server is in
 * test/integration.
 */
import { NotLeaderError } from "../../src/adapters/kubernetes/resources.js";
import type { ScalerStore, TargetWrite } from "../../src/app/controller.js";
import type { JsonPatchOp } from "../../src/core/binding/patch.js";

type KubeObject = { metadata: { resourceVersion?: string; [k: string]: unknown }; [k: string]: unknown };

export class VersionedStore implements ScalerStore {
  private version = 1;
  readonly statusWrites: unknown[] = [];
  readonly targetPatches: JsonPatchOp[][] = [];
  /** Runs once before the next status write is judged (a user edit racing the controller). */
  beforeStatusWrite: (() => void) | undefined;
  /** When set, every write throws this instead of applying (a replica whose leadership ended). */
  refuseWrites: NotLeaderError | undefined;

  constructor(
    readonly scaler: KubeObject,
    readonly target: KubeObject,
  ) {
    scaler.metadata.resourceVersion = String(this.version++);
    target.metadata.resourceVersion = String(this.version++);
  }

  /** Moves an object as another writer would: a new resourceVersion. */
  touch(object: KubeObject): void {
    object.metadata.resourceVersion = String(this.version++);
  }

  listScalers(): Promise<unknown[]> {
    return Promise.resolve([structuredClone(this.scaler)]);
  }

  getTarget(): Promise<unknown> {
    return Promise.resolve(structuredClone(this.target));
  }

  patchTarget(_namespace: string, _name: string, ops: readonly JsonPatchOp[]): Promise<TargetWrite> {
    if (this.refuseWrites !== undefined) return Promise.reject(this.refuseWrites);
    this.targetPatches.push([...ops]);
    const patched = this.patch(this.target, ops);
    return Promise.resolve(
      patched === undefined
        ? { kind: "Conflict", message: "patch: the object changed since it was read" }
        : { kind: "Written", object: patched },
    );
  }

  patchScaler(_namespace: string, _name: string, ops: readonly JsonPatchOp[]): Promise<unknown> {
    if (this.refuseWrites !== undefined) return Promise.reject(this.refuseWrites);
    const patched = this.patch(this.scaler, ops);
    return patched === undefined ? Promise.reject(new Error("patch: the object changed")) : Promise.resolve(patched);
  }

  writeScalerStatus(
    _namespace: string,
    _name: string,
    status: unknown,
    options: { resourceVersion?: string | undefined } = {},
  ): Promise<TargetWrite> {
    if (this.refuseWrites !== undefined) return Promise.reject(this.refuseWrites);
    const race = this.beforeStatusWrite;
    this.beforeStatusWrite = undefined;
    race?.();
    if (options.resourceVersion !== undefined && options.resourceVersion !== this.scaler.metadata.resourceVersion)
      return Promise.resolve({ kind: "Conflict", message: "write status: the object changed since it was read" });
    this.scaler["status"] = structuredClone(status);
    this.touch(this.scaler);
    this.statusWrites.push(structuredClone(status));
    return Promise.resolve({ kind: "Written", object: structuredClone(this.scaler) });
  }

  /** The patched object, or undefined when its resourceVersion guard fails (nothing applied). */
  private patch(object: KubeObject, ops: readonly JsonPatchOp[]): KubeObject | undefined {
    const guard = ops.find((op) => op.op === "replace" && op.path === "/metadata/resourceVersion");
    if (guard !== undefined && "value" in guard && guard.value !== object.metadata.resourceVersion) return undefined;
    const next = structuredClone(object);
    for (const op of ops) applyOp(next, op);
    Object.assign(object, next);
    this.touch(object);
    return structuredClone(object);
  }
}

/** RFC 6902 for the operations the controller sends, enough for a fake. */
function applyOp(document: unknown, op: JsonPatchOp): void {
  const keys = op.path
    .split("/")
    .slice(1)
    .map((k) => k.replace(/~1/g, "/").replace(/~0/g, "~"));
  const last = keys.pop() ?? "";
  let parent = document as Record<string, unknown>;
  for (const k of keys) parent = parent[k] as Record<string, unknown>;
  if (op.op === "test") {
    if (JSON.stringify(parent[last]) !== JSON.stringify(op.value)) throw new Error(`test ${op.path} failed`);
  } else if (op.op === "remove") {
    if (Array.isArray(parent)) parent.splice(Number(last), 1);
    else delete parent[last];
  } else if (Array.isArray(parent) && op.op === "add") {
    parent.splice(last === "-" ? parent.length : Number(last), 0, op.value);
  } else {
    parent[last] = structuredClone(op.value);
  }
}
