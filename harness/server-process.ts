/**
 * What every server the tests spawn needs from its child process: the tail of its stderr, to
 * say why it did not start, and a wait, with a deadline, until an HTTP endpoint answers.
 */
import type { ChildProcess } from "node:child_process";

/** Keeps the last 4,000 characters of `child`'s stderr (spawned with stderr piped); read with the returned function. */
export function stderrTailOf(child: ChildProcess): () => string {
  let tail = "";
  child.stderr?.setEncoding("utf8");
  child.stderr?.on("data", (chunk: string) => {
    tail = (tail + chunk).slice(-4000);
  });
  return () => tail;
}

/** True once `readyUrl` answers 2xx within `timeoutMs`; false when the deadline passes or the process exits first. */
export async function waitUntilReady(child: ChildProcess, readyUrl: string, timeoutMs: number): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (child.exitCode !== null) return false;
    try {
      const res = await fetch(readyUrl, { signal: AbortSignal.timeout(1000) });
      if (res.ok) return true;
    } catch {
      // not listening yet
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  return false;
}
