/**
 * The signals builder: the Prometheus client, each query timed into the PromQL histogram, behind the
 * controller's signal port. It opens no connection until the first pass, so it registers no stop.
 */
import type { PrometheusClient, PrometheusQueryClient } from "../../adapters/prometheus/client.js";
import { PrometheusSignalSource } from "../../adapters/prometheus/source.js";
import { PromqlSignals } from "../../adapters/prometheus/signal-port.js";
import type { ScalerMetrics } from "../../adapters/telemetry/metrics.js";
import { prometheusClientOf, prometheusSignalConfigOf } from "../config.js";
import type { SignalSource } from "../controller.js";
import { engineScrapeIntervalSeconds } from "../settings.js";
import type { StartContext } from "./context.js";

/** Times every query (the `raw-counters` plan's raw reads too) into the PromQL duration histogram. */
function timedClient(inner: PrometheusClient, metrics: ScalerMetrics): PrometheusQueryClient {
  const timed =
    <T>(ask: () => Promise<T>) =>
    async (query: string, name?: string): Promise<T> => {
      const end = metrics.timeQuery(query, name);
      try {
        return await ask();
      } finally {
        end();
      }
    };
  return {
    instantQuery: (query, atUnixMs, name) => timed(() => inner.instantQuery(query, atUnixMs))(query, name),
    rawSamples: (query, atUnixMs, name) => timed(() => inner.rawSamples(query, atUnixMs))(query, name),
  };
}

export function buildSignals(ctx: StartContext): SignalSource {
  const { config } = ctx;
  const client = timedClient(prometheusClientOf(config, ctx.prometheusHeaders), ctx.metrics);
  // A raw read since the last pass reaches back one engine scrape interval: a scrape lands at most that late.
  const signalConfig = {
    ...prometheusSignalConfigOf(config),
    rawReadOverlapSeconds: engineScrapeIntervalSeconds(config.engineScrapeInterval),
  };
  return new PromqlSignals(new PrometheusSignalSource(client, signalConfig), ctx.nowMs, ctx.logger);
}
