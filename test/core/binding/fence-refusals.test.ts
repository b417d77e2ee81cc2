/**
 * The fence's refusals and what counts as a change: who and what each refusal
 * names, the controller's own writes, orphaned bindings and odd objects.
 */
import { describe, expect, it } from "vitest";
import { bindingAnnotation, decisionAnnotation } from "../../../src/core/api/model-deployment.js";
import { admitTargetUpdate, fenceScalerToLookUp, type TargetUpdate } from "../../../src/core/binding/fence.js";

const payload = (term: number, scalerName = "llm", scalerUID = "uid-a") =>
  JSON.stringify({ scalerName, scalerUID, term });

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
