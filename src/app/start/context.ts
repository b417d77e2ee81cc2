/** What every start-up builder is given: the configuration, the cluster, the process's logger and metrics, the clock, and the lifecycle each registers its stop with. */
import type { KubeConfig } from "@kubernetes/client-node";
import type { Logger } from "../../adapters/telemetry/logger.js";
import type { ScalerMetrics } from "../../adapters/telemetry/metrics.js";
import type { Config } from "../config.js";
import type { Lifecycle } from "../lifecycle.js";

export interface StartContext {
  readonly config: Config;
  readonly kubeConfig: KubeConfig;
  readonly logger: Logger;
  readonly metrics: ScalerMetrics;
  readonly nowMs: () => number;
  readonly lifecycle: Lifecycle;
  /** Sent with every PromQL query (`--prometheus-headers-file`, read and checked before any network call). */
  readonly prometheusHeaders: Readonly<Record<string, string>>;
}
