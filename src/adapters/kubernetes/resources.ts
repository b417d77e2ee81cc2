/**
 * The one Kubernetes client for scalers and ModelDeployments, used by the
 * controller, the webhooks, the CLI and the simulated reconciler. Every call has
 * a timeout; every failure is a `KubeCallError` naming the call (a
 * `ConflictError` when a resourceVersion guard failed, which the caller re-plans on).
 * "All namespaces" is written one way everywhere: `allNamespaces`, the empty
 * string, as the controller's --namespace flag has it.
 */
import {
  CustomObjectsApi,
  makeInformer,
  type Informer,
  type KubeConfig,
  type KubernetesListObject,
  type KubernetesObject,
  type ObjectCache,
} from "@kubernetes/client-node";
import { apiGroup } from "../../core/api/scaler.js";
import type { JsonPatchOp } from "../../core/binding/patch.js";
import { callOptions } from "./call-options.js";
import { kubeCall } from "./errors.js";

export { callOptions };
export { ConflictError, KubeCallError } from "./errors.js";

/** The namespace argument that means every namespace. */
export const allNamespaces = "";

/** "all namespaces" or "namespace <name>", for messages. */
export function describeScope(namespace: string): string {
  return namespace === allNamespaces ? "all namespaces" : `namespace ${namespace}`;
}

export interface ResourceRef {
  readonly group: string;
  readonly version: string;
  readonly plural: string;
}

export const scalerResource: ResourceRef = { group: apiGroup, version: "v1", plural: "modeldeploymentscalers" };

/** The ModelDeployment resource at `version` (the controller's --target-api-version). */
export function modelDeploymentResource(version = "v1"): ResourceRef {
  return { group: apiGroup, version, plural: "modeldeployments" };
}

export const defaultTargetResource: ResourceRef = modelDeploymentResource();

/** The collection path of `r` in one namespace, or in all: what a watch is opened on. */
export function collectionPath(r: ResourceRef, namespace: string): string {
  return namespace === allNamespaces
    ? `/apis/${r.group}/${r.version}/${r.plural}`
    : `/apis/${r.group}/${r.version}/namespaces/${encodeURIComponent(namespace)}/${r.plural}`;
}

export type WatchCache = Informer<KubernetesObject> & ObjectCache<KubernetesObject>;

export interface KubeResourcesOptions {
  /** Upper bound of one API call (a watch has the client's own inactivity timeout). */
  readonly timeoutMs: number;
  readonly targetResource?: ResourceRef;
  /** Recorded in managedFields of every write; default "mds-scaler". */
  readonly fieldManager?: string;
}

const jsonPatch = "application/json-patch+json";
const mergePatch = "application/merge-patch+json";

export class KubeResources {
  private readonly api: CustomObjectsApi;
  readonly targetResource: ResourceRef;
  private readonly fieldManager: string;

  constructor(
    private readonly kubeConfig: KubeConfig,
    private readonly opts: KubeResourcesOptions,
  ) {
    this.api = kubeConfig.makeApiClient(CustomObjectsApi);
    this.targetResource = opts.targetResource ?? defaultTargetResource;
    this.fieldManager = opts.fieldManager ?? "mds-scaler";
  }

  /** Lists scalers in one namespace, or in all (`allNamespaces`). */
  async listScalers(namespace: string): Promise<unknown[]> {
    return (await this.list(scalerResource, namespace)).items;
  }

  /** Lists targets in one namespace, or in all (`allNamespaces`). */
  async listTargets(namespace: string): Promise<unknown[]> {
    return (await this.list(this.targetResource, namespace)).items;
  }

  /** The whole list object, with the resourceVersion a watch continues from. */
  async list(r: ResourceRef, namespace: string): Promise<KubernetesListObject<KubernetesObject>> {
    const list = await kubeCall(`list ${r.plural} in ${describeScope(namespace)}`, () =>
      namespace === allNamespaces
        ? this.api.listClusterCustomObject(
            { group: r.group, version: r.version, plural: r.plural },
            callOptions(this.opts.timeoutMs),
          )
        : this.api.listNamespacedCustomObject(
            { group: r.group, version: r.version, namespace, plural: r.plural },
            callOptions(this.opts.timeoutMs),
          ),
    );
    const typed = list as Partial<KubernetesListObject<KubernetesObject>>;
    return { ...typed, items: typed.items ?? [] } as KubernetesListObject<KubernetesObject>;
  }

  /** A list-and-watch cache of `r` in one namespace or in all; not started. `list` defaults to this client's. */
  informer(
    r: ResourceRef,
    namespace: string,
    list: () => Promise<KubernetesListObject<KubernetesObject>> = () => this.list(r, namespace),
  ): WatchCache {
    return makeInformer(this.kubeConfig, collectionPath(r, namespace), list);
  }

  async getScaler(namespace: string, name: string): Promise<unknown | undefined> {
    return this.get(scalerResource, namespace, name);
  }

  async getTarget(namespace: string, name: string): Promise<unknown | undefined> {
    return this.get(this.targetResource, namespace, name);
  }

  /** The object, or undefined when it does not exist: absent is an answer (the caller reports TargetNotFound). */
  private async get(r: ResourceRef, namespace: string, name: string): Promise<unknown | undefined> {
    try {
      return await kubeCall(`get ${r.plural} ${namespace}/${name}`, () =>
        this.api.getNamespacedCustomObject(
          { group: r.group, version: r.version, namespace, plural: r.plural, name },
          callOptions(this.opts.timeoutMs),
        ),
      );
    } catch (error) {
      if ((error as { statusCode?: unknown }).statusCode === 404) return undefined;
      throw error;
    }
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
    return kubeCall(`patch ${r.plural} ${namespace}/${name}`, () =>
      this.api.patchNamespacedCustomObject(
        {
          group: r.group,
          version: r.version,
          namespace,
          plural: r.plural,
          name,
          body: ops,
          fieldManager: this.fieldManager,
        },
        callOptions(this.opts.timeoutMs, jsonPatch),
      ),
    );
  }

  /** Replaces the scaler's whole status through the status subresource. */
  async writeScalerStatus(namespace: string, name: string, status: unknown): Promise<unknown> {
    return this.patchStatus(
      scalerResource,
      namespace,
      name,
      [{ op: "replace", path: "/status", value: status }],
      jsonPatch,
    );
  }

  /**
   * Merge-patches the target's status subresource: the writer owns the keys it
   * writes and leaves any other status field alone, and a spec change in between
   * is no conflict. (The simulated reconciler plays the operator this way.)
   */
  async mergeTargetStatus(namespace: string, name: string, status: Record<string, unknown>): Promise<unknown> {
    return this.patchStatus(this.targetResource, namespace, name, { status }, mergePatch);
  }

  private async patchStatus(
    r: ResourceRef,
    namespace: string,
    name: string,
    body: object,
    contentType: string,
  ): Promise<unknown> {
    return kubeCall(`write status of ${r.plural} ${namespace}/${name}`, () =>
      this.api.patchNamespacedCustomObjectStatus(
        {
          group: r.group,
          version: r.version,
          namespace,
          plural: r.plural,
          name,
          body,
          fieldManager: this.fieldManager,
        },
        callOptions(this.opts.timeoutMs, contentType),
      ),
    );
  }
}
