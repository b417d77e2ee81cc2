/** The oracle bound on the bench's overlaid slices (tens of replicas); see oracle.test.ts. */
import { describe, it } from "vitest";
import { benchScaleCopies } from "../../../src/sim/quality/matrix.js";
import { benchMatrix, expectOracleHolds } from "./fixtures.js";

describe("oracle on the bench's overlaid slices", () => {
  it.each(Object.entries(benchScaleCopies))(
    "no policy reaches 99 percent attainment with fewer GPU-hours than the oracle on %s × %i",
    (name, copies) => expectOracleHolds(benchMatrix(name, copies)),
    3_600_000,
  );
});
