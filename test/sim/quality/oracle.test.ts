/** The oracle is a lower bound in the benchmark: no policy reaches 99 % with fewer GPU-hours. */
import { describe, expect, it } from "vitest";
import { attainmentGoal, runMatrix } from "../../../src/sim/quality/matrix.js";
import { slice } from "./fixtures.js";

describe("oracle", () => {
  // Whole traces: on short slices with one or two replicas the oracle's 60 s grain can lose
  // by a fraction of a replica-minute to a policy that spends the 1 % slack at a finer grain
  // (docs/quality.md, Amendments).
  it.each(["azure-conv", "azure-code"])(
    "no policy beats the oracle at 99%% attainment on %s",
    (name) => {
      const matrix = runMatrix(slice(name, Infinity), { seed: 1 });
      expect(matrix.oracle.attainment.both).toBeGreaterThanOrEqual(attainmentGoal);
      const reaching = matrix.rows.filter((r) => r.attainment.both >= attainmentGoal);
      expect(reaching.length).toBeGreaterThan(1);
      for (const row of reaching) expect(row.gpuHours, row.policy).toBeGreaterThanOrEqual(matrix.oracle.gpuHours);
    },
    900_000,
  );
});
