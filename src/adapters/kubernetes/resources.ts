/**
 * The Kubernetes calls the controller makes, through @kubernetes/client-node.
 * Every call has a timeout; failures are wrapped with the object they concern,
 * and a stale-resourceVersion answer is a `ConflictError` the caller re-plans on.
 * Every write first asks `writeGuard` (the leader election) for a permit, as
 * late as possible, and is aborted when the leadership that permitted it ends.
 */
import { ApiException, CustomObjectsApi, KubeConfig } from "@kubernetes/client-node";
import { callOptions } from "./call-options.js";
import { NotLeaderError } from "./not-leader.js";

export { callOptions, NotLeaderError };
import type { JsonPatchOp } from "../../core/binding/patch.js";

export class ConflictError extends Error {
  override readonly name = "ConflictError";
}

export interface ResourceRef {
  readonly group: string;
  readonly version: string;
  readonly plural: string;
}

export const scalerResource: ResourceRef = {
  group: "worker.gpustack.ai",
  version: "v1",
  plural: "modeldeploymentscalers",
};
export const defaultTargetResource: ResourceRef = {
  group: "worker.gpustack.ai",
  version: "v1",
  plural: "modeldeployments",
};

export interface KubeResourcesOptions {
  /** Upper bound of one API call. */
  readonly timeoutMs: number;
  readonly targetResource?: ResourceRef;
  /**
   * Asked right before every write: throws `NotLeaderError` when this replica
   * may not write, else returns the signal that aborts the write on step-down.
   * Absent: writes are always allowed (one replica, webhooks, tests).
   */
  readonly writeGuard?: () => AbortSignal;
}

function statusCode(error: unknown): number | undefined {
  return error instanceof ApiException ? error.code : undefined;
}

export class KubeResources {
  private readonly api: CustomObjectsApi;
  readonly targetResource: ResourceRef;

  constructor(
    kubeConfig: KubeConfig,
    private readonly opts: KubeResourcesOptions,
  ) {
    this.api = kubeConfig.makeApiClient(CustomObjectsApi);
    this.targetResource = opts.targetResource ?? defaultTargetResource;
  }

  private async call<T>(what: string, fn: () => Promise<T>): Promise<T> {
    try {
      return await fn();
    } catch (error) {
      const code = statusCode(error);
      if (code === 409) throw new ConflictError(`${what}: the object changed since it was read`, { cause: error });
      throw new Error(
        `${what}: ${code !== undefined ? `HTTP ${code}` : error instanceof Error ? error.message : String(error)}`,
        { cause: error },
      );
    }
  }

  /** Lists scalers in one namespace, or in all when `namespace` is empty. */
  async listScalers(namespace: string): Promise<unknown[]> {
    return (await this.list(scalerResource, namespace)).items ?? [];
  }

  /** Lists targets in one namespace, or in all when `namespace` is empty. */
  async listTargets(namespace: string): Promise<unknown[]> {
    return (await this.list(this.targetResource, namespace)).items ?? [];
  }

  /** The whole list object, with the resourceVersion a watch continues from. */
  async list(
    r: ResourceRef,
    namespace: string,
  ): Promise<{ items?: unknown[]; metadata?: { resourceVersion?: string } }> {
    const list = await this.call(`list ${r.plural}`, () =>
      namespace === ""
        ? this.api.listClusterCustomObject(
            { group: r.group, version: r.version, plural: r.plural },
            callOptions(this.opts.timeoutMs),
          )
        : this.api.listNamespacedCustomObject(
            { group: r.group, version: r.version, namespace, plural: r.plural },
            callOptions(this.opts.timeoutMs),
          ),
    );
    return list as { items?: unknown[]; metadata?: { resourceVersion?: string } };
  }

  async getScaler(namespace: string, name: string): Promise<unknown | undefined> {
    return this.get(scalerResource, namespace, name);
  }

  async getTarget(namespace: string, name: string): Promise<unknown | undefined> {
    return this.get(this.targetResource, namespace, name);
  }

  private async get(r: ResourceRef, namespace: string, name: string): Promise<unknown | undefined> {
    return this.call(`get ${r.plural} ${namespace}/${name}`, async () => {
      try {
        return await this.api.getNamespacedCustomObject(
          { group: r.group, version: r.version, namespace, plural: r.plural, name },
          callOptions(this.opts.timeoutMs),
        );
      } catch (error) {
        // Absent is an answer, not a failure: the caller reports TargetNotFound.
        if (statusCode(error) === 404) return undefined;
        throw error;
      }
    });
  }

  /** Applies a JSON patch to the target; `ConflictError` when its resourceVersion guard fails. */
  async patchTarget(namespace: string, name: string, ops: readonly JsonPatchOp[]): Promise<unknown> {
    return this.patch(this.targetResource, namespace, name, ops);
  }

  /** Applies a JSON patch to a scaler (finalizers). */
  async patchScaler(namespace: string, name: string, ops: readonly JsonPatchOp[]): Promise<unknown> {
    return this.patch(scalerResource, namespace, name, ops);
  }

  private async patch(r: ResourceRef, namespace: string, name: string, ops: readonly JsonPatchOp[]): Promise<unknown> {
    return this.write(`patch ${r.plural} ${namespace}/${name}`, (until) =>
      this.api.patchNamespacedCustomObject(
        {
          group: r.group,
          version: r.version,
          namespace,
          plural: r.plural,
          name,
          body: ops,
          fieldManager: "mds-scaler",
        },
        callOptions(this.opts.timeoutMs, "application/json-patch+json", until),
      ),
    );
  }

  /**
   * Replaces the scaler's whole status through the status subresource. With a
   * `resourceVersion` the write applies only to that version of the scaler, so
   * a status planned from an older read fails with `ConflictError`.
   */
  async writeScalerStatus(
    namespace: string,
    name: string,
    status: unknown,
    options: { resourceVersion?: string | undefined } = {},
  ): Promise<unknown> {
    const r = scalerResource;
    const guard: JsonPatchOp[] =
      options.resourceVersion === undefined || options.resourceVersion === ""
        ? []
        : [{ op: "replace", path: "/metadata/resourceVersion", value: options.resourceVersion }];
    return this.write(`write status of ${r.plural} ${namespace}/${name}`, (until) =>
      this.api.patchNamespacedCustomObjectStatus(
        {
          group: r.group,
          version: r.version,
          namespace,
          plural: r.plural,
          name,
          body: [...guard, { op: "replace", path: "/status", value: status }],
          fieldManager: "mds-scaler",
        },
        callOptions(this.opts.timeoutMs, "application/json-patch+json", until),
      ),
    );
  }

  /** A write under the guard: refused before it is sent, or aborted, once this replica may not write. */
  private async write<T>(what: string, send: (until: AbortSignal | undefined) => Promise<T>): Promise<T> {
    let until: AbortSignal | undefined;
    try {
      until = this.opts.writeGuard?.();
    } catch (error) {
      if (error instanceof NotLeaderError) throw new NotLeaderError(`${what}: not sent, ${error.message}`);
      throw error;
    }
    try {
      return await this.call(what, () => send(until));
    } catch (error) {
      if (until?.aborted === true)
        throw new NotLeaderError(`${what}: aborted, ${String((until.reason as Error | undefined)?.message)}`, {
          cause: error,
        });
      throw error;
    }
  }
}
