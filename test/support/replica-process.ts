/**
 * One controller replica as its own process, for failover tests that kill it
 * with SIGKILL: the product's `startController` with every adapter real
 * except the signal source, a `QueueWorld` whose queues always ask for one
 * more replica, up to MDS_TEST_MAX_REPLICAS (or a fixed queue with settled windows, MDS_TEST_QUEUE). Prints one JSON line with its
 * ports once it serves.
 */
import { KubeConfig } from "@kubernetes/client-node";
import { loadConfig } from "../../src/app/config.js";
import { startController } from "../../src/app/main.js";
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
const running = await startController({ config, kubeConfig, source: world.source });
process.stdout.write(`${JSON.stringify({ metricsPort: running.metricsPort, webhookPort: running.webhookPort })}\n`);
process.once("SIGTERM", () => {
  void running.stop().then(() => process.exit(0));
});
