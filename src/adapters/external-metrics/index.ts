// The external metrics API (external.metrics.k8s.io/v1beta1) for the aggregator; see server.ts.
export { patchApiServiceCaBundle } from "./api-service.js";
export { readFrontProxyTrust, type FrontProxyTrust } from "./authentication.js";
export { SubjectAccessReviewAuthorizer } from "./authorization.js";
export { externalMetrics } from "./catalogue.js";
export {
  answerUnauthenticated,
  externalMetricReadPath,
  startExternalMetricsServer,
  type RunningExternalMetricsServer,
} from "./server.js";
export type { ScalerReader } from "./values.js";
