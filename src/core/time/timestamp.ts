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

/** The canonical shape: 2026-11-29T12:00:00.000Z (24 characters) or 2026-11-29T12:00:00Z (20). */
function isCanonical(text: string): boolean {
  const ends = (text.length === 24 && text[19] === "." && text[23] === "Z") || (text.length === 20 && text[19] === "Z");
  return ends && text[4] === "-" && text[7] === "-" && text[10] === "T" && text[13] === ":" && text[16] === ":";
}

function within(value: number, min: number, max: number): boolean {
  return value >= min && value <= max;
}

/**
 * The canonical form read by hand, NaN when a field is not a digit or out of
 * range. The ranges are RFC 3339's (hour 0 to 23, so no "24:00:00" that
 * `Date.parse` would take; no leap second); a day past the month's end rolls
 * over into the next month, as `Date.parse` does.
 */
function canonicalMs(text: string): number {
  const month = digits(text, 5, 2);
  const day = digits(text, 8, 2);
  const hour = digits(text, 11, 2);
  const minute = digits(text, 14, 2);
  const second = digits(text, 17, 2);
  const valid =
    within(month, 1, 12) && within(day, 1, 31) && within(hour, 0, 23) && within(minute, 0, 59) && within(second, 0, 59);
  if (!valid) return Number.NaN;
  const milliseconds = text.length === 24 ? digits(text, 20, 3) : 0;
  return Date.UTC(digits(text, 0, 4), month - 1, day, hour, minute, second, milliseconds);
}

/** Milliseconds since the epoch, or undefined when the text is not a time. */
export function parseTimestampMs(text: string): number | undefined {
  const ms = isCanonical(text) ? canonicalMs(text) : Date.parse(text);
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
