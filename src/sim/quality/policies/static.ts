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

/** A fixed fleet of several roles: the replicas per role it starts with, never changed. */
export function staticVectorPolicy(vector: Readonly<Record<string, number>>, label = "static"): Policy {
  return {
    name: `${label} ${Object.entries(vector)
      .map(([role, n]) => `${role}=${n}`)
      .join(" ")}`,
    family: "static",
    intervalSeconds: 3600,
    initialReplicas: vector,
    decide: () => undefined,
  };
}
