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

/** `--windows STABLE/PANIC`: TokenThroughput's averaging windows in whole seconds, or an error naming the flag and the value. */
export function averagingWindowsOf(text: string): { readonly stable: number; readonly panic: number } {
  const [stable, panic, ...rest] = text.split("/").map(Number);
  if (
    stable === undefined ||
    panic === undefined ||
    rest.length > 0 ||
    !Number.isInteger(stable) ||
    !Number.isInteger(panic)
  )
    throw new Error(`--windows: ${JSON.stringify(text)} is not STABLE/PANIC in whole seconds (e.g. 30/15)`);
  return { stable, panic };
}

/** A flag's or a field's text as a positive number, or an error naming `what` and the text (flags `parseArgs` read). */
export function positiveNumberOf(what: string, text: string | undefined): number {
  const v = Number(text);
  if (text === undefined || !(Number.isFinite(v) && v > 0))
    throw new Error(`${what}: ${JSON.stringify(text)} is not a positive number`);
  return v;
}
