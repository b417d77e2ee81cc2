/**
 * The benchmarks' numeric flags, `--name value` in `process.argv`: the fallback
 * when absent, an error naming the flag and the value when it is not what the
 * flag takes.
 */

function numberFlag(name: string, fallback: number, accepts: (v: number) => boolean, what: string): number {
  const i = process.argv.indexOf(`--${name}`);
  if (i < 0) return fallback;
  const raw = process.argv[i + 1];
  const v = Number(raw);
  if (raw === undefined || !accepts(v)) throw new Error(`--${name}: ${JSON.stringify(raw)} is not ${what}`);
  return v;
}

/** A positive number (windows, intervals, timeouts in seconds). */
export function positiveNumberFlag(name: string, fallback: number): number {
  return numberFlag(name, fallback, (v) => Number.isFinite(v) && v > 0, "a positive number");
}

/** A positive whole number (sizes, passes, runs). */
export function wholeFlag(name: string, fallback: number): number {
  return numberFlag(name, fallback, (v) => Number.isInteger(v) && v > 0, "a positive whole number");
}
