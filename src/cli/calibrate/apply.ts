/**
 * `calibrate --apply`: the scaler with the figures, floors and holds written back to the cluster it was read from
 * (`--scaler NAMESPACE/NAME`), so a daily job needs no other tool (docs/calibrate.md, "A whole day"). The write
 * replaces the scaler's `spec` only if the scaler is the version calibrate read. A version that differs only
 * outside `spec` (the controller wrote its status meanwhile) is written over again, at most `applyAttempts` times;
 * a changed or deleted spec is reported and nothing is written: calibrate judged the spec it read, not the new one.
 */
import { isDeepStrictEqual } from "node:util";
import type { JsonPatchOp } from "../../core/binding/patch.js";
import { ConflictError, KubeCallError, type KubeResources } from "../../adapters/kubernetes/resources.js";

/** Writes before giving up, each after a status write moved the scaler's version on. */
export const applyAttempts = 3;

/** What calibrate read and what it writes. */
export interface ApplyRequest {
  readonly namespace: string;
  readonly name: string;
  /** The scaler as calibrate read it from the cluster. */
  readonly read: unknown;
  /** The spec to write: the read spec with calibrate's figures, floors and holds. */
  readonly spec: unknown;
  /** Annotations set beside it (the floors' date); the others stay as the version written against holds them. */
  readonly annotations?: Readonly<Record<string, string>>;
}

interface ScalerObject {
  readonly metadata?: { readonly resourceVersion?: string; readonly annotations?: Readonly<Record<string, string>> };
  readonly spec?: unknown;
}

/** The patch's operations against one version: its annotations with calibrate's set, and the spec. */
function patchOf(version: ScalerObject, resourceVersion: string, request: ApplyRequest): JsonPatchOp[] {
  const setAnnotations: JsonPatchOp[] =
    Object.keys(request.annotations ?? {}).length === 0
      ? []
      : [
          {
            // The whole map: `add` of one key fails where the object has no annotations; the version guard keeps
            // every other annotation as the version written against holds it.
            op: "add",
            path: "/metadata/annotations",
            value: { ...version.metadata?.annotations, ...request.annotations },
          },
        ];
  return [
    { op: "replace", path: "/metadata/resourceVersion", value: resourceVersion },
    ...setAnnotations,
    { op: "replace", path: "/spec", value: request.spec },
  ];
}

/** The resourceVersion written against, and the attempts it took; an error says what stopped the write. */
export async function applyCalibratedSpec(
  kube: Pick<KubeResources, "getScaler" | "patchScaler">,
  request: ApplyRequest,
): Promise<{ readonly resourceVersion: string; readonly attempts: number }> {
  const where = `ModelDeploymentScaler ${request.namespace}/${request.name}`;
  const readSpec = (request.read as ScalerObject).spec;
  let version = request.read as ScalerObject;
  let resourceVersion = version.metadata?.resourceVersion;
  for (let attempt = 1; ; attempt++) {
    if (resourceVersion === undefined || resourceVersion === "")
      throw new Error(`--apply: ${where} as read has no metadata.resourceVersion, so a write could not be guarded`);
    try {
      await kube.patchScaler(request.namespace, request.name, patchOf(version, resourceVersion, request));
      return { resourceVersion, attempts: attempt };
    } catch (error) {
      const deleted = (): Error =>
        new Error(`--apply: ${where} was deleted after calibrate read it; nothing written`, { cause: error });
      if (error instanceof KubeCallError && error.statusCode === 404) throw deleted();
      if (!(error instanceof ConflictError)) throw error;
      const now = (await kube.getScaler(request.namespace, request.name)) as ScalerObject | undefined;
      if (now === undefined) throw deleted();
      const nowVersion = now.metadata?.resourceVersion;
      if (!isDeepStrictEqual(now.spec, readSpec))
        throw new Error(
          `--apply: ${where} changed its spec after calibrate read it (resourceVersion ${resourceVersion} → ${String(nowVersion)}); nothing written: calibrate it again`,
        );
      if (attempt >= applyAttempts)
        throw new Error(
          `--apply: ${where} moved on ${applyAttempts} times while calibrate wrote it (last resourceVersion ${String(nowVersion)}); nothing written`,
          { cause: error },
        );
      version = now;
      resourceVersion = nowVersion;
    }
  }
}
