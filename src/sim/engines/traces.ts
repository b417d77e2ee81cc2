/** Reads a request trace file for the engine simulator, in any format `trace-formats.ts` recognises. */
import { readFile } from "node:fs/promises";
import { parseTrace } from "./trace-formats.js";
import type { TraceRow } from "./workload.js";

export async function loadTraceRows(path: string): Promise<TraceRow[]> {
  return parseTrace(await readFile(path), path).rows;
}
