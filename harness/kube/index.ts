// A real kube-apiserver and etcd for integration tests; see README.md.
export { startControlPlane } from "./control-plane.js";
export type { ControllerManagerOptions, RunningControllerManager } from "./controller-manager.js";
export type { ApiServiceRoute, ApiServiceRouteSpec } from "./api-service.js";
export type { ApplyCrdOptions, ControlPlane, ControlPlaneOptions, UserCredentials } from "./control-plane.js";
export { defaultKubeBinDir, findKubeBinaries } from "./binaries.js";
export type { KubeBinaries } from "./binaries.js";
export { readBody, sendJson } from "./https-server.js";
export type { LocalHttpsServer, RequestListener } from "./https-server.js";
export type {
  AdmissionCall,
  AdmissionHandler,
  AdmissionRequest,
  AdmissionVerdict,
  JsonPatchOperation,
  RegisteredWebhooks,
  WebhookRegistration,
  WebhookSpec,
} from "./webhooks.js";
export type {
  ApiServiceCaller,
  ApiServiceHandler,
  ApiServiceRegistration,
  ApiServiceRequest,
  RegisteredApiService,
} from "./api-service.js";
