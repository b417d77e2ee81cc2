/**
 * When an absent counter is a measured zero (docs/prometheus-signals.md, "Absent counters").
 *
 * SGLang creates its tokenizer token counters (`prompt_tokens_total`,
 * `generation_tokens_total`, `cached_tokens_total`, `num_requests_total`) when
 * the first request finishes (its TTFT and ITL histograms at the first token),
 * so a pod that has finished none exposes none of them. vLLM creates every
 * counter at start-up. An absent
 * counter is a zero only when the engine itself shows that the family would
 * exist if anything had been counted; everything else is unknown.
 */
import type { EngineKind } from "./types.js";

/** What one pod's window shows about a counter that has no sample in it. */
export interface AbsentCounterEvidence {
  readonly engine: EngineKind;
  /** The pod's newest gauge sample is within the staleness limit. */
  readonly podFresh: boolean;
  /** The window holds at least two gauge samples and no counter of the pod reset. */
  readonly windowEstablished: boolean;
  /** Some counter of the first-use family (SGLang's finish-counted token counters) has a sample in the window. */
  readonly firstUseFamilySeen: boolean;
  /** A counter the engine creates at start-up (SGLang `prefill_effective_tokens_total`) has a sample in the window. */
  readonly startupCounterSeen: boolean;
}

export type AbsentCounterReading = { readonly kind: "zero" } | { readonly kind: "unknown"; readonly reason: string };

/**
 * The rule. A zero needs all four: an engine that creates the counter on first
 * use (SGLang), a fresh pod, an established window, and no series of the
 * first-use family in the window while a start-up counter of the same pod is
 * there (its counters do reach Prometheus, so nothing was finished and counted).
 * One family series present and another absent is a partial scrape: unknown.
 *
 * Example: an SGLang pod up for ten minutes with `prefill_effective_tokens_total`
 * (seeded at 0) and no `prompt_tokens_total` → prompt tokens 0/s. The same pod
 * on an SGLang build without the seeded counter → unknown until a request finishes.
 */
export function absentCounterReading(evidence: AbsentCounterEvidence): AbsentCounterReading {
  if (evidence.engine !== "sglang") {
    return unknown("vLLM creates its counters at start-up, so an absent one was not scraped");
  }
  if (!evidence.podFresh) return unknown("the pod's gauges are stale");
  if (!evidence.windowEstablished) return unknown("the window has no baseline (fewer than two samples, or a reset)");
  if (evidence.firstUseFamilySeen) {
    return unknown("other series of the same first-use family are present, so this one is missing from the scrape");
  }
  if (!evidence.startupCounterSeen) {
    return unknown("no start-up counter of the pod shows that its counters reach Prometheus");
  }
  return { kind: "zero" };
}

function unknown(reason: string): AbsentCounterReading {
  return { kind: "unknown", reason };
}
