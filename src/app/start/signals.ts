/**
 * The signals builder: the Prometheus client, each query timed into the PromQL histogram, behind the
 * controller's signal port. It opens no connection until the first pass, so it registers no stop.
 */
import type { PrometheusQueryClient } from "../../adapters/prometheus/client.js";
import { PrometheusSignalSource } from "../../adapters/prometheus/source.js";
import { PromqlSignals } from "../../adapters/prometheus/signal-port.js";
import type { ScalerMetrics } from "../../adapters/telemetry/metrics.js";
import { prometheusClientOf, prometheusSignalConfigOf } from "../config.js";
import type { SignalSource } from "../controller.js";
import type { StartContext } from "./context.js";

/** Times every query into the PromQL duration histogram. */
function timedClient(inner: PrometheusQueryClient, metrics: ScalerMetrics): PrometheusQueryClient {
  return {
    async instantQuery(query, atUnixMs, name) {
      const end = metrics.timeQuery(query, name);
      try {
        return await inner.instantQuery(query, atUnixMs, name);
      } finally {
        end();
      }
    },
  };
}

export function buildSignals(ctx: StartContext): SignalSource {
  const { config } = ctx;
  const client = timedClient(prometheusClientOf(config, ctx.prometheusHeaders), ctx.metrics);
  return new PromqlSignals(new PrometheusSignalSource(client, prometheusSignalConfigOf(config)), ctx.nowMs, ctx.logger);
}
