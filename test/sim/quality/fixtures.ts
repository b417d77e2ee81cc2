/** The shared traces beside the project, and slices of them for short runs. */
import { existsSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { expect } from "vitest";
import { loadTrace, type Trace } from "../../../src/sim/quality/traces.js";

export const tracesDir = fileURLToPath(new URL("../../../../shared/traces", import.meta.url));

/** The first `seconds` of a named trace (the whole trace when it is shorter). */
export function slice(name: string, seconds: number): Trace {
  expect(existsSync(tracesDir), `${tracesDir} is missing: the traces live in ../shared/traces`).toBe(true);
  const trace = loadTrace(name, { tracesDir });
  if (trace.spanSeconds <= seconds) return trace;
  return { ...trace, requests: trace.requests.filter((r) => r.arrivalSeconds < seconds), spanSeconds: seconds };
}
