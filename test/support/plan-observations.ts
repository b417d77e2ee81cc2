/**
 * What two query plans must read alike. `unions` and `parts` read the same samples; `roles`
 * sums the latency buckets by role, so its pods carry no buckets of their own (and under
 * `native` no sums, the role's native sum carrying them): it must read the same samples but for
 * those buckets and sums, and every role's observation, for every role kind and with every
 * field read, must equal the other plan's field by field.
 */
import type { SamplingPass, ScalerSamplingInput } from "../../src/adapters/prometheus/source.js";
import { roleKinds } from "../../src/core/api/model-deployment.js";
import { observeRole, staleAfterSeconds } from "../../src/core/signals/observe.js";
import { podFields } from "../../src/core/signals/pod-fields.js";
import type { RoleObservation } from "../../src/core/signals/types.js";

/** The pass without its query count, latency buckets and histogram sums (the pods' and the roles'), as plain data. */
export function withoutBucketsAndSums(pass: SamplingPass): unknown {
  const scalers = [...pass.scalers].map(([key, roles]) => [key, [...roles]]);
  return JSON.parse(
    // Which roles lacked native sums is the `native` plan's alone (both-plans.ts checks it).
    JSON.stringify({ ...pass, queries: 0, nativeSumsMissing: [], scalers }, (k, v: unknown) =>
      k === "buckets" || k === "sum" || k === "roleHistograms" ? undefined : v,
    ),
  );
}

/** Every role's observation as each role kind, reading every field, keyed `<scaler>/<role>/<kind>`. */
export function observationsOf(
  pass: SamplingPass,
  scalers: readonly ScalerSamplingInput[],
): Map<string, RoleObservation> {
  const out = new Map<string, RoleObservation>();
  for (const scaler of scalers)
    for (const role of scaler.roles)
      for (const kind of roleKinds)
        out.set(
          `${scaler.key}/${role}/${kind}`,
          observeRole({
            kind,
            samples: pass.scalers.get(scaler.key)?.get(role) ?? { pods: [] },
            readyReplicas: 1,
            nowMs: pass.atUnixMs,
            staleAfterSeconds: staleAfterSeconds(scaler.intervalSeconds),
            reads: podFields,
          }),
        );
  return out;
}
