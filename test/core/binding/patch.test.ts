/** Commit and release patches, and the refusal of a commit that carries no leader token. */
import { describe, expect, it } from "vitest";
import { staleLeaderReason } from "../../../src/core/binding/leader-token.js";
import { commitPatch, releasePatch } from "../../../src/core/binding/patch.js";

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
