/**
 * `mds-scaler controller`: the configuration first, every problem of it found before any network call
 * (exit 2); then the cluster's reachability (exit 1); then the builders of `start/controller.ts`, whose
 * failure unwinds what started (exit 1); then running until SIGTERM or SIGINT, which drains the same way
 * (exit 0).
 */
import { createLogger } from "../adapters/telemetry/logger.js";
import { ClusterUnreachableError, clusterConfigFrom, requireApiServer } from "./cluster.js";
import { ConfigError, loadConfig, type Config } from "./config.js";
import { prometheusHeadersFrom } from "./prometheus-headers.js";
import { describeReports, startController, type RunningController } from "./start/controller.js";

export const controllerExitCodes = { stopped: 0, failed: 1, config: 2 } as const;

/** Returns the exit code. */
export async function runController(
  argv: readonly string[],
  env: Readonly<Record<string, string | undefined>>,
  io: { stderr: (text: string) => void },
): Promise<number> {
  let config: Config;
  let cluster: ReturnType<typeof clusterConfigFrom>;
  let prometheusHeaders: Record<string, string>;
  try {
    config = loadConfig(argv, env);
    prometheusHeaders = prometheusHeadersFrom(config.prometheusHeadersFile);
    cluster = clusterConfigFrom(config, env);
  } catch (error) {
    if (!(error instanceof ConfigError)) throw error;
    io.stderr(error.message + "\n");
    return controllerExitCodes.config;
  }
  const logger = createLogger({ level: config.logLevel });
  // SIGTERM during the start ends it at the next builder, which unwinds what started.
  let stopRequested = false;
  const signalled = new Promise<void>((resolve) => {
    const stop = (): void => {
      stopRequested = true;
      resolve();
    };
    process.once("SIGTERM", stop);
    process.once("SIGINT", stop);
  });
  let running: RunningController;
  try {
    // Before anything retries: a silent API server ends the start here.
    await requireApiServer(cluster, config.kubeTimeoutMs);
    running = await startController({
      config,
      kubeConfig: cluster.kubeConfig,
      logger,
      prometheusHeaders,
      afterBuilder: (name) => {
        if (stopRequested) throw new Error(`stopped by a signal after the ${name} builder`);
      },
    });
  } catch (error) {
    if (error instanceof ClusterUnreachableError) io.stderr(error.message + "\n");
    // The Deployment restarts the pod; the log says what failed (certificate, Secret, listen).
    else logger.error("start failed", { error });
    return stopRequested ? controllerExitCodes.stopped : controllerExitCodes.failed;
  }
  await signalled;
  logger.info("stopping");
  const reports = await running.stop();
  logger.info("stopped", { stopped: describeReports(reports) });
  return reports.every((r) => r.outcome === "stopped") ? controllerExitCodes.stopped : controllerExitCodes.failed;
}
