/** The oracle is a lower bound in the benchmark: no policy reaches 99 % with fewer GPU-hours. */
import { describe, expect, it } from "vitest";
import { attainmentGoal, runMatrix } from "../../../src/sim/quality/matrix.js";
import { slice } from "./fixtures.js";

describe("oracle", () => {
  it.each([
    ["azure-conv", 1200],
    ["azure-code", 1200],
  ] as const)(
    "no policy beats the oracle at 99%% attainment on %s",
    (name, seconds) => {
      const matrix = runMatrix(slice(name, seconds), { seed: 1 });
      expect(matrix.oracle.attainment.both).toBeGreaterThanOrEqual(attainmentGoal);
      const reaching = matrix.rows.filter((r) => r.attainment.both >= attainmentGoal);
      expect(reaching.length).toBeGreaterThan(1);
      for (const row of reaching) expect(row.gpuHours, row.policy).toBeGreaterThanOrEqual(matrix.oracle.gpuHours);
    },
    120_000,
  );
});
