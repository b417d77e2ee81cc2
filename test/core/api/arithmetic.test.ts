/** Exact rationals and quantities at their edges: signs, rounding towards each side, errors that name the value. */
import { describe, expect, it } from "vitest";
import { formatQuantity, parseQuantity, quantityValue } from "../../../src/core/api/quantity.js";
import { ceilRational, compareRational, floorRational, rational } from "../../../src/core/api/rational.js";

describe("rational", () => {
  it("keeps the sign in the numerator and reduces", () => {
    expect(rational(1n, -2n)).toEqual({ num: -1n, den: 2n });
    expect(rational(4n, -6n)).toEqual({ num: -2n, den: 3n });
    expect(rational(-4n, 6n)).toEqual({ num: -2n, den: 3n });
    expect(rational(0n, 5n)).toEqual({ num: 0n, den: 1n });
  });

  it("refuses a zero denominator", () => {
    expect(() => rational(1n, 0n)).toThrow("rational with a zero denominator");
  });

  it.each([
    ["3/2", rational(3n, 2n), 1n, 2n],
    ["-3/2", rational(-3n, 2n), -2n, -1n],
    ["-4/2", rational(-4n, 2n), -2n, -2n],
    ["4/2", rational(4n, 2n), 2n, 2n],
    ["0", rational(0n), 0n, 0n],
  ])("%s: floor %s, ceiling %s", (_text, r, floor, ceil) => {
    expect(floorRational(r)).toBe(floor);
    expect(ceilRational(r)).toBe(ceil);
  });

  it("compares by cross-multiplication", () => {
    expect(compareRational(rational(1n, 3n), rational(333n, 1000n))).toBe(1);
    expect(compareRational(rational(-1n, 2n), rational(1n, 2n))).toBe(-1);
    expect(compareRational(rational(2n, 4n), rational(1n, 2n))).toBe(0);
  });
});

describe("quantities", () => {
  it("reads a fraction without a whole part and a whole part without a fraction", () => {
    expect(parseQuantity(".5")).toBe(0.5);
    expect(parseQuantity("5.")).toBe(5);
    expect(parseQuantity("-.25")).toBe(-0.25);
  });

  it("quantityValue names a text validation should have refused", () => {
    expect(() => quantityValue("abc")).toThrow('quantity "abc" was not validated');
  });

  it("formats three decimals at most, never -0, and refuses what is not finite", () => {
    expect(formatQuantity(-0.0001)).toBe("0");
    expect(formatQuantity(12.3456)).toBe("12.346");
    expect(() => formatQuantity(Number.NaN)).toThrow("cannot format NaN as a quantity");
  });
});
