/**
 * What the demo sets differently from the defaults, found by comparing each
 * value of the scaler file with the default the schema gives when it is left
 * out, and why the demo sets it.
 */
import { defaultScalerSpec } from "../src/core/api/defaulting.js";

/** Why the demo's scaler and world differ from a production setting, by field path. */
const reasons: Readonly<Record<string, string>> = {
  mode: "the demo shows commits; the default, Shadow, only recommends",
  "sampling.intervalSeconds": "the shortest pass interval the API allows, so a minute holds a dozen decisions",
  "algorithm.tokenThroughput.stableWindowSeconds":
    "the shortest stable window: the speed-up compresses traffic, not windows, and a scale-down must fit in a minute",
  "algorithm.tokenThroughput.panicWindowSeconds": "the shortest panic window, so a burst is answered within seconds",
  "behavior.scaleDown.stabilizationWindowSeconds":
    "a short scale-down window (default 300 s), so the replicas a burst added come back within the minute",
  "algorithm.tokenThroughput.prefillTargetTokensPerSecond":
    "calibrated on the part of the trace the demo does not replay (npm run calibrate:demo)",
  "algorithm.tokenThroughput.decodeTargetTokensPerSecond":
    "calibrate's lower bound on the part of the trace the demo does not replay (npm run calibrate:demo)",
};

export interface Setting {
  readonly path: string;
  readonly value: string;
  readonly defaultValue: string;
  readonly why: string;
}

/** Leaf paths (dotted) of a plain object; arrays are leaves. */
function leaves(value: unknown, prefix: string[] = []): string[][] {
  if (value === null || typeof value !== "object" || Array.isArray(value)) return [prefix];
  return Object.entries(value as Record<string, unknown>).flatMap(([k, v]) => leaves(v, [...prefix, k]));
}

function at(value: unknown, path: readonly string[]): unknown {
  let v = value;
  for (const k of path) v = v !== null && typeof v === "object" ? (v as Record<string, unknown>)[k] : undefined;
  return v;
}

function without(value: unknown, path: readonly string[]): unknown {
  const copy = structuredClone(value) as Record<string, unknown>;
  let v: Record<string, unknown> = copy;
  for (const k of path.slice(0, -1)) v = v[k] as Record<string, unknown>;
  delete v[path.at(-1) as string];
  return copy;
}

/** The scaler spec's values that differ from what the schema defaults them to; required fields are skipped. */
export function nonDefaultScalerSettings(spec: unknown): Setting[] {
  const out: Setting[] = [];
  for (const path of leaves(spec)) {
    if (path.length === 0) continue;
    const defaulted = defaultScalerSpec(without(spec, path));
    // Without it the spec is invalid: the field is required, not a setting with a default.
    if (!defaulted.ok) continue;
    const fallback = at(defaulted.value, path);
    const value = at(spec, path);
    if (fallback === undefined || JSON.stringify(fallback) === JSON.stringify(value)) continue;
    const key = path.join(".");
    out.push({
      path: `spec.${key}`,
      value: JSON.stringify(value),
      defaultValue: JSON.stringify(fallback),
      why: reasons[key] ?? "set in the scaler file",
    });
  }
  return out;
}
