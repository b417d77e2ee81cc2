import { describe, expect, it } from "vitest";
import { blockedCondition, setConditions } from "../../../src/core/planner/conditions.js";
import { canonicalVector, decisionID, fnv1a64Hex } from "../../../src/core/planner/decision-id.js";
import { t0 } from "./fixtures.js";

describe("setConditions", () => {
  it("moves lastTransitionTime only when the status changes", () => {
    const first = setConditions(
      undefined,
      [{ type: "Blocked", status: "True", reason: "PacingBounded", message: "a" }],
      1,
      t0,
    );
    const sameStatus = setConditions(
      first,
      [{ type: "Blocked", status: "True", reason: "RatioConflict", message: "b" }],
      2,
      t0 + 1000,
    );
    expect(sameStatus[0]).toMatchObject({
      reason: "RatioConflict",
      observedGeneration: 2,
      lastTransitionTime: new Date(t0).toISOString(),
    });
    const flipped = setConditions(
      sameStatus,
      [{ type: "Blocked", status: "False", reason: "Ready", message: "c" }],
      2,
      t0 + 2000,
    );
    expect(flipped[0]?.lastTransitionTime).toBe(new Date(t0 + 2000).toISOString());
  });

  it("keeps untouched conditions and a stable order", () => {
    const before = setConditions(
      undefined,
      [
        { type: "Blocked", status: "False", reason: "Ready", message: "" },
        { type: "Bound", status: "True", reason: "Bound", message: "" },
      ],
      1,
      t0,
    );
    const after = setConditions(before, [{ type: "Active", status: "False", reason: "Suspended", message: "" }], 2, t0);
    expect(after.map((c) => [c.type, c.observedGeneration])).toEqual([
      ["Bound", 1],
      ["Active", 2],
      ["Blocked", 1],
    ]);
  });
});

describe("blockedCondition", () => {
  it("shows the strongest reason", () => {
    const c = blockedCondition(
      new Map([
        ["PacingBounded", "p"],
        ["ResourceExhausted", "r"],
        ["RatioConflict", "x"],
      ] as const),
    );
    expect(c).toMatchObject({ status: "True", reason: "RatioConflict" });
    expect(blockedCondition(new Map())).toMatchObject({ status: "False", reason: "Ready" });
  });
});

describe("decision IDs", () => {
  it("uses FNV-1a 64", () => {
    expect(fnv1a64Hex("")).toBe("cbf29ce484222325");
    expect(fnv1a64Hex("a")).toBe("af63dc4c8601ec8c");
    expect(fnv1a64Hex("foobar")).toBe("85944171f73967e8");
    // A hash below 2^60 keeps its leading zero: IDs always have 16 digits.
    expect(fnv1a64Hex("k0")).toBe("08be0e07b562230e");
  });

  it("hashes the scaler UID, term, vector in name order and time, joined by |", () => {
    expect(canonicalVector({ b: 2, a: 1 })).toBe("a=1,b=2");
    expect(decisionID({ scalerUID: "u", term: 1, vector: { b: 2, a: 1 }, nowMs: t0 })).toBe(
      `d-${fnv1a64Hex(`u|1|a=1,b=2|${t0}`)}`,
    );
  });

  it("depends on every input and not on key order", () => {
    const base = { scalerUID: "u", term: 1, vector: { a: 1, b: 2 }, nowMs: t0 };
    expect(decisionID(base)).toBe(decisionID({ ...base, vector: { b: 2, a: 1 } }));
    for (const changed of [{ scalerUID: "v" }, { term: 2 }, { vector: { a: 1, b: 3 } }, { nowMs: t0 + 1 }]) {
      expect(decisionID({ ...base, ...changed })).not.toBe(decisionID(base));
    }
  });
});
