/**
 * What every server the tests spawn needs from its child process: the tail of its stderr, to
 * say why it did not start, a wait, with a deadline, until an HTTP endpoint answers, and a
 * watchdog that ends it when the process that spawned it dies without stopping it.
 */
import { spawn, type ChildProcess } from "node:child_process";

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

/**
 * A detached shell that SIGKILLs `child` and removes `orphanDirPaths` once this process is gone without stopping it
 * (a runner killing a worker, a benchmark dying of its heap: no exit hook runs then, and an orphaned server would hold
 * its port, memory and storage on a shared machine), and that ends by itself once `child` does. Call the returned
 * function when stopping `child`: it ends the watchdog at once, its `sleep` with it.
 */
export function watchForOrphan(child: ChildProcess, orphanDirPaths: readonly string[]): () => void {
  if (child.pid === undefined) return () => undefined;
  const script =
    'parent=$1; server=$2; shift 2; while kill -0 "$parent" 2>/dev/null && kill -0 "$server" 2>/dev/null; do sleep 1; done; ' +
    'if ! kill -0 "$parent" 2>/dev/null; then kill -9 "$server" 2>/dev/null; [ $# -eq 0 ] || rm -rf -- "$@"; fi';
  const dirs = orphanDirPaths.filter((dir) => dir !== "");
  const args = ["-c", script, "mds-server-watchdog", String(process.pid), String(child.pid), ...dirs];
  const watchdog = spawn("/bin/sh", args, { detached: true, stdio: "ignore" });
  watchdog.unref();
  return () => {
    try {
      // Its own process group (detached): the shell and the sleep it waits on.
      if (watchdog.pid !== undefined) process.kill(-watchdog.pid, "SIGKILL");
    } catch {
      // ESRCH: it ended by itself.
    }
  };
}
