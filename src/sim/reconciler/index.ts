// A simulated ModelDeployment reconciler for tests and demos; see README.md.
export { ManualClock, systemClock } from "./clock.js";
export type { Clock } from "./clock.js";
export { defaultTimings, parseRetry, retirementRetryAnnotation } from "./deployment.js";
export type {
  DeploymentSnapshot,
  ReconcilerEvent,
  ReconcilerTimings,
  ReplicaPhase,
  SimRetirementState,
  SimStatus,
} from "./deployment.js";
export {
  defaultFleetDeployment,
  EngineFleetPort,
  engineKindOf,
  RecordingFleet,
  replicaPodName,
  servingKindOf,
} from "./fleet-port.js";
export type { EngineFleetPortOptions, FleetEvent, FleetPort, ReplicaContext } from "./fleet-port.js";
// The reconciler talks to the API server through the product's one Kubernetes client.
export { allNamespaces, KubeCallError, modelDeploymentResource } from "../../adapters/kubernetes/resources.js";
export type { ResourceRef } from "../../adapters/kubernetes/resources.js";
export { SimulatedReconciler } from "./reconciler.js";
export type { SimulatedReconcilerOptions } from "./reconciler.js";
