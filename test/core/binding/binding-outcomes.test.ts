/**
 * Whole outcomes of the binding decision: condition statuses and messages,
 * ownership by name and uid together, scaler statuses without a binding.
 */
import { describe, expect, it } from "vitest";
import { bindingAnnotation } from "../../../src/core/api/model-deployment.js";
import { decideBinding, type BindingTarget } from "../../../src/core/binding/binding.js";
import { scaler } from "./fixtures.js";

const target = (annotations: Record<string, string> = {}, uid = "t-1"): BindingTarget => ({
  uid,
  name: "llm",
  annotations,
});
const payload = (term: number, scalerName = "llm", scalerUID = "uid-a") =>
  JSON.stringify({ scalerName, scalerUID, term });

describe("decideBinding outcomes", () => {
  it("a missing target: both conditions False with the reason and message, nothing cleared", () => {
    expect(decideBinding(scaler(), undefined)).toEqual({
      bound: {
        status: "False",
        reason: "TargetNotFound",
        message: "the target ModelDeployment does not exist in this namespace",
      },
      active: {
        status: "False",
        reason: "TargetNotFound",
        message: "the target ModelDeployment does not exist in this namespace",
      },
      plan: false,
      commit: false,
      write: { kind: "none" },
      clearTargetState: false,
    });
  });

  it("Shadow: Bound True, Active False with ShadowMode", () => {
    const outcome = decideBinding(scaler({ mode: "Shadow" }), target());
    expect([outcome.bound, outcome.active]).toEqual([
      { status: "True", reason: "Bound", message: "the target is available; Shadow mode does not own it" },
      {
        status: "False",
        reason: "ShadowMode",
        message: "Shadow mode computes recommendations without writing replica counts",
      },
    ]);
  });

  it("keeping and acquiring a binding say the term", () => {
    const active = { status: "True", reason: "Active", message: "commits replica counts under the binding" };
    const kept = decideBinding(scaler(), target({ [bindingAnnotation]: payload(4) }));
    expect([kept.bound, kept.active]).toEqual([
      { status: "True", reason: "Bound", message: "bound to the target under term 4" },
      active,
    ]);
    const acquired = decideBinding(scaler(), target());
    expect([acquired.bound, acquired.active]).toEqual([
      { status: "True", reason: "Bound", message: "bound to the target under term 1" },
      active,
    ]);
  });

  it("a binding is ours only when both the name and the uid are", () => {
    for (const other of [payload(3, "llm", "uid-z"), payload(3, "other", "uid-a")]) {
      const outcome = decideBinding(scaler(), target({ [bindingAnnotation]: other }));
      expect(outcome.bound.reason).toBe("AlreadyBound");
      expect(outcome.commit).toBe(false);
    }
  });

  it("names the owner and quotes a broken annotation, cut at 120 characters", () => {
    const owned = decideBinding(scaler(), target({ [bindingAnnotation]: payload(3, "other", "uid-b") }));
    expect(owned.bound.message).toBe("the target is bound to scaler other (uid uid-b, term 3)");
    const broken = decideBinding(scaler(), target({ [bindingAnnotation]: `{${"x".repeat(200)}` }));
    expect(broken.bound.message).toBe(
      `annotation ${bindingAnnotation} cannot be parsed (${JSON.stringify(`{${"x".repeat(119)}`)}); fix or remove it to let a scaler bind`,
    );
  });

  it("suspending or deleting a scaler that does not own the target writes nothing", () => {
    const suspended = decideBinding(scaler({ suspend: true }), target());
    expect(suspended.write).toEqual({ kind: "none" });
    expect(suspended.bound.message).toBe("spec.suspend is true: planning stopped and the binding released");
    const deleting = decideBinding(scaler({ deleting: true }), target());
    expect(deleting.write).toEqual({ kind: "none" });
    expect(deleting.bound.message).toBe("the scaler is being deleted; its binding is released");
  });

  it("a status without a binding is no history", () => {
    const outcome = decideBinding(scaler({ status: {} }), target());
    expect(outcome.term).toBe(1);
  });

  it("the replacement is acknowledged from the Bound condition, wherever it stands", () => {
    const condition = (type: "Bound" | "Active", reason: string) => ({
      type,
      status: "False" as const,
      reason,
      message: "",
      observedGeneration: 1,
      lastTransitionTime: "2026-01-01T00:00:00Z",
    });
    const status = {
      binding: { targetUID: "t-old", targetName: "llm", term: 2 },
      conditions: [condition("Active", "Active"), condition("Bound", "TargetReplaced")],
    };
    const outcome = decideBinding(scaler({ status, generation: 2 }), target({}, "t-new"));
    expect(outcome.clearTargetState).toBe(true);
    const first = decideBinding(scaler({ status: { binding: status.binding } }), target({}, "t-new"));
    expect(first.bound.message).toBe(
      "the target was recreated (uid t-old is now t-new); edit the scaler's spec to acknowledge the replacement",
    );
  });
});
