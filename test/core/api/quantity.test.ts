import { describe, expect, it } from "vitest";
import {
  formatQuantity,
  parseQuantity,
  parseQuantityChecked,
  parseQuantityExact,
} from "../../../src/core/api/quantity.js";
import { rational } from "../../../src/core/api/rational.js";

describe("parseQuantityExact", () => {
  it.each([
    ["8", rational(8n)],
    ["0.5", rational(1n, 2n)],
    ["500m", rational(1n, 2n)],
    ["1.5k", rational(1500n)],
    ["2Ki", rational(2048n)],
    ["1e3", rational(1000n)],
    ["1E-2", rational(1n, 100n)],
    ["1E", rational(10n ** 18n)],
    [".5", rational(1n, 2n)],
    ["+3", rational(3n)],
    ["-250m", rational(-1n, 4n)],
    ["100u", rational(1n, 10000n)],
    [7, rational(7n)],
  ] as const)("%s is exact", (text, want) => {
    expect(parseQuantityExact(text)).toEqual(want);
  });

  it.each([["fast"], ["1.5x"], [" 1"], ["1 "], ["1.2.3"], [""], ["m"], ["1Kb"], ["e3"], ["0x10"], ["1e"], ["NaN"]])(
    "%j is refused as syntax",
    (text) => {
      expect(parseQuantityChecked(text)).toEqual({ error: "syntax" });
    },
  );

  it.each([["10E"], ["1e65"], ["9223372036854775808"]])("%j is refused as out of range", (text) => {
    expect(parseQuantityChecked(text)).toEqual({ error: "range" });
  });

  it("refuses non-integer and unsafe numbers, which the CRD cannot carry", () => {
    expect(parseQuantityChecked(0.5)).toEqual({ error: "syntax" });
    expect(parseQuantityChecked(Number.MAX_SAFE_INTEGER + 1)).toEqual({ error: "syntax" });
    expect(parseQuantityChecked(Number.POSITIVE_INFINITY)).toEqual({ error: "range" });
  });
});

describe("parseQuantity and formatQuantity", () => {
  it("read the number a quantity stands for", () => {
    expect(parseQuantity("500m")).toBe(0.5);
    expect(parseQuantity("2k")).toBe(2000);
    expect(parseQuantity("bogus")).toBeUndefined();
  });

  it("format plain decimals with at most 3 fractional digits", () => {
    expect(formatQuantity(2400)).toBe("2400");
    expect(formatQuantity(12.34567)).toBe("12.346");
    expect(formatQuantity(-0.0001)).toBe("0");
  });
});
