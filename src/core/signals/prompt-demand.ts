/**
 * Cache-missed prompt demand of one pod over one window (spec: Engine signals).
 * The subtraction and the clamp at zero happen per pod, before the role sum,
 * so one pod's surplus of hits never hides another pod's demand.
 */
import type { EngineKind, PodWindowRates } from "./types.js";

/** A finite, non-negative reading, or undefined: NaN, Inf and negatives are not measurements. */
export function measured(value: number | undefined): number | undefined {
  return value !== undefined && Number.isFinite(value) && value >= 0 ? value : undefined;
}

/**
 * vLLM: prompt rate minus the prefix-cache hit rate. Hits are not capped by
 * queries (the specification says queries do not cap them).
 * Example: prompt 3000 tok/s, hits 1800 tok/s → 1200 tok/s.
 */
function vllmPromptDemand(rates: PodWindowRates): number | undefined {
  const prompt = measured(rates.promptTokensPerSecond);
  if (prompt === undefined) return undefined;
  const hits = measured(rates.prefixCacheHitTokensPerSecond) ?? 0;
  return Math.max(0, prompt - hits);
}

/**
 * SGLang: `prefill_effective_tokens_total{mode="input"}` when the pod has it;
 * else the prompt rate minus whichever of the device, host and storage hit
 * rates are reported; else the raw prompt rate.
 */
function sglangPromptDemand(rates: PodWindowRates): number | undefined {
  const effective = measured(rates.effectivePrefillTokensPerSecond);
  if (effective !== undefined) return effective;
  const prompt = measured(rates.promptTokensPerSecond);
  if (prompt === undefined) return undefined;
  const hits = [rates.deviceHitTokensPerSecond, rates.hostHitTokensPerSecond, rates.storageHitTokensPerSecond]
    .map(measured)
    .reduce<number>((total, rate) => total + (rate ?? 0), 0);
  return Math.max(0, prompt - hits);
}

/** The pod's cache-missed prompt tokens per second, or undefined when its prompt counter is absent. */
export function promptDemandTokensPerSecond(engine: EngineKind, rates: PodWindowRates): number | undefined {
  return engine === "vllm" ? vllmPromptDemand(rates) : sglangPromptDemand(rates);
}
