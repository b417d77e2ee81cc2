/**
 * Watch-backed caches of scalers and targets, so a pass reads memory instead
 * of making one GET per scaler. A cache may lag the API server: every commit
 * is guarded by resourceVersion, and on a conflict the controller re-reads the
 * target from the API server (`fresh`), so a lagging cache never writes stale data.
 */
import {
  makeInformer,
  type Informer,
  type KubeConfig,
  type KubernetesListObject,
  type KubernetesObject,
  type ObjectCache,
} from "@kubernetes/client-node";
import type { JsonPatchOp } from "../../core/binding/patch.js";
import type { Logger } from "../telemetry/logger.js";
import { KubeResources, scalerResource, type ResourceRef } from "./resources.js";

type Cache = Informer<KubernetesObject> & ObjectCache<KubernetesObject>;

function pathOf(r: ResourceRef, namespace: string): string {
  return namespace === ""
    ? `/apis/${r.group}/${r.version}/${r.plural}`
    : `/apis/${r.group}/${r.version}/namespaces/${encodeURIComponent(namespace)}/${r.plural}`;
}

export interface WatchedResourcesOptions {
  readonly kubeConfig: KubeConfig;
  readonly resources: KubeResources;
  /** Namespace to watch; empty for all. */
  readonly namespace: string;
  readonly logger: Logger;
  /** Wait before a broken watch is started again. */
  readonly restartDelayMs?: number;
}

export class WatchedResources {
  private readonly scalers: Cache;
  private readonly targets: Cache;
  private stopped = false;
  private synced = false;

  constructor(private readonly opts: WatchedResourcesOptions) {
    const { resources, namespace } = opts;
    const list = (r: ResourceRef) => async (): Promise<KubernetesListObject<KubernetesObject>> =>
      (await resources.list(r, namespace)) as KubernetesListObject<KubernetesObject>;
    this.scalers = makeInformer(opts.kubeConfig, pathOf(scalerResource, namespace), list(scalerResource));
    this.targets = makeInformer(
      opts.kubeConfig,
      pathOf(resources.targetResource, namespace),
      list(resources.targetResource),
    );
    for (const [what, informer] of [
      ["scalers", this.scalers],
      ["targets", this.targets],
    ] as const) {
      informer.on("error", (error: unknown) => {
        if (this.stopped) return;
        opts.logger.warn(`watch of ${what} broke; restarting`, { error });
        setTimeout(() => {
          // Stopped while waiting: a restart now would hold the process open after stop().
          if (this.stopped) return;
          void informer.start().catch(() => undefined);
        }, opts.restartDelayMs ?? 1_000);
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

  patchTarget(namespace: string, name: string, ops: readonly JsonPatchOp[]): Promise<unknown> {
    return this.opts.resources.patchTarget(namespace, name, ops);
  }

  patchScaler(namespace: string, name: string, ops: readonly JsonPatchOp[]): Promise<unknown> {
    return this.opts.resources.patchScaler(namespace, name, ops);
  }

  writeScalerStatus(namespace: string, name: string, status: unknown): Promise<unknown> {
    return this.opts.resources.writeScalerStatus(namespace, name, status);
  }
}
