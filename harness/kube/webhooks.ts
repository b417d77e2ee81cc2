import { randomBytes } from "node:crypto";
import type { IncomingMessage, ServerResponse } from "node:http";
import {
  AdmissionregistrationV1Api,
  ApiException,
  CoreV1Api,
  type KubeConfig,
  type V1LabelSelector,
  type V1MutatingWebhook,
  type V1RuleWithOperations,
  type V1ValidatingWebhook,
} from "@kubernetes/client-node";
import { readBody, sendJson, type LocalHttpsServer, type RequestListener } from "./https-server.js";
import { waitFor } from "./net.js";

/** The part of an admission.k8s.io/v1 AdmissionReview request that handlers read. */
export interface AdmissionRequest {
  uid: string;
  kind: { group: string; version: string; kind: string };
  resource: { group: string; version: string; resource: string };
  subResource?: string;
  name?: string;
  namespace?: string;
  operation: "CREATE" | "UPDATE" | "DELETE" | "CONNECT";
  userInfo: { username?: string; uid?: string; groups?: string[] };
  object?: Record<string, unknown> | null;
  oldObject?: Record<string, unknown> | null;
  dryRun?: boolean;
}

export interface JsonPatchOperation {
  op: "add" | "remove" | "replace" | "move" | "copy" | "test";
  path: string;
  value?: unknown;
  from?: string;
}

export interface AdmissionVerdict {
  allowed: boolean;
  /** Shown to the client when the request is denied. */
  message?: string;
  /** HTTP code of a denial; the API server picks one when absent. */
  code?: number;
  /** Mutating webhooks only. */
  patch?: JsonPatchOperation[];
  warnings?: string[];
}

export type AdmissionHandler = (request: AdmissionRequest) => AdmissionVerdict | Promise<AdmissionVerdict>;

export interface WebhookSpec {
  /** Fully qualified, e.g. `deny.widgets.example.test`. */
  name: string;
  rules: V1RuleWithOperations[];
  handler: AdmissionHandler;
  failurePolicy?: "Fail" | "Ignore";
  namespaceSelector?: V1LabelSelector;
  objectSelector?: V1LabelSelector;
  timeoutSeconds?: number;
}

export interface WebhookRegistration {
  /** Name of the MutatingWebhookConfiguration and/or ValidatingWebhookConfiguration. */
  name: string;
  validating?: WebhookSpec[];
  mutating?: WebhookSpec[];
  /** How long to wait for the API server to start calling the webhooks. */
  timeoutMs?: number;
}

export interface AdmissionCall {
  webhookName: string;
  request: AdmissionRequest;
  verdict: AdmissionVerdict;
}

export interface RegisteredWebhooks {
  server: LocalHttpsServer;
  /** Every call the API server made to the registered webhooks, in order. */
  calls: AdmissionCall[];
  /** Deletes the configurations and stops the server. */
  unregister(): Promise<void>;
}

export interface WebhookContext {
  kubeConfig: KubeConfig;
  startServer(listener: RequestListener): Promise<LocalHttpsServer>;
}

const probeLabel = "harness.mds-scaler.invalid/webhook-probe";
const probeNamespace = "default";

async function answerReview(
  req: IncomingMessage,
  res: ServerResponse,
  webhookName: string,
  handler: AdmissionHandler,
  calls: AdmissionCall[] | undefined,
): Promise<void> {
  const review = JSON.parse(await readBody(req)) as { request?: AdmissionRequest };
  const request = review.request;
  if (!request) {
    sendJson(res, 400, { message: "AdmissionReview without request" });
    return;
  }
  const verdict = await handler(request);
  calls?.push({ webhookName, request, verdict });
  const response: Record<string, unknown> = { uid: request.uid, allowed: verdict.allowed };
  if (!verdict.allowed || verdict.message !== undefined) {
    response["status"] = {
      ...(verdict.message === undefined ? {} : { message: verdict.message }),
      ...(verdict.code === undefined ? {} : { code: verdict.code }),
    };
  }
  if (verdict.patch !== undefined && verdict.patch.length > 0) {
    response["patchType"] = "JSONPatch";
    response["patch"] = Buffer.from(JSON.stringify(verdict.patch)).toString("base64");
  }
  if (verdict.warnings !== undefined) response["warnings"] = verdict.warnings;
  sendJson(res, 200, { apiVersion: "admission.k8s.io/v1", kind: "AdmissionReview", response });
}

function errorText(error: unknown): string {
  if (error instanceof ApiException) return `${error.message} ${JSON.stringify(error.body)}`;
  return String(error);
}

/**
 * Serves the given webhooks from one HTTPS server in the test process and
 * registers them by loopback URL with a CA bundle. Each configuration carries
 * one extra webhook that only denies dry-run ConfigMaps bearing a random
 * label; once that denial is seen, the API server has loaded the whole
 * configuration, so tests never race the webhook informer.
 */
export async function registerWebhooks(
  context: WebhookContext,
  registration: WebhookRegistration,
): Promise<RegisteredWebhooks> {
  const timeoutMs = registration.timeoutMs ?? 30_000;
  const token = randomBytes(6).toString("hex");
  const calls: AdmissionCall[] = [];
  const routes = new Map<string, { webhookName: string; handler: AdmissionHandler; recorded: boolean }>();
  const kinds = [
    { kind: "mutating" as const, specs: registration.mutating ?? [] },
    { kind: "validating" as const, specs: registration.validating ?? [] },
  ].filter((entry) => entry.specs.length > 0);
  if (kinds.length === 0) throw new Error(`register webhooks ${registration.name}: no webhooks given`);

  for (const { kind, specs } of kinds) {
    const probeMessage = `harness probe ${token}-${kind}`;
    routes.set(`/${kind}/probe`, {
      webhookName: "probe",
      handler: () => ({ allowed: false, message: probeMessage }),
      recorded: false,
    });
    specs.forEach((spec, index) =>
      routes.set(`/${kind}/${index}`, { webhookName: spec.name, handler: spec.handler, recorded: true }),
    );
  }

  const server = await context.startServer(async (req, res) => {
    const route = routes.get(new URL(req.url ?? "/", "https://localhost").pathname);
    if (req.method !== "POST" || !route) {
      sendJson(res, 404, { message: `no webhook at ${req.method} ${req.url}` });
      return;
    }
    await answerReview(req, res, route.webhookName, route.handler, route.recorded ? calls : undefined);
  });

  const admission = context.kubeConfig.makeApiClient(AdmissionregistrationV1Api);
  const core = context.kubeConfig.makeApiClient(CoreV1Api);
  const created: Array<"mutating" | "validating"> = [];
  const unregister = async (): Promise<void> => {
    for (const kind of created) {
      try {
        if (kind === "mutating") await admission.deleteMutatingWebhookConfiguration({ name: registration.name });
        else await admission.deleteValidatingWebhookConfiguration({ name: registration.name });
      } catch (error) {
        // Already gone is fine: the API server may be stopping too.
        if (!(error instanceof ApiException && error.code === 404)) throw error;
      }
    }
    created.length = 0;
    await server.close();
  };

  try {
    for (const { kind, specs } of kinds) {
      const probe: V1ValidatingWebhook = {
        name: "probe.harness.mds-scaler.invalid",
        admissionReviewVersions: ["v1"],
        sideEffects: "None",
        failurePolicy: "Fail",
        clientConfig: { url: `${server.url}/${kind}/probe`, caBundle: server.caBundle },
        rules: [{ apiGroups: [""], apiVersions: ["v1"], operations: ["CREATE"], resources: ["configmaps"] }],
        objectSelector: { matchLabels: { [probeLabel]: `${token}-${kind}` } },
      };
      const webhooks: V1ValidatingWebhook[] = [
        probe,
        ...specs.map((spec, index): V1ValidatingWebhook => ({
          name: spec.name,
          admissionReviewVersions: ["v1"],
          sideEffects: "None",
          failurePolicy: spec.failurePolicy ?? "Fail",
          clientConfig: { url: `${server.url}/${kind}/${index}`, caBundle: server.caBundle },
          rules: spec.rules,
          ...(spec.namespaceSelector === undefined ? {} : { namespaceSelector: spec.namespaceSelector }),
          ...(spec.objectSelector === undefined ? {} : { objectSelector: spec.objectSelector }),
          ...(spec.timeoutSeconds === undefined ? {} : { timeoutSeconds: spec.timeoutSeconds }),
        })),
      ];
      const metadata = { name: registration.name };
      if (kind === "mutating") {
        await admission.createMutatingWebhookConfiguration({
          body: {
            apiVersion: "admissionregistration.k8s.io/v1",
            kind: "MutatingWebhookConfiguration",
            metadata,
            webhooks: webhooks as V1MutatingWebhook[],
          },
        });
      } else {
        await admission.createValidatingWebhookConfiguration({
          body: {
            apiVersion: "admissionregistration.k8s.io/v1",
            kind: "ValidatingWebhookConfiguration",
            metadata,
            webhooks,
          },
        });
      }
      created.push(kind);
    }

    for (const { kind } of kinds) {
      const probeMessage = `harness probe ${token}-${kind}`;
      await waitFor(`webhook configuration ${registration.name} (${kind}) to take effect`, { timeoutMs }, async () => {
        try {
          await core.createNamespacedConfigMap({
            namespace: probeNamespace,
            dryRun: "All",
            body: { metadata: { generateName: "harness-probe-", labels: { [probeLabel]: `${token}-${kind}` } } },
          });
        } catch (error) {
          if (errorText(error).includes(probeMessage)) return true;
          throw error;
        }
        return undefined; // admitted: the configuration is not loaded yet
      });
    }
  } catch (cause) {
    await unregister().catch(() => undefined);
    throw new Error(`register webhooks ${registration.name}`, { cause });
  }
  return { server, calls, unregister };
}
