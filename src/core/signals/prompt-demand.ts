/**
 * Cache-missed prompt demand of one pod over one window (spec: Engine signals).
 * The subtraction and the clamp at zero happen per pod, before the role sum,
 * so one pod's surplus of hits never hides another pod's demand.
 */
import type { EngineKind, PodWindowRates } from "./types.js";

/** A finite, non-negative reading, or undefined: NaN, Inf and negatives are not measurements. */
export function measured(value: number | undefined): number | undefined {
  // Number.isFinite is false for undefined, as for NaN and ±Infinity.
  return Number.isFinite(value) && (value as number) >= 0 ? value : undefined;
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

/** The SGLang hit rates reported per tier, else the untiered `cached_tokens_total` rate; undefined when none. */
function sglangHitTokensPerSecond(rates: PodWindowRates): number | undefined {
  const tiers = [rates.deviceHitTokensPerSecond, rates.hostHitTokensPerSecond, rates.storageHitTokensPerSecond].map(
    measured,
  );
  if (tiers.some((rate) => rate !== undefined)) return tiers.reduce<number>((total, rate) => total + (rate ?? 0), 0);
  return measured(rates.totalCachedTokensPerSecond);
}

/**
 * SGLang: `prefill_effective_tokens_total{mode="input"}` when the pod has it;
 * else the prompt rate minus whichever hit rates are reported (tiers from
 * `cached_tokens_total{cache_source}` on older builds, counted at request
 * finish like the prompt tokens); else the raw prompt rate.
 */
function sglangPromptDemand(rates: PodWindowRates): number | undefined {
  const effective = measured(rates.effectivePrefillTokensPerSecond);
  if (effective !== undefined) return effective;
  const prompt = measured(rates.promptTokensPerSecond);
  if (prompt === undefined) return undefined;
  return Math.max(0, prompt - (sglangHitTokensPerSecond(rates) ?? 0));
}

/**
 * Names the series the pod's prompt demand came from, for `seriesUsed`;
 * undefined when there is no demand figure.
 */
export function promptDemandSeries(engine: EngineKind, rates: PodWindowRates): string | undefined {
  if (promptDemandTokensPerSecond(engine, rates) === undefined) return undefined;
  if (engine === "vllm") {
    return measured(rates.prefixCacheHitTokensPerSecond) === undefined
      ? "vllm:prompt_tokens_total"
      : "vllm:prompt_tokens_total - vllm:prefix_cache_hits_total";
  }
  if (measured(rates.effectivePrefillTokensPerSecond) !== undefined) {
    return 'sglang:prefill_effective_tokens_total{mode="input"}';
  }
  if (sglangHitTokensPerSecond(rates) === undefined) return "sglang:prompt_tokens_total (no cache accounting)";
  return `sglang:prompt_tokens_total - ${rates.cacheSeries ?? "sglang:prefill_effective_tokens_total"}`;
}

/** The pod's cache-missed prompt tokens per second, or undefined when its prompt counter is absent. */
export function promptDemandTokensPerSecond(engine: EngineKind, rates: PodWindowRates): number | undefined {
  return engine === "vllm" ? vllmPromptDemand(rates) : sglangPromptDemand(rates);
}
