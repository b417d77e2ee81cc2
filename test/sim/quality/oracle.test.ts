/**
 * The oracle is the lower bound of the benchmark: on every slice
 * `npm run bench:quality` runs (each trace at native rate and overlaid), no
 * policy of the comparison reaches 99 % attainment with fewer GPU-hours. The
 * overlaid slices are in oracle-scaled.test.ts so the two files run side by side.
 */
import { describe, it } from "vitest";
import { benchScaleCopies } from "../../../src/sim/quality/matrix.js";
import { benchMatrix, expectOracleHolds } from "./fixtures.js";

describe("oracle on the bench's native-rate slices", () => {
  it.each(Object.keys(benchScaleCopies))(
    "no policy reaches 99 percent attainment with fewer GPU-hours than the oracle on %s",
    (name) => expectOracleHolds(benchMatrix(name, 1)),
    1_800_000,
  );
});
