/** A fixed fleet: the replicas it starts with, never changed. */
import type { Policy } from "../policy.js";

export function staticPolicy(replicas: number, label = "static"): Policy {
  return {
    name: `${label} n=${replicas}`,
    family: "static",
    intervalSeconds: 3600,
    initialReplicas: replicas,
    decide: () => undefined,
  };
}
