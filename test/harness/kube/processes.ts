import { spawn, type ChildProcess } from "node:child_process";
import { closeSync, openSync } from "node:fs";
import { readFile } from "node:fs/promises";

export interface ExitInfo {
  code: number | null;
  signal: NodeJS.Signals | null;
}

/** Process groups still alive; killed synchronously if the test process exits. */
const liveGroups = new Set<number>();
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
  });
}

/**
 * A detached shell that SIGKILLs the group once this process is gone. The
 * 'exit' hook does not run when the test process is killed by a signal (a
 * runner timing out a worker), and an orphaned etcd or apiserver would hold
 * ports and memory on a shared machine.
 */
function startWatchdog(pgid: number): ChildProcess {
  const script = 'while kill -0 "$1" 2>/dev/null; do sleep 1; done; kill -KILL -- "-$2" 2>/dev/null';
  const watchdog = spawn("/bin/sh", ["-c", script, "mds-kube-watchdog", String(process.pid), String(pgid)], {
    detached: true,
    stdio: "ignore",
  });
  watchdog.unref();
  return watchdog;
}

export interface StartProcessOptions {
  name: string;
  command: string;
  args: readonly string[];
  logPath: string;
  cwd?: string;
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
    return new ManagedProcess(options.name, pid, options.logPath, child, startWatchdog(pid));
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
      const timedOut = await Promise.race([
        this.exited.then(() => false),
        new Promise<boolean>((resolveTimer) => setTimeout(() => resolveTimer(true), graceMs).unref()),
      ]);
      if (timedOut) killGroup(this.pid, "SIGKILL");
      await Promise.race([
        this.exited,
        new Promise<void>((resolveTimer) => setTimeout(resolveTimer, 5_000).unref()),
      ]);
    }
    // Grandchildren, if any, share the group.
    killGroup(this.pid, "SIGKILL");
    liveGroups.delete(this.pid);
    if (this.watchdog.pid !== undefined) killGroup(this.watchdog.pid, "SIGKILL");
  }
}
