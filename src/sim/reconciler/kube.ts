/**
 * The reconciler's calls to the API server: list and watch ModelDeployments,
 * and merge-patch their status subresource. Every call is bounded by a
 * timeout, and every failure is rethrown with the call it concerns and the
 * original error as `cause`.
 */
import {
  ApiException,
  CustomObjectsApi,
  makeInformer,
  type Informer,
  type KubeConfig,
  type KubernetesListObject,
  type KubernetesObject,
  type ObjectCache,
} from "@kubernetes/client-node";
import { callOptions } from "../../adapters/kubernetes/call-options.js";

export interface ModelDeploymentResource {
  readonly group: string;
  readonly version: string;
  readonly plural: string;
}

export const modelDeploymentResource: ModelDeploymentResource = {
  group: "worker.gpustack.ai",
  version: "v1",
  plural: "modeldeployments",
};

/** An API call that failed; `statusCode` is the HTTP status when the server answered. */
export class KubeCallError extends Error {
  override readonly name = "KubeCallError";
  constructor(
    message: string,
    readonly statusCode: number | undefined,
    options: { cause: unknown },
  ) {
    super(message, options);
  }
}

function describeFailure(error: unknown): { message: string; statusCode: number | undefined } {
  if (error instanceof ApiException) {
    const body: unknown = typeof error.body === "string" ? safeJson(error.body) : error.body;
    const reason = (body as { message?: unknown } | undefined)?.message;
    return { message: `HTTP ${error.code}${typeof reason === "string" ? `: ${reason}` : ""}`, statusCode: error.code };
  }
  const statusCode = (error as { statusCode?: unknown } | undefined)?.statusCode;
  // fetch reports "fetch failed"; the socket's error code (ECONNREFUSED, ...) is one cause down.
  const code = (error as { cause?: { code?: unknown } } | undefined)?.cause?.code;
  return {
    message: `${error instanceof Error ? error.message : String(error)}${typeof code === "string" ? ` (${code})` : ""}`,
    statusCode: typeof statusCode === "number" ? statusCode : undefined,
  };
}

function safeJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

/** Rethrows any failure of `call` as a `KubeCallError` naming `what`. */
export async function kubeCall<T>(what: string, call: () => Promise<T>): Promise<T> {
  try {
    return await call();
  } catch (error) {
    const failure = describeFailure(error);
    throw new KubeCallError(`${what}: ${failure.message}`, failure.statusCode, { cause: error });
  }
}

/** Wraps an error that reached us through a callback (a watch that ended) the same way. */
export function wrapKubeError(what: string, error: unknown): KubeCallError {
  const failure = describeFailure(error);
  return new KubeCallError(`${what}: ${failure.message}`, failure.statusCode, { cause: error });
}

export interface ModelDeploymentApiOptions {
  readonly kubeConfig: KubeConfig;
  /** Upper bound of one call (the watch has the client's own inactivity timeout). */
  readonly timeoutMs: number;
  readonly resource?: ModelDeploymentResource;
}

export class ModelDeploymentApi {
  private readonly api: CustomObjectsApi;
  readonly resource: ModelDeploymentResource;

  constructor(private readonly options: ModelDeploymentApiOptions) {
    this.api = options.kubeConfig.makeApiClient(CustomObjectsApi);
    this.resource = options.resource ?? modelDeploymentResource;
  }

  /** Lists ModelDeployments in `namespace`, or in every namespace when it is undefined. */
  async list(namespace: string | undefined): Promise<KubernetesListObject<KubernetesObject>> {
    const r = this.resource;
    const where = namespace === undefined ? "all namespaces" : `namespace ${namespace}`;
    const list = await kubeCall(`list ${r.plural} in ${where}`, () =>
      namespace === undefined
        ? this.api.listClusterCustomObject(
            { group: r.group, version: r.version, plural: r.plural },
            callOptions(this.options.timeoutMs),
          )
        : this.api.listNamespacedCustomObject(
            { group: r.group, version: r.version, namespace, plural: r.plural },
            callOptions(this.options.timeoutMs),
          ),
    );
    return list as KubernetesListObject<KubernetesObject>;
  }

  /**
   * Merge-patches the status subresource. A merge patch, not a replace: the
   * reconciler owns the keys it writes and leaves any other status field alone,
   * and a spec change in between (the scaler's commits) is no conflict.
   */
  async patchStatus(namespace: string, name: string, status: Record<string, unknown>): Promise<void> {
    const r = this.resource;
    await kubeCall(`patch status of ${r.plural} ${namespace}/${name}`, () =>
      this.api.patchNamespacedCustomObjectStatus(
        { group: r.group, version: r.version, namespace, plural: r.plural, name, body: { status } },
        callOptions(this.options.timeoutMs, "application/merge-patch+json"),
      ),
    );
  }

  /** A list-and-watch cache of ModelDeployments; not started. */
  informer(namespace: string | undefined): Informer<KubernetesObject> & ObjectCache<KubernetesObject> {
    const r = this.resource;
    const path =
      namespace === undefined
        ? `/apis/${r.group}/${r.version}/${r.plural}`
        : `/apis/${r.group}/${r.version}/namespaces/${encodeURIComponent(namespace)}/${r.plural}`;
    return makeInformer(this.options.kubeConfig, path, () => this.list(namespace));
  }
}
