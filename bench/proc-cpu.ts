/**
 * CPU seconds (user + system) a local process has used so far, found by its id or by one of its
 * command-line arguments, from /proc (clock ticks of USER_HZ, 100 on Linux): on a shared machine the
 * CPU a pass costs varies less than its wall time. NaN when no such process runs.
 */
import { readdir, readFile } from "node:fs/promises";

export async function cpuSecondsOfProcess(pid: number | string): Promise<number> {
  try {
    const stat = await readFile(`/proc/${pid}/stat`, "utf8");
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    return (Number(fields[11]) + Number(fields[12])) / 100;
  } catch {
    // The process has ended.
    return NaN;
  }
}

export async function cpuSecondsOf(argument: string): Promise<number> {
  for (const entry of await readdir("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const cmdline = await readFile(`/proc/${entry}/cmdline`, "utf8");
      if (!cmdline.split("\0").includes(argument)) continue;
    } catch {
      // The process ended between listing and reading.
      continue;
    }
    return cpuSecondsOfProcess(entry);
  }
  return NaN;
}
