/** Reads a request trace file for the engine simulator, in any format `trace-formats.ts` recognises. */
import { readFile } from "node:fs/promises";
import { parseTraceText } from "./trace-formats.js";
import type { TraceRow } from "./workload.js";

export async function loadTraceRows(path: string): Promise<TraceRow[]> {
  return parseTraceText(await readFile(path), path).rows;
}
