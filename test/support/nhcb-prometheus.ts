/**
 * Prometheus 3.5 (built by tools/prom-bin) scraping every second with the settings docs/prometheus-signals.md tells
 * a user to turn on for the `native` plan: each engine histogram stored as a native histogram with custom buckets
 * and as its classic series. Started once its targets are healthy and a stable window of scrapes has landed.
 */
import type { FileSdGroup } from "../../src/sim/engines/server.js";
import { PrometheusHarness } from "../../harness/prometheus.js";
import { findPromBinaries } from "../../harness/prom-bin.js";

export async function startNhcbPrometheus(
  targets: readonly FileSdGroup[],
  healthyTargets: number,
  stableWindowSeconds: number,
): Promise<PrometheusHarness> {
  const prometheus = await PrometheusHarness.start({
    binaryPath: findPromBinaries().prometheusPath,
    scrapeIntervalSeconds: 1,
    targets: [...targets],
    extraArgs: ["--enable-feature=native-histograms"],
    scrapeSettings: { convert_classic_histograms_to_nhcb: true, always_scrape_classic_histograms: true },
  });
  await prometheus.waitForHealthyTargets(healthyTargets);
  // A full stable window of scrapes, and every histogram's low buckets past their first observation.
  await new Promise((r) => setTimeout(r, (stableWindowSeconds + 5) * 1000));
  return prometheus;
}
