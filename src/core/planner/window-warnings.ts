/**
 * Rule `window-scrapes` at run time (`../api/window-scrapes.ts`): a rate window shorter than two engine scrapes reads
 * nothing, and nothing in the samples tells that from a quiet role. So every pass that sets `MetricsReady` ends its
 * message with the rule's warnings at the engines' scrape interval (the controller's `--engine-scrape-interval`),
 * whatever the condition's status: a stable window that short is why roles wait, a panic window that short is why
 * panic never engages while every signal is available. Without an interval there is nothing to say.
 */
import { formatProblem } from "../api/problem.js";
import { windowScrapeWarnings } from "../api/window-scrapes.js";
import type { ConditionUpdate } from "./conditions.js";
import type { Pass } from "./pass.js";

/**
 * `MetricsReady` with the warnings of the pass's spec at its input's scrape interval after its message.
 * Example: "all required role signals are available" and one warning → "all required role signals are available; <warning>".
 */
export function withWindowWarnings(update: ConditionUpdate, pass: Pass): ConditionUpdate {
  const interval = pass.input.engineScrapeIntervalSeconds;
  const warnings = interval === undefined ? [] : windowScrapeWarnings(pass.spec, interval).map(formatProblem);
  if (warnings.length === 0) return update;
  return { ...update, message: [update.message, ...warnings].join("; ") };
}
