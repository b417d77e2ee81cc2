import { describe, expect, it } from "vitest";
import {
  bindingAnnotation,
  decisionAnnotation,
  DecisionPayloadSchema,
  type LeaderToken,
} from "../../../src/core/api/model-deployment.js";
import { admitTargetUpdate } from "../../../src/core/binding/fence.js";
import { staleLeaderReason } from "../../../src/core/binding/leader-token.js";
import { withLeaderToken } from "../../../src/core/planner/decision-id.js";

const controller = "system:serviceaccount:mds-system:mds-scaler";

function md(replicas: number, decision: Record<string, unknown>): Record<string, unknown> {
  return {
    apiVersion: "worker.gpustack.ai/v1",
    kind: "ModelDeployment",
    metadata: {
      name: "llm",
      namespace: "team",
      annotations: {
        [bindingAnnotation]: JSON.stringify({ scalerName: "llm", scalerUID: "uid-a", term: 1 }),
        [decisionAnnotation]: JSON.stringify(decision),
      },
    },
    spec: { roles: [{ name: "server", kind: "Server", replicas }] },
  };
}

const a5: LeaderToken = { holder: "replica-a", transitions: 5 };
const b6: LeaderToken = { holder: "replica-b", transitions: 6 };

function commit(stored: LeaderToken | undefined, candidate: LeaderToken | undefined) {
  const old = md(2, { decisionID: "d-old", term: 1, vector: { server: 2 }, ...(stored ? { leader: stored } : {}) });
  const next = md(3, {
    decisionID: "d-new",
    term: 1,
    vector: { server: 3 },
    ...(candidate ? { leader: candidate } : {}),
  });
  return admitTargetUpdate({ old, new: next, userInfo: { username: controller }, controllerIdentity: controller });
}

describe("staleLeaderReason", () => {
  const rows: [string, LeaderToken | undefined, LeaderToken | undefined, boolean][] = [
    ["no stored token: anything goes (decisions from before tokens)", undefined, a5, false],
    ["no token on either side", undefined, undefined, false],
    ["a newer transition count", a5, b6, false],
    ["the same leadership again", a5, { ...a5 }, false],
    ["an older transition count", b6, a5, true],
    ["the same count under another holder", a5, { holder: "replica-b", transitions: 5 }, true],
    ["no token over a stored one: the oldest", a5, undefined, true],
  ];
  it.each(rows)("%s", (_why, stored, candidate, refused) => {
    const reason = staleLeaderReason(candidate, stored);
    expect(reason !== undefined).toBe(refused);
    expect(commit(stored, candidate).allowed).toBe(!refused);
  });

  it("names both leaderships in the refusal", () => {
    const verdict = commit(b6, a5);
    expect(verdict.message).toContain('leader "replica-a" (Lease transition 5)');
    expect(verdict.message).toContain('leader "replica-b" (Lease transition 6)');
    expect(verdict.message).toContain("d-new");
  });
});

describe("the decision format", () => {
  it("stays readable without a token and carries one when stamped", () => {
    const plain = { decisionID: "d-1", term: 1, vector: { server: 2 } };
    expect(DecisionPayloadSchema.parse(plain)).toEqual(plain);
    expect(withLeaderToken(plain, undefined)).toBe(plain);
    const stamped = withLeaderToken(plain, a5);
    expect(DecisionPayloadSchema.parse(stamped)).toEqual({ ...plain, leader: a5 });
    expect(DecisionPayloadSchema.safeParse({ ...plain, leader: { holder: "", transitions: 1 } }).success).toBe(false);
    expect(DecisionPayloadSchema.safeParse({ ...plain, leader: { holder: "a", transitions: -1 } }).success).toBe(false);
  });
});
