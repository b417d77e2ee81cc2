/**
 * The controller's builders in their own process, for the lifecycle tests: flags as the controller
 * takes them, MDS_TEST_FAIL_AFTER names the builder after which a failure is injected. Prints one JSON
 * line per event (each builder started, the ports once serving, the failure, the stop reports), and
 * never calls process.exit: the process ends only when nothing it started is left running.
 */
import { clusterConfigFrom } from "../../src/app/cluster.js";
import { loadConfig } from "../../src/app/config.js";
import { startController } from "../../src/app/start/controller.js";
import { createLogger } from "../../src/adapters/telemetry/logger.js";

const say = (event: Record<string, unknown>): void => void process.stdout.write(`${JSON.stringify(event)}\n`);
const config = loadConfig(process.argv.slice(2), process.env);
const failAfter = process.env["MDS_TEST_FAIL_AFTER"];
try {
  const running = await startController({
    config,
    kubeConfig: clusterConfigFrom(config, process.env).kubeConfig,
    logger: createLogger({ level: "info", write: (line) => void process.stderr.write(`${line}\n`) }),
    afterBuilder: (name) => {
      say({ built: name });
      if (name === failAfter) throw new Error(`injected failure after the ${name} builder`);
    },
  });
  // The listener before the line that tells the test to signal: the other way round, a SIGTERM sent the
  // moment `serving` was read could arrive before the listener and end the process by the signal's default.
  process.once("SIGTERM", () => {
    say({ draining: true });
    void running.stop().then((reports) => say({ stopped: reports.map((r) => [r.name, r.outcome]) }));
  });
  say({
    serving: { metrics: running.metricsPort, webhook: running.webhookPort, external: running.externalMetricsPort },
  });
} catch (error) {
  say({ failed: error instanceof Error ? error.message : String(error) });
  process.exitCode = 1;
}
