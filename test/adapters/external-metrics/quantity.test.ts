import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { parseQuantity } from "../../../src/core/api/quantity.js";
import { formatKubeQuantity } from "../../../src/adapters/external-metrics/quantity.js";

describe("Kubernetes quantity format", () => {
  it.each([
    [0, "0"],
    [3, "3"],
    [2.5, "2500m"],
    [0.001, "1m"],
    [0.0004, "0"],
    [0.0006, "1m"],
    [1234.5678, "1234568m"],
    [3000, "3k"],
    [1_500_000, "1500k"],
    [2_000_000, "2M"],
    [-1.5, "-1500m"],
    [-4000, "-4k"],
  ])("%d is %s", (value, text) => {
    expect(formatKubeQuantity(value)).toBe(text);
  });

  it("names the value it cannot format", () => {
    expect(() => formatKubeQuantity(Number.NaN)).toThrow(/NaN is not a finite number/);
    expect(() => formatKubeQuantity(Infinity)).toThrow(/Infinity/);
  });

  it("reads back as the value rounded to a thousandth", () => {
    fc.assert(
      fc.property(fc.double({ min: -1e9, max: 1e9, noNaN: true }), (value) => {
        const text = formatKubeQuantity(value);
        expect(text).toMatch(/^-?\d+(m|k|M|G)?$/);
        expect(parseQuantity(text)).toBeCloseTo(Math.round(value * 1000) / 1000, 3);
      }),
    );
  });
});
