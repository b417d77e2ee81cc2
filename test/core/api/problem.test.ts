import { describe, expect, it } from "vitest";
import { describeValue, formatPath, formatProblem, valueAt } from "../../../src/core/api/problem.js";

describe("formatPath", () => {
  it.each([
    [["spec", "roles", 1, "maxReplicas"], "spec.roles[1].maxReplicas"],
    [[0, "name"], "[0].name"],
    [["metadata", "annotations", "a/b c"], 'metadata.annotations["a/b c"]'],
    [["$x", "_y"], "$x._y"],
    [[], ""],
  ] as const)("%j is %s", (path, text) => {
    expect(formatPath(path)).toBe(text);
  });
});

describe("valueAt", () => {
  it("reads own fields only, and stops at anything that is not an object", () => {
    const root = { spec: { roles: [{ name: "a" }] }, n: null };
    expect(valueAt(root, ["spec", "roles", 0, "name"])).toBe("a");
    expect(valueAt(root, ["spec", "toString"])).toBeUndefined();
    expect(valueAt(root, ["n", "x"])).toBeUndefined();
    expect(valueAt(root, ["spec", "roles", 0, "name", "length"])).toBeUndefined();
  });
});

describe("describeValue", () => {
  it.each([
    [undefined, "<missing>"],
    ["x", '"x"'],
    [12n, "12"],
    [{ a: 1 }, '{"a":1}'],
    [Symbol.for("s"), "Symbol(s)"],
    ["a".repeat(78), `"${"a".repeat(78)}"`],
    ["a".repeat(79), `"${"a".repeat(76)}...`],
  ])("%s reads as %s", (value, text) => {
    expect(describeValue(value)).toBe(text);
  });

  it("a value JSON cannot write reads as its string form", () => {
    const circular: Record<string, unknown> = {};
    circular["self"] = circular;
    expect(describeValue(circular)).toBe("[object Object]");
    expect(describeValue({ big: 1n })).toBe("[object Object]");
  });
});

describe("formatProblem", () => {
  it("names the root when the path is empty", () => {
    expect(formatProblem({ path: "", value: 1, reason: "must be an object", rule: "schema" })).toBe(
      "<root> = 1: must be an object",
    );
    expect(formatProblem({ path: "spec.mode", value: undefined, reason: "is required", rule: "schema" })).toBe(
      "spec.mode = <missing>: is required",
    );
  });
});
