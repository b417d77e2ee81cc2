/**
 * Parses a Prometheus API answer from the chunks it arrived in, without ever
 * holding the whole answer as one buffer or one string. An answer of a pass at
 * 100 deployments is megabytes: a buffer or string that large is allocated
 * outside V8's young generation, in fresh memory, and filling it cost the
 * controller more than parsing it (docs/prometheus-signals.md, Cost).
 *
 * A series of a compact Prometheus answer starts with `{"metric":{`, a text no
 * label value can hold (its quotes would be escaped), so the bytes between two
 * series starts are whole series: each run of about `pieceBytes` is parsed on
 * its own, and the rest, the envelope around the last run, as the document it
 * is. Anything else (another layout, a body that is not JSON) is parsed whole,
 * as one text, with the outcome of a plain parse: the object, or the text when
 * it is not JSON.
 */

const seriesStart = Buffer.from('{"metric":{');
const comma = 0x2c;
/** Small enough that each piece's text stays in V8's young generation. */
const pieceBytes = 64 * 1024;
/**
 * Past this many bytes without a series start (or with only one), the answer is
 * not in the compact layout: it is parsed whole at the end. Without the bound
 * the pending bytes were copied again at every chunk, quadratic in the answer.
 */
const layoutBytes = 1024 * 1024;

/** Reads the chunks of one answer as they arrive; `end()` returns the parsed body. */
export class AnswerBody {
  private readonly chunks: Buffer[] = [];
  /** The bytes before the first series, once seen. */
  private head?: Buffer;
  /** The chunks after the last parsed series (the first starting at a series start once `head` is set). */
  private pending: Buffer[] = [];
  private pendingBytes = 0;
  private readonly series: unknown[] = [];
  /** Set when the pieces could not be read: the whole answer is parsed at the end. */
  private whole = false;
  private largestRun = 0;

  push(chunk: Buffer): void {
    this.chunks.push(chunk);
    if (this.whole) return;
    this.pending.push(chunk);
    this.pendingBytes += chunk.length;
    if (this.head !== undefined && this.pendingBytes < pieceBytes) return;
    if (this.head !== undefined && this.pending.length > 1 && this.parseAcross(chunk)) return;
    let bytes = this.pending.length === 1 ? chunk : Buffer.concat(this.pending, this.pendingBytes);
    if (this.head === undefined) {
      const first = bytes.indexOf(seriesStart);
      if (first < 0) return bytes.length > layoutBytes ? this.giveUp() : this.keep(bytes);
      this.head = Buffer.from(bytes.subarray(0, first));
      bytes = bytes.subarray(first);
    }
    // Runs of about `pieceBytes` each, cut at the first series start past that size: a chunk of several
    // runs (the client inflates in 256 kB pieces) is parsed run by run, never as one large text.
    this.parseRuns(bytes, 0);
  }

  /**
   * The run that starts in the bytes kept from before and ends in `chunk`, copied into one buffer with
   * that part of the chunk alone (a 256 kB chunk behind a kept tail was copied whole at every chunk);
   * then the chunk's own runs. False, with nothing read, where the run does not end in this chunk.
   */
  private parseAcross(chunk: Buffer): boolean {
    const kept = this.pendingBytes - chunk.length;
    // The run counts the kept bytes toward its size; from 1, so the comma before the cut is in this chunk.
    const cut = chunk.indexOf(seriesStart, Math.max(1, pieceBytes - kept));
    if (cut < 0) return false;
    if (chunk[cut - 1] !== comma) {
      this.giveUp();
      return true;
    }
    // One buffer of the run alone, decoded whole: a character may be split between the two.
    const run = Buffer.concat([...this.pending.slice(0, -1), chunk.subarray(0, cut - 1)], kept + cut - 1);
    const piece = parseOrUndefined(`[${run.toString("utf8")}]`);
    if (!Array.isArray(piece)) {
      this.giveUp();
      return true;
    }
    for (const s of piece) this.series.push(s);
    this.largestRun = Math.max(this.largestRun, kept + cut - 1);
    this.parseRuns(chunk.subarray(cut), 0);
    return true;
  }

  /** Runs of about `pieceBytes` from `start`, each cut at the first series start past that size; the rest kept. */
  private parseRuns(bytes: Buffer, start: number): void {
    while (bytes.length - start >= pieceBytes) {
      const cut = bytes.indexOf(seriesStart, start + pieceBytes);
      if (cut < 0) break;
      if (bytes[cut - 1] !== comma) return this.giveUp();
      const piece = parseOrUndefined(`[${bytes.toString("utf8", start, cut - 1)}]`);
      if (!Array.isArray(piece)) return this.giveUp();
      for (const s of piece) this.series.push(s);
      this.largestRun = Math.max(this.largestRun, cut - 1 - start);
      start = cut;
    }
    if (bytes.length - start > layoutBytes) return this.giveUp();
    this.keep(start === 0 ? bytes : bytes.subarray(start));
  }

  /** The most bytes parsed as one run so far: about `pieceBytes` and one series (for the tests). */
  get largestRunBytes(): number {
    return this.largestRun;
  }

  /** The answer as a plain parse reads it: the object, or the text when it is not JSON. */
  end(): unknown {
    if (!this.whole && this.head !== undefined) {
      const rest = Buffer.concat(this.pending, this.pendingBytes);
      const envelope = parseOrUndefined(this.head.toString("utf8") + rest.toString("utf8"));
      const data = (envelope as { data?: { result?: unknown } } | undefined)?.data;
      if (data !== undefined && data !== null && Array.isArray(data.result)) {
        if (this.series.length > 0) data.result = this.series.concat(data.result as unknown[]);
        return envelope;
      }
    }
    const text = stripBom(Buffer.concat(this.chunks).toString("utf8"));
    return parseOrUndefined(text) ?? text;
  }

  private keep(bytes: Buffer): void {
    this.pending = [bytes];
    this.pendingBytes = bytes.length;
  }

  private giveUp(): void {
    this.whole = true;
    this.pending = [];
    this.series.length = 0;
  }
}

function parseOrUndefined(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return undefined;
  }
}

function stripBom(text: string): string {
  return text.charCodeAt(0) === 0xfeff ? text.slice(1) : text;
}
