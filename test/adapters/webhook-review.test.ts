import { describe, expect, it } from "vitest";
import { additivePatch, scalerDefaultingPatch } from "../../src/core/api/defaulting-patch.js";
import { defaultScalerSpec } from "../../src/core/api/defaulting.js";
import type { JsonPatchOp } from "../../src/core/binding/patch.js";
import { decodeReview, denied, encodeReview } from "../../src/adapters/webhook/review.js";

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

describe("the AdmissionReview envelope", () => {
  it.each([
    ["not JSON", "{", ""],
    ["JSON without a request", '{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview"}', ""],
    [
      "an old API version keeps its uid in the refusal",
      '{"apiVersion":"admission.k8s.io/v1beta1","kind":"AdmissionReview","request":{"uid":"u1"}}',
      "u1",
    ],
  ])("refuses %s", (_why, body, uid) => {
    const decoded = decodeReview(body);
    expect(decoded.ok).toBe(false);
    if (!decoded.ok) expect(decoded.uid).toBe(uid);
  });

  it("echoes the uid, and a refusal carries a code, a reason and the message", () => {
    expect(encodeReview("u2", denied(403, "bound"))).toEqual({
      apiVersion: "admission.k8s.io/v1",
      kind: "AdmissionReview",
      response: { uid: "u2", allowed: false, status: { code: 403, reason: "Forbidden", message: "bound" } },
    });
  });

  it("base64-encodes a patch as JSONPatch, and never sends one with a refusal", () => {
    const ops: JsonPatchOp[] = [{ op: "add", path: "/spec/mode", value: "Shadow" }];
    const answer = encodeReview("u3", { allowed: true, patch: ops });
    expect(answer.response.patchType).toBe("JSONPatch");
    expect(JSON.parse(Buffer.from(answer.response.patch ?? "", "base64").toString())).toEqual(ops);
    expect(encodeReview("u3", { ...denied(422, "bad"), patch: ops }).response.patch).toBeUndefined();
  });
});
