/**
 * RFC 3339 times in status: the one parser and formatter of `src/core`
 * (stabilization history, predictor state, commits, cohorts, cooldowns).
 * History holds up to 256 stamps per role, read and written on every pass, so
 * the canonical form (`toISOString`, which is what the core writes) is parsed
 * by hand; anything else goes through `Date.parse`.
 */

const zero = 48;

function digits(text: string, from: number, count: number): number {
  let value = 0;
  for (let i = from; i < from + count; i++) {
    const d = text.charCodeAt(i) - zero;
    if (d < 0 || d > 9) return Number.NaN;
    value = value * 10 + d;
  }
  return value;
}

/** Milliseconds since the epoch, or undefined when the text is not a time. */
export function parseTimestampMs(text: string): number | undefined {
  // 2026-11-29T12:00:00.000Z (24) or 2026-11-29T12:00:00Z (20)
  const canonical =
    (text.length === 24 && text[19] === "." && text[23] === "Z") || (text.length === 20 && text[19] === "Z");
  if (canonical && text[4] === "-" && text[7] === "-" && text[10] === "T" && text[13] === ":" && text[16] === ":") {
    const ms = Date.UTC(
      digits(text, 0, 4),
      digits(text, 5, 2) - 1,
      digits(text, 8, 2),
      digits(text, 11, 2),
      digits(text, 14, 2),
      digits(text, 17, 2),
      text.length === 24 ? digits(text, 20, 3) : 0,
    );
    if (Number.isFinite(ms)) return ms;
  }
  const ms = Date.parse(text);
  return Number.isFinite(ms) ? ms : undefined;
}

/** An optional field's time; undefined when absent or not a time. */
export function parseOptionalTimestampMs(text: string | undefined): number | undefined {
  return text === undefined ? undefined : parseTimestampMs(text);
}

/** RFC 3339 with milliseconds, in UTC. */
export function formatTimestamp(unixMs: number): string {
  return new Date(unixMs).toISOString();
}
