/**
 * The algorithm registry: one entry per `algorithm.type`, in alphabetical
 * order. The planner looks the algorithm up here and never branches on its
 * name; docs/algorithms.md explains how to add one.
 */
import type { AlgorithmType } from "../api/scaler.js";
import { predictive } from "./predictive.js";
import { proportional } from "./proportional.js";
import { tokenThroughput } from "./token-throughput.js";
import type { Algorithm } from "./types.js";

export const algorithms: Readonly<Record<AlgorithmType, Algorithm>> = {
  Predictive: predictive,
  Proportional: proportional,
  TokenThroughput: tokenThroughput,
};

/** The algorithm for a type; the record is total over AlgorithmType, so there is no miss. */
export function algorithmFor(type: AlgorithmType): Algorithm {
  return algorithms[type];
}

export type {
  Algorithm,
  AlgorithmInput,
  AlgorithmResult,
  AlgorithmRoleInput,
  DemandFigures,
  RoleRecommendation,
} from "./types.js";
export { algorithmReasons, type AlgorithmReason } from "./reasons.js";
