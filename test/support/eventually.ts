/**
 * Polls until `check` returns a value (not undefined) or the deadline passes. The error names what was
 * awaited, the last error `check` threw, and `context()` when given (for example the output of the
 * processes a test started), so a timeout says why without a re-run.
 */
export async function eventually<T>(
  what: string,
  check: () => Promise<T | undefined>,
  timeoutMs: number,
  intervalMs = 250,
  context?: () => string,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  for (;;) {
    try {
      const value = await check();
      if (value !== undefined) return value;
    } catch (error) {
      last = error;
    }
    if (Date.now() > deadline)
      throw new Error(
        `timed out after ${timeoutMs} ms waiting for ${what}${last !== undefined ? `; last error: ${String(last)}` : ""}${context === undefined ? "" : `\n${context()}`}`,
      );
    await new Promise((resolve) => setTimeout(resolve, intervalMs));
  }
}
