/** The mutating webhook's defaulting patch (moved here from the webhook envelope tests: it is core code). */
import { describe, expect, it } from "vitest";
import { additivePatch, scalerDefaultingPatch } from "../../../src/core/api/defaulting-patch.js";
import { defaultScalerSpec } from "../../../src/core/api/defaulting.js";
import type { JsonPatchOp } from "../../../src/core/binding/patch.js";

/** Applies add/replace operations the way the API server does for these paths. */
function apply(root: Record<string, unknown>, ops: readonly JsonPatchOp[]): Record<string, unknown> {
  const copy = structuredClone(root);
  for (const op of ops) {
    if (op.op === "remove" || op.op === "test") throw new Error(`unexpected ${op.op}`);
    const keys = op.path
      .split("/")
      .slice(1)
      .map((k) => k.replace(/~1/g, "/").replace(/~0/g, "~"));
    const last = keys.pop() ?? "";
    let parent: Record<string, unknown> = copy;
    for (const k of keys) parent = parent[k] as Record<string, unknown>;
    parent[last] = op.value;
  }
  return copy;
}

const spec = {
  targetRef: { name: "llm" },
  roles: [{ name: "server", maxReplicas: 4 }],
  algorithm: { proportional: { metric: "QueueDepth", roleTargets: [{ name: "server", target: 8 }] } },
  behavior: { scaleUp: { maxStepReplicas: 0 } },
};

describe("scalerDefaultingPatch", () => {
  it("turns the spec into its defaulted form, and is empty once applied", () => {
    const object = {
      apiVersion: "worker.gpustack.ai/v1",
      kind: "ModelDeploymentScaler",
      metadata: { name: "x" },
      spec,
    };
    const patched = apply(object, scalerDefaultingPatch(object));
    const expected = defaultScalerSpec(spec);
    if (!expected.ok) throw new Error("fixture does not default");
    expect(patched["spec"]).toEqual(expected.value);
    expect(scalerDefaultingPatch(patched)).toEqual([]);
  });

  it("leaves a spec that does not parse to validation", () => {
    expect(scalerDefaultingPatch({ spec: { roles: "nope" } })).toEqual([]);
    expect(scalerDefaultingPatch({})).toEqual([]);
  });

  it("escapes keys and replaces arrays of another length whole", () => {
    expect(additivePatch({ a: [1] }, { a: [1, 2], "b/c": 1 }, "")).toEqual([
      { op: "replace", path: "/a", value: [1, 2] },
      { op: "add", path: "/b~1c", value: 1 },
    ]);
  });
});

describe("additivePatch", () => {
  it("patches arrays of the same length element by element, and equal values not at all", () => {
    expect(additivePatch({ a: [1, 2] }, { a: [1, 3] }, "/spec")).toEqual([
      { op: "replace", path: "/spec/a/1", value: 3 },
    ]);
    expect(additivePatch({ a: [{ b: [1] }], c: "x" }, { a: [{ b: [1] }], c: "x" }, "")).toEqual([]);
  });

  it("adds what is missing inside a record, escaping `~`, and keeps what `after` lacks", () => {
    expect(additivePatch({ keep: 1, m: { x: 1 } }, { m: { x: 1, "y~z": 2 } }, "")).toEqual([
      { op: "add", path: "/m/y~0z", value: 2 },
    ]);
  });

  it("replaces a value whose shape differs", () => {
    expect(additivePatch("text", { a: 1 }, "/spec/x")).toEqual([{ op: "replace", path: "/spec/x", value: { a: 1 } }]);
    expect(additivePatch({ a: 1 }, [1], "/spec/x")).toEqual([{ op: "replace", path: "/spec/x", value: [1] }]);
    expect(additivePatch([1], { 0: 1 }, "/spec/x")).toEqual([{ op: "replace", path: "/spec/x", value: { 0: 1 } }]);
    expect(additivePatch(null, { a: 1 }, "/spec/x")).toEqual([{ op: "replace", path: "/spec/x", value: { a: 1 } }]);
  });

  it("a spec that is a list is left to validation", () => {
    expect(scalerDefaultingPatch({ spec: [spec] })).toEqual([]);
  });
});
