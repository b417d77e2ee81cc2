/**
 * `--prometheus-headers-file` on the wire: a real Prometheus (Debian's 2.42) behind a gateway that, as a
 * multi-tenant store's does, answers only requests carrying the tenant's `X-Scope-OrgID`. The gateway is
 * a plain forwarding proxy on loopback, written here.
 */
import { mkdtempSync, writeFileSync } from "node:fs";
import { createServer, request, type Server } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { PrometheusClient } from "../../src/adapters/prometheus/client.js";
import { prometheusHeadersFrom } from "../../src/app/prometheus-headers.js";
import { PrometheusHarness } from "../../harness/prometheus.js";

const tenant = "team-a";
let prometheus: PrometheusHarness;
let gateway: Server;
let gatewayUrl: string;
const seenTenants: (string | undefined)[] = [];

beforeAll(async () => {
  prometheus = await PrometheusHarness.start();
  const upstream = new URL(prometheus.url);
  gateway = createServer((req, res) => {
    const orgId = req.headers["x-scope-orgid"];
    seenTenants.push(typeof orgId === "string" ? orgId : undefined);
    if (orgId !== tenant) {
      res.writeHead(401, { "content-type": "text/plain" }).end("no tenant");
      return;
    }
    const forward = request(
      { host: upstream.hostname, port: upstream.port, method: req.method, path: req.url, headers: req.headers },
      (answer) => {
        res.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(res);
      },
    );
    req.pipe(forward);
  });
  await new Promise<void>((resolve) => gateway.listen(0, "127.0.0.1", resolve));
  const address = gateway.address();
  if (address === null || typeof address === "string") throw new Error("gateway has no port");
  gatewayUrl = `http://127.0.0.1:${address.port}`;
}, 60_000);

afterAll(async () => {
  await new Promise<void>((resolve) => gateway?.close(() => resolve()));
  await prometheus?.stop();
});

describe("headers from --prometheus-headers-file", () => {
  it("reach a gateway that refuses queries without the tenant, and never show in an error", async () => {
    const file = join(mkdtempSync(join(tmpdir(), "mds-headers-")), "headers");
    writeFileSync(file, `# mounted from a Secret\nX-Scope-OrgID: ${tenant}\n`);
    const withTenant = new PrometheusClient({
      endpoint: gatewayUrl,
      timeoutMs: 5_000,
      headers: prometheusHeadersFrom(file),
    });
    const answer = await withTenant.instantQuery("vector(7)", Date.now());
    expect(answer.samples.map((s) => s.value)).toEqual([7]);
    expect(seenTenants.at(-1)).toBe(tenant);

    const without = new PrometheusClient({ endpoint: gatewayUrl, timeoutMs: 5_000 });
    const refused = await without.instantQuery("vector(7)", Date.now()).then(
      () => undefined,
      (error: unknown) => error,
    );
    expect(refused).toBeInstanceOf(Error);
    expect(String(refused)).toMatch(/401/);
    expect(seenTenants.at(-1)).toBeUndefined();

    writeFileSync(file, "X-Scope-OrgID: team-b\n");
    const wrong = new PrometheusClient({
      endpoint: gatewayUrl,
      timeoutMs: 5_000,
      headers: prometheusHeadersFrom(file),
    });
    const error = await wrong.instantQuery("vector(7)", Date.now()).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(String(error)).not.toContain("team-b");
  }, 60_000);
});
