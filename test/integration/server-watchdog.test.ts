/**
 * The servers the tests and benchmarks spawn (Prometheus, VictoriaMetrics, Thanos) end with the process that
 * spawned them, also when it dies without stopping them (a runner killing a worker, a benchmark dying of its heap):
 * a watchdog (`watchForOrphan` in harness/server-process.ts) SIGKILLs the server and removes its directories. Shown
 * on Prometheus, which nearly every test starts; a stop leaves no watchdog behind.
 */
import { spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { describe, expect, it, onTestFinished } from "vitest";
import { PrometheusHarness } from "../../harness/prometheus.js";
import { eventually } from "../support/eventually.js";
import { portOpen, processes } from "../support/os-processes.js";

const watchdogs = (pid: number): string[] =>
  processes("-e").filter((line) => line.includes("mds-server-watchdog") && line.includes(` ${pid} `));

describe("a server the tests spawn", () => {
  it("is killed, its directories removed, when the process that spawned it dies without stopping it", async () => {
    const harness = new URL("../../harness/prometheus.ts", import.meta.url).href;
    const script = `
      const { PrometheusHarness } = await import(${JSON.stringify(harness)});
      const { mkdtempSync } = await import("node:fs");
      const { tmpdir } = await import("node:os");
      const { join } = await import("node:path");
      const storage = mkdtempSync(join(tmpdir(), "mds-watchdog-storage-"));
      const prometheus = await PrometheusHarness.start({ storagePath: storage, storageIsTemporary: true });
      console.log(JSON.stringify({ port: prometheus.port, storage }));
      setInterval(() => {}, 1000);
    `;
    const child = spawn(process.execPath, ["--import", "tsx", "--input-type=module", "-e", script], {
      stdio: ["ignore", "pipe", "pipe"],
    });
    let out = "";
    let err = "";
    child.stdout.on("data", (chunk: Buffer) => (out += chunk.toString()));
    child.stderr.on("data", (chunk: Buffer) => (err += chunk.toString()));
    const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
    onTestFinished(() => void child.kill("SIGKILL"));
    const { port, storage } = await eventually(
      "the spawning process to start Prometheus",
      async () =>
        out.includes("\n") ? (JSON.parse(out.split("\n")[0] ?? "") as { port: number; storage: string }) : undefined,
      60_000,
      100,
      () => `${out}\n${err}`,
    );
    // Prometheus is the spawning process's child; its flags name its port and its directory.
    const prometheus = processes("--ppid", String(child.pid)).find((line) =>
      line.includes(`--web.listen-address=127.0.0.1:${port}`),
    );
    expect(prometheus, processes("--ppid", String(child.pid)).join("\n")).toBeDefined();
    const pid = Number(prometheus?.split(" ")[0]);
    // Should the watchdog fail, the test still leaves no Prometheus behind.
    onTestFinished(() => {
      if (processes("-p", String(pid)).length > 0) process.kill(pid, "SIGKILL");
    });
    const dir = /--config\.file=(\S+)\/prometheus\.yml/.exec(prometheus ?? "")?.[1] ?? "";
    expect(existsSync(dir), dir).toBe(true);
    expect(existsSync(storage), storage).toBe(true);
    expect(watchdogs(pid)).toHaveLength(1);

    // SIGKILL: no exit hook runs, nothing of the harness stops Prometheus.
    child.kill("SIGKILL");
    await exited;
    await eventually(
      "the orphaned Prometheus to end",
      async () => (processes("-p", String(pid)).length === 0 || undefined) as true | undefined,
      15_000,
    );
    expect(await portOpen(port)).toBe(false);
    await eventually("its directory to go", async () => (!existsSync(dir) || undefined) as true | undefined, 5_000);
    // The storage the spawning process copied for it, declared temporary, goes with it.
    expect(existsSync(storage), storage).toBe(false);
    await eventually(
      "its watchdog to end",
      async () => (watchdogs(pid).length === 0 || undefined) as true | undefined,
      5_000,
    );
  }, 90_000);

  it("leaves no watchdog behind when stopped", async () => {
    const prometheus = await PrometheusHarness.start();
    onTestFinished(() => prometheus.stop());
    const pid = Number(
      processes("--ppid", String(process.pid))
        .find((line) => line.includes(`--web.listen-address=127.0.0.1:${prometheus.port}`))
        ?.split(" ")[0],
    );
    expect(watchdogs(pid)).toHaveLength(1);
    await prometheus.stop();
    // At once, not within the watchdog's next second: a test that lists what it left behind runs right after.
    expect(watchdogs(pid)).toEqual([]);
  }, 60_000);
});
