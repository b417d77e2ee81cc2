/**
 * Which listed scalers get a pass this tick: pure, the clock passed in. A scaler is due when its sampling
 * interval has passed since its last pass, when it is new or recreated (another uid), or while it is being
 * deleted (a deleting scaler samples nothing); a scaler whose previous pass is still running is skipped until
 * that pass ends. An edited scaler waits for its interval too: the specification has the sampler never scrape a
 * target again before the interval has passed.
 */
import type { Scaler } from "../../core/api/scaler.js";
import { scalerKey, uidOf } from "./identity.js";
import type { ScalerMemory } from "./memory.js";

export interface DueInput {
  /** The scalers that validated, as listed. */
  readonly scalers: readonly Scaler[];
  readonly memory: ReadonlyMap<string, Pick<ScalerMemory, "uid" | "lastPassMs">>;
  /** Keys whose pass outlived its deadline and still runs. */
  readonly running: ReadonlySet<string>;
  readonly nowMs: number;
}

/**
 * Example: interval 15 s, last pass at t = 100 s, same uid: not due at t = 110 s, due at t = 115 s.
 */
export function dueScalers(input: DueInput): Scaler[] {
  return input.scalers.filter((scaler) => {
    const key = scalerKey(scaler);
    if (input.running.has(key)) return false;
    const memory = input.memory.get(key);
    if (memory === undefined || memory.uid !== uidOf(scaler)) return true;
    if (scaler.metadata.deletionTimestamp !== undefined) return true;
    return input.nowMs - memory.lastPassMs >= scaler.spec.sampling.intervalSeconds * 1000;
  });
}

/** Keys the loop remembers that the list no longer holds: their memory and metrics are dropped. */
export function forgottenKeys(remembered: Iterable<string>, listed: ReadonlySet<string>): string[] {
  return [...remembered].filter((key) => !listed.has(key));
}
