import { describe, expect, it } from "vitest";
import { decodeReview, denied, encodeReview } from "../../../src/adapters/webhook/review.js";
import type { JsonPatchOp } from "../../../src/core/binding/patch.js";

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
