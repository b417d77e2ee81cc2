import { describe, expect, it } from "vitest";
import { bindingAnnotation, decisionAnnotation } from "../../../src/core/api/model-deployment.js";
import { admitTargetUpdate, fenceScalerToLookUp, type ScalerLookup } from "../../../src/core/binding/fence.js";
import {
  acquirePatch,
  commitPatch,
  releasePatch,
  type JsonPatchOp,
  type PatchTarget,
} from "../../../src/core/binding/patch.js";

const controller = "system:serviceaccount:mds-system:mds-scaler";
const alice = { username: "alice", groups: ["system:authenticated"] };
const scalerSA = { username: controller };

const binding = (term: number, name = "llm", uid = "uid-a") =>
  JSON.stringify({ scalerName: name, scalerUID: uid, term });
const decision = (id: string, term: number, vector: Record<string, number>) =>
  JSON.stringify({ decisionID: id, term, vector });

interface Shape {
  readonly annotations?: Record<string, string>;
  readonly prefill?: number;
  readonly decode?: number;
  readonly labels?: Record<string, string>;
}

function md(shape: Shape = {}): Record<string, unknown> {
  return {
    apiVersion: "worker.gpustack.ai/v1",
    kind: "ModelDeployment",
    metadata: {
      name: "llm",
      namespace: "team",
      ...(shape.annotations === undefined ? {} : { annotations: shape.annotations }),
      ...(shape.labels === undefined ? {} : { labels: shape.labels }),
    },
    spec: {
      roles: [
        { name: "prefill", kind: "Prefill", replicas: shape.prefill ?? 2 },
        { name: "decode", kind: "Decode", replicas: shape.decode ?? 2 },
      ],
    },
  };
}

const bound = { [bindingAnnotation]: binding(2), [decisionAnnotation]: decision("d1", 2, { prefill: 2, decode: 2 }) };
const absent: ScalerLookup = { state: "absent" };
const sameUID: ScalerLookup = { state: "present", uid: "uid-a" };
const otherUID: ScalerLookup = { state: "present", uid: "uid-z" };

type Row = readonly [
  why: string,
  old: Record<string, unknown> | undefined,
  next: Record<string, unknown>,
  user: { username: string },
  lookup: ScalerLookup | undefined,
  allowed: boolean,
  messagePart: string,
];

const rows: readonly Row[] = [
  // Bound target: counts and annotations belong to the scaler.
  [
    "a user's count edit on a bound target is refused",
    md({ annotations: bound }),
    md({ annotations: bound, prefill: 5 }),
    alice,
    undefined,
    false,
    'is bound to ModelDeploymentScaler "llm"',
  ],
  [
    "the refusal says what to do, including the GitOps exclusions",
    md({ annotations: bound }),
    md({ annotations: bound, prefill: 5 }),
    alice,
    undefined,
    false,
    "ignoreDifferences",
  ],
  [
    "a user's edit of other fields on a bound target passes",
    md({ annotations: bound }),
    md({ annotations: bound, labels: { team: "a" } }),
    alice,
    undefined,
    true,
    "",
  ],
  [
    "a user rewriting the decision on a bound target is refused",
    md({ annotations: bound }),
    md({ annotations: { ...bound, [decisionAnnotation]: decision("mine", 2, { prefill: 2, decode: 2 }) } }),
    alice,
    undefined,
    false,
    "changes annotation",
  ],
  [
    "a user rewriting the binding term is refused",
    md({ annotations: bound }),
    md({ annotations: { ...bound, [bindingAnnotation]: binding(9) } }),
    alice,
    undefined,
    false,
    "rewrites annotation",
  ],
  [
    "a GitOps full update restoring counts and dropping both annotations is refused while the scaler exists",
    md({ annotations: bound, prefill: 6 }),
    md({ prefill: 2 }),
    alice,
    sameUID,
    false,
    "while that scaler still exists",
  ],
  // Bound target: the controller's commits.
  [
    "a commit writing the vector and a new decision under the term passes",
    md({ annotations: bound }),
    md({ annotations: { ...bound, [decisionAnnotation]: decision("d2", 2, { prefill: 3, decode: 2 }) }, prefill: 3 }),
    scalerSA,
    undefined,
    true,
    "",
  ],
  [
    "a commit restoring a baseline (decision only, counts as they are) passes",
    md({ annotations: bound, prefill: 3 }),
    md({ annotations: { ...bound, [decisionAnnotation]: decision("d3", 2, { prefill: 3, decode: 2 }) }, prefill: 3 }),
    scalerSA,
    undefined,
    true,
    "",
  ],
  [
    "counts without a new decision are refused, even from the controller",
    md({ annotations: bound }),
    md({ annotations: bound, prefill: 3 }),
    scalerSA,
    undefined,
    false,
    "without a new decision",
  ],
  [
    "a decision under another term than the binding's is refused",
    md({ annotations: bound }),
    md({ annotations: { ...bound, [decisionAnnotation]: decision("d2", 3, { prefill: 3, decode: 2 }) }, prefill: 3 }),
    scalerSA,
    undefined,
    false,
    "binding's term is 2",
  ],
  [
    "a decision whose vector differs from the written counts is refused",
    md({ annotations: bound }),
    md({ annotations: { ...bound, [decisionAnnotation]: decision("d2", 2, { prefill: 4, decode: 2 }) }, prefill: 3 }),
    scalerSA,
    undefined,
    false,
    "do not match",
  ],
  [
    "a changed role missing from the decision's vector is refused",
    md({ annotations: bound }),
    md({ annotations: { ...bound, [decisionAnnotation]: decision("d2", 2, { prefill: 3 }) }, prefill: 3, decode: 4 }),
    scalerSA,
    undefined,
    false,
    "not in the decision",
  ],
  [
    "a commit removing the decision is refused",
    md({ annotations: bound }),
    md({ annotations: { [bindingAnnotation]: binding(2) }, prefill: 3 }),
    scalerSA,
    undefined,
    false,
    "valid modeldeployment.gpustack.ai/scaler-decision",
  ],
  [
    "an unparseable decision in a commit is refused",
    md({ annotations: bound }),
    md({ annotations: { ...bound, [decisionAnnotation]: "{" }, prefill: 3 }),
    scalerSA,
    undefined,
    false,
    "valid",
  ],
  [
    "a decision term below the stored one is refused (terms never move backwards)",
    md({
      annotations: {
        [bindingAnnotation]: binding(1),
        [decisionAnnotation]: decision("d1", 2, { prefill: 2, decode: 2 }),
      },
    }),
    md({
      annotations: {
        [bindingAnnotation]: binding(1),
        [decisionAnnotation]: decision("d2", 1, { prefill: 3, decode: 2 }),
      },
      prefill: 3,
    }),
    scalerSA,
    undefined,
    false,
    "cannot move backwards",
  ],
  // Bound target: release, renewal and takeover.
  [
    "the controller's release removes the binding only",
    md({ annotations: bound }),
    md({ annotations: { [decisionAnnotation]: bound[decisionAnnotation] } }),
    scalerSA,
    undefined,
    true,
    "",
  ],
  [
    "a release that also changes counts is refused",
    md({ annotations: bound }),
    md({ annotations: { [decisionAnnotation]: bound[decisionAnnotation] }, prefill: 1 }),
    scalerSA,
    undefined,
    false,
    "release removes the binding only",
  ],
  [
    "the same scaler renews its binding at a higher term",
    md({ annotations: bound }),
    md({ annotations: { ...bound, [bindingAnnotation]: binding(3) } }),
    scalerSA,
    undefined,
    true,
    "",
  ],
  [
    "a renewal cannot lower the term",
    md({ annotations: bound }),
    md({ annotations: { ...bound, [bindingAnnotation]: binding(1) } }),
    scalerSA,
    undefined,
    false,
    "cannot move backwards",
  ],
  [
    "a second scaler cannot take over an existing binding",
    md({ annotations: bound }),
    md({ annotations: { ...bound, [bindingAnnotation]: binding(3, "other", "uid-b") } }),
    scalerSA,
    undefined,
    false,
    "AlreadyBound",
  ],
  [
    "nobody writes an unparseable binding over a valid one",
    md({ annotations: bound }),
    md({ annotations: { ...bound, [bindingAnnotation]: "oops" } }),
    scalerSA,
    undefined,
    false,
    "must be valid JSON",
  ],
  // Orphan recovery.
  [
    "a user removes an orphaned binding whose scaler is gone",
    md({ annotations: bound }),
    md({ annotations: { [decisionAnnotation]: bound[decisionAnnotation] } }),
    alice,
    absent,
    true,
    "",
  ],
  [
    "a user removes an orphaned binding whose scaler was recreated with another UID",
    md({ annotations: bound }),
    md({ annotations: { [decisionAnnotation]: bound[decisionAnnotation] } }),
    alice,
    otherUID,
    true,
    "",
  ],
  [
    "orphan recovery is refused while the named scaler exists with the same UID",
    md({ annotations: bound }),
    md({ annotations: { [decisionAnnotation]: bound[decisionAnnotation] } }),
    alice,
    sameUID,
    false,
    "still exists",
  ],
  [
    "orphan recovery must leave counts unchanged",
    md({ annotations: bound }),
    md({ annotations: { [decisionAnnotation]: bound[decisionAnnotation] }, prefill: 7 }),
    alice,
    absent,
    false,
    "leave replica counts",
  ],
  [
    "orphan recovery must leave the decision in place",
    md({ annotations: bound }),
    md({}),
    alice,
    absent,
    false,
    "leave replica counts and annotation",
  ],
  [
    "orphan recovery without a lookup is refused rather than guessed",
    md({ annotations: bound }),
    md({ annotations: { [decisionAnnotation]: bound[decisionAnnotation] } }),
    alice,
    undefined,
    false,
    "retry",
  ],
  // Unbound target.
  ["a user changes counts on an unbound target", md({}), md({ prefill: 9 }), alice, undefined, true, ""],
  [
    "a user changes counts beside a leftover decision",
    md({ annotations: { [decisionAnnotation]: bound[decisionAnnotation] } }),
    md({ annotations: { [decisionAnnotation]: bound[decisionAnnotation] }, prefill: 9 }),
    alice,
    undefined,
    true,
    "",
  ],
  [
    "installing a binding annotation by hand is refused",
    md({}),
    md({ annotations: { [bindingAnnotation]: binding(1) } }),
    alice,
    undefined,
    false,
    "cannot be installed by hand",
  ],
  [
    "installing a decision annotation by hand is refused",
    md({}),
    md({ annotations: { [decisionAnnotation]: decision("x", 1, { prefill: 2 }) } }),
    alice,
    undefined,
    false,
    "cannot be installed or rewritten",
  ],
  [
    "rewriting a leftover decision is refused",
    md({ annotations: { [decisionAnnotation]: bound[decisionAnnotation] } }),
    md({ annotations: { [decisionAnnotation]: decision("x", 9, { prefill: 2 }) } }),
    alice,
    undefined,
    false,
    "cannot be installed or rewritten",
  ],
  [
    "removing a leftover decision from an unbound target passes",
    md({ annotations: { [decisionAnnotation]: bound[decisionAnnotation] } }),
    md({}),
    alice,
    undefined,
    true,
    "",
  ],
  [
    "the controller acquires an unbound target above the last decision term",
    md({ annotations: { [decisionAnnotation]: bound[decisionAnnotation] } }),
    md({ annotations: { ...bound, [bindingAnnotation]: binding(3) } }),
    scalerSA,
    undefined,
    true,
    "",
  ],
  [
    "an acquisition at or below the last decision term is refused",
    md({ annotations: { [decisionAnnotation]: bound[decisionAnnotation] } }),
    md({ annotations: bound }),
    scalerSA,
    undefined,
    false,
    "terms never move backwards",
  ],
  [
    "an acquisition that also changes counts is refused",
    md({}),
    md({ annotations: { [bindingAnnotation]: binding(1) }, prefill: 3 }),
    scalerSA,
    undefined,
    false,
    "acquiring a binding cannot change",
  ],
  [
    "the controller cannot commit without a binding",
    md({}),
    md({ annotations: { [decisionAnnotation]: decision("d1", 1, { prefill: 3, decode: 2 }) }, prefill: 3 }),
    scalerSA,
    undefined,
    false,
    "cannot be installed or rewritten",
  ],
  // Unparseable binding: unclaimed.
  [
    "an unparseable binding leaves counts editable",
    md({ annotations: { [bindingAnnotation]: "{garbage" } }),
    md({ annotations: { [bindingAnnotation]: "{garbage" }, prefill: 4 }),
    alice,
    undefined,
    true,
    "",
  ],
  [
    "an unparseable binding may be removed",
    md({ annotations: { [bindingAnnotation]: "{garbage" } }),
    md({}),
    alice,
    undefined,
    true,
    "",
  ],
  [
    "an unparseable binding may not be rewritten into a valid one",
    md({ annotations: { [bindingAnnotation]: "{garbage" } }),
    md({ annotations: { [bindingAnnotation]: binding(1) } }),
    alice,
    undefined,
    false,
    "remove it",
  ],
  // Create.
  ["a plain create passes", undefined, md({}), alice, undefined, true, ""],
  [
    "a create carrying a binding is refused",
    undefined,
    md({ annotations: { [bindingAnnotation]: binding(1) } }),
    alice,
    undefined,
    false,
    "cannot be created with",
  ],
  [
    "a create carrying a decision is refused, even from the controller",
    undefined,
    md({ annotations: { [decisionAnnotation]: bound[decisionAnnotation] } }),
    scalerSA,
    undefined,
    false,
    "cannot be created with",
  ],
];

describe("admitTargetUpdate", () => {
  it.each(rows)("%s", (_why, old, next, user, lookup, allowed, messagePart) => {
    const verdict = admitTargetUpdate({
      old,
      new: next,
      userInfo: user,
      controllerIdentity: controller,
      ...(lookup === undefined ? {} : { scalerLookup: lookup }),
    });
    expect(verdict.allowed, verdict.message).toBe(allowed);
    if (allowed) expect(verdict.message).toBe("");
    else expect(verdict.message).toContain(messagePart);
  });

  it("an empty controller identity never matches a request without a username", () => {
    const verdict = admitTargetUpdate({
      old: md({ annotations: bound }),
      new: md({
        annotations: { ...bound, [decisionAnnotation]: decision("d2", 2, { prefill: 3, decode: 2 }) },
        prefill: 3,
      }),
      userInfo: {},
      controllerIdentity: "",
    });
    expect(verdict.allowed).toBe(false);
  });

  it("malformed objects are judged without throwing", () => {
    for (const junk of [
      null,
      7,
      "x",
      [],
      { metadata: { annotations: { [bindingAnnotation]: 5 } } },
      { spec: { roles: "no" } },
    ]) {
      expect(() =>
        admitTargetUpdate({ old: junk, new: junk, userInfo: alice, controllerIdentity: controller }),
      ).not.toThrow();
    }
  });
});

describe("fenceScalerToLookUp", () => {
  it.each([
    ["a user removing a valid binding needs the scaler looked up", md({ annotations: bound }), md({}), alice, "llm"],
    ["the controller's release needs no lookup", md({ annotations: bound }), md({}), scalerSA, undefined],
    [
      "a count edit needs no lookup",
      md({ annotations: bound }),
      md({ annotations: bound, prefill: 3 }),
      alice,
      undefined,
    ],
    ["an unbound target needs no lookup", md({}), md({ prefill: 3 }), alice, undefined],
  ] as const)("%s", (_why, old, next, user, name) => {
    expect(fenceScalerToLookUp({ old, new: next, userInfo: user, controllerIdentity: controller })).toBe(name);
  });
});

/** Applies the controller's own patches: the fence must admit every one of them. */
function apply(object: Record<string, unknown>, ops: readonly JsonPatchOp[]): Record<string, unknown> {
  const copy = structuredClone(object);
  for (const op of ops) {
    const keys = op.path
      .split("/")
      .slice(1)
      .map((k) => k.replace(/~1/g, "/").replace(/~0/g, "~"));
    const last = keys.pop() ?? "";
    let parent = copy as Record<string, unknown>;
    for (const k of keys) parent = parent[k] as Record<string, unknown>;
    if (op.op === "test") expect(parent[last]).toEqual(op.value);
    else if (op.op === "remove") delete parent[last];
    else parent[last] = op.value;
  }
  return copy;
}

function patchTargetOf(object: Record<string, unknown>): PatchTarget {
  const meta = object["metadata"] as { annotations?: Record<string, string>; labels?: Record<string, string> };
  const roles = (object["spec"] as { roles: { name: string; replicas: number }[] }).roles;
  return {
    resourceVersion: "1",
    annotations: meta.annotations,
    labels: meta.labels,
    roleNames: roles.map((r) => r.name),
    replicas: Object.fromEntries(roles.map((r) => [r.name, r.replicas])),
  };
}

describe("the controller's patches pass the fence", () => {
  it("acquire, commit, commit, release in sequence", () => {
    const admit = (old: Record<string, unknown>, next: Record<string, unknown>) =>
      admitTargetUpdate({ old, new: next, userInfo: scalerSA, controllerIdentity: controller });
    const steps: Record<string, unknown>[] = [
      md({ annotations: { [decisionAnnotation]: decision("d0", 4, { prefill: 2, decode: 2 }) } }),
    ];
    const push = (ops: readonly JsonPatchOp[]) => {
      const old = steps[steps.length - 1]!;
      const next = apply(old, ops);
      expect(admit(old, next)).toEqual({ allowed: true, message: "" });
      steps.push(next);
    };
    push(acquirePatch(patchTargetOf(steps[0]!), { scalerName: "llm", scalerUID: "uid-a", term: 5 }));
    push(commitPatch(patchTargetOf(steps[1]!), { decisionID: "d1", term: 5, vector: { prefill: 4, decode: 3 } }));
    push(commitPatch(patchTargetOf(steps[2]!), { decisionID: "d2", term: 5, vector: { prefill: 2, decode: 3 } }));
    push(releasePatch(patchTargetOf(steps[3]!)));
    // A user may now change counts again.
    const last = steps[steps.length - 1]!;
    expect(
      admitTargetUpdate({
        old: last,
        new: {
          ...last,
          spec: {
            roles: [
              { name: "prefill", replicas: 1 },
              { name: "decode", replicas: 1 },
            ],
          },
        },
        userInfo: alice,
        controllerIdentity: controller,
      }).allowed,
    ).toBe(true);
  });
});
