/** The shared traces beside the project, and slices of them for short runs. */
import { existsSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { expect } from "vitest";
import { rowsBeatingOracle, runMatrix, type MatrixResult } from "../../../src/sim/quality/matrix.js";
import { loadTrace, overlay, type Trace } from "../../../src/sim/quality/traces.js";
import { splitTraining } from "../../../src/sim/quality/user-figures.js";

export const tracesDir = fileURLToPath(new URL("../../../../shared/traces", import.meta.url));

/** The first `seconds` of a named trace (the whole trace when it is shorter). */
export function slice(name: string, seconds: number): Trace {
  expect(existsSync(tracesDir), `${tracesDir} is missing: the traces live in ../shared/traces`).toBe(true);
  const trace = loadTrace(name, { tracesDir });
  if (trace.spanSeconds <= seconds) return trace;
  return { ...trace, requests: trace.requests.filter((r) => r.arrivalSeconds < seconds), spanSeconds: seconds };
}

/** The bench's matrix of one trace at one scale (seed 1, quick matrix): the replay after the training slice. */
export function benchMatrix(name: string, copies: number): MatrixResult {
  expect(existsSync(tracesDir), `${tracesDir} is missing: the traces live in ../shared/traces`).toBe(true);
  const { training, evaluated } = splitTraining(overlay(loadTrace(name, { tracesDir, seed: 1 }), copies, 1));
  return runMatrix(evaluated, { seed: 1, sweepPoints: 3, training });
}

export function expectOracleHolds(matrix: MatrixResult): void {
  expect(matrix.oracle.attainment.both).toBeGreaterThanOrEqual(0.99);
  expect(matrix.rows.filter((r) => r.attainment.both >= 0.99).length).toBeGreaterThan(1);
  const beating = rowsBeatingOracle(matrix).map((r) => `${r.policy}: ${r.gpuHours} GPU-h at ${r.attainment.both}`);
  expect(beating, `oracle ${matrix.oracle.policy}: ${matrix.oracle.gpuHours} GPU-h`).toEqual([]);
}
