/**
 * JSON patches the scaler sends to its target. Every patch carries the
 * resourceVersion it was planned against, so a concurrent write makes the API
 * server answer 409 and the controller re-reads and re-plans: a commit is
 * applied once or not at all.
 */
import {
  bindingAnnotation,
  boundLabel,
  boundLabelValue,
  decisionAnnotation,
  type BindingPayload,
  type DecisionPayload,
} from "../api/model-deployment.js";

export type JsonPatchOp =
  | { readonly op: "add" | "replace" | "test"; readonly path: string; readonly value: unknown }
  | { readonly op: "remove"; readonly path: string };

/** Escapes a key for a JSON pointer (RFC 6901): `~` → `~0`, `/` → `~1`. */
export function pointerKey(key: string): string {
  return key.replace(/~/g, "~0").replace(/\//g, "~1");
}

export interface PatchTarget {
  readonly resourceVersion: string;
  readonly annotations: Readonly<Record<string, string>> | undefined;
  /** Required, not optional: adding `/metadata/labels` over an existing map would drop the user's labels. */
  readonly labels: Readonly<Record<string, string>> | undefined;
  /** Role names in `spec.roles[]` order. */
  readonly roleNames: readonly string[];
  readonly replicas: Readonly<Record<string, number>>;
}

function annotationOps(target: PatchTarget, values: Record<string, string>): JsonPatchOp[] {
  if (target.annotations === undefined) return [{ op: "add", path: "/metadata/annotations", value: { ...values } }];
  return Object.entries(values).map(([k, v]) => ({
    op: "add" as const,
    path: `/metadata/annotations/${pointerKey(k)}`,
    value: v,
  }));
}

/** Sets the bound label when it is missing (targets bound before the label existed get it on their next write). */
function boundLabelOps(target: PatchTarget): JsonPatchOp[] {
  if (target.labels === undefined)
    return [{ op: "add", path: "/metadata/labels", value: { [boundLabel]: boundLabelValue } }];
  if (target.labels[boundLabel] === boundLabelValue) return [];
  return [{ op: "add", path: `/metadata/labels/${pointerKey(boundLabel)}`, value: boundLabelValue }];
}

function guard(target: PatchTarget): JsonPatchOp[] {
  return [{ op: "replace", path: "/metadata/resourceVersion", value: target.resourceVersion }];
}

/** Installs (or renews) the binding annotation and the bound label. */
export function acquirePatch(target: PatchTarget, binding: BindingPayload): JsonPatchOp[] {
  return [
    ...guard(target),
    ...annotationOps(target, { [bindingAnnotation]: JSON.stringify(binding) }),
    ...boundLabelOps(target),
  ];
}

/** Removes the binding annotation and the bound label; counts and the decision annotation stay. */
export function releasePatch(target: PatchTarget): JsonPatchOp[] {
  if (target.annotations?.[bindingAnnotation] === undefined) return [];
  return [
    ...guard(target),
    { op: "remove", path: `/metadata/annotations/${pointerKey(bindingAnnotation)}` },
    ...(target.labels?.[boundLabel] === undefined
      ? []
      : [{ op: "remove" as const, path: `/metadata/labels/${pointerKey(boundLabel)}` }]),
  ];
}

/**
 * Writes the vector and its decision together. Each replaced count is preceded
 * by a `test` of the role name at that index, so a reordered role list fails
 * the patch instead of scaling the wrong role.
 */
export function commitPatch(target: PatchTarget, decision: DecisionPayload): JsonPatchOp[] {
  const ops: JsonPatchOp[] = [...guard(target)];
  target.roleNames.forEach((name, index) => {
    const replicas = decision.vector[name];
    if (replicas === undefined || replicas === target.replicas[name]) return;
    ops.push({ op: "test", path: `/spec/roles/${index}/name`, value: name });
    ops.push({ op: "replace", path: `/spec/roles/${index}/replicas`, value: replicas });
  });
  ops.push(...annotationOps(target, { [decisionAnnotation]: JSON.stringify(decision) }));
  ops.push(...boundLabelOps(target));
  return ops;
}
