/**
 * Why a role observation has the signal state it has, in words, for
 * `mds-scaler observe` and logs. Mirrors the decisions of `observeRole`.
 */
import type { PodSample, RoleObservation, RoleSamples } from "./types.js";

export interface ExplainInput {
  readonly samples: RoleSamples;
  readonly observation: RoleObservation;
  readonly nowMs: number;
  readonly staleAfterSeconds: number;
}

function ageSeconds(pod: PodSample, nowMs: number): number {
  return nowMs / 1000 - pod.lastSampleUnixSeconds;
}

export function explainSignalState(input: ExplainInput): string {
  const { samples, observation, nowMs, staleAfterSeconds } = input;
  if (samples.queryFailed !== undefined) return `the queries failed: ${samples.queryFailed.reason}`;
  if (samples.pods.length === 0) {
    return "no pod of this role answered: no engine gauge with its namespace, deployment and role labels";
  }
  const fresh = samples.pods.filter((pod) => ageSeconds(pod, nowMs) <= staleAfterSeconds);
  switch (observation.signalState) {
    case "Stale":
      return `every answering pod's newest sample is older than ${staleAfterSeconds} s`;
    case "Missing": {
      const established = fresh.filter((pod) => pod.windows.stable.established).length;
      if (established === 0) {
        return `no fresh pod has an established stable window (fewer than two samples in it, or a counter reset)`;
      }
      return `no established pod reports a prompt or generation token rate (counters absent and not a measured zero)`;
    }
    case "Idle":
      return `every demand figure is a measured zero`;
    case "Fresh": {
      const coverage =
        observation.sampledReplicas < observation.readyReplicas
          ? `; coverage incomplete: ${observation.sampledReplicas} of ${observation.readyReplicas} ready replicas sampled`
          : "";
      return `current readings with work${coverage}`;
    }
  }
}
