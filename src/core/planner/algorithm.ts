/**
 * The planner's one call into the algorithm registry, so the wiring lives in
 * one place and the planner never branches on an algorithm's name.
 */
import { algorithmFor as registryLookup } from "../algorithms/index.js";
import type { Algorithm } from "../algorithms/types.js";
import type { AlgorithmType } from "../api/scaler.js";

/** The algorithm for a type, or undefined when none is registered (the planner then holds every role). */
export function algorithmFor(type: AlgorithmType): Algorithm | undefined {
  return registryLookup(type);
}
