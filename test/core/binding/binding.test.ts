import { describe, expect, it } from "vitest";
import { bindingAnnotation, boundLabel, decisionAnnotation } from "../../../src/core/api/model-deployment.js";
import { decideBinding, type BindingTarget } from "../../../src/core/binding/binding.js";
import { scaler } from "./fixtures.js";
import { acquirePatch, commitPatch, pointerKey, releasePatch } from "../../../src/core/binding/patch.js";

const ours = (term: number) => JSON.stringify({ scalerName: "llm", scalerUID: "uid-a", term });
const theirs = JSON.stringify({ scalerName: "other", scalerUID: "uid-b", term: 3 });
const target = (annotations: Record<string, string> = {}, uid = "t-1"): BindingTarget => ({
  uid,
  name: "llm",
  annotations,
});

describe("decideBinding", () => {
  it.each([
    // [why, scaler, target, bound reason, active reason, plan, commit, write]
    [
      "an absent target is reported and nothing is planned",
      scaler(),
      undefined,
      "TargetNotFound",
      "TargetNotFound",
      false,
      false,
      "none",
    ],
    ["an unbound target is acquired under term 1", scaler(), target(), "Bound", "Active", true, true, "acquire"],
    [
      "our own binding is kept",
      scaler(),
      target({ [bindingAnnotation]: ours(2) }),
      "Bound",
      "Active",
      true,
      true,
      "none",
    ],
    [
      "another scaler's binding is left in place",
      scaler(),
      target({ [bindingAnnotation]: theirs }),
      "AlreadyBound",
      "AlreadyBound",
      false,
      false,
      "none",
    ],
    [
      "a Shadow scaler still plans beside another owner",
      scaler({ mode: "Shadow" }),
      target({ [bindingAnnotation]: theirs }),
      "AlreadyBound",
      "AlreadyBound",
      true,
      false,
      "none",
    ],
    [
      "garbage in the annotation blocks everyone",
      scaler(),
      target({ [bindingAnnotation]: "{not json" }),
      "InvalidBinding",
      "InvalidBinding",
      false,
      false,
      "none",
    ],
    [
      "a payload missing its term is invalid too",
      scaler(),
      target({ [bindingAnnotation]: '{"scalerName":"llm","scalerUID":"uid-a"}' }),
      "InvalidBinding",
      "InvalidBinding",
      false,
      false,
      "none",
    ],
    ["Shadow plans without owning", scaler({ mode: "Shadow" }), target(), "Bound", "ShadowMode", true, false, "none"],
    [
      "Shadow releases a binding it owns",
      scaler({ mode: "Shadow" }),
      target({ [bindingAnnotation]: ours(1) }),
      "Bound",
      "ShadowMode",
      true,
      false,
      "release",
    ],
    [
      "suspend releases an owned binding and stops planning",
      scaler({ suspend: true }),
      target({ [bindingAnnotation]: ours(1) }),
      "Suspended",
      "Suspended",
      false,
      false,
      "release",
    ],
    [
      "deletion releases an owned binding",
      scaler({ deleting: true }),
      target({ [bindingAnnotation]: ours(4) }),
      "Suspended",
      "Suspended",
      false,
      false,
      "release",
    ],
  ] as const)("%s", (_why, s, t, bound, active, plan, commit, write) => {
    const outcome = decideBinding(s, t);
    expect(outcome.bound.reason).toBe(bound);
    expect(outcome.active.reason).toBe(active);
    expect(outcome.plan).toBe(plan);
    expect(outcome.commit).toBe(commit);
    expect(outcome.write.kind).toBe(write);
  });

  it("never moves a term backwards: a new binding starts above the last decision's term", () => {
    const outcome = decideBinding(
      scaler(),
      target({ [decisionAnnotation]: JSON.stringify({ decisionID: "d", term: 7, vector: { a: 1 } }) }),
    );
    expect(outcome.term).toBe(8);
    expect(outcome.write).toEqual({ kind: "acquire", binding: { scalerName: "llm", scalerUID: "uid-a", term: 8 } });
  });

  it("starts above the term recorded in its own status", () => {
    const outcome = decideBinding(
      scaler({ status: { binding: { targetUID: "t-1", targetName: "llm", term: 5 } } }),
      target(),
    );
    expect(outcome.term).toBe(6);
  });

  it("stops at a replaced target until a spec edit acknowledges it", () => {
    const status = { binding: { targetUID: "t-old", targetName: "llm", term: 2 } };
    const first = decideBinding(scaler({ status }), target({}, "t-new"));
    expect([first.bound.reason, first.plan]).toEqual(["TargetReplaced", false]);

    const reported = {
      ...status,
      conditions: [
        {
          type: "Bound" as const,
          status: "False" as const,
          reason: "TargetReplaced",
          message: "",
          observedGeneration: 1,
          lastTransitionTime: "2026-01-01T00:00:00Z",
        },
      ],
    };
    expect(decideBinding(scaler({ status: reported }), target({}, "t-new")).plan).toBe(false);

    const acknowledged = decideBinding(scaler({ status: reported, generation: 2 }), target({}, "t-new"));
    expect(acknowledged.clearTargetState).toBe(true);
    expect(acknowledged.plan).toBe(true);
    // The old target's term is history: the new target starts at 1.
    expect(acknowledged.term).toBe(1);
  });
});

describe("target patches", () => {
  const base = {
    resourceVersion: "42",
    annotations: {},
    labels: { [boundLabel]: "true" },
    roleNames: ["prefill", "decode"],
    replicas: { prefill: 2, decode: 2 },
  };

  it("escapes the slash of annotation keys", () => {
    expect(pointerKey(bindingAnnotation)).toBe("modeldeployment.gpustack.ai~1scaler-binding");
    expect(pointerKey("a~b/c")).toBe("a~0b~1c");
  });

  it("guards every write with the resourceVersion it was planned on", () => {
    for (const ops of [
      acquirePatch(base, { scalerName: "s", scalerUID: "u", term: 1 }),
      commitPatch(base, { decisionID: "d", term: 1, vector: { prefill: 3, decode: 2 } }),
    ]) {
      expect(ops[0]).toEqual({ op: "replace", path: "/metadata/resourceVersion", value: "42" });
    }
  });

  it("writes the changed counts and the decision together, testing each role's index", () => {
    const ops = commitPatch(base, { decisionID: "d1", term: 2, vector: { prefill: 3, decode: 2 } });
    expect(ops).toEqual([
      { op: "replace", path: "/metadata/resourceVersion", value: "42" },
      { op: "test", path: "/spec/roles/0/name", value: "prefill" },
      { op: "replace", path: "/spec/roles/0/replicas", value: 3 },
      {
        op: "add",
        path: "/metadata/annotations/modeldeployment.gpustack.ai~1scaler-decision",
        value: JSON.stringify({ decisionID: "d1", term: 2, vector: { prefill: 3, decode: 2 } }),
      },
    ]);
  });

  it("creates the annotations map when the target has none", () => {
    const ops = acquirePatch({ ...base, annotations: undefined }, { scalerName: "s", scalerUID: "u", term: 1 });
    expect(ops[1]).toEqual({
      op: "add",
      path: "/metadata/annotations",
      value: { [bindingAnnotation]: JSON.stringify({ scalerName: "s", scalerUID: "u", term: 1 }) },
    });
  });

  it("releases only when a binding is there to remove, and removes the bound label with it", () => {
    expect(releasePatch(base)).toEqual([]);
    expect(releasePatch({ ...base, annotations: { [bindingAnnotation]: "x" } })).toEqual([
      { op: "replace", path: "/metadata/resourceVersion", value: "42" },
      { op: "remove", path: "/metadata/annotations/modeldeployment.gpustack.ai~1scaler-binding" },
      { op: "remove", path: "/metadata/labels/modeldeployment.gpustack.ai~1scaler-bound" },
    ]);
    expect(releasePatch({ ...base, labels: undefined, annotations: { [bindingAnnotation]: "x" } })).toHaveLength(2);
  });

  it("sets the bound label with the binding, keeping the target's other labels", () => {
    const binding = { scalerName: "s", scalerUID: "u", term: 1 };
    expect(acquirePatch({ ...base, labels: undefined }, binding).at(-1)).toEqual({
      op: "add",
      path: "/metadata/labels",
      value: { [boundLabel]: "true" },
    });
    expect(acquirePatch({ ...base, labels: { team: "a" } }, binding).at(-1)).toEqual({
      op: "add",
      path: "/metadata/labels/modeldeployment.gpustack.ai~1scaler-bound",
      value: "true",
    });
    // A target bound before the label existed gets it with its next commit.
    expect(
      commitPatch(
        { ...base, labels: { team: "a" } },
        { decisionID: "d", term: 1, vector: { prefill: 2, decode: 2 } },
      ).at(-1),
    ).toEqual({ op: "add", path: "/metadata/labels/modeldeployment.gpustack.ai~1scaler-bound", value: "true" });
  });
});
