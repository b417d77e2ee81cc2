/**
 * Defaulting as a JSON patch, for the mutating webhook: the operations that
 * turn a scaler's spec into its defaulted spec. Only additions and
 * replacements: defaulting never removes a field, and a field the schema does
 * not know is left for validation to refuse.
 */
import { defaultScalerSpec } from "./defaulting.js";
import { valueAt } from "./problem.js";
import type { JsonPatchOp } from "../binding/patch.js";
import { pointerKey } from "../binding/patch.js";

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** Operations that make `before` carry every value of `after`; arrays of another length are replaced whole. */
export function additivePatch(before: unknown, after: unknown, path: string): JsonPatchOp[] {
  // Equal records and equal arrays recurse to no operation, so only leaves need comparing.
  if (before === after) return [];
  if (isRecord(before) && isRecord(after)) {
    return Object.entries(after).flatMap(([key, value]) => {
      const child = `${path}/${pointerKey(key)}`;
      return Object.hasOwn(before, key)
        ? additivePatch(before[key], value, child)
        : [{ op: "add" as const, path: child, value }];
    });
  }
  if (Array.isArray(before) && Array.isArray(after) && before.length === after.length) {
    return after.flatMap((value, index) => additivePatch(before[index], value, `${path}/${index}`));
  }
  return [{ op: "replace", path, value: after }];
}

/**
 * The mutating webhook's answer for one scaler: the defaulting patch, or no
 * operation when the spec does not parse (validation then refuses it with
 * every problem).
 */
export function scalerDefaultingPatch(object: unknown): JsonPatchOp[] {
  // Defaulting refuses anything that is not a spec object, so no patch is made for it.
  const spec = valueAt(object, ["spec"]);
  const defaulted = defaultScalerSpec(spec);
  if (!defaulted.ok) return [];
  return additivePatch(spec, defaulted.value, "/spec");
}
