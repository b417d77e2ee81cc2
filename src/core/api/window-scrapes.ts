/**
 * Rule `window-scrapes` (a warning, never a refusal): a rate window shorter than two engine scrapes never
 * holds two samples of a pod. Prometheus 3 reads a range `[w]` at time t as the samples in (t − w, t] (2.x also
 * takes a sample exactly at t − w, which the scrape schedule hits only by chance), and a rate or an increase
 * needs two of them, so at a scrape every i seconds a window of w < 2i seconds holds one sample and reads
 * nothing, every pass; the simulator's windows read the same way. The specification allows
 * panic windows from 10 s and stable windows from 30 s, while the chart's PodMonitor scrapes every 15 s and
 * kube-prometheus-stack's default is 30 s, so a scaler written in range can read nothing from a window:
 *
 * - a stable window that short establishes no pod, so no pod is covered and every role waits for metrics;
 * - a panic window that short never engages panic mode, and latency and Proportional's token rates, which
 *   read the panic window first, read the stable window instead: nothing says so at run time.
 *
 * The scrape interval belongs to the cluster's Prometheus, not to the scaler, and may change under it, so
 * admission warns (the webhook's warnings reach `kubectl apply`) and never refuses. Where a window is
 * exactly two scrapes long it holds two samples: no warning.
 */
import { samplingWindowsOf, samplingWindowsPath } from "../algorithms/windows.js";
import { problem, type Problem } from "./problem.js";
import type { ScalerSpec } from "./scaler.js";

export const windowScrapesRule = "window-scrapes";

/** The samples a rate needs in its window. */
const samplesPerRate = 2;

/**
 * What a window that reads nothing costs. The whole warning stays within the 256 characters Kubernetes shows, and in
 * ASCII: an HTTP header carries it, and not every client reads UTF-8 there.
 */
const consequence = {
  stableWindowSeconds: "no pod is covered and every role waits for metrics",
  panicWindowSeconds: "panic never engages, and latency and token-rate Proportional read the stable window",
} as const;

/**
 * The warnings for a defaulted spec whose engines are scraped every `engineScrapeIntervalSeconds`.
 * Example: panicWindowSeconds 15 at a 15 s scrape → one warning at
 * `spec.algorithm.tokenThroughput.panicWindowSeconds`; 30 → none.
 */
export function windowScrapeWarnings(spec: ScalerSpec, engineScrapeIntervalSeconds: number): Problem[] {
  const windows = samplingWindowsOf(spec);
  const shortest = samplesPerRate * engineScrapeIntervalSeconds;
  return (["stableWindowSeconds", "panicWindowSeconds"] as const)
    .filter((field) => windows[field] < shortest)
    .map((field) =>
      problem(
        windowScrapesRule,
        ["spec", ...samplingWindowsPath(spec), field],
        windows[field],
        `${windows[field]} s holds under two engine scrapes of ${engineScrapeIntervalSeconds} s, so it never reads a rate: ${consequence[field]}; write at least ${shortest} s`,
      ),
    );
}
