/**
 * One controller replica as its own process, for failover tests that kill it
 * with SIGKILL: the product's `startController` with every adapter real
 * except the signal source, a `QueueWorld` whose queues always ask for one
 * more replica, up to MDS_TEST_MAX_REPLICAS (or a fixed queue with settled
 * windows, MDS_TEST_QUEUE). MDS_TEST_SAMPLE_DELAY_MS makes each sampling that
 * slow, as a slow Prometheus would, so a pass spends most of its time between
 * its reads and its writes (where a pause hurts most). Prints one JSON line
 * with its ports once it serves.
 */
import { KubeConfig } from "@kubernetes/client-node";
import { loadConfig } from "../../src/app/config.js";
import type { SignalSource } from "../../src/app/controller.js";
import { startController } from "../../src/app/start/controller.js";
import { QueueWorld } from "./queue-world.js";

const config = loadConfig(process.argv.slice(2), process.env);
const kubeConfig = new KubeConfig();
kubeConfig.loadFromFile(config.kubeconfig);
const world = new QueueWorld(kubeConfig);
const cap = Number(process.env["MDS_TEST_MAX_REPLICAS"] ?? "6");
// MDS_TEST_QUEUE pins the total queue depth (0: idle engines that let the scaler shrink).
const pinned = process.env["MDS_TEST_QUEUE"];
world.setQueue(pinned === undefined ? (ready) => 8 * Math.min(ready + 1, cap) : () => Number(pinned));
if (pinned !== undefined) world.settleWindows();
const sampleDelayMs = Number(process.env["MDS_TEST_SAMPLE_DELAY_MS"] ?? "0");
const source: SignalSource =
  sampleDelayMs > 0
    ? {
        sample: async (requests) => {
          // Tells a test that a pass is between its reads and its writes now.
          process.stdout.write(`${JSON.stringify({ sampling: requests.length })}\n`);
          await new Promise((resolve) => setTimeout(resolve, sampleDelayMs));
          return world.source.sample(requests);
        },
      }
    : world.source;
const running = await startController({ config, kubeConfig, source });
// The listener before the ports line that a test may answer with SIGTERM at once (else the signal's default ends it).
process.once("SIGTERM", () => {
  void running.stop().then(() => process.exit(0));
});
process.stdout.write(`${JSON.stringify({ metricsPort: running.metricsPort, webhookPort: running.webhookPort })}\n`);
