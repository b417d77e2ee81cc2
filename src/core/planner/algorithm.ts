/**
 * The planner's one call into the algorithm registry, so the wiring lives in
 * one line and the planner never branches on an algorithm's name.
 */
import type { Algorithm } from "../algorithms/types.js";
import type { AlgorithmType } from "../api/scaler.js";
import { proportional } from "../algorithms/proportional.js";

// Until the registry module lands, only the algorithms already written are known.
const known: Partial<Record<AlgorithmType, Algorithm>> = { Proportional: proportional };

/** The algorithm for a type, or undefined when none is registered. */
export function algorithmFor(type: AlgorithmType): Algorithm | undefined {
  return known[type];
}
