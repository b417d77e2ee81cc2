/**
 * A memory limit as a container's: a cgroup of its own with the limit set, which a process joins before
 * Node starts, so that Node sizes V8's heap from the limit as it does in a pod (under a 512 MiB limit
 * Node 24 gives V8 259 MiB) and the kernel ends the process at the limit as the kubelet's cgroup would.
 * Needs root and the memory controller (cgroup v1's `memory` hierarchy or cgroup v2 with `memory`
 * enabled); where either is missing the error says which path was looked for. Beside it, what the
 * benchmarks that run under a limit share: the `--node-options` variants, the name of a limited run, and
 * what the limited process reports of its memory.
 */
import { spawn } from "node:child_process";
import { existsSync, mkdirSync, readFileSync, rmdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { getHeapStatistics } from "node:v8";

interface MemoryCgroup {
  /** A shell line that moves the shell into the cgroup; `exec` the command after it. */
  readonly joinCommand: string;
  /** Whether the kernel's OOM killer ended a process in it. */
  readonly oomKilled: () => boolean;
  readonly remove: () => void;
}

const v1Root = "/sys/fs/cgroup/memory";
const v2Root = "/sys/fs/cgroup";

/** A fresh cgroup named `name` limited to `limitMiB`. */
function memoryCgroup(name: string, limitMiB: number): MemoryCgroup {
  const bytes = String(Math.round(limitMiB * 2 ** 20));
  if (existsSync(join(v1Root, "memory.limit_in_bytes"))) {
    const dir = join(v1Root, name);
    mkdirSync(dir);
    writeFileSync(join(dir, "memory.limit_in_bytes"), bytes);
    // No swap beyond the limit, as a pod's: with swap accounting, memory and swap together are held to it.
    const withSwap = join(dir, "memory.memsw.limit_in_bytes");
    if (existsSync(withSwap)) writeFileSync(withSwap, bytes);
    return {
      joinCommand: `echo $$ > ${dir}/cgroup.procs`,
      oomKilled: () => /oom_kill [1-9]/.test(readFileSync(join(dir, "memory.oom_control"), "utf8")),
      remove: () => rmdirSync(dir),
    };
  }
  const controllers = join(v2Root, "cgroup.controllers");
  if (existsSync(controllers) && readFileSync(controllers, "utf8").split(/\s+/).includes("memory")) {
    const dir = join(v2Root, name);
    mkdirSync(dir);
    writeFileSync(join(dir, "memory.max"), bytes);
    writeFileSync(join(dir, "memory.swap.max"), "0");
    return {
      joinCommand: `echo $$ > ${dir}/cgroup.procs`,
      oomKilled: () => /oom_kill [1-9]/.test(readFileSync(join(dir, "memory.events"), "utf8")),
      remove: () => rmdirSync(dir),
    };
  }
  throw new Error(
    `a memory limit needs the memory cgroup controller: neither ${join(v1Root, "memory.limit_in_bytes")} nor "memory" in ${controllers}`,
  );
}

/**
 * Runs `node [nodeOptions] script args` in a fresh cgroup limited to `limitMiB`, sends it `ask` over IPC and
 * resolves with the message it answers, or with how it ended when it did not answer and exit 0 (V8's heap out of
 * memory, the kernel's OOM killer, or the last line of its stderr).
 */
export async function runUnderMemoryLimit<T>(
  limitMiB: number,
  nodeOptions: readonly string[],
  script: string,
  args: readonly string[],
  ask: unknown,
): Promise<T | string> {
  const cgroup = memoryCgroup(`mds-bench-${process.pid}-${limitMiB}-${Date.now()}`, limitMiB);
  try {
    // Node starts inside the cgroup, so it sizes V8's heap from the limit as it does in a container.
    const node = [process.execPath, ...process.execArgv, ...nodeOptions, script, ...args];
    const child = spawn("sh", ["-c", `${cgroup.joinCommand} && exec "$@"`, "sh", ...node], {
      stdio: ["ignore", "ignore", "pipe", "ipc"],
    });
    let stderr = "";
    child.stderr?.on("data", (c: Buffer) => (stderr = (stderr + c.toString()).slice(-2000)));
    return await new Promise<T | string>((resolve) => {
      let answer: T | undefined;
      child.once("message", (m) => (answer = m as T));
      child.once("exit", (code, signal) => {
        if (answer !== undefined && code === 0) return resolve(answer);
        const how = /heap out of memory|Reached heap limit/.test(stderr)
          ? "V8's heap out of memory"
          : cgroup.oomKilled()
            ? "killed by the kernel's OOM killer at the limit"
            : `failed: ${stderr.trim().split("\n").at(-1) ?? ""}`;
        resolve(`${how} (exit ${code ?? signal})`);
      });
      child.send(ask as object);
    });
  } finally {
    cgroup.remove();
  }
}

/** `--node-options "A;B"`: each variant's options, in the order given; an empty variant (or no flag) runs with none. */
export function nodeOptionVariantsOf(text: string | undefined): string[][] {
  return (text ?? "").split(";").map((variant) => variant.split(" ").filter((option) => option !== ""));
}

/** How a limited run is named in a benchmark's line: the limit and the variant's options. */
export function limitLabel(limitMiB: number, nodeOptions: readonly string[]): string {
  return `limit ${limitMiB} MiB${nodeOptions.length === 0 ? "" : `, node ${nodeOptions.join(" ")}`}`;
}

/** What the limited process held, for its answer: its peak RSS and the heap limit Node gave V8 under the limit. */
export function heldMemory(): { readonly peakRssMiB: number; readonly heapLimitMiB: number } {
  return {
    peakRssMiB: process.resourceUsage().maxRSS / 1024,
    heapLimitMiB: getHeapStatistics().heap_size_limit / 2 ** 20,
  };
}
