/**
 * The external metrics server over real TLS: only a caller holding a client
 * certificate from the request-header CA, with an allowed name and a user
 * header, gets past authentication; the authorizer then decides per metric.
 */
import { mkdtemp, rm } from "node:fs/promises";
import { request } from "node:https";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { frontProxyTrustFrom } from "../../../src/adapters/external-metrics/authentication.js";
import {
  startExternalMetricsServer,
  type RunningExternalMetricsServer,
} from "../../../src/adapters/external-metrics/server.js";
import { createLogger } from "../../../src/adapters/telemetry/logger.js";
import { Pki, type CertificateAuthority, type IssuedCertificate } from "../../../harness/kube/pki.js";
import { FakeAuthorizer, FakeScalerReader, plannedScaler } from "../../fakes/external-metrics.js";

interface Reply {
  status: number;
  body: { kind?: string; message?: string; items?: { value: string }[]; resources?: { name: string }[] };
}

let dirPath: string;
let server: RunningExternalMetricsServer;
let servingCa: CertificateAuthority;
let proxy: IssuedCertificate;
let otherName: IssuedCertificate;
let strangerCert: IssuedCertificate;
let leaderRenewing = true;
const authorizer = new FakeAuthorizer(
  new Set(["hpa-controller/ns/mds_role_constrained_replicas", "hpa-controller/ns/no_such_metric"]),
);

function get(
  path: string,
  client?: IssuedCertificate,
  headers: Record<string, string | string[]> = {},
): Promise<Reply> {
  return new Promise((resolve, reject) => {
    const req = request(
      {
        host: "127.0.0.1",
        port: server.port,
        path,
        method: "GET",
        ca: servingCa.certPem,
        servername: "localhost",
        headers,
        ...(client === undefined ? {} : { cert: client.certPem, key: client.keyPem }),
      },
      (res) => {
        let text = "";
        res.on("data", (chunk: Buffer) => (text += chunk.toString()));
        res.on("end", () => resolve({ status: res.statusCode ?? 0, body: JSON.parse(text) as Reply["body"] }));
      },
    );
    req.on("error", reject);
    req.end();
  });
}

const asHpa = { "X-Remote-User": "hpa-controller", "X-Remote-Group": ["system:authenticated", "ops"] };
const path =
  "/apis/external.metrics.k8s.io/v1beta1/namespaces/ns/mds_role_constrained_replicas?labelSelector=scaler%3Dchat";

beforeAll(async () => {
  dirPath = await mkdtemp(join(tmpdir(), "mds-external-metrics-"));
  const pki = await Pki.create(dirPath);
  servingCa = await pki.createCa("serving-ca");
  const frontProxyCa = await pki.createCa("front-proxy-ca");
  const strangerCa = await pki.createCa("stranger-ca");
  const serving = await pki.issue(servingCa, "serving", {
    commonName: "mds",
    usage: "server",
    dnsNames: ["localhost"],
  });
  proxy = await pki.issue(frontProxyCa, "proxy", { commonName: "front-proxy-client", usage: "client" });
  otherName = await pki.issue(frontProxyCa, "other-name", { commonName: "someone-else", usage: "client" });
  strangerCert = await pki.issue(strangerCa, "stranger", { commonName: "front-proxy-client", usage: "client" });
  server = await startExternalMetricsServer({
    address: "127.0.0.1:0",
    tls: { certPem: serving.certPem, keyPem: serving.keyPem },
    trust: frontProxyTrustFrom({
      "requestheader-client-ca-file": frontProxyCa.certPem,
      "requestheader-allowed-names": '["front-proxy-client"]',
      "requestheader-username-headers": '["X-Remote-User"]',
      "requestheader-group-headers": '["X-Remote-Group"]',
      "requestheader-extra-headers-prefix": '["X-Remote-Extra-"]',
    }),
    deps: {
      reader: new FakeScalerReader([plannedScaler({ namespace: "ns", name: "chat", constrained: 3 })]),
      authorizer,
      leaderRenewing: () => leaderRenewing,
      logger: createLogger({ level: "error" }),
    },
  });
}, 30_000);

afterAll(async () => {
  await server?.close();
  await rm(dirPath, { recursive: true, force: true });
});

describe("external metrics server", () => {
  it("answers the front proxy's read with the value, after asking the authorizer as the proxied user", async () => {
    const reply = await get(path, proxy, { ...asHpa, "X-Remote-Extra-Scopes": "a" });
    expect(reply.status).toBe(200);
    expect(reply.body.kind).toBe("ExternalMetricValueList");
    expect(reply.body.items?.map((i) => i.value)).toEqual(["3"]);
    expect(authorizer.asked.at(-1)).toEqual({
      user: { username: "hpa-controller", groups: ["system:authenticated", "ops"], extra: { scopes: ["a"] } },
      access: { namespace: "ns", resource: "mds_role_constrained_replicas" },
    });
  });

  it("serves discovery with one resource per metric", async () => {
    const reply = await get("/apis/external.metrics.k8s.io/v1beta1", proxy, asHpa);
    expect(reply.status).toBe(200);
    expect(reply.body.resources?.map((r) => r.name)).toContain("mds_role_constrained_replicas");
  });

  it("refuses a direct request without a client certificate with 401", async () => {
    const reply = await get(path, undefined, asHpa);
    expect(reply.status).toBe(401);
    expect(reply.body.message).toMatch(/only the API server's front proxy may call this server: no client certificate/);
  });

  it("refuses a certificate from another CA with 401", async () => {
    const reply = await get(path, strangerCert, asHpa);
    expect(reply.status).toBe(401);
    expect(reply.body.message).toMatch(/not signed by the request-header CA/);
  });

  it("refuses a front-proxy CA certificate whose name the API server does not allow with 401", async () => {
    const reply = await get(path, otherName, asHpa);
    expect(reply.status).toBe(401);
    expect(reply.body.message).toMatch(/"someone-else" is not an allowed front proxy/);
  });

  it("refuses the proxy's certificate without a user header with 401", async () => {
    const reply = await get(path, proxy);
    expect(reply.status).toBe(401);
    expect(reply.body.message).toMatch(/no user in X-Remote-User/);
  });

  it("refuses with 403 a user RBAC does not allow, naming user, metric and namespace", async () => {
    const reply = await get(path, proxy, { "X-Remote-User": "intruder" });
    expect(reply.status).toBe(403);
    expect(reply.body.message).toMatch(
      /User "intruder" cannot list resource "mds_role_constrained_replicas" in API group "external.metrics.k8s.io" in the namespace "ns"/,
    );
  });

  it("says which metric is unknown, and which selector does not parse", async () => {
    const unknown = await get("/apis/external.metrics.k8s.io/v1beta1/namespaces/ns/no_such_metric", proxy, asHpa);
    expect(unknown.status).toBe(404);
    expect(unknown.body.message).toMatch(/"no_such_metric" is not served \(served: mds_role_constrained_replicas, /);
    const bad = await get(`${path.split("?")[0]}?labelSelector=${encodeURIComponent("role in (a b)")}`, proxy, asHpa);
    expect(bad.status).toBe(400);
    expect(bad.body.message).toMatch(/"a b" is not a label value/);
  });

  it("answers an empty list when no leader renews the Lease", async () => {
    leaderRenewing = false;
    try {
      const reply = await get(path, proxy, asHpa);
      expect(reply.status).toBe(200);
      expect(reply.body.items).toEqual([]);
    } finally {
      leaderRenewing = true;
    }
  });
});
