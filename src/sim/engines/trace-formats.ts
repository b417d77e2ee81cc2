/**
 * The request-trace file formats `simulate --trace` and `calibrate --trace` read, recognised by the
 * CSV header or by the first JSONL record's fields, never by the file name. Every row becomes a
 * request or the file is refused with its line, field and value: no row is skipped. Times are rebased
 * so the earliest request arrives at 0, and rows come back in arrival order (a stable sort).
 *
 * The formats are those of the public traces LLM-serving work replays (research/traces.md), plus one
 * of the project's own that any trace converts to with one line of awk or pandas.
 */
import type { TraceRow } from "./workload.js";

export type TraceFormatName =
  "azure" | "azure-multimodal" | "burstgpt" | "splitwise" | "plain" | "mooncake" | "qwen-bailian";

export interface ParsedTrace {
  readonly format: TraceFormatName;
  readonly rows: TraceRow[];
  /** Whole-second or coarser timestamps: the replay spreads requests sharing one within its step. */
  readonly quantised: boolean;
  /** How the rows were read, for reports. */
  readonly notes: string[];
}

/** A CSV format: the columns its header names, and how one row's cells become a request. */
interface CsvFormat {
  readonly name: TraceFormatName;
  readonly label: string;
  /** The header names read; the header must hold each (other columns are ignored). */
  readonly columns: readonly [time: string, prompt: string, output: string];
  /** The header must be exactly these columns, in this order (the Azure files). */
  readonly exactHeader?: readonly string[];
  /** The cell's time in `perSecond`ths of a second. */
  readonly time: (cell: string) => number | undefined;
  readonly perSecond: number;
  readonly timeHelp: string;
  readonly quantised: boolean;
}

/** `YYYY-MM-DD HH:MM:SS[.f…][zone]` in milliseconds; no zone is read as UTC (Azure 2023 writes none, 2024 `+00:00`). */
function azureTimestampMs(cell: string): number | undefined {
  const m = /^(\d{4}-\d{2}-\d{2})[ T](\d{2}:\d{2}:\d{2})(?:\.(\d+))?(Z|[+-]\d{2}:?\d{2})?$/.exec(cell);
  if (!m) return undefined;
  const ms = Date.parse(`${m[1]}T${m[2]}.${(m[3] ?? "0").padEnd(3, "0").slice(0, 3)}${m[4] ?? "Z"}`);
  return Number.isFinite(ms) ? ms : undefined;
}

function plainSeconds(cell: string): number | undefined {
  if (cell === "") return undefined;
  const v = Number(cell);
  return Number.isFinite(v) ? v : undefined;
}

const csvFormats: readonly CsvFormat[] = [
  {
    name: "azure",
    label: "Azure LLM inference 2023/2024",
    columns: ["TIMESTAMP", "ContextTokens", "GeneratedTokens"],
    exactHeader: ["TIMESTAMP", "ContextTokens", "GeneratedTokens"],
    time: azureTimestampMs,
    perSecond: 1000,
    timeHelp: "a time such as 2023-11-16 18:15:46.6805900 or 2024-05-10 00:00:00.009930+00:00",
    quantised: false,
  },
  {
    name: "azure-multimodal",
    label: "Azure multimodal inference 2025",
    columns: ["TIMESTAMP", "ContextTokens", "GeneratedTokens"],
    exactHeader: ["TIMESTAMP", "NumImages", "ContextTokens", "GeneratedTokens"],
    time: azureTimestampMs,
    perSecond: 1000,
    timeHelp: "a time such as 2024-10-15 00:00:00.009930+00:00",
    quantised: false,
  },
  {
    // BurstGPT files 1 and 2 have 6 columns, file 3 adds `Session ID` and `Elapsed time`.
    name: "burstgpt",
    label: "BurstGPT",
    columns: ["Timestamp", "Request tokens", "Response tokens"],
    time: plainSeconds,
    perSecond: 1,
    timeHelp: "seconds",
    quantised: true,
  },
  {
    name: "splitwise",
    label: "Splitwise as processed by Vidur",
    columns: ["arrived_at", "num_prefill_tokens", "num_decode_tokens"],
    time: plainSeconds,
    perSecond: 1,
    timeHelp: "seconds",
    quantised: false,
  },
  {
    name: "plain",
    label: "plain",
    columns: ["arrival_seconds", "prompt_tokens", "output_tokens"],
    time: plainSeconds,
    perSecond: 1,
    timeHelp: "seconds",
    quantised: false,
  },
];

/** The formats a file may be in, for error messages and `--help`. */
export const traceFormatsHelp = [
  ...csvFormats.map((f) => `${f.label} CSV (${(f.exactHeader ?? f.columns).join(",")})`),
  "Mooncake JSONL (timestamp ms, input_length, output_length, hash_ids of 512 tokens)",
  "Qwen Bailian JSONL (chat_id, timestamp s, input_length, output_length, hash_ids of 16 tokens)",
].join("; ");

/** Splits one CSV line; a quoted cell may hold commas and doubled quotes. */
function splitCsvLine(line: string): string[] {
  if (!line.includes('"')) return line.split(",").map((c) => c.trim());
  const cells: string[] = [];
  let cell = "";
  let quoted = false;
  for (let i = 0; i < line.length; i++) {
    const ch = line[i];
    if (quoted) {
      if (ch === '"' && line[i + 1] === '"') {
        cell += '"';
        i++;
      } else if (ch === '"') quoted = false;
      else cell += ch;
    } else if (ch === '"') quoted = true;
    else if (ch === ",") {
      cells.push(cell.trim());
      cell = "";
    } else cell += ch;
  }
  cells.push(cell.trim());
  return cells;
}

function tokenCount(cell: string | undefined, where: string, field: string): number {
  const v = cell === undefined || cell === "" ? Number.NaN : Number(cell);
  if (!Number.isFinite(v) || v < 0 || !Number.isInteger(v))
    throw new Error(`${where}: ${field} must be a whole number of tokens, got ${JSON.stringify(cell ?? "")}`);
  return v;
}

/**
 * A row as read, before rebasing: `offsetSeconds` holds the time in the file's own unit until
 * `rebaseInOrder` turns it into seconds from the earliest request. Rows are rewritten in place: a week of
 * Azure 2024 is 17 M of them, and a copy of each cost about a gigabyte.
 */
type ReadRow = { -readonly [K in keyof TraceRow]: TraceRow[K] };

/** Offsets from the earliest request, in arrival order; subtracting before dividing keeps a file's own precision. */
function rebaseInOrder(rows: ReadRow[], perSecond: number): TraceRow[] {
  let origin = Number.POSITIVE_INFINITY;
  for (const r of rows) origin = Math.min(origin, r.offsetSeconds);
  for (const r of rows) r.offsetSeconds = (r.offsetSeconds - origin) / perSecond;
  return rows.sort((a, b) => a.offsetSeconds - b.offsetSeconds);
}

/** A line that is not blank, numbered from 1 as an editor numbers it. */
interface NumberedLine {
  readonly text: string;
  readonly number: number;
}

/**
 * The lines of a file that are not blank, read from its bytes (text is encoded first, so both take one
 * path): each line is decoded alone, since a week of Azure 2024 (about 700 MB) is longer than the longest
 * string V8 can hold.
 */
function* nonBlankLines(source: string | Uint8Array): Generator<NumberedLine> {
  const bytes =
    typeof source === "string"
      ? Buffer.from(source, "utf8")
      : Buffer.from(source.buffer, source.byteOffset, source.byteLength);
  let number = 0;
  for (let start = 0; start < bytes.length;) {
    const newline = bytes.indexOf(10, start);
    const end = newline < 0 ? bytes.length : newline;
    number++;
    const text = bytes.toString("utf8", start, end > start && bytes[end - 1] === 13 ? end - 1 : end);
    if (text.trim() !== "") yield { text, number };
    start = end + 1;
  }
}

function parseCsv(first: NumberedLine, rest: Iterable<NumberedLine>, path: string): ParsedTrace {
  const header = splitCsvLine(first.text.replace(/^\uFEFF/, ""));
  const format = csvFormats.find((f) =>
    f.exactHeader
      ? f.exactHeader.length === header.length && f.exactHeader.every((c, i) => header[i] === c)
      : f.columns.every((c) => header.includes(c)),
  );
  if (!format)
    throw new Error(
      `${path}: line ${first.number}: the header ${JSON.stringify(header.join(","))} is no trace format read here: ${traceFormatsHelp}`,
    );
  const [timeCol, promptCol, outputCol] = format.columns.map((c) => header.indexOf(c)) as [number, number, number];
  const rows: ReadRow[] = [];
  for (const { text: line, number } of rest) {
    const where = `${path}: line ${number}`;
    const cells = splitCsvLine(line);
    if (cells.length !== header.length)
      throw new Error(`${where}: ${cells.length} cells where the header has ${header.length}: ${JSON.stringify(line)}`);
    const timeCell = cells[timeCol] as string;
    const at = format.time(timeCell);
    if (at === undefined)
      throw new Error(`${where}: ${format.columns[0]} must be ${format.timeHelp}, got ${JSON.stringify(timeCell)}`);
    rows.push({
      offsetSeconds: at,
      promptTokens: tokenCount(cells[promptCol], where, format.columns[1]),
      outputTokens: tokenCount(cells[outputCol], where, format.columns[2]),
    });
  }
  const notes = [`read as ${format.label} CSV`];
  if (format.name === "azure-multimodal") notes.push("NumImages not modelled: ContextTokens is the prompt");
  if (format.name === "burstgpt") {
    const failed = rows.filter((r) => r.outputTokens === 0).length;
    if (failed > 0)
      notes.push(`${failed} rows with 0 response tokens (failed requests) replayed as 1 output token each`);
  }
  return { format: format.name, rows: rebaseInOrder(rows, format.perSecond), quantised: format.quantised, notes };
}

/** A JSONL format: one request object per line, told apart by the first object's fields. */
interface JsonlFormat {
  readonly name: "mooncake" | "qwen-bailian";
  readonly label: string;
  /** `timestamp` units to a second. */
  readonly perSecond: number;
  readonly blockTokens: number;
  readonly quantised: boolean;
}

/** Mooncake's or, when the first request names its `chat_id`, Qwen Bailian's. */
function jsonlFormatOf(first: Record<string, unknown>, path: string): JsonlFormat {
  if ("chat_id" in first) {
    // Bailian's files name their block size (`qwen_traceA_blksz_16.jsonl`); its loaders default to 16.
    const blockTokens = Number(/blksz_(\d+)/.exec(path)?.[1] ?? 16);
    return {
      name: "qwen-bailian",
      label: `Qwen Bailian JSONL (prefix blocks of ${blockTokens} tokens)`,
      perSecond: 1,
      blockTokens,
      quantised: false,
    };
  }
  // Mooncake's published timestamps are milliseconds, in steps of about 3 s (research/traces.md).
  return { name: "mooncake", label: "Mooncake JSONL", perSecond: 1000, blockTokens: 512, quantised: true };
}

function jsonObject(line: NumberedLine, path: string): Record<string, unknown> {
  let record: unknown;
  try {
    record = JSON.parse(line.text);
  } catch (error) {
    throw new Error(
      `${path}: line ${line.number}: not JSON: ${error instanceof Error ? error.message : String(error)}`,
    );
  }
  if (typeof record !== "object" || record === null || Array.isArray(record))
    throw new Error(`${path}: line ${line.number}: a request must be a JSON object, got ${line.text.slice(0, 80)}`);
  return record as Record<string, unknown>;
}

function parseJsonl(first: NumberedLine, rest: Iterable<NumberedLine>, path: string): ParsedTrace {
  const firstRecord = jsonObject(first, path);
  const format = jsonlFormatOf(firstRecord, path);
  const rows: ReadRow[] = [];
  const read = (r: Record<string, unknown>, lineNumber: number): void => {
    const where = `${path}: line ${lineNumber}`;
    const number = (field: string): number => {
      const v = r[field];
      if (typeof v !== "number" || !Number.isFinite(v) || v < 0)
        throw new Error(`${where}: ${field} must be a non-negative number, got ${JSON.stringify(v)}`);
      return v;
    };
    const tokens = (field: string): number => {
      const v = number(field);
      if (!Number.isInteger(v)) throw new Error(`${where}: ${field} must be a whole number of tokens, got ${v}`);
      return v;
    };
    const hashIds = r["hash_ids"];
    if (hashIds !== undefined && !(Array.isArray(hashIds) && hashIds.every((h) => Number.isInteger(h))))
      throw new Error(`${where}: hash_ids must be a list of integers, got ${JSON.stringify(hashIds).slice(0, 80)}`);
    rows.push({
      offsetSeconds: number("timestamp"),
      promptTokens: tokens("input_length"),
      outputTokens: tokens("output_length"),
      ...(hashIds === undefined ? {} : { prefixBlocks: hashIds as number[], blockTokens: format.blockTokens }),
    });
  };
  read(firstRecord, first.number);
  for (const line of rest) read(jsonObject(line, path), line.number);
  return {
    format: format.name,
    rows: rebaseInOrder(rows, format.perSecond),
    quantised: format.quantised,
    notes: [`read as ${format.label}`],
  };
}

/**
 * Reads a trace file, as text or as its bytes: CSV when its first non-blank line has no `{`, JSONL
 * otherwise. `path` only names the file in errors (and Bailian's block size).
 */
export function parseTrace(source: string | Uint8Array, path: string): ParsedTrace {
  const lines = nonBlankLines(source);
  const first = lines.next();
  if (first.done === true) throw new Error(`${path}: no requests in the trace: the file is empty`);
  // The generator goes on from the line after the first.
  const parsed = first.value.text.trimStart().startsWith("{")
    ? parseJsonl(first.value, lines, path)
    : parseCsv(first.value, lines, path);
  if (parsed.rows.length === 0) throw new Error(`${path}: no requests in the trace`);
  return parsed;
}
