/**
 * The flags that say how a planning pass reads what it observes, as the controller's flags of the same
 * names set them (src/app/settings.ts): `--latency-guard-reading` and `--engine-scrape-interval`. The
 * commands that run or judge passes offline take the ones that apply to them, with the controller's
 * defaults: `plan` both, `simulate` and `calibrate` the reading (calibrate with help of its own, since it
 * judges minutes by it), `validate` the interval. So a pass replayed from a snapshot decides as the
 * controller would, and a wrong value is named the same way by each.
 */
import { durationSeconds } from "../adapters/prometheus/duration.js";
import { defaultEngineScrapeInterval, engineScrapeIntervalForm, type CommandFlag } from "../app/settings.js";
import {
  defaultLatencyGuardReading,
  isLatencyGuardReading,
  latencyGuardReadings,
  type LatencyGuardReading,
} from "../core/algorithms/ttft-reading.js";
import { stringFlag, UsageError, type FlagValues } from "./flags.js";

export const latencyGuardReadingFlag: CommandFlag = {
  flag: "--latency-guard-reading",
  value: latencyGuardReadings.join("|"),
  default: defaultLatencyGuardReading,
  help: "how the latency guard reads TTFT, as the controller's flag: a breach counts only when waiting is a material part of it (queueing), or as the specification words it (literal)",
};

export const engineScrapeIntervalFlag: CommandFlag = {
  flag: "--engine-scrape-interval",
  value: "DURATION",
  default: defaultEngineScrapeInterval,
  help: "how often Prometheus scrapes the engines, as the controller's flag: a window shorter than two scrapes reads nothing and is warned about",
};

/** `--latency-guard-reading`, its default when absent; `UsageError` naming the flag and the value. */
export function latencyGuardReadingOf(values: FlagValues): LatencyGuardReading {
  const reading = stringFlag(values, "latency-guard-reading") ?? defaultLatencyGuardReading;
  if (!isLatencyGuardReading(reading))
    throw new UsageError(
      `--latency-guard-reading: ${JSON.stringify(reading)} is not one of ${latencyGuardReadings.join(", ")}`,
    );
  return reading;
}

/** `--engine-scrape-interval` in seconds, its default when absent; `UsageError` naming the flag and the value. */
export function engineScrapeIntervalSecondsOf(values: FlagValues): number {
  const interval = stringFlag(values, "engine-scrape-interval") ?? defaultEngineScrapeInterval;
  const seconds = durationSeconds(interval);
  if (seconds === undefined)
    throw new UsageError(`--engine-scrape-interval: ${JSON.stringify(interval)} is not ${engineScrapeIntervalForm}`);
  return seconds;
}
