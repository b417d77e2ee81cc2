/**
 * Watch-backed caches of scalers and targets, so a pass reads memory instead
 * of making one GET per scaler. A cache may lag the API server: every commit
 * is guarded by resourceVersion, and on a conflict the controller re-reads the
 * target from the API server (`fresh`), so a lagging cache never writes stale data.
 */
import type { KubernetesListObject, KubernetesObject } from "@kubernetes/client-node";
import type { JsonPatchOp } from "../../core/binding/patch.js";
import { backoffDelayMs, type BackoffPolicy } from "../retry/backoff.js";
import { FailureLog } from "../retry/failure-log.js";
import type { Logger } from "../telemetry/logger.js";
import type { ScalerStore, GuardedWrite } from "../../app/ports.js";
import { ConflictError, KubeResources, scalerResource, type ResourceRef, type WatchCache } from "./resources.js";

type Cache = WatchCache;

export interface WatchedResourcesOptions {
  readonly resources: KubeResources;
  /** Namespace to watch, or `allNamespaces`. */
  readonly namespace: string;
  readonly logger: Logger;
  /** Wait before a broken watch is started again: doubles per consecutive failure, with jitter. */
  readonly restartBackoff?: BackoffPolicy;
  readonly nowMs?: () => number;
  readonly random?: () => number;
}

const defaultRestartBackoff: BackoffPolicy = { initialMs: 1_000, maxMs: 30_000 };

export class WatchedResources implements ScalerStore {
  private readonly scalers: Cache;
  private readonly targets: Cache;
  private stopped = false;
  private synced = false;

  constructor(private readonly opts: WatchedResourcesOptions) {
    const { resources, namespace } = opts;
    const nowMs = opts.nowMs ?? (() => Date.now());
    const random = opts.random ?? Math.random;
    const policy = opts.restartBackoff ?? defaultRestartBackoff;
    const health = {
      scalers: new FailureLog("watch of scalers", opts.logger),
      targets: new FailureLog("watch of targets", opts.logger),
    };
    // A list that answers is the sign a broken watch works again.
    const list = (r: ResourceRef, log: FailureLog) => async (): Promise<KubernetesListObject<KubernetesObject>> => {
      const answer = await resources.list(r, namespace);
      log.succeeded(nowMs());
      return answer;
    };
    this.scalers = resources.informer(scalerResource, namespace, list(scalerResource, health.scalers));
    this.targets = resources.informer(
      resources.targetResource,
      namespace,
      list(resources.targetResource, health.targets),
    );
    for (const [what, informer] of [
      ["scalers", this.scalers],
      ["targets", this.targets],
    ] as const) {
      informer.on("error", (error: unknown) => {
        if (this.stopped) return;
        const failures = health[what].failed(error, nowMs());
        setTimeout(
          () => {
            // Stopped while waiting: a restart now would hold the process open after stop().
            if (this.stopped) return;
            void informer.start().catch(() => undefined);
          },
          backoffDelayMs(failures, random(), policy),
        );
      });
    }
  }

  /** Lists both kinds once and starts watching; resolves when the caches are filled. */
  async start(): Promise<void> {
    await Promise.all([this.scalers.start(), this.targets.start()]);
    this.synced = true;
  }

  get ready(): boolean {
    return this.synced;
  }

  async stop(): Promise<void> {
    this.stopped = true;
    await Promise.all([this.scalers.stop(), this.targets.stop()]);
  }

  async listScalers(): Promise<unknown[]> {
    return [...this.scalers.list()];
  }

  async getTarget(namespace: string, name: string, options: { fresh?: boolean } = {}): Promise<unknown | undefined> {
    if (options.fresh === true) return this.opts.resources.getTarget(namespace, name);
    return this.targets.get(name, namespace);
  }

  /** The guarded write; a stale `resourceVersion` is answered as a `Conflict` value (the controller's port). */
  async patchTarget(namespace: string, name: string, ops: readonly JsonPatchOp[]): Promise<GuardedWrite> {
    try {
      return { kind: "Written", object: await this.opts.resources.patchTarget(namespace, name, ops) };
    } catch (error) {
      if (error instanceof ConflictError) return { kind: "Conflict", message: error.message };
      throw error;
    }
  }

  patchScaler(namespace: string, name: string, ops: readonly JsonPatchOp[]): Promise<unknown> {
    return this.opts.resources.patchScaler(namespace, name, ops);
  }

  /** A status write guarded by the scaler's `resourceVersion`; losing that race is a `Conflict` value. */
  async writeScalerStatus(
    namespace: string,
    name: string,
    status: unknown,
    options?: { resourceVersion?: string | undefined },
  ): Promise<GuardedWrite> {
    try {
      return { kind: "Written", object: await this.opts.resources.writeScalerStatus(namespace, name, status, options) };
    } catch (error) {
      if (error instanceof ConflictError) return { kind: "Conflict", message: error.message };
      throw error;
    }
  }
}
