import type { IncomingMessage, ServerResponse } from "node:http";
import type { TLSSocket } from "node:tls";
import {
  ApiException,
  ApiregistrationV1Api,
  CoreV1Api,
  type KubeConfig,
  type V1APIResource,
} from "@kubernetes/client-node";
import { sendJson, type LocalHttpsServer, type RequestListener } from "./https-server.js";
import { loopbackHost, waitFor } from "./net.js";

/** Who the aggregator says is calling, from the front-proxy headers. */
export interface ApiServiceCaller {
  user: string;
  groups: string[];
}

export type ApiServiceHandler = (
  req: IncomingMessage,
  res: ServerResponse,
  caller: ApiServiceCaller,
) => void | Promise<void>;

export interface ApiServiceRegistration {
  group: string;
  version: string;
  /** Listed in discovery at /apis/<group>/<version>. */
  resources: V1APIResource[];
  /** Gets every request except discovery and OpenAPI, which the harness answers. */
  handler?: ApiServiceHandler;
  /** Namespace of the ExternalName Service the APIService points at. */
  serviceNamespace?: string;
  serviceName?: string;
  groupPriorityMinimum?: number;
  versionPriority?: number;
  /** How long to wait until requests flow through the aggregator. */
  timeoutMs?: number;
}

export interface ApiServiceRequest {
  method: string;
  url: string;
  /** False when the caller did not present the front-proxy client certificate. */
  authenticated: boolean;
  caller: ApiServiceCaller;
}

export interface RegisteredApiService {
  /** `<version>.<group>` */
  name: string;
  server: LocalHttpsServer;
  /** Requests that reached the local server (the aggregator's probes included). */
  requests: ApiServiceRequest[];
  unregister(): Promise<void>;
}

export interface ApiServiceContext {
  kubeConfig: KubeConfig;
  frontProxyCaPem: string;
  startServer(listener: RequestListener, dnsNames: readonly string[], clientCaPem: string): Promise<LocalHttpsServer>;
  /** GET through the API server; resolves to the HTTP status code. */
  getStatusCode(path: string): Promise<number>;
}

function headerValues(req: IncomingMessage, name: string): string[] {
  const value = req.headers[name];
  if (value === undefined) return [];
  return Array.isArray(value) ? value : [value];
}

function isFrontProxy(req: IncomingMessage): boolean {
  const socket = req.socket as TLSSocket;
  if (!socket.authorized) return false;
  return socket.getPeerCertificate().subject?.CN === "front-proxy-client";
}

function defaultServiceName(group: string, version: string): string {
  const base = `harness-${group.split(".")[0] ?? "api"}-${version}`.toLowerCase().replace(/[^a-z0-9-]/g, "-");
  return base.slice(0, 63).replace(/-+$/, "");
}

/**
 * Registers an APIService served by an HTTPS server in the test process.
 *
 * Endpoints may not point at loopback, so the APIService references a Service
 * of type ExternalName whose name is 127.0.0.1: with aggregator routing off
 * (the default), the aggregator resolves such a Service to
 * https://<externalName>:<APIService port> and only checks Endpoints for
 * ClusterIP Services.
 */
export async function registerApiService(
  context: ApiServiceContext,
  registration: ApiServiceRegistration,
): Promise<RegisteredApiService> {
  const { group, version } = registration;
  const timeoutMs = registration.timeoutMs ?? 60_000;
  const serviceNamespace = registration.serviceNamespace ?? "default";
  const serviceName = registration.serviceName ?? defaultServiceName(group, version);
  const name = `${version}.${group}`;
  const groupVersion = `${group}/${version}`;
  const requests: ApiServiceRequest[] = [];
  const apiGroup = {
    name: group,
    versions: [{ groupVersion, version }],
    preferredVersion: { groupVersion, version },
  };

  const listener: RequestListener = async (req, res) => {
    const authenticated = isFrontProxy(req);
    const caller: ApiServiceCaller = authenticated
      ? {
          user: headerValues(req, "x-remote-user")[0] ?? "",
          groups: headerValues(req, "x-remote-group").flatMap((value) => value.split(",")),
        }
      : { user: "", groups: [] };
    requests.push({ method: req.method ?? "", url: req.url ?? "", authenticated, caller });
    if (!authenticated) {
      sendJson(res, 401, {
        kind: "Status",
        apiVersion: "v1",
        status: "Failure",
        code: 401,
        message: "front-proxy client certificate required",
      });
      return;
    }
    const path = new URL(req.url ?? "/", "https://localhost").pathname.replace(/\/+$/, "");
    if (req.method === "GET" && path === "/apis") {
      sendJson(res, 200, { kind: "APIGroupList", apiVersion: "v1", groups: [apiGroup] });
    } else if (req.method === "GET" && path === `/apis/${group}`) {
      sendJson(res, 200, { kind: "APIGroup", apiVersion: "v1", ...apiGroup });
    } else if (req.method === "GET" && path === `/apis/${groupVersion}`) {
      sendJson(res, 200, {
        kind: "APIResourceList",
        apiVersion: "v1",
        groupVersion,
        resources: registration.resources,
      });
    } else if (req.method === "GET" && path === "/openapi/v2") {
      // Minimal documents: the aggregator merges them into the cluster's
      // OpenAPI and logs an error on every resync when they are missing.
      sendJson(res, 200, { swagger: "2.0", info: { title: groupVersion, version }, paths: {} });
    } else if (req.method === "GET" && path === "/openapi/v3") {
      sendJson(res, 200, { paths: {} });
    } else if (path.startsWith("/openapi/") || !registration.handler) {
      sendJson(res, 404, {
        kind: "Status",
        apiVersion: "v1",
        status: "Failure",
        code: 404,
        reason: "NotFound",
        message: `${path} not served`,
      });
    } else {
      await registration.handler(req, res, caller);
    }
  };

  const server = await context.startServer(
    listener,
    // The aggregator verifies the serving cert against <service>.<namespace>.svc.
    [`${serviceName}.${serviceNamespace}.svc`, "localhost"],
    context.frontProxyCaPem,
  );
  let route: ApiServiceRoute | undefined;
  const unregister = async (): Promise<void> => {
    await route?.remove();
    route = undefined;
    await server.close();
  };
  try {
    route = await routeApiService(context, {
      group,
      version,
      portNumber: server.portNumber,
      caBundle: server.caBundle,
      serviceNamespace,
      serviceName,
      ...(registration.groupPriorityMinimum === undefined
        ? {}
        : { groupPriorityMinimum: registration.groupPriorityMinimum }),
      ...(registration.versionPriority === undefined ? {} : { versionPriority: registration.versionPriority }),
      timeoutMs,
    });
  } catch (cause) {
    await unregister().catch(() => undefined);
    throw new Error(`register APIService ${name}`, { cause });
  }
  return { name, server, requests, unregister };
}

/** Where an APIService sends requests: a loopback port served by any process (the test's or a controller's). */
export interface ApiServiceRoute {
  /** `<version>.<group>` */
  readonly name: string;
  readonly serviceNamespace: string;
  readonly serviceName: string;
  /** Deletes the APIService and its Service. */
  remove(): Promise<void>;
}

export interface ApiServiceRouteSpec {
  group: string;
  version: string;
  /** The loopback port the aggregator calls. */
  portNumber: number;
  /** Base64 PEM of the CA that signed the server's certificate for `<service>.<namespace>.svc`. */
  caBundle: string;
  serviceNamespace?: string;
  serviceName?: string;
  groupPriorityMinimum?: number;
  versionPriority?: number;
  /** How long to wait until requests flow through the aggregator. */
  timeoutMs?: number;
}

/**
 * Creates the ExternalName Service and the APIService that route a group
 * version to `https://127.0.0.1:<portNumber>`, then waits until the
 * APIService is Available and a discovery request through the API server
 * answers 200.
 */
export async function routeApiService(
  context: Pick<ApiServiceContext, "kubeConfig" | "getStatusCode">,
  spec: ApiServiceRouteSpec,
): Promise<ApiServiceRoute> {
  const { group, version } = spec;
  const timeoutMs = spec.timeoutMs ?? 60_000;
  const serviceNamespace = spec.serviceNamespace ?? "default";
  const serviceName = spec.serviceName ?? defaultServiceName(group, version);
  const name = `${version}.${group}`;
  const groupVersion = `${group}/${version}`;
  const core = context.kubeConfig.makeApiClient(CoreV1Api);
  const registrationApi = context.kubeConfig.makeApiClient(ApiregistrationV1Api);
  let serviceCreated = false;
  let apiServiceCreated = false;
  const remove = async (): Promise<void> => {
    const ignoreNotFound = (error: unknown): void => {
      if (!(error instanceof ApiException && error.code === 404)) throw error;
    };
    if (apiServiceCreated) await registrationApi.deleteAPIService({ name }).catch(ignoreNotFound);
    if (serviceCreated) {
      await core.deleteNamespacedService({ name: serviceName, namespace: serviceNamespace }).catch(ignoreNotFound);
    }
    apiServiceCreated = false;
    serviceCreated = false;
  };

  try {
    await core.createNamespacedService({
      namespace: serviceNamespace,
      body: {
        apiVersion: "v1",
        kind: "Service",
        metadata: { name: serviceName, namespace: serviceNamespace },
        spec: { type: "ExternalName", externalName: loopbackHost },
      },
    });
    serviceCreated = true;
    await registrationApi.createAPIService({
      body: {
        apiVersion: "apiregistration.k8s.io/v1",
        kind: "APIService",
        metadata: { name },
        spec: {
          group,
          version,
          service: { namespace: serviceNamespace, name: serviceName, port: spec.portNumber },
          caBundle: spec.caBundle,
          groupPriorityMinimum: spec.groupPriorityMinimum ?? 1000,
          versionPriority: spec.versionPriority ?? 15,
        },
      },
    });
    apiServiceCreated = true;

    let lastConditions = "";
    await waitFor(`APIService ${name} to become Available`, { timeoutMs, intervalMs: 200 }, async () => {
      const apiService = await registrationApi.readAPIService({ name });
      const conditions = apiService.status?.conditions ?? [];
      lastConditions = JSON.stringify(conditions);
      const available = conditions.find((condition) => condition.type === "Available");
      if (available?.status === "True") return true;
      throw new Error(`conditions: ${lastConditions}`);
    });
    // Availability is reported by its own controller; wait until the proxy
    // path answers too, so the first request of a test cannot race it.
    await waitFor(
      `requests to /apis/${groupVersion} to reach the local server`,
      { timeoutMs, intervalMs: 200 },
      async () => {
        const statusCode = await context.getStatusCode(`/apis/${groupVersion}`);
        if (statusCode === 200) return true;
        throw new Error(`GET /apis/${groupVersion} answered ${statusCode}`);
      },
    );
  } catch (cause) {
    await remove().catch(() => undefined);
    throw new Error(`route APIService ${name} to port ${spec.portNumber}`, { cause });
  }
  return { name, serviceNamespace, serviceName, remove };
}
