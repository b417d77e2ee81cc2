/**
 * The composition root of `mds-scaler controller`: reads the configuration
 * once, builds the adapters, wires them into the controller and the HTTP
 * server, and runs until SIGTERM or SIGINT.
 */
import type { Server } from "node:http";
import { KubeConfig } from "@kubernetes/client-node";
import { KubeResources } from "../adapters/kubernetes/resources.js";
import { PrometheusClient, type PrometheusQueryClient } from "../adapters/prometheus/client.js";
import { PrometheusSignalSource } from "../adapters/prometheus/source.js";
import { listen, opsApp } from "../adapters/http/server.js";
import { createLogger, type Logger } from "../adapters/telemetry/logger.js";
import { ScalerMetrics } from "../adapters/telemetry/metrics.js";
import { ConfigError, loadConfig, type Config } from "./config.js";
import { Controller, type SampleRequest, type SignalSource } from "./controller.js";

export interface RunningController {
  readonly controller: Controller;
  readonly metrics: ScalerMetrics;
  readonly metricsPort: number;
  stop(): Promise<void>;
}

/** Times every query into the PromQL duration histogram. */
function timedClient(inner: PrometheusQueryClient, metrics: ScalerMetrics): PrometheusQueryClient {
  return {
    async instantQuery(query, atUnixMs) {
      const end = metrics.queryDuration.startTimer({ query: query.slice(0, 40).replace(/\s+/g, " ") });
      try {
        return await inner.instantQuery(query, atUnixMs);
      } finally {
        end();
      }
    },
  };
}

/** The PromQL source behind the controller's `SignalSource` port. */
export function promqlSignals(source: PrometheusSignalSource, nowMs: () => number): SignalSource {
  return {
    async sample(requests: readonly SampleRequest[]) {
      const pass = await source.sampleDue(requests, nowMs());
      return pass.scalers;
    },
  };
}

export function kubeConfigFrom(config: Config, env: Readonly<Record<string, string | undefined>>): KubeConfig {
  const kc = new KubeConfig();
  if (config.kubeconfig !== "") kc.loadFromFile(config.kubeconfig);
  else if (env["KUBERNETES_SERVICE_HOST"] !== undefined) kc.loadFromCluster();
  else kc.loadFromDefault();
  return kc;
}

/** Starts the controller with everything it needs; used by the CLI and the end-to-end tests. */
export async function startController(opts: { config: Config; kubeConfig: KubeConfig; logger?: Logger; nowMs?: () => number }): Promise<RunningController> {
  const { config } = opts;
  const nowMs = opts.nowMs ?? (() => Date.now());
  const logger = opts.logger ?? createLogger({ level: config.logLevel });
  const metrics = new ScalerMetrics();
  const store = new KubeResources(opts.kubeConfig, {
    timeoutMs: config.kubeTimeoutMs,
    targetResource: { group: "worker.gpustack.ai", version: config.targetApiVersion, plural: "modeldeployments" },
  });
  const client = timedClient(new PrometheusClient({ endpoint: config.prometheusUrl, timeoutMs: config.prometheusTimeoutMs }), metrics);
  const source = new PrometheusSignalSource(client, {
    labels: { namespace: config.namespaceLabel, pod: config.podLabel, deployment: config.deploymentLabel, role: config.roleLabel },
    metricNameSeparator: config.metricSeparator,
    queryTimeoutMs: config.prometheusTimeoutMs,
  });
  const controller = new Controller({
    store,
    source: promqlSignals(source, nowMs),
    metrics,
    logger,
    nowMs,
    namespace: config.watchNamespace,
  });
  let listed = false;
  const app = opsApp({ registry: metrics.registry, notReadyReason: () => (listed ? undefined : "the first pass has not completed") });
  const { server, port } = await listen(app, config.metricsAddress);
  logger.info("serving /metrics, /healthz and /readyz", { address: config.metricsAddress, port });

  let stopped = false;
  let wake: (() => void) | undefined;
  const loop = (async () => {
    while (!stopped) {
      await controller.tick();
      listed = true;
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, config.tickMs);
        wake = () => {
          clearTimeout(timer);
          resolve();
        };
      });
    }
  })();

  return {
    controller,
    metrics,
    metricsPort: port,
    async stop() {
      stopped = true;
      wake?.();
      await loop;
      await closeServer(server);
    },
  };
}

async function closeServer(server: Server): Promise<void> {
  await new Promise<void>((resolve) => server.close(() => resolve()));
}

/** `mds-scaler controller [flags]`: returns the exit code. */
export async function runController(argv: readonly string[], env: Readonly<Record<string, string | undefined>>, io: { stderr: (text: string) => void }): Promise<number> {
  let config: Config;
  try {
    config = loadConfig(argv, env);
  } catch (error) {
    if (error instanceof ConfigError) {
      io.stderr(error.message + "\n");
      return 2;
    }
    throw error;
  }
  const logger = createLogger({ level: config.logLevel });
  const running = await startController({ config, kubeConfig: kubeConfigFrom(config, env), logger });
  await new Promise<void>((resolve) => {
    process.once("SIGTERM", resolve);
    process.once("SIGINT", resolve);
  });
  logger.info("stopping");
  await running.stop();
  return 0;
}
