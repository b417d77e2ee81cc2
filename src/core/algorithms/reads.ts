/**
 * Which pod fields each algorithm reads, per role: one entry per
 * `algorithm.type`, as in the registry (`index.ts`). The observation builder
 * counts a pod toward coverage only when it reports every one of them, so a
 * field lost to an absent series or a failed or partial query holds
 * scale-down without hiding the fields that are known.
 */
import type { AlgorithmType, ScalerSpec } from "../api/scaler.js";
import type { PodField } from "../signals/pod-fields.js";
import { predictiveReads } from "./predictive.js";
import { proportionalReads } from "./proportional.js";
import { tokenThroughputReads } from "./token-throughput.js";
import type { FieldsRead, RoleIdentity } from "./types.js";

export const algorithmReads: Readonly<Record<AlgorithmType, FieldsRead>> = {
  Predictive: predictiveReads,
  Proportional: proportionalReads,
  TokenThroughput: tokenThroughputReads,
};

/** The fields the spec's algorithm reads for this role; the spec's algorithm type must be inferred. */
export function fieldsRead(spec: ScalerSpec, role: RoleIdentity): readonly PodField[] {
  return algorithmReads[spec.algorithm.type](spec, role);
}
