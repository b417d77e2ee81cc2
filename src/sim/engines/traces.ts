/** Reads the public request traces shipped beside the project (../shared/traces). */
import { readFile } from "node:fs/promises";
import { parseAzureTrace, parseMooncakeTrace, type TraceRow } from "./workload.js";

export async function loadAzureTrace(path: string): Promise<TraceRow[]> {
  try {
    return parseAzureTrace(await readFile(path, "utf8"));
  } catch (err) {
    throw new Error(`reading Azure trace ${path}`, { cause: err });
  }
}

export async function loadMooncakeTrace(path: string): Promise<TraceRow[]> {
  try {
    return parseMooncakeTrace(await readFile(path, "utf8"));
  } catch (err) {
    throw new Error(`reading Mooncake trace ${path}`, { cause: err });
  }
}
