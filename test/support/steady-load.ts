/**
 * The simulator's steady test load: uniform arrivals of fixed 512-token prompts
 * with a shared prefix. Varied output lengths keep finishes (SGLang counts
 * tokens at finish) from arriving in lockstep batches.
 */
import { SyntheticWorkload } from "../../src/sim/engines/index.js";

export function steadyLoad(
  seed: number,
  startSeconds: number,
  requestsPerSecond: number | ((atSeconds: number) => number),
): SyntheticWorkload {
  return new SyntheticWorkload({
    seed,
    startSeconds,
    requestsPerSecond,
    arrivals: "uniform",
    promptTokens: { kind: "fixed", tokens: 512 },
    outputTokens: { kind: "uniform", minTokens: 32, maxTokens: 64 },
    sharedPrefix: { groups: 4, prefixTokens: 256, blockTokens: 16 },
    streamingFraction: 0.5,
  });
}
