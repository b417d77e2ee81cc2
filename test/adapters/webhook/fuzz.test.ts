/**
 * Whatever the webhook server receives, it answers with a well-formed
 * AdmissionReview, over real HTTPS, and keeps running. Invariants checked for
 * every body:
 * - HTTP 200 (404 for an unknown path) with a JSON AdmissionReview v1;
 * - `response.uid` is a string, and the request's uid when it had one;
 * - `response.allowed` is a boolean; a refusal has a numeric code and a message;
 * - a patch, when present, is base64 of a JSON array of operations.
 */
import { Agent, request } from "node:https";
import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createLogger } from "../../../src/adapters/telemetry/logger.js";
import { generateCertificate } from "../../../src/adapters/webhook/certificates.js";
import { createHandlers, webhookPaths, type WebhookLookups } from "../../../src/adapters/webhook/handlers.js";
import { startWebhookServer, webhookApp, type RunningWebhookServer } from "../../../src/adapters/webhook/server.js";
import { bindingAnnotation } from "../../../src/core/api/model-deployment.js";

const tls = generateCertificate(["localhost", "127.0.0.1"], Date.now());
let server: RunningWebhookServer;
const agent = new Agent({ keepAlive: true, maxSockets: 8, ca: tls.caPem });

/** Lookups that answer, miss, fail or hang, chosen by the object's name. */
const lookups: WebhookLookups = {
  getTarget: (_ns, name) => answer(name),
  getScaler: (_ns, name) => answer(name),
};

function answer(name: string): Promise<unknown | undefined> {
  if (name.includes("hang")) return new Promise(() => undefined);
  if (name.includes("fail")) return Promise.reject(new Error("API server unavailable"));
  if (name.includes("missing")) return Promise.resolve(undefined);
  return Promise.resolve({ metadata: { name, uid: "uid-a" }, spec: { roles: "not a list" } });
}

beforeAll(async () => {
  const app = webhookApp({
    handlers: createHandlers({
      lookups,
      controllerIdentity: () => "system:serviceaccount:mds-system:mds-scaler",
      lookupTimeoutMs: 50,
      engineScrapeIntervalSeconds: 15,
    }),
    logger: createLogger({ level: "error", write: () => undefined }),
    answerTimeoutMs: 200,
  });
  server = await startWebhookServer(app, "127.0.0.1:0", tls);
});

afterAll(async () => {
  agent.destroy();
  await server?.close();
});

function post(
  path: string,
  body: Buffer | string,
  contentType = "application/json",
): Promise<{ status: number; text: string }> {
  return new Promise((resolve, reject) => {
    const req = request(
      {
        host: "127.0.0.1",
        port: server.port,
        path,
        method: "POST",
        agent,
        headers: { "content-type": contentType, "content-length": Buffer.byteLength(body) },
        servername: "localhost",
        timeout: 10_000,
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on("data", (c: Buffer) => chunks.push(c));
        res.on("end", () => resolve({ status: res.statusCode ?? 0, text: Buffer.concat(chunks).toString("utf8") }));
        res.on("error", reject);
      },
    );
    req.on("timeout", () => req.destroy(new Error(`no answer for ${path} within 10 s`)));
    req.on("error", reject);
    req.end(body);
  });
}

function expectWellFormed(status: number, text: string, path: string, sentUid: unknown): void {
  expect(status).toBe(Object.values(webhookPaths).includes(path as never) ? 200 : 404);
  const review = JSON.parse(text) as { apiVersion: unknown; kind: unknown; response: Record<string, unknown> };
  expect(review.apiVersion).toBe("admission.k8s.io/v1");
  expect(review.kind).toBe("AdmissionReview");
  const response = review.response;
  expect(typeof response["uid"]).toBe("string");
  if (typeof sentUid === "string" && sentUid !== "" && status === 200) expect(response["uid"]).toBe(sentUid);
  expect(typeof response["allowed"]).toBe("boolean");
  if (response["allowed"] === false) {
    const s = response["status"] as { code: unknown; message: unknown };
    expect(typeof s.code).toBe("number");
    expect(typeof s.message).toBe("string");
  }
  if (response["patch"] !== undefined) {
    expect(response["patchType"]).toBe("JSONPatch");
    expect(Array.isArray(JSON.parse(Buffer.from(String(response["patch"]), "base64").toString("utf8")))).toBe(true);
  }
}

const paths = fc.constantFrom(...Object.values(webhookPaths), "/validate/other", "/");
const names = fc.constantFrom("llm", "hang-1", "fail-1", "missing-1", "");
const userInfo = fc.record(
  {
    username: fc.oneof(fc.constant("system:serviceaccount:mds-system:mds-scaler"), fc.string()),
    groups: fc.array(fc.string(), { maxLength: 3 }),
  },
  { requiredKeys: [] },
);
const annotations = fc.dictionary(
  fc.constantFrom(bindingAnnotation, "modeldeployment.gpustack.ai/scaler-decision", "x"),
  fc.oneof(fc.string(), fc.json()),
  { maxKeys: 3 },
);
const objectish = fc.oneof(
  fc.anything(),
  fc.record(
    {
      apiVersion: fc.constantFrom("worker.gpustack.ai/v1", "v1"),
      kind: fc.constantFrom("ModelDeployment", "ModelDeploymentScaler"),
      metadata: fc.record(
        { name: names, namespace: fc.constantFrom("team", ""), uid: fc.string(), annotations },
        { requiredKeys: [] },
      ),
      spec: fc.oneof(
        fc.anything(),
        fc.record(
          {
            targetRef: fc.record({ name: names }),
            roles: fc.array(
              fc.record(
                {
                  name: fc.constantFrom("server", "prefill"),
                  replicas: fc.oneof(fc.integer({ min: -2, max: 2000 }), fc.string()),
                  minReplicas: fc.integer(),
                  maxReplicas: fc.integer(),
                },
                { requiredKeys: [] },
              ),
              { maxLength: 3 },
            ),
            mode: fc.constantFrom("Active", "Shadow", 5),
            algorithm: fc.anything(),
          },
          { requiredKeys: [] },
        ),
      ),
    },
    { requiredKeys: [] },
  ),
);
const review = fc.record(
  {
    apiVersion: fc.constantFrom("admission.k8s.io/v1", "admission.k8s.io/v1beta1", 3),
    kind: fc.constantFrom("AdmissionReview", "Other"),
    request: fc.oneof(
      fc.anything(),
      fc.record(
        {
          uid: fc.oneof(fc.uuid(), fc.string(), fc.integer()),
          kind: fc.constant({ group: "worker.gpustack.ai", version: "v1", kind: "ModelDeployment" }),
          resource: fc.constant({ group: "worker.gpustack.ai", version: "v1", resource: "modeldeployments" }),
          operation: fc.constantFrom("CREATE", "UPDATE", "DELETE", "CONNECT", "PATCH"),
          namespace: fc.constantFrom("team", undefined),
          name: names,
          userInfo,
          object: objectish,
          oldObject: fc.oneof(objectish, fc.constant(null)),
          dryRun: fc.boolean(),
        },
        { requiredKeys: ["uid"] },
      ),
    ),
  },
  { requiredKeys: [] },
);

const body = fc.oneof(
  {
    weight: 5,
    arbitrary: review.map((r) => ({ text: JSON.stringify(r), uid: (r.request as { uid?: unknown } | undefined)?.uid })),
  },
  { weight: 1, arbitrary: fc.json().map((text) => ({ text, uid: undefined as unknown })) },
  { weight: 1, arbitrary: fc.string({ maxLength: 200 }).map((text) => ({ text, uid: undefined as unknown })) },
  {
    weight: 1,
    arbitrary: review.map((r) => ({
      text: JSON.stringify(r).slice(0, Math.max(1, JSON.stringify(r).length >> 1)),
      uid: undefined as unknown,
    })),
  },
  {
    weight: 1,
    arbitrary: fc
      .uint8Array({ maxLength: 300 })
      .map((bytes) => ({ text: Buffer.from(bytes).toString("latin1"), uid: undefined as unknown })),
  },
);

describe("the webhook server under random and malformed reviews", () => {
  it("answers 1200 bodies well-formed over HTTPS", async () => {
    let count = 0;
    await fc.assert(
      fc.asyncProperty(paths, body, async (path, b) => {
        count += 1;
        const { status, text } = await post(path, b.text);
        expectWellFormed(status, text, path, b.uid);
      }),
      { numRuns: 1200, seed: 8 },
    );
    expect(count).toBeGreaterThanOrEqual(1200);
  }, 120_000);

  it("answers an oversized body with a review and stays up", async () => {
    const big = JSON.stringify({
      apiVersion: "admission.k8s.io/v1",
      kind: "AdmissionReview",
      request: { uid: "u", pad: "x".repeat(8 * 1024 * 1024) },
    });
    const { status, text } = await post(webhookPaths.validateTarget, big);
    expectWellFormed(status, text, webhookPaths.validateTarget, undefined);
    expect(JSON.parse(text).response.allowed).toBe(false);
  }, 30_000);

  it("admits a 3 MiB object, the API server's own limit", async () => {
    const object = {
      apiVersion: "worker.gpustack.ai/v1",
      kind: "ModelDeployment",
      metadata: { name: "llm", namespace: "team", labels: { pad: "y".repeat(3 * 1024 * 1024) } },
      spec: { roles: [] },
    };
    const reviewText = JSON.stringify({
      apiVersion: "admission.k8s.io/v1",
      kind: "AdmissionReview",
      request: {
        uid: "big",
        kind: { group: "worker.gpustack.ai", version: "v1", kind: "ModelDeployment" },
        resource: { group: "worker.gpustack.ai", version: "v1", resource: "modeldeployments" },
        operation: "UPDATE",
        userInfo: { username: "alice" },
        object,
        oldObject: object,
      },
    });
    const { status, text } = await post(webhookPaths.validateTarget, reviewText);
    expectWellFormed(status, text, webhookPaths.validateTarget, "big");
    expect(JSON.parse(text).response.allowed).toBe(true);
  }, 30_000);

  it("refuses, with a reason, when a lookup hangs past its timeout", async () => {
    const reviewText = JSON.stringify({
      apiVersion: "admission.k8s.io/v1",
      kind: "AdmissionReview",
      request: {
        uid: "slow",
        kind: { group: "worker.gpustack.ai", version: "v1", kind: "ModelDeploymentScaler" },
        resource: { group: "worker.gpustack.ai", version: "v1", resource: "modeldeploymentscalers" },
        namespace: "team",
        name: "s",
        operation: "CREATE",
        userInfo: { username: "alice" },
        object: { spec: { targetRef: { name: "hang-1" } } },
      },
    });
    const { text } = await post(webhookPaths.validateScaler, reviewText);
    const response = JSON.parse(text).response;
    expect(response).toMatchObject({ uid: "slow", allowed: false, status: { code: 500 } });
    expect(response.status.message).toContain("no answer within 50 ms");
  });
});
