/**
 * `mds-scaler controller` started as a new user would: the real CLI in its own
 * process, with HOME an empty directory and no KUBECONFIG. Without a cluster
 * configuration, or with an API server that does not answer, it must stop at
 * once with a message saying where a configuration comes from; with a real
 * API server it must start and serve.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { ControlPlane } from "../../harness/kube/index.js";
import { freeLoopbackPort } from "../../harness/kube/net.js";
import { startControlPlaneWithCrds } from "../support/control-plane.js";
import { eventually } from "../support/testbed.js";

const root = join(import.meta.dirname, "..", "..");

let home: string;

beforeAll(async () => {
  home = await mkdtemp(join(tmpdir(), "mds-startup-home-"));
});
afterAll(async () => {
  await rm(home, { recursive: true, force: true });
});

/** The environment of a user with no cluster configuration anywhere. */
function bareEnv(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env, HOME: home, ...extra };
  for (const name of ["KUBECONFIG", "KUBERNETES_SERVICE_HOST", "KUBERNETES_SERVICE_PORT"]) {
    if (!(name in extra)) delete env[name];
  }
  return env;
}

function startCli(args: readonly string[], env: NodeJS.ProcessEnv): { child: ChildProcess; output: () => string } {
  const child = spawn(
    process.execPath,
    ["--import", "tsx", join(root, "src", "cli", "main.ts"), "controller", ...args],
    {
      cwd: root,
      env,
      stdio: ["ignore", "pipe", "pipe"],
    },
  );
  let output = "";
  const keep = (chunk: Buffer): void => {
    output = (output + chunk.toString()).slice(-50_000);
  };
  child.stdout?.on("data", keep);
  child.stderr?.on("data", keep);
  return { child, output: () => output };
}

/** Runs the CLI to its end; a process still running after the deadline fails the test (it must not retry forever). */
async function runToExit(
  args: readonly string[],
  env: NodeJS.ProcessEnv,
  // Long enough for a process start through tsx on a loaded machine; a retry loop never ends at all.
  deadlineMs = 90_000,
): Promise<{ code: number | null; output: string }> {
  const { child, output } = startCli(args, env);
  const code = await new Promise<number | null>((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill("SIGKILL");
      reject(new Error(`still running after ${deadlineMs} ms:\n${output()}`));
    }, deadlineMs);
    child.once("exit", (exitCode) => {
      clearTimeout(timer);
      resolve(exitCode);
    });
  });
  return { code, output: output() };
}

/** A kubeconfig whose API server is a closed loopback port. */
async function closedPortKubeconfig(closedPort: number): Promise<string> {
  const kubeconfig = join(home, `closed-port-${closedPort}.yaml`);
  await writeFile(
    kubeconfig,
    [
      "apiVersion: v1",
      "kind: Config",
      "clusters:",
      `- name: closed\n  cluster:\n    server: https://127.0.0.1:${closedPort}\n    insecure-skip-tls-verify: true`,
      "users:",
      "- name: nobody\n  user:\n    token: not-a-token",
      "contexts:",
      "- name: closed\n  context:\n    cluster: closed\n    user: nobody",
      "current-context: closed",
      "",
    ].join("\n"),
  );
  return kubeconfig;
}

function expectNamesEveryConfigurationSource(output: string): void {
  expect(output).toContain("--kubeconfig");
  expect(output).toContain("KUBECONFIG");
  expect(output).toMatch(/in-cluster/);
  // A clear message, not a crash.
  expect(output).not.toMatch(/\n\s+at .+\(.*:\d+:\d+\)/);
}

describe("controller start without a reachable cluster", { timeout: 120_000 }, () => {
  it("stops with exit code 2 and names every configuration source when none is found", async () => {
    const metricsPort = await freeLoopbackPort();
    const { code, output } = await runToExit(
      ["--prometheus-url", "http://127.0.0.1:9", `--metrics-address=127.0.0.1:${metricsPort}`],
      bareEnv(),
    );
    expect(code).toBe(2);
    expect(output).toContain("no cluster configuration found");
    expect(output).toContain(join(home, ".kube", "config"));
    expectNamesEveryConfigurationSource(output);
    expect(output).not.toContain("HTTP protocol is not allowed");
  });

  it("stops with exit code 2 when KUBECONFIG names a file that does not exist", async () => {
    const missing = join(home, "absent.yaml");
    const { code, output } = await runToExit(
      ["--prometheus-url", "http://127.0.0.1:9", `--metrics-address=127.0.0.1:${await freeLoopbackPort()}`],
      bareEnv({ KUBECONFIG: missing }),
    );
    expect(code).toBe(2);
    expect(output).toContain(`KUBECONFIG = ${JSON.stringify(missing)}: no such file`);
    expectNamesEveryConfigurationSource(output);
  });

  it("stops with exit code 2 on a label Prometheus can never match, before contacting the API server", async () => {
    const closedPort = await freeLoopbackPort();
    const kubeconfig = await closedPortKubeconfig(closedPort);
    const { code, output } = await runToExit(
      ["--prometheus-url", "http://127.0.0.1:9", `--kubeconfig=${kubeconfig}`, "--label-pod", "__name__"],
      bareEnv(),
    );
    expect(code).toBe(2);
    expect(output).toContain('--label-pod (MDS_LABEL_POD) = "__name__"');
    // The configuration error comes first: the unreachable API server is never asked.
    expect(output).not.toContain("cannot be reached");
  });

  it("stops with exit code 1 when the configured API server does not answer", async () => {
    const closedPort = await freeLoopbackPort();
    const kubeconfig = await closedPortKubeconfig(closedPort);
    const startedMs = Date.now();
    const { code, output } = await runToExit(
      [
        "--prometheus-url",
        "http://127.0.0.1:9",
        `--kubeconfig=${kubeconfig}`,
        `--metrics-address=127.0.0.1:${await freeLoopbackPort()}`,
      ],
      bareEnv(),
    );
    expect(code).toBe(1);
    expect(output).toContain(`the API server https://127.0.0.1:${closedPort} (from --kubeconfig ${kubeconfig})`);
    expect(output).toContain("cannot be reached");
    expect(output).toContain("ECONNREFUSED");
    expectNamesEveryConfigurationSource(output);
    // Fails at the first refusal instead of retrying: a retry loop with back-off would outlast the deadline.
    // The bound is loose because a process start alone can take tens of seconds on a loaded machine.
    expect(Date.now() - startedMs).toBeLessThan(80_000);
  });
});

describe("controller start with a real API server", () => {
  let controlPlane: ControlPlane;

  beforeAll(async () => {
    controlPlane = await startControlPlaneWithCrds();
  });
  afterAll(async () => {
    await controlPlane?.stop();
  });

  it("starts, serves /healthz and stops cleanly on SIGTERM", async () => {
    const metricsPort = await freeLoopbackPort();
    const { child, output } = startCli(
      [
        "--prometheus-url",
        "http://127.0.0.1:9",
        `--metrics-address=127.0.0.1:${metricsPort}`,
        "--controller-identity=system:admin",
      ],
      bareEnv({ KUBECONFIG: controlPlane.kubeConfigPath }),
    );
    try {
      await eventually(
        "the controller to serve /healthz",
        async () => {
          if (child.exitCode !== null) throw new Error(`exited ${child.exitCode}:\n${output()}`);
          const response = await fetch(`http://127.0.0.1:${metricsPort}/healthz`, {
            signal: AbortSignal.timeout(2_000),
          });
          return response.ok ? true : undefined;
        },
        40_000,
      );
      expect(output()).not.toContain("cannot be reached");
      // Past start-up: the first pass completes against the real API server.
      await eventually(
        "the controller to be ready (first pass done)",
        async () => {
          if (child.exitCode !== null) throw new Error(`exited ${child.exitCode}:\n${output()}`);
          const response = await fetch(`http://127.0.0.1:${metricsPort}/readyz`, {
            signal: AbortSignal.timeout(2_000),
          });
          return response.ok ? true : undefined;
        },
        20_000,
      ).catch((error: unknown) => {
        throw new Error(`${String(error)}\n${output()}`);
      });
      expect(child.exitCode).toBeNull();
      const exited = new Promise<number | null>((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`no exit 15 s after SIGTERM:\n${output()}`)), 15_000);
        child.once("exit", (code) => {
          clearTimeout(timer);
          resolve(code);
        });
      });
      child.kill("SIGTERM");
      expect(await exited).toBe(0);
    } finally {
      if (child.exitCode === null) child.kill("SIGKILL");
    }
  }, 90_000);
});
