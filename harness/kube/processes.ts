import { spawn, type ChildProcess } from "node:child_process";
import { closeSync, openSync, rmSync } from "node:fs";
import { readFile } from "node:fs/promises";

export interface ExitInfo {
  code: number | null;
  signal: NodeJS.Signals | null;
}

/** Process groups still alive; killed synchronously if the test process exits. */
const liveGroups = new Set<number>();
/** Work directories to remove if the test process exits without stopping. */
const orphanDirPaths = new Set<string>();
let exitHookInstalled = false;

function killGroup(pgid: number, signal: NodeJS.Signals): void {
  try {
    process.kill(-pgid, signal);
  } catch {
    // ESRCH: the group is already gone.
  }
}

function installExitHook(): void {
  if (exitHookInstalled) return;
  exitHookInstalled = true;
  process.on("exit", () => {
    for (const pgid of liveGroups) killGroup(pgid, "SIGKILL");
    for (const dirPath of orphanDirPaths) rmSync(dirPath, { recursive: true, force: true });
  });
}

/** Removes `dirPath` when the test process exits; call the result once the caller cleaned up. */
export function removeOnExit(dirPath: string): () => void {
  installExitHook();
  orphanDirPaths.add(dirPath);
  return () => orphanDirPaths.delete(dirPath);
}

/**
 * A detached shell that SIGKILLs the group once this process is gone. The
 * 'exit' hook does not run when the test process is killed by a signal (a
 * runner timing out a worker), and an orphaned etcd or apiserver would hold
 * ports and memory on a shared machine.
 */
function startWatchdog(pgid: number, orphanDirPath: string | undefined): ChildProcess {
  // dash's kill takes neither "--" nor "-s KILL" before a negative (group) id.
  const script =
    'while kill -0 "$1" 2>/dev/null; do sleep 1; done; kill -9 "-$2" 2>/dev/null; [ -z "$3" ] || rm -rf -- "$3"';
  const args = ["-c", script, "mds-kube-watchdog", String(process.pid), String(pgid), orphanDirPath ?? ""];
  const watchdog = spawn("/bin/sh", args, { detached: true, stdio: "ignore" });
  watchdog.unref();
  return watchdog;
}

export interface StartProcessOptions {
  name: string;
  command: string;
  args: readonly string[];
  logPath: string;
  cwd?: string;
  /** Removed by the watchdog along with the process if the test process dies. */
  orphanDirPath?: string;
}

/** A child in its own process group, with output appended to a log file. */
export class ManagedProcess {
  readonly exited: Promise<ExitInfo>;
  private exitInfo: ExitInfo | undefined;

  private constructor(
    readonly name: string,
    readonly pid: number,
    readonly logPath: string,
    child: ChildProcess,
    private readonly watchdog: ChildProcess,
  ) {
    this.exited = new Promise<ExitInfo>((resolveExit) => {
      child.once("exit", (code, signal) => {
        this.exitInfo = { code, signal };
        resolveExit(this.exitInfo);
      });
    });
  }

  static async start(options: StartProcessOptions): Promise<ManagedProcess> {
    installExitHook();
    const logFd = openSync(options.logPath, "a");
    let child: ChildProcess;
    try {
      child = spawn(options.command, [...options.args], {
        cwd: options.cwd,
        detached: true,
        stdio: ["ignore", logFd, logFd],
      });
    } finally {
      // The child holds its own copy of the descriptor.
      closeSync(logFd);
    }
    const pid = await new Promise<number>((resolvePid, reject) => {
      child.once("spawn", () => resolvePid(child.pid ?? -1));
      child.once("error", (cause) => reject(new Error(`start ${options.name}: spawn ${options.command}`, { cause })));
    });
    liveGroups.add(pid);
    // Exit of the test process must not wait for the child; the hooks kill it.
    child.unref();
    return new ManagedProcess(options.name, pid, options.logPath, child, startWatchdog(pid, options.orphanDirPath));
  }

  hasExited(): boolean {
    return this.exitInfo !== undefined;
  }

  describeExit(): string {
    if (!this.exitInfo) return `${this.name} is running`;
    return `${this.name} exited (code ${this.exitInfo.code ?? "none"}, signal ${this.exitInfo.signal ?? "none"})`;
  }

  async logTail(lineCount = 40): Promise<string> {
    try {
      const lines = (await readFile(this.logPath, "utf8")).trimEnd().split("\n");
      return lines.slice(-lineCount).join("\n");
    } catch {
      return "(no log)";
    }
  }

  /** SIGTERM the group, SIGKILL it after `graceMs`, and wait for the exit. */
  async stop(graceMs = 3_000): Promise<void> {
    if (!this.hasExited()) {
      killGroup(this.pid, "SIGTERM");
      // Referenced timers: the child is unref'd, so without them a script
      // whose last step is stop() would exit before the child is gone.
      if (!(await this.exitWithin(graceMs))) {
        killGroup(this.pid, "SIGKILL");
        await this.exitWithin(5_000);
      }
    }
    // Grandchildren, if any, share the group.
    killGroup(this.pid, "SIGKILL");
    liveGroups.delete(this.pid);
    if (this.watchdog.pid !== undefined) killGroup(this.watchdog.pid, "SIGKILL");
  }

  private async exitWithin(timeoutMs: number): Promise<boolean> {
    let timer: NodeJS.Timeout | undefined;
    const timedOut = new Promise<false>((resolveTimer) => {
      timer = setTimeout(() => resolveTimer(false), timeoutMs);
    });
    try {
      return await Promise.race([this.exited.then(() => true), timedOut]);
    } finally {
      clearTimeout(timer);
    }
  }
}
