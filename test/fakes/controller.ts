/**
 * In-memory stand-ins for the controller's ports (`src/app/ports.ts`), for its
 * unit tests: a store that applies JSON patches (fast-json-patch) with the API
 * server's `resourceVersion` guard, a signal source that reports engine pods
 * with a chosen load, and a clock whose sleeps end when the test moves time.
 * Faults are scripted per call: a conflicting write, a hang, a lost answer; and
 * every write can be refused at once, as a replica whose leadership ended refuses them.
 */
import jsonPatch from "fast-json-patch";
import type { Clock, SampleRequest, ScalerStore, SignalSource, GuardedWrite } from "../../src/app/ports.js";
import type { JsonPatchOp } from "../../src/core/binding/patch.js";
import type { PodWindowRates, RoleSamples } from "../../src/core/signals/types.js";

type Obj = {
  apiVersion?: string;
  kind?: string;
  metadata: {
    name: string;
    uid?: string;
    namespace: string;
    resourceVersion?: string;
    generation?: number;
    annotations?: Record<string, string>;
    finalizers?: string[];
    deletionTimestamp?: string;
  };
  spec: Record<string, unknown>;
  status?: unknown;
};

/** `getTargetFresh` is a read past the watch cache (after a conflict, or reading a write back). */
export type StoreCall =
  "listScalers" | "getTarget" | "getTargetFresh" | "patchTarget" | "patchScaler" | "writeScalerStatus";

/**
 * What a scripted fault does to one call: answer Conflict (for a status write: another writer moves the
 * scaler between the controller's read and its write), never answer, apply and then fail, or fail outright.
 */
export type Fault = "conflict" | "hang" | "applyThenFail" | "fail";

export class FakeStore implements ScalerStore {
  readonly scalers = new Map<string, Obj>();
  readonly targets = new Map<string, Obj>();
  /** Every call, in order, with its object's key. */
  readonly calls: { readonly call: StoreCall; readonly key: string }[] = [];
  /** Every target patch applied and every status written, in order (refused or conflicting writes are not). */
  readonly targetPatches: JsonPatchOp[][] = [];
  readonly statusWrites: unknown[] = [];
  /** When set, every write throws this before it is sent (a replica whose leadership ended). */
  refuseWrites: Error | undefined;
  private version = 1;
  private readonly faults: { call: StoreCall; key: string; fault: Fault }[] = [];

  addScaler(scaler: Obj): void {
    this.scalers.set(keyOf(scaler), this.stamped(structuredClone(scaler)));
  }

  addTarget(target: Obj): void {
    this.targets.set(keyOf(target), this.stamped(structuredClone(target)));
  }

  /** The next `call` on `key` meets `fault`. */
  inject(call: StoreCall, key: string, fault: Fault): void {
    this.faults.push({ call, key, fault });
  }

  /** Someone else writes the target (a GitOps sync): its resourceVersion moves. */
  touchTarget(key: string): void {
    const target = this.targets.get(key);
    if (target !== undefined) this.stamped(target);
  }

  callsOf(call: StoreCall, key?: string): number {
    return this.calls.filter((c) => c.call === call && (key === undefined || c.key === key)).length;
  }

  async listScalers(): Promise<unknown[]> {
    await this.enter("listScalers", "*");
    return [...this.scalers.values()].map((s) => structuredClone(s));
  }

  async getTarget(namespace: string, name: string, options: { fresh?: boolean } = {}): Promise<unknown | undefined> {
    await this.enter(options.fresh === true ? "getTargetFresh" : "getTarget", `${namespace}/${name}`);
    const target = this.targets.get(`${namespace}/${name}`);
    return target === undefined ? undefined : structuredClone(target);
  }

  async patchTarget(namespace: string, name: string, ops: readonly JsonPatchOp[]): Promise<GuardedWrite> {
    const key = `${namespace}/${name}`;
    const fault = await this.enterWrite("patchTarget", key);
    if (fault === "conflict") {
      this.touchTarget(key);
      return { kind: "Conflict", message: `${key} changed` };
    }
    const target = this.targets.get(key);
    if (target === undefined) throw new Error(`no target ${key}`);
    const guard = ops.find((op) => op.op === "replace" && op.path === "/metadata/resourceVersion");
    if (guard !== undefined && "value" in guard && guard.value !== target.metadata.resourceVersion) {
      return { kind: "Conflict", message: `${key} is at ${target.metadata.resourceVersion}` };
    }
    const before = JSON.stringify(target.spec);
    const next = this.apply(target, ops);
    if (JSON.stringify(next.spec) !== before) next.metadata.generation = (next.metadata.generation ?? 1) + 1;
    this.targets.set(key, this.stamped(next));
    this.targetPatches.push([...ops]);
    if (fault === "applyThenFail") throw new Error(`patch ${key}: the answer was lost`);
    return { kind: "Written", object: structuredClone(next) };
  }

  async patchScaler(namespace: string, name: string, ops: readonly JsonPatchOp[]): Promise<unknown> {
    const key = `${namespace}/${name}`;
    await this.enterWrite("patchScaler", key);
    const scaler = this.scalers.get(key);
    if (scaler === undefined) throw new Error(`no scaler ${key}`);
    const next = this.apply(scaler, ops);
    // As the API server does: a deleting object goes once its last finalizer is removed.
    if (next.metadata.deletionTimestamp !== undefined && (next.metadata.finalizers ?? []).length === 0) {
      this.scalers.delete(key);
      return structuredClone(next);
    }
    this.scalers.set(key, this.stamped(next));
    return structuredClone(next);
  }

  async writeScalerStatus(
    namespace: string,
    name: string,
    status: unknown,
    options: { resourceVersion?: string | undefined } = {},
  ): Promise<GuardedWrite> {
    const key = `${namespace}/${name}`;
    const fault = await this.enterWrite("writeScalerStatus", key);
    const scaler = this.scalers.get(key);
    if (scaler === undefined) throw new Error(`no scaler ${key}`);
    if (fault === "conflict") this.stamped(scaler);
    if (options.resourceVersion !== undefined && options.resourceVersion !== scaler.metadata.resourceVersion) {
      return { kind: "Conflict", message: `${key} is at ${scaler.metadata.resourceVersion}` };
    }
    scaler.status = structuredClone(status);
    this.stamped(scaler);
    this.statusWrites.push(structuredClone(status));
    return { kind: "Written", object: structuredClone(scaler) };
  }

  private apply(object: Obj, ops: readonly JsonPatchOp[]): Obj {
    const unguarded = ops.filter((op) => op.path !== "/metadata/resourceVersion");
    return jsonPatch.applyPatch(structuredClone(object), unguarded as jsonPatch.Operation[], true, false).newDocument;
  }

  private stamped(object: Obj): Obj {
    object.metadata.resourceVersion = String(++this.version);
    return object;
  }

  private enterWrite(call: StoreCall, key: string): Promise<Fault | undefined> {
    if (this.refuseWrites !== undefined) return Promise.reject(this.refuseWrites);
    return this.enter(call, key);
  }

  private async enter(call: StoreCall, key: string): Promise<Fault | undefined> {
    this.calls.push({ call, key });
    const at = this.faults.findIndex((f) => f.call === call && (f.key === key || f.key === "*"));
    if (at < 0) return undefined;
    const fault = this.faults.splice(at, 1)[0]?.fault;
    if (fault === "hang") return new Promise<never>(() => undefined);
    if (fault === "fail") throw new Error(`${call} ${key}: injected failure`);
    return fault;
  }
}

function keyOf(object: Obj): string {
  return `${object.metadata.namespace}/${object.metadata.name}`;
}

/** Engine pods with settled windows: `load(request, role)` is the role's running requests, spread over `ready` pods. */
export class FakeSignals implements SignalSource {
  readonly requests: SampleRequest[][] = [];
  constructor(
    private readonly clock: { nowMs(): number },
    public load: (key: string, role: string) => { running: number; ready: number } = () => ({ running: 0, ready: 1 }),
  ) {}

  /** Every later sampling never answers. */
  hang = false;

  /** Added to every pod's stable and panic windows: latency histograms, for instance. */
  windowExtras: Partial<PodWindowRates> = {};

  async sample(requests: readonly SampleRequest[]): Promise<ReadonlyMap<string, ReadonlyMap<string, RoleSamples>>> {
    this.requests.push([...requests]);
    if (this.hang) return new Promise<never>(() => undefined);
    const nowSeconds = this.clock.nowMs() / 1000;
    return new Map(
      requests.map((request) => [
        request.key,
        new Map(
          request.roles.map((role) => {
            const { running, ready } = this.load(request.key, role);
            const pods = Array.from({ length: ready }, (_, i) => ({
              pod: `${request.deployment}-${role}-${i}`,
              engine: "vllm" as const,
              lastSampleUnixSeconds: nowSeconds,
              runningRequests: running / ready,
              waitingRequests: 0,
              windows: {
                stable: {
                  established: true,
                  promptTokensPerSecond: 0,
                  generationTokensPerSecond: 0,
                  ...this.windowExtras,
                },
                panic: {
                  established: true,
                  promptTokensPerSecond: 0,
                  generationTokensPerSecond: 0,
                  ...this.windowExtras,
                },
              },
            }));
            return [role, { pods }] as const;
          }),
        ),
      ]),
    );
  }
}

/** Time that moves only when the test says; a sleep ends once time has passed its end. */
export class FakeClock implements Clock {
  private readonly sleepers: { untilMs: number; wake: () => void }[] = [];
  constructor(private now: number) {}

  nowMs(): number {
    return this.now;
  }

  sleep(ms: number): Promise<void> {
    return new Promise((resolve) => {
      this.sleepers.push({ untilMs: this.now + ms, wake: resolve });
    });
  }

  /** Moves time forward and wakes the sleeps that ended; lets their continuations run. */
  async advance(ms: number): Promise<void> {
    this.now += ms;
    for (const sleeper of this.sleepers.filter((s) => s.untilMs <= this.now)) {
      this.sleepers.splice(this.sleepers.indexOf(sleeper), 1);
      sleeper.wake();
    }
    await settle();
  }
}

/** Lets every pending promise continuation run (the fakes answer without I/O). */
export async function settle(): Promise<void> {
  for (let i = 0; i < 20; i++) await new Promise<void>((resolve) => setImmediate(resolve));
}
