/**
 * Which pod fields each algorithm reads, per role: one entry per
 * `algorithm.type`, as in the registry (`index.ts`). The observation builder
 * counts a pod toward coverage only when it reports every one of them, so a
 * field lost to an absent series or a failed or partial query holds
 * scale-down without hiding the fields that are known.
 */
import { PredictiveSchema, type AlgorithmType, type ProportionalMetric, type ScalerSpec } from "../api/scaler.js";
import type { PodField } from "../signals/pod-fields.js";
import { tokenFieldsRead, tokenTargetPerReplica } from "./capacity.js";
import { tokenThroughputParams } from "./token-throughput.js";
import type { FieldsRead, RoleIdentity } from "./types.js";

/** A driven role reads its kind's demand and guarded latency; a ratio-coupled one (no capacity) reads nothing. */
function tokenThroughputReads(spec: ScalerSpec, role: RoleIdentity): readonly PodField[] {
  const params = tokenThroughputParams(spec.algorithm.tokenThroughput);
  return tokenTargetPerReplica(role.kind, params) === undefined ? [] : tokenFieldsRead(role.kind);
}

/** As TokenThroughput: the fallback and the filter read the kind's demand, the guard its latency. */
function predictiveReads(spec: ScalerSpec, role: RoleIdentity): readonly PodField[] {
  const params = spec.algorithm.predictive ?? PredictiveSchema.parse({});
  return tokenTargetPerReplica(role.kind, params.tokenThroughput) === undefined ? [] : tokenFieldsRead(role.kind);
}

const metricFields: Readonly<Record<ProportionalMetric, readonly PodField[]>> = {
  QueueDepth: ["runningRequests", "waitingRequests"],
  RunningRequests: ["runningRequests"],
  WaitingRequests: ["waitingRequests"],
  PromptTokensPerSecond: ["promptTokens"],
  GenerationTokensPerSecond: ["generationTokens"],
  TotalTokensPerSecond: ["promptTokens", "generationTokens"],
};

/** A role with a target reads the fields its metric is made of; the others follow ratios and read nothing. */
function proportionalReads(spec: ScalerSpec, role: RoleIdentity): readonly PodField[] {
  const params = spec.algorithm.proportional;
  if (params === undefined || !params.roleTargets.some((entry) => entry.name === role.name)) return [];
  return metricFields[params.metric];
}

export const algorithmReads: Readonly<Record<AlgorithmType, FieldsRead>> = {
  Predictive: predictiveReads,
  Proportional: proportionalReads,
  TokenThroughput: tokenThroughputReads,
};

/** The fields the spec's algorithm reads for this role; the spec's algorithm type must be inferred. */
export function fieldsRead(spec: ScalerSpec, role: RoleIdentity): readonly PodField[] {
  return algorithmReads[spec.algorithm.type](spec, role);
}
