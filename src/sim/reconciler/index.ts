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
export { KubeCallError, modelDeploymentResource } from "./kube.js";
export type { ModelDeploymentResource } from "./kube.js";
export { SimulatedReconciler } from "./reconciler.js";
export type { SimulatedReconcilerOptions } from "./reconciler.js";
