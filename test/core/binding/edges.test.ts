/**
 * The binding decision and the fence at their edges: whole outcomes (condition
 * statuses and messages included), ownership by name and uid together, scaler
 * statuses without a binding, and the fence's reading of odd objects.
 */
import { describe, expect, it } from "vitest";
import { bindingAnnotation, decisionAnnotation } from "../../../src/core/api/model-deployment.js";
import { decideBinding, type BindingTarget } from "../../../src/core/binding/binding.js";
import { scaler } from "./fixtures.js";
import { admitTargetUpdate, fenceScalerToLookUp, type TargetUpdate } from "../../../src/core/binding/fence.js";
import { staleLeaderReason } from "../../../src/core/binding/leader-token.js";
import { commitPatch, releasePatch } from "../../../src/core/binding/patch.js";

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

const controller = "system:serviceaccount:mds-system:mds-scaler";
const decision = (id: string, term: number, vector: Record<string, number>) =>
  JSON.stringify({ decisionID: id, term, vector });

function md(
  annotations: Record<string, unknown> | undefined,
  counts: Record<string, unknown> = { prefill: 2, decode: 2 },
  namespace: string | null = "team",
): Record<string, unknown> {
  return {
    metadata: {
      name: "llm",
      ...(namespace === null ? {} : { namespace }),
      ...(annotations === undefined ? {} : { annotations }),
    },
    spec: { roles: Object.entries(counts).map(([name, replicas]) => ({ name, kind: "Prefill", replicas })) },
  };
}

function admit(old: unknown, next: unknown, username: string | undefined, extra: Partial<TargetUpdate> = {}) {
  return admitTargetUpdate({
    old,
    new: next,
    userInfo: username === undefined ? {} : { username },
    controllerIdentity: controller,
    ...extra,
  });
}

const bound = { [bindingAnnotation]: payload(2), [decisionAnnotation]: decision("d1", 2, { prefill: 2, decode: 2 }) };

describe("fence: refusals say who and what", () => {
  it("a user's edit of counts and decision on a bound target lists both changes", () => {
    const next = md({ ...bound, [decisionAnnotation]: decision("d9", 2, { prefill: 5 }) }, { prefill: 5, decode: 3 });
    const verdict = admit(md(bound), next, "alice");
    expect(verdict.allowed).toBe(false);
    expect(verdict.message).toContain(
      `the write by alice is refused because it changes replicas (prefill 2→5, decode 2→3) and it changes annotation ${decisionAnnotation}. Change the counts through the scaler (roles[].minReplicas/maxReplicas), or release the target first`,
    );
    const countsOnly = admit(md(bound), md(bound, { prefill: 5, decode: 2 }), undefined);
    expect(countsOnly.message).toContain(
      'ModelDeployment team/llm is bound to ModelDeploymentScaler "llm" (uid uid-a, term 2), which owns spec.roles[].replicas',
    );
    expect(countsOnly.message).toContain(
      "the write by <unknown user> is refused because it changes replicas (prefill 2→5).",
    );
  });

  it("names a target without a namespace by its name alone, and lists the annotations a create may not carry", () => {
    const verdict = admit(undefined, md(bound, undefined, null), "alice");
    expect(verdict.message).toMatch(
      new RegExp(
        `^ModelDeployment llm cannot be created with the scaler annotation\\(s\\) ${bindingAnnotation}, ${decisionAnnotation}: only`,
      ),
    );
  });

  it("an empty controller identity matches no user, not even one without a name", () => {
    const verdict = admitTargetUpdate({
      old: md(bound),
      new: md(bound, { prefill: 5, decode: 2 }),
      userInfo: { username: "" },
      controllerIdentity: "",
    });
    expect(verdict.allowed).toBe(false);
    expect(verdict.message).toContain("the write by  is refused because it changes replicas (prefill 2→5)");
  });

  it("a user's edit of the decision alone says only that", () => {
    const next = md({ ...bound, [decisionAnnotation]: decision("d9", 2, { prefill: 2 }) });
    expect(admit(md(bound), next, "alice").message).toContain(
      `the write by alice is refused because it changes annotation ${decisionAnnotation}. Change the counts`,
    );
  });

  it("a target without a name or namespace is named by nothing", () => {
    const verdict = admit(undefined, { metadata: { annotations: bound }, spec: { roles: [] } }, "alice");
    expect(verdict.message).toMatch(/^ModelDeployment {2}cannot be created/);
  });
});

describe("fence: what counts as a change", () => {
  it("a role removed from the spec, or without a name, is not a count change", () => {
    expect(admit(md(bound), md(bound, { prefill: 2 }), "alice").allowed).toBe(true);
    const nameless = (replicas: number) => ({
      metadata: { name: "llm", annotations: bound },
      spec: { roles: [{ kind: "Prefill", replicas }] },
    });
    expect(admit(nameless(1), nameless(2), "alice").allowed).toBe(true);
  });

  it("an annotation whose value is not a string is no annotation", () => {
    // The controller acquires a target whose binding key holds a number: that is no binding.
    const verdict = admit(md({ [bindingAnnotation]: 5 }), md({ [bindingAnnotation]: payload(1) }), controller);
    expect(verdict).toEqual({ allowed: true, message: "" });
  });
});

describe("fence: the controller's writes", () => {
  it("renews a binding under the same term, but not together with counts or the decision", () => {
    const reformatted = { ...bound, [bindingAnnotation]: ` ${payload(2)}` };
    expect(admit(md(bound), md(reformatted), controller).allowed).toBe(true);
    const renewal = "a binding renewal cannot change replica counts or the decision annotation in the same write";
    expect(admit(md(bound), md(reformatted, { prefill: 3, decode: 2 }), controller).message).toBe(renewal);
    const newDecision = { ...reformatted, [decisionAnnotation]: decision("d2", 2, { prefill: 2, decode: 2 }) };
    expect(admit(md(bound), md(newDecision), controller).message).toBe(renewal);
  });

  it("a renewal may not name another scaler, by name or by uid", () => {
    for (const other of [payload(2, "llm", "uid-z"), payload(2, "other", "uid-a")]) {
      const verdict = admit(md(bound), md({ ...bound, [bindingAnnotation]: other }), controller);
      expect(verdict.allowed).toBe(false);
      expect(verdict.message).toContain("cannot take the binding over (AlreadyBound)");
    }
  });

  it("commits over a stored decision that does not parse", () => {
    const old = md({ ...bound, [decisionAnnotation]: "{" });
    const next = md({ ...bound, [decisionAnnotation]: decision("d2", 2, { prefill: 3 }) }, { prefill: 3, decode: 2 });
    expect(admit(old, next, controller)).toEqual({ allowed: true, message: "" });
  });

  it("a commit without a valid decision names the counts it changes", () => {
    const next = md({ ...bound, [decisionAnnotation]: "{" }, { prefill: 3, decode: 2 });
    expect(admit(md(bound), next, controller).message).toBe(
      `a commit must write a valid ${decisionAnnotation} together with the counts (prefill 2→3)`,
    );
    const decisionOnly = md({ ...bound, [decisionAnnotation]: "{" });
    expect(admit(md(bound), decisionOnly, controller).message).toBe(
      `a commit must write a valid ${decisionAnnotation} together with the counts`,
    );
  });

  it("counts that do not match the decision are listed role by role", () => {
    const next = md(
      { ...bound, [decisionAnnotation]: decision("d2", 2, { prefill: 4, gone: 1 }) },
      { prefill: 3, decode: 5 },
    );
    expect(admit(md(bound), next, controller).message).toBe(
      "the written counts do not match decision d2's vector (prefill: decision 4, spec 3; gone: decision 1, spec <missing role>; decode: changed but not in the decision)",
    );
  });

  it("installing a binding that does not parse is refused", () => {
    const verdict = admit(md(undefined), md({ [bindingAnnotation]: "{" }), controller);
    expect(verdict).toEqual({
      allowed: false,
      message: `annotation ${bindingAnnotation} must be valid JSON naming a scaler and a term`,
    });
  });
});

describe("fence: orphaned bindings", () => {
  it("a user may remove the binding of a scaler that is gone or recreated, counts unchanged", () => {
    const next = md({ [decisionAnnotation]: bound[decisionAnnotation] });
    expect(admit(md(bound), next, "alice", { scalerLookup: { state: "absent" } }).allowed).toBe(true);
    expect(admit(md(bound), next, "alice", { scalerLookup: { state: "present", uid: "uid-z" } }).allowed).toBe(true);
    const withCounts = md({ [decisionAnnotation]: bound[decisionAnnotation] }, { prefill: 7, decode: 2 });
    expect(admit(md(bound), withCounts, "alice", { scalerLookup: { state: "absent" } }).message).toContain(
      `must leave replica counts and annotation ${decisionAnnotation} unchanged (it changes prefill 2→7). Remove the annotation alone`,
    );
    const withDecision = md({ [decisionAnnotation]: decision("d5", 2, {}) });
    expect(admit(md(bound), withDecision, "alice", { scalerLookup: { state: "absent" } }).message).toContain(
      `must leave replica counts and annotation ${decisionAnnotation} unchanged. Remove the annotation alone`,
    );
  });

  it("the controller's own release needs no lookup", () => {
    const next = md({ [decisionAnnotation]: bound[decisionAnnotation] });
    expect(
      fenceScalerToLookUp({
        old: md(bound),
        new: next,
        userInfo: { username: controller },
        controllerIdentity: controller,
      }),
    ).toBeUndefined();
    expect(
      fenceScalerToLookUp({
        old: md(bound),
        new: next,
        userInfo: { username: "alice" },
        controllerIdentity: controller,
      }),
    ).toBe("llm");
  });
});

describe("leader tokens and patches", () => {
  it("a commit without a token is described as such", () => {
    expect(staleLeaderReason(undefined, { holder: "b", transitions: 1 })).toContain(
      "the commit carries no leader token",
    );
  });

  it("a release of a target without annotations writes nothing", () => {
    expect(
      releasePatch({ resourceVersion: "1", annotations: undefined, labels: undefined, roleNames: [], replicas: {} }),
    ).toEqual([]);
  });

  it("a commit leaves a role its vector does not name untouched", () => {
    const ops = commitPatch(
      { resourceVersion: "1", annotations: {}, labels: {}, roleNames: ["a", "b"], replicas: { a: 1, b: 1 } },
      { decisionID: "d", term: 1, vector: { a: 2 } },
    );
    expect(ops.filter((op) => op.path.startsWith("/spec/roles/"))).toEqual([
      { op: "test", path: "/spec/roles/0/name", value: "a" },
      { op: "replace", path: "/spec/roles/0/replicas", value: 2 },
    ]);
  });
});
