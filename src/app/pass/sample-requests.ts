/** What one pass asks the signal source for: a request per due scaler that is neither deleted nor suspended. */
import { withInferredAlgorithm, type Scaler } from "../../core/api/scaler.js";
import { samplingWindowsOf } from "../../core/algorithms/windows.js";
import type { SampleRequest } from "../ports.js";
import { namespaceOf, scalerKey } from "./identity.js";

export function sampleRequestsOf(scalers: readonly Scaler[]): SampleRequest[] {
  return scalers
    .filter((s) => s.metadata.deletionTimestamp === undefined && !s.spec.suspend)
    .map((s) => {
      const spec = withInferredAlgorithm(s.spec);
      return {
        key: scalerKey(s),
        namespace: namespaceOf(s),
        deployment: s.spec.targetRef.name,
        roles: s.spec.roles.map((r) => r.name),
        intervalSeconds: spec.sampling.intervalSeconds,
        ...samplingWindowsOf(spec),
      };
    });
}
