/**
 * The controller's ordered lifecycle against a real API server: a failure injected after each builder
 * (leadership, store, signals, TLS, servers, loop) ends the process within a bound, with every port it
 * opened closed and no process of its own left; SIGTERM on a running controller drains the same way.
 * The controller runs as its own process (test/support/lifecycle-process.ts), which never calls
 * process.exit: it ends only when nothing it started keeps it alive.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { builderNames } from "../../../src/app/start/controller.js";
import type { ControlPlane } from "../../../harness/kube/index.js";
import { freeLoopbackPort } from "../../../harness/kube/net.js";
import { startControlPlaneWithCrds } from "../../support/control-plane.js";
import { eventually } from "../../support/eventually.js";
import { portOpen, processes } from "../../support/os-processes.js";

const root = join(import.meta.dirname, "..", "..", "..");
/** From the failure (or SIGTERM) to the exit: every stop is quick here; one hung stop alone would take 10 s. */
const exitBoundMs = 8_000;

let controlPlane: ControlPlane;
beforeAll(async () => {
  controlPlane = await startControlPlaneWithCrds();
}, 180_000);
afterAll(async () => {
  await controlPlane?.stop();
});

interface Child {
  readonly child: ChildProcess;
  readonly events: () => Record<string, unknown>[];
  readonly output: () => string;
}

async function start(failAfter: string | undefined): Promise<{ process: Child; ports: number[] }> {
  const ports = [await freeLoopbackPort(), await freeLoopbackPort(), await freeLoopbackPort()];
  const [metrics, webhook, external] = ports;
  const child = spawn(
    process.execPath,
    [
      "--import",
      "tsx",
      join(root, "test", "support", "lifecycle-process.ts"),
      "--prometheus-url=http://127.0.0.1:9",
      `--kubeconfig=${controlPlane.kubeConfigPath}`,
      "--kube-timeout-ms=3000",
      `--metrics-address=127.0.0.1:${metrics}`,
      `--webhook-address=127.0.0.1:${webhook}`,
      `--external-metrics-address=127.0.0.1:${external}`,
      `--webhook-tls-secret=lifecycle-${failAfter ?? "sigterm"}`,
      "--webhook-cert-hosts=127.0.0.1",
      "--pod-namespace=default",
      `--lease-name=lifecycle-${failAfter ?? "sigterm"}`,
      "--lease-duration-seconds=15",
      "--lease-renew-deadline-ms=8000",
      "--lease-retry-ms=1000",
    ],
    { cwd: root, env: { ...process.env, MDS_TEST_FAIL_AFTER: failAfter ?? "" }, stdio: ["ignore", "pipe", "pipe"] },
  );
  let stdout = "";
  let stderr = "";
  child.stdout?.on("data", (chunk: Buffer) => void (stdout += chunk.toString()));
  child.stderr?.on("data", (chunk: Buffer) => void (stderr = (stderr + chunk.toString()).slice(-20_000)));
  const events = (): Record<string, unknown>[] =>
    stdout
      .split("\n")
      .filter((line) => line.startsWith("{"))
      .map((line) => JSON.parse(line) as Record<string, unknown>);
  return { process: { child, events, output: () => `${stdout}\n${stderr}` }, ports };
}

interface Exit {
  readonly code: number | null;
  readonly signal: NodeJS.Signals | null;
  readonly atMs: number;
}

/**
 * When the process exited, with its code or the signal that ended it, resolved once its output is read
 * whole: on 'exit' alone the last lines (a drain's reports, a crash's message) may still be unread.
 */
function exited(child: ChildProcess): Promise<Exit> {
  return new Promise((resolve) => {
    let exit: Exit | undefined;
    const done = (): void => {
      if (exit !== undefined && child.stdout?.readableEnded !== false && child.stderr?.readableEnded !== false)
        resolve(exit);
    };
    const atExit = (code: number | null, signal: NodeJS.Signals | null): void => {
      exit = { code, signal, atMs: performance.now() };
      done();
    };
    if (child.exitCode !== null || child.signalCode !== null) atExit(child.exitCode, child.signalCode);
    else child.once("exit", atExit);
    child.stdout?.once("end", done);
    child.stderr?.once("end", done);
  });
}

async function expectNothingLeft(pid: number, ports: readonly number[]): Promise<void> {
  // The controller starts no process, and must leave none; nor may it still run itself.
  expect(processes("--ppid", String(pid))).toEqual([]);
  expect(processes("-p", String(pid))).toEqual([]);
  for (const port of ports) expect(await portOpen(port), `port ${port}`).toBe(false);
}

describe("the controller's lifecycle", { timeout: 120_000 }, () => {
  it.each(builderNames.map((name) => [name]))(
    "a failure after the %s builder unwinds what started and exits 1 within the bound",
    async (failAfter) => {
      const { process: run, ports } = await start(failAfter);
      const exit = exited(run.child);
      const failedAt = await eventually(
        `the injected failure after ${failAfter}`,
        async () => {
          if (run.child.exitCode !== null && !run.events().some((e) => "failed" in e))
            throw new Error(`exited ${run.child.exitCode} before failing`);
          return run.events().some((e) => "failed" in e) ? performance.now() : undefined;
        },
        90_000,
        50,
        run.output,
      );
      const { code, signal, atMs } = await exit;
      expect({ code, signal }, run.output()).toEqual({ code: 1, signal: null });
      expect(atMs - failedAt, run.output()).toBeLessThan(exitBoundMs);
      const built = run.events().flatMap((e) => ("built" in e ? [e["built"]] : []));
      expect(built).toEqual(builderNames.slice(0, builderNames.indexOf(failAfter) + 1));
      await expectNothingLeft(run.child.pid ?? -1, ports);
    },
  );

  it("SIGTERM on a running controller drains in reverse order and exits 0 within the bound", async () => {
    const { process: run, ports } = await start(undefined);
    const exit = exited(run.child);
    await eventually(
      "the controller to serve",
      async () => {
        if (run.child.exitCode !== null || run.child.signalCode !== null)
          throw new Error(`exited ${run.child.exitCode ?? run.child.signalCode}`);
        return run.events().some((e) => "serving" in e) ? true : undefined;
      },
      90_000,
      100,
      run.output,
    );
    for (const port of ports) expect(await portOpen(port), `port ${port} serving`).toBe(true);
    const signalledAt = performance.now();
    run.child.kill("SIGTERM");
    const { code, signal, atMs } = await exit;
    expect({ code, signal }, run.output()).toEqual({ code: 0, signal: null });
    expect(atMs - signalledAt, run.output()).toBeLessThan(exitBoundMs);
    const stopped = run.events().find((e) => "stopped" in e)?.["stopped"] as [string, string][] | undefined;
    expect(
      stopped?.map(([name]) => name),
      run.output(),
    ).toEqual([
      "control loop",
      "leader election",
      "metrics server",
      "external metrics certificate and CA refresh",
      "external metrics server",
      "webhook certificate subscription",
      "webhook server",
      "certificate renewal",
      "watch store",
      "controller identity",
    ]);
    expect(stopped?.every(([, outcome]) => outcome === "stopped")).toBe(true);
    await expectNothingLeft(run.child.pid ?? -1, ports);
  });
});
