/**
 * A memory limit as a container's: a cgroup of its own with the limit set, which a process joins before
 * Node starts, so that Node sizes V8's heap from the limit as it does in a pod (under a 512 MiB limit
 * Node 24 gives V8 259 MiB) and the kernel ends the process at the limit as the kubelet's cgroup would.
 * Needs root and the memory controller (cgroup v1's `memory` hierarchy or cgroup v2 with `memory`
 * enabled); where either is missing the error says which path was looked for.
 */
import { existsSync, mkdirSync, readFileSync, rmdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";

export interface MemoryCgroup {
  /** A shell line that moves the shell into the cgroup; `exec` the command after it. */
  readonly joinCommand: string;
  /** Whether the kernel's OOM killer ended a process in it. */
  readonly oomKilled: () => boolean;
  readonly remove: () => void;
}

const v1Root = "/sys/fs/cgroup/memory";
const v2Root = "/sys/fs/cgroup";

/** A fresh cgroup named `name` limited to `limitMiB`. */
export function memoryCgroup(name: string, limitMiB: number): MemoryCgroup {
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
