/**
 * A scaler that sees demand exactly as it arrives and nothing ahead (docs/quality.md, twenty-seventh run):
 * every 15 s it reads the prompt and output tokens of the requests that arrived in the last `measureSeconds`
 * straight from the trace (no scrape, no Prometheus window, no guard), turns them into fluid replicas as
 * the oracle does, and asks for `max(1, ceil(h · the largest such need of the last holdSeconds))`. New
 * replicas take the fleet's cold start; fewer drain at once. The cheapest of this family reaching the goal
 * is about the least a scaler that reacts to demand can spend: what separates it from the oracle is the
 * future, what separates mds-scaler from it is how mds-scaler observes and plans.
 */
import type { EngineCapacity } from "../../engines/model.js";
import type { Policy, PolicyContext } from "../policy.js";
import type { Trace } from "../traces.js";

export interface SightedOptions {
  /** Multiplies the fluid need (the oracle's headroom h). */
  readonly headroom: number;
  /** The arrivals the need is measured over, ending now. */
  readonly measureSeconds: number;
  /** The largest need of this many seconds back is kept (a scale-down window; at least one decision). */
  readonly holdSeconds: number;
  readonly initialReplicas: number;
  readonly maxReplicas?: number;
}

/** Seconds between decisions: the specification's default sampling interval. */
export const sightedIntervalSeconds = 15;

/** Cumulative prompt and output tokens of the requests arriving before each whole second. */
function cumulativeTokens(trace: Trace): { readonly prompt: Float64Array; readonly output: Float64Array } {
  const seconds = Math.ceil(trace.spanSeconds) + 1;
  const prompt = new Float64Array(seconds + 1);
  const output = new Float64Array(seconds + 1);
  for (const r of trace.requests) {
    const i = Math.min(seconds - 1, Math.max(0, Math.floor(r.arrivalSeconds))) + 1;
    prompt[i] = (prompt[i] ?? 0) + r.promptTokens;
    output[i] = (output[i] ?? 0) + r.outputTokens;
  }
  for (let i = 1; i <= seconds; i++) {
    prompt[i] = (prompt[i] ?? 0) + (prompt[i - 1] ?? 0);
    output[i] = (output[i] ?? 0) + (output[i - 1] ?? 0);
  }
  return { prompt, output };
}

/** The policy's label: every figure it was run with, so a table row names its member of the family. */
export function sightedLabel(options: Pick<SightedOptions, "headroom" | "measureSeconds" | "holdSeconds">): string {
  return `sighted h=${options.headroom.toFixed(3)} measure=${options.measureSeconds}s hold=${options.holdSeconds}s`;
}

export function sightedPolicy(trace: Trace, capacity: EngineCapacity, options: SightedOptions): Policy {
  const { prompt, output } = cumulativeTokens(trace);
  const last = prompt.length - 1;
  const at = (series: Float64Array, second: number): number => series[Math.min(last, Math.max(0, second))] ?? 0;
  /** Fluid replicas the arrivals of (now − measureSeconds, now] need. */
  const needAt = (nowSeconds: number): number => {
    const to = Math.floor(nowSeconds);
    const from = to - options.measureSeconds;
    return Math.max(
      (at(prompt, to) - at(prompt, from)) / (options.measureSeconds * capacity.prefillTokensPerSecond),
      (at(output, to) - at(output, from)) / (options.measureSeconds * capacity.decodeTokensPerSecond),
    );
  };
  const max = options.maxReplicas ?? 1024;
  const needs: { readonly at: number; readonly need: number }[] = [];
  return {
    name: sightedLabel(options),
    family: "sighted",
    intervalSeconds: sightedIntervalSeconds,
    initialReplicas: options.initialReplicas,
    decide(ctx: PolicyContext) {
      needs.push({ at: ctx.nowSeconds, need: needAt(ctx.nowSeconds) });
      while ((needs[0]?.at ?? Infinity) <= ctx.nowSeconds - options.holdSeconds) needs.shift();
      const held = Math.max(...needs.map((n) => n.need));
      const desired = Math.min(max, Math.max(1, Math.ceil(options.headroom * held - 1e-9)));
      if (desired !== ctx.fleet.desiredReplicas) ctx.fleet.setDesired(desired, ctx.nowSeconds);
    },
  };
}
