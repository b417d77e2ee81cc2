/**
 * What a test asks the operating system about the processes and ports it started: whether a process is still
 * listed, and whether a loopback port still accepts connections.
 */
import { spawnSync } from "node:child_process";
import { connect } from "node:net";

/** `pid args` of the processes `ps` lists for these selectors, each line whole (ps exits 1 when it lists nothing). */
export function processes(...selector: string[]): string[] {
  return spawnSync("ps", ["-ww", "-o", "pid=,args=", ...selector], { encoding: "utf8" })
    .stdout.split("\n")
    .map((line) => line.trim())
    .filter((line) => line !== "");
}

/** Whether something accepts a connection on the loopback `port`. */
export function portOpen(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect({ host: "127.0.0.1", port });
    socket.once("connect", () => {
      socket.destroy();
      resolve(true);
    });
    socket.once("error", () => resolve(false));
  });
}
