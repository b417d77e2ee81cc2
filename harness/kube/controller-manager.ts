/**
 * kube-controller-manager against the harness's API server, with only the
 * controllers a test names running (for example horizontal-pod-autoscaler-controller and
 * endpointslice-controller). It uses the admin kubeconfig for everything
 * (`--use-service-account-credentials=false`: no service account tokens
 * exist here), does not elect a leader and serves no HTTPS port.
 */
import { join } from "node:path";
import { requireExecutable, type KubeBinaries } from "./binaries.js";
import { waitFor } from "./net.js";
import { ManagedProcess } from "./processes.js";

export interface ControllerManagerOptions {
  /** `--controllers`: exactly these run (no `*`, so nothing else acts on the test's objects). */
  controllers: readonly string[];
  /** For example `--horizontal-pod-autoscaler-sync-period=1s`. */
  extraArgs?: readonly string[];
  startTimeoutMs?: number;
}

export interface RunningControllerManager {
  readonly pid: number;
  logTail(lineCount?: number): Promise<string>;
  stop(): Promise<void>;
}

export async function startControllerManager(
  context: { binaries: KubeBinaries; workDirPath: string; kubeConfigPath: string; orphanDirPath?: string },
  options: ControllerManagerOptions,
): Promise<RunningControllerManager> {
  const command = context.binaries.kubeControllerManagerPath;
  requireExecutable(command);
  if (options.controllers.length === 0) throw new Error("start kube-controller-manager: name at least one controller");
  const logPath = join(context.workDirPath, "kube-controller-manager.log");
  const managed = await ManagedProcess.start({
    name: "kube-controller-manager",
    command,
    logPath,
    cwd: context.workDirPath,
    ...(context.orphanDirPath === undefined ? {} : { orphanDirPath: context.orphanDirPath }),
    args: [
      `--kubeconfig=${context.kubeConfigPath}`,
      `--controllers=${options.controllers.join(",")}`,
      "--use-service-account-credentials=false",
      "--leader-elect=false",
      // No serving port: nothing scrapes it, and parallel tests would race for 10257.
      "--secure-port=0",
      ...(options.extraArgs ?? []),
    ],
  });
  try {
    // Each controller waits for its informer caches before it acts, and logs both: started means every
    // wait has ended, and there was at least one per controller.
    await waitFor(
      "kube-controller-manager to start its controllers",
      {
        timeoutMs: options.startTimeoutMs ?? 60_000,
        intervalMs: 200,
        abortReason: () => (managed.hasExited() ? managed.describeExit() : undefined),
      },
      async () => {
        const log = await managed.logTail(2_000);
        const waiting = log.split('"Waiting for caches to sync"').length - 1;
        const synced = log.split('"Caches are synced"').length - 1;
        return synced >= options.controllers.length && synced >= waiting ? true : undefined;
      },
    );
  } catch (cause) {
    await managed.stop();
    throw new Error(`start kube-controller-manager; log tail:\n${await managed.logTail()}`, { cause });
  }
  return { pid: managed.pid, logTail: (lineCount) => managed.logTail(lineCount), stop: () => managed.stop() };
}
