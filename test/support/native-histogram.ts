/**
 * One NHCB sum as Prometheus 3.5's HTTP API writes it (buckets `(lower, upper]`, not
 * cumulative, the empty ones left out), and as the client reads it: classic buckets
 * 0.01, 0.05, 0.1, 0.5, 1, +Inf holding 2, 0, 4, 0, 0, 1 observations.
 */
import type { NativeHistogram } from "../../src/adapters/prometheus/client.js";

export const nativeHistogramAnswer = {
  count: "7",
  sum: "1.25",
  buckets: [
    [0, "-Inf", "0.01", "2"],
    [0, "0.05", "0.1", "4"],
    [0, "1", "+Inf", "1"],
  ],
};

export const nativeHistogramRead: NativeHistogram = {
  count: 7,
  sum: 1.25,
  buckets: [
    { lower: -Infinity, upper: 0.01, count: 2 },
    { lower: 0.05, upper: 0.1, count: 4 },
    { lower: 1, upper: Infinity, count: 1 },
  ],
};
