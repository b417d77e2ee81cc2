import { describe, expect, it } from "vitest";
import { algorithmFor, algorithms } from "../../../src/core/algorithms/index.js";
import { algorithmTypes } from "../../../src/core/api/scaler.js";

describe("algorithm registry", () => {
  it("has one entry per algorithm type, in alphabetical order", () => {
    expect(Object.keys(algorithms)).toEqual([...algorithmTypes].sort());
  });

  it.each([...algorithmTypes])("%s resolves to an algorithm of that type", (type) => {
    expect(algorithmFor(type).type).toBe(type);
  });
});
