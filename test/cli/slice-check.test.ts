/**
 * The slice check's figures (src/cli/calibrate/slice-check.ts): each a tenth below the one before,
 * rounded down to three significant figures as calibrate's figures are, four below calibrate's.
 */
import { describe, expect, it } from "vitest";
import { sliceCheckFigures } from "../../src/cli/calibrate/slice-check.js";

describe("sliceCheckFigures", () => {
  it("tries calibrate's figure, then four figures each a tenth lower, rounded down", () => {
    expect(sliceCheckFigures(5350)).toEqual([5350, 4810, 4320, 3880, 3490]);
    expect(sliceCheckFigures(4150)).toEqual([4150, 3730, 3350, 3010, 2700]);
  });
});
