/**
 * The Kubernetes calls the controller makes, through @kubernetes/client-node.
 * Every call has a timeout; failures are wrapped with the object they concern,
 * and a stale-resourceVersion answer is a `ConflictError` the caller re-plans on.
 */
import { ApiException, CustomObjectsApi, KubeConfig } from "@kubernetes/client-node";
import { callOptions } from "./call-options.js";

export { callOptions };
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
    return this.call(`patch ${r.plural} ${namespace}/${name}`, () =>
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
        callOptions(this.opts.timeoutMs, "application/json-patch+json"),
      ),
    );
  }

  /** Replaces the scaler's whole status through the status subresource. */
  async writeScalerStatus(namespace: string, name: string, status: unknown): Promise<unknown> {
    const r = scalerResource;
    return this.call(`write status of ${r.plural} ${namespace}/${name}`, () =>
      this.api.patchNamespacedCustomObjectStatus(
        {
          group: r.group,
          version: r.version,
          namespace,
          plural: r.plural,
          name,
          body: [{ op: "replace", path: "/status", value: status }],
          fieldManager: "mds-scaler",
        },
        callOptions(this.opts.timeoutMs, "application/json-patch+json"),
      ),
    );
  }
}
