import { describe, expect, it } from "vitest";
import { figureForSwing } from "../../../src/core/calibrate/swing-headroom.js";

describe("figureForSwing", () => {
  it("lowers a figure without room for the swing to the capacity ÷ the swing, three figures rounded down", () => {
    // 6990 ÷ 1.65 = 4236.4
    expect(figureForSwing(6550, 6990, 1.65)).toBe(4230);
  });

  it("keeps a figure that already has room, and a swing of 1 keeps any figure below capacity", () => {
    expect(figureForSwing(5190, 9000, 1.65)).toBe(5190);
    expect(figureForSwing(5190, 6990, 1)).toBe(5190);
  });

  it("never raises a figure, even at a capacity far above it", () => {
    expect(figureForSwing(100, 1_000_000, 2)).toBe(100);
  });
});
