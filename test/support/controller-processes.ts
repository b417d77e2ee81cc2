/**
 * Controller processes for the multi-process integration tests (high availability, leader fencing,
 * commit records): each runs `replica-process.ts` (the real controller with a scripted signal source)
 * in its own Node process, so a test can pause, kill or cut one off for real. The set keeps every
 * process's recent output for the failure messages and kills what is left when the file ends.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { join } from "node:path";
import { configurationName, releaseNamespace, tlsSecretName } from "../../harness/product-webhooks.js";

const root = join(import.meta.dirname, "..", "..");

export interface ControllerProcess {
  readonly name: string;
  readonly child: ChildProcess;
  /** The last `outputLimitChars` of stdout and stderr together. */
  output: string;
}

export class ControllerProcesses {
  readonly all: ControllerProcess[] = [];

  /** @param outputLimitChars how much recent output each process keeps */
  constructor(private readonly outputLimitChars = 50_000) {}

  /** Starts `replica-process.ts` with these flags and extra environment; does not wait for it. */
  spawn(name: string, args: readonly string[], env: Record<string, string> = {}): ControllerProcess {
    const child = spawn(
      process.execPath,
      ["--import", "tsx", join(root, "test", "support", "replica-process.ts"), ...args],
      {
        cwd: root,
        env: { ...process.env, ...env },
        stdio: ["ignore", "pipe", "pipe"],
      },
    );
    const controller: ControllerProcess = { name, child, output: "" };
    const keep = (chunk: Buffer | string): void => {
      controller.output = (controller.output + chunk.toString()).slice(-this.outputLimitChars);
    };
    child.stdout?.on("data", keep);
    child.stderr?.on("data", keep);
    child.once("exit", (code, signal) => keep(`exited: ${code ?? signal}\n`));
    this.all.push(controller);
    return controller;
  }

  /**
   * Starts a process and waits until it prints that it serves (`"metricsPort"` in its start-up line).
   * A process that exits first, or is still silent after `timeoutMs`, fails with its output.
   */
  async start(
    name: string,
    args: readonly string[],
    env: Record<string, string> = {},
    timeoutMs = 60_000,
  ): Promise<ControllerProcess> {
    const controller = this.spawn(name, args, env);
    const { child } = controller;
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => {
        done();
        reject(new Error(`${name} did not start in ${timeoutMs / 1000} s:\n${controller.output}`));
      }, timeoutMs);
      const onData = (): void => {
        if (controller.output.includes('"metricsPort"')) {
          done();
          resolve();
        }
      };
      const onExit = (code: number | null, signal: NodeJS.Signals | null): void => {
        done();
        reject(new Error(`${name} exited (${code ?? signal}) before serving:\n${controller.output}`));
      };
      const done = (): void => {
        clearTimeout(timer);
        child.stdout?.off("data", onData);
        child.off("exit", onExit);
      };
      // Registered after `spawn`'s own listener, so the output already holds this chunk.
      child.stdout?.on("data", onData);
      child.once("exit", onExit);
    });
    return controller;
  }

  /** The tail of every process's output, for a failure message. */
  context(tailChars: number): string {
    return this.all.map((p) => `--- ${p.name}:\n${p.output.slice(-tailChars)}`).join("\n");
  }

  /** Kills the process (SIGKILL) and resolves when it has exited. */
  static kill(controller: ControllerProcess): Promise<void> {
    const { child } = controller;
    return new Promise((resolve) => {
      if (child.exitCode !== null || child.signalCode !== null) return resolve();
      child.once("exit", () => resolve());
      child.kill("SIGKILL");
    });
  }

  /** Kills every process still running (a paused one too: SIGKILL needs no SIGCONT). */
  async killAll(): Promise<void> {
    await Promise.all(this.all.map((p) => ControllerProcesses.kill(p)));
  }
}

/**
 * The environment of a replica as the chart runs it beside the harness' webhook objects: its pod name
 * and namespace, the Lease it campaigns for, and the webhook Service, configurations and TLS Secret it
 * keeps.
 */
export function electedReplicaEnv(name: string, leaseName: string): Record<string, string> {
  return {
    MDS_POD_NAME: name,
    MDS_POD_NAMESPACE: releaseNamespace,
    MDS_LEASE_NAME: leaseName,
    MDS_WEBHOOK_SERVICE: `mds-mds-scaler.${releaseNamespace}.svc`,
    MDS_VALIDATING_WEBHOOK_CONFIGURATION: configurationName,
    MDS_MUTATING_WEBHOOK_CONFIGURATION: configurationName,
    MDS_WEBHOOK_TLS_SECRET: tlsSecretName,
  };
}

/** The sum of every sample of one metric family on a controller's `/metrics`. */
export async function metricSum(metricsPort: number, name: string): Promise<number> {
  const response = await fetch(`http://127.0.0.1:${metricsPort}/metrics`, { signal: AbortSignal.timeout(2_000) });
  const text = await response.text();
  return text
    .split("\n")
    .filter((line) => line.startsWith(`${name}{`) || line.startsWith(`${name} `))
    .reduce((sum, line) => sum + Number(line.slice(line.lastIndexOf(" ") + 1)), 0);
}
