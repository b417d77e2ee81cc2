/**
 * The `external.metrics.k8s.io/v1beta1` API over HTTPS, for the aggregator:
 * discovery, and `GET .../namespaces/{namespace}/{metric}?labelSelector=`.
 * Every request must come through the front proxy (authentication.ts);
 * metric reads are then authorized by the API server (authorization.ts).
 */
import { createServer, type Server } from "node:https";
import type { IncomingMessage, ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import type { Logger } from "../telemetry/logger.js";
import type { ServingCertificate } from "../webhook/server.js";
import { authenticate, type FrontProxyTrust } from "./authentication.js";
import { externalMetricsGroup, externalMetricsVersion, type Authorizer } from "./authorization.js";
import { externalMetrics, findExternalMetric } from "./catalogue.js";
import { parseLabelSelector, SelectorError } from "./selector.js";
import { readExternalMetric, type ScalerReader } from "./values.js";

const groupVersion = `${externalMetricsGroup}/${externalMetricsVersion}`;

export interface ExternalMetricsDeps {
  readonly reader: ScalerReader;
  readonly authorizer: Authorizer;
  /** True while some replica renews the leader Lease (or this one always leads). */
  readonly leaderRenewing: () => boolean;
  readonly logger: Logger;
}

export interface Answer {
  readonly status: number;
  readonly body: unknown;
}

function failure(status: number, reason: string, message: string): Answer {
  return {
    status,
    body: { kind: "Status", apiVersion: "v1", metadata: {}, status: "Failure", reason, message, code: status },
  };
}

/** Discovery: one resource per metric, so the list is never empty. */
export function apiResourceList(): unknown {
  return {
    kind: "APIResourceList",
    apiVersion: "v1",
    groupVersion,
    resources: externalMetrics.map((m) => ({
      name: m.name,
      singularName: "",
      namespaced: true,
      kind: "ExternalMetricValueList",
      verbs: ["get"],
    })),
  };
}

const apiGroup = {
  name: externalMetricsGroup,
  versions: [{ groupVersion, version: externalMetricsVersion }],
  preferredVersion: { groupVersion, version: externalMetricsVersion },
};

const metricPath = new RegExp(
  `^/apis/${externalMetricsGroup.replace(/\./g, "\\.")}/${externalMetricsVersion}/namespaces/([^/]+)/([^/]+)$`,
);

/** Answers one request whose caller is already authenticated. */
export async function answer(
  deps: ExternalMetricsDeps,
  req: { method: string; url: string },
  authorize: (namespace: string, resource: string) => Promise<Answer | undefined>,
): Promise<Answer> {
  const url = new URL(req.url, "https://localhost");
  const path = url.pathname.replace(/\/+$/, "");
  if (req.method !== "GET") return failure(405, "MethodNotAllowed", `${req.method} ${path}: only GET is served`);
  if (path === "/apis") return { status: 200, body: { kind: "APIGroupList", apiVersion: "v1", groups: [apiGroup] } };
  if (path === `/apis/${externalMetricsGroup}`)
    return { status: 200, body: { kind: "APIGroup", apiVersion: "v1", ...apiGroup } };
  if (path === `/apis/${groupVersion}`) return { status: 200, body: apiResourceList() };
  if (path === "/openapi/v2")
    return {
      status: 200,
      body: { swagger: "2.0", info: { title: groupVersion, version: externalMetricsVersion }, paths: {} },
    };
  if (path === "/openapi/v3") return { status: 200, body: { paths: {} } };
  const match = metricPath.exec(path);
  if (match === null) return failure(404, "NotFound", `${path} is not served`);
  const namespace = decodeURIComponent(match[1] ?? "");
  const metricName = decodeURIComponent(match[2] ?? "");
  const refused = await authorize(namespace, metricName);
  if (refused !== undefined) return refused;
  const metric = findExternalMetric(metricName);
  if (metric === undefined)
    return failure(
      404,
      "NotFound",
      `external metric ${JSON.stringify(metricName)} is not served (served: ${externalMetrics.map((m) => m.name).join(", ")})`,
    );
  let selector;
  try {
    selector = parseLabelSelector(url.searchParams.get("labelSelector") ?? "");
  } catch (error) {
    if (error instanceof SelectorError) return failure(400, "BadRequest", `labelSelector: ${error.message}`);
    throw error;
  }
  const { list, omitted } = await readExternalMetric({
    reader: deps.reader,
    namespace,
    metric,
    selector,
    leaderRenewing: deps.leaderRenewing(),
  });
  if (omitted.length > 0)
    deps.logger.debug("external metric values reported missing", { namespace, metric: metricName, omitted });
  return { status: 200, body: list };
}

/**
 * The same reads without the aggregator, for the plain-HTTP port beside
 * `/metrics` (which publishes the same values): a KEDA `metrics-api` trigger
 * can poll it where another adapter owns the APIService. Any replica answers.
 */
export function answerUnauthenticated(deps: Omit<ExternalMetricsDeps, "authorizer">, url: string): Promise<Answer> {
  return answer(
    { ...deps, authorizer: { authorize: async () => ({ allowed: true, reason: "" }) } },
    { method: "GET", url },
    async () => undefined,
  );
}

/** Paths `answerUnauthenticated` serves. */
export const externalMetricReadPath = metricPath;

export interface RunningExternalMetricsServer {
  readonly port: number;
  /** New serving certificate or front-proxy CA; open connections keep the old ones. */
  setTls(tls: ServingCertificate, trust: FrontProxyTrust): void;
  close(): Promise<void>;
}

function send(res: ServerResponse, result: Answer): void {
  const body = JSON.stringify(result.body);
  res.writeHead(result.status, { "content-type": "application/json", "content-length": Buffer.byteLength(body) });
  res.end(body);
}

function tlsOptions(tls: ServingCertificate, trust: FrontProxyTrust): { cert: string; key: string; ca: string } {
  return { cert: tls.certPem, key: tls.keyPem, ca: trust.caPem };
}

export async function startExternalMetricsServer(opts: {
  deps: ExternalMetricsDeps;
  address: string;
  tls: ServingCertificate;
  trust: FrontProxyTrust;
}): Promise<RunningExternalMetricsServer> {
  const { deps } = opts;
  let trust = opts.trust;
  const handle = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const who = authenticate(req, trust);
    if ("refused" in who) {
      deps.logger.debug("external metrics request refused", { url: req.url, why: who.refused });
      send(res, failure(401, "Unauthorized", `only the API server's front proxy may call this server: ${who.refused}`));
      return;
    }
    const authorize = async (namespace: string, resource: string): Promise<Answer | undefined> => {
      const verdict = await deps.authorizer.authorize(who.user, { namespace, resource });
      if (verdict.allowed) return undefined;
      return failure(
        403,
        "Forbidden",
        `${resource}.${externalMetricsGroup} is forbidden: User "${who.user.username}" cannot list resource "${resource}" in API group "${externalMetricsGroup}" in the namespace "${namespace}"${verdict.reason === "" ? "" : `: ${verdict.reason}`}`,
      );
    };
    send(res, await answer(deps, { method: req.method ?? "", url: req.url ?? "/" }, authorize));
  };
  const server: Server = createServer(
    // Client certificates are requested, and checked per request, so a refusal can say why.
    { ...tlsOptions(opts.tls, trust), requestCert: true, rejectUnauthorized: false },
    (req, res) => {
      handle(req, res).catch((error: unknown) => {
        deps.logger.error("external metrics request failed", { url: req.url, error });
        if (!res.headersSent)
          send(res, failure(500, "InternalError", "the external metrics request failed; see the controller log"));
      });
    },
  );
  // The aggregator keeps connections open; a stalled client must not hold one forever.
  server.requestTimeout = 30_000;
  server.headersTimeout = 20_000;
  const [host, portText] = [
    opts.address.slice(0, opts.address.lastIndexOf(":")),
    opts.address.slice(opts.address.lastIndexOf(":") + 1),
  ];
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(Number(portText), host === "" ? undefined : host, () => {
      server.off("error", reject);
      resolve();
    });
  });
  return {
    port: (server.address() as AddressInfo).port,
    setTls(tls, nextTrust) {
      trust = nextTrust;
      server.setSecureContext(tlsOptions(tls, nextTrust));
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
