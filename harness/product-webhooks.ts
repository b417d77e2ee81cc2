/**
 * The product's own admission webhooks, registered with a test API server the
 * way the chart registers them: the chart's rendered Validating and Mutating
 * WebhookConfigurations (names, rules, failurePolicy Fail, timeouts), with
 * each `clientConfig.service` turned into a loopback URL and no CA bundle.
 * The controller under test generates its certificate and patches the bundle
 * in, as it does in a cluster.
 */
import { join } from "node:path";
import {
  AdmissionregistrationV1Api,
  CustomObjectsApi,
  RbacAuthorizationV1Api,
  type KubeConfig,
  type V1MutatingWebhookConfiguration,
  type V1ValidatingAdmissionPolicy,
  type V1ValidatingAdmissionPolicyBinding,
  type V1ValidatingWebhookConfiguration,
} from "@kubernetes/client-node";
import { parseAllDocuments } from "yaml";
import { loadConfig, type Config } from "../src/app/config.js";
import type { ControlPlane } from "./kube/index.js";
import { runHelm } from "./helm.js";

const chartDir = join(import.meta.dirname, "..", "charts", "mds-scaler");
export const releaseNamespace = "mds-system";
export const serviceAccount = "mds-scaler";
export const controllerUser = `system:serviceaccount:${releaseNamespace}:${serviceAccount}`;
/** The chart's full name for release `mds`, used by both configurations. */
export const configurationName = "mds-mds-scaler";
export const tlsSecretName = "mds-mds-scaler-webhook-tls";

interface Rendered {
  kind: string;
  webhooks: { clientConfig: { service?: { path?: string }; url?: string; caBundle?: string } }[];
}

/** The chart's rendered objects of these kinds, with `set` values. */
function renderedChart(kinds: readonly string[], set: Readonly<Record<string, string>> = {}): unknown[] {
  const values = Object.entries(set).flatMap(([key, value]) => ["--set", `${key}=${value}`]);
  const result = runHelm(["template", "mds", chartDir, "--namespace", releaseNamespace, ...values]);
  if (result.status !== 0) throw new Error(`helm template failed:\n${result.stderr}`);
  return parseAllDocuments(result.stdout)
    .map((d) => d.toJS() as { kind?: string } | null)
    .filter((o) => o !== null && kinds.includes(o.kind ?? ""));
}

/** The chart's webhook configurations, rendered with `set` values and pointed at `https://127.0.0.1:<port>`. */
export function chartWebhookConfigurations(
  port: number,
  set: Readonly<Record<string, string>> = {},
): {
  validating: V1ValidatingWebhookConfiguration;
  mutating: V1MutatingWebhookConfiguration;
} {
  const objects = renderedChart(["ValidatingWebhookConfiguration", "MutatingWebhookConfiguration"], set) as Rendered[];
  for (const o of objects) {
    for (const w of o.webhooks) {
      w.clientConfig = { url: `https://127.0.0.1:${port}${w.clientConfig.service?.path ?? "/"}` };
    }
  }
  const validating = objects.find((o) => o.kind === "ValidatingWebhookConfiguration");
  const mutating = objects.find((o) => o.kind === "MutatingWebhookConfiguration");
  if (validating === undefined || mutating === undefined)
    throw new Error("the chart rendered no webhook configurations");
  return {
    validating: validating as unknown as V1ValidatingWebhookConfiguration,
    mutating: mutating as unknown as V1MutatingWebhookConfiguration,
  };
}

/** The chart's ValidatingAdmissionPolicy and its binding (the static half of the binding fence), with `set` values. */
export function chartAdmissionPolicies(set: Readonly<Record<string, string>> = {}): {
  policies: V1ValidatingAdmissionPolicy[];
  bindings: V1ValidatingAdmissionPolicyBinding[];
} {
  const objects = renderedChart(["ValidatingAdmissionPolicy", "ValidatingAdmissionPolicyBinding"], set) as {
    kind: string;
  }[];
  return {
    policies: objects.filter((o) => o.kind === "ValidatingAdmissionPolicy") as V1ValidatingAdmissionPolicy[],
    bindings: objects.filter(
      (o) => o.kind === "ValidatingAdmissionPolicyBinding",
    ) as V1ValidatingAdmissionPolicyBinding[],
  };
}

/**
 * Creates both configurations (without a CA bundle: until the controller
 * patches one in, every matching write fails) and the chart's admission policy.
 */
export async function installWebhookConfigurations(
  kubeConfig: KubeConfig,
  port: number,
  set: Readonly<Record<string, string>> = {},
): Promise<void> {
  const api = kubeConfig.makeApiClient(AdmissionregistrationV1Api);
  const { validating, mutating } = chartWebhookConfigurations(port, set);
  await api.createValidatingWebhookConfiguration({ body: validating });
  await api.createMutatingWebhookConfiguration({ body: mutating });
  const { policies, bindings } = chartAdmissionPolicies(set);
  for (const body of policies) await api.createValidatingAdmissionPolicy({ body });
  for (const body of bindings) await api.createValidatingAdmissionPolicyBinding({ body });
}

/** Removes what `installWebhookConfigurations` created, so a test can install another rendering. */
export async function uninstallWebhookConfigurations(
  kubeConfig: KubeConfig,
  set: Readonly<Record<string, string>> = {},
): Promise<void> {
  const api = kubeConfig.makeApiClient(AdmissionregistrationV1Api);
  const { validating, mutating } = chartWebhookConfigurations(0, set);
  await api.deleteValidatingWebhookConfiguration({ name: validating.metadata?.name ?? "" });
  await api.deleteMutatingWebhookConfiguration({ name: mutating.metadata?.name ?? "" });
  const { policies, bindings } = chartAdmissionPolicies(set);
  for (const body of bindings) await api.deleteValidatingAdmissionPolicyBinding({ name: body.metadata?.name ?? "" });
  for (const body of policies) await api.deleteValidatingAdmissionPolicy({ name: body.metadata?.name ?? "" });
}

/** A kubeconfig for the controller's service account, bound to cluster-admin (RBAC is not what these tests check). */
export async function controllerKubeConfig(controlPlane: ControlPlane): Promise<KubeConfig> {
  const rbac = controlPlane.kubeConfig.makeApiClient(RbacAuthorizationV1Api);
  await rbac
    .createClusterRoleBinding({
      body: {
        metadata: { name: "mds-scaler-test" },
        roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "ClusterRole", name: "cluster-admin" },
        subjects: [{ kind: "ServiceAccount", name: serviceAccount, namespace: releaseNamespace }],
      },
    })
    .catch((error: unknown) => {
      if (!String(error).includes("409") && !String(error).includes("AlreadyExists")) throw error;
    });
  return controlPlane.kubeConfigFor({
    user: controllerUser,
    groups: ["system:serviceaccounts", `system:serviceaccounts:${releaseNamespace}`],
  });
}

/** Controller settings as the chart passes them, on loopback ports. */
export function productConfig(opts: {
  webhookPort: number;
  podName: string;
  leaseName?: string;
  leaseDurationSeconds?: number;
  prometheusUrl?: string;
  extra?: readonly string[];
}): Config {
  return loadConfig(
    [
      `--prometheus-url=${opts.prometheusUrl ?? "http://127.0.0.1:9"}`,
      `--webhook-address=127.0.0.1:${opts.webhookPort}`,
      "--metrics-address=127.0.0.1:0",
      "--tick-ms=200",
      "--log-level=warn",
      "--webhook-cert-hosts=127.0.0.1,localhost",
      ...(opts.leaseName === undefined
        ? []
        : [
            `--lease-name=${opts.leaseName}`,
            `--lease-duration-seconds=${opts.leaseDurationSeconds ?? 3}`,
            "--lease-retry-ms=300",
            // Deadline + call timeout within the lease (at most one writer): half and 40 % of it.
            `--lease-renew-deadline-ms=${Math.floor((opts.leaseDurationSeconds ?? 3) * 500)}`,
            `--kube-timeout-ms=${Math.floor((opts.leaseDurationSeconds ?? 3) * 400)}`,
          ]),
      ...(opts.extra ?? []),
    ],
    {
      MDS_POD_NAME: opts.podName,
      MDS_POD_NAMESPACE: releaseNamespace,
      MDS_WEBHOOK_SERVICE: `mds-mds-scaler.${releaseNamespace}.svc`,
      MDS_VALIDATING_WEBHOOK_CONFIGURATION: configurationName,
      MDS_MUTATING_WEBHOOK_CONFIGURATION: configurationName,
      MDS_WEBHOOK_TLS_SECRET: tlsSecretName,
    },
  );
}

/**
 * Waits until the API server calls the product's validating webhook: a
 * dry-run create of an invalid scaler is refused with the webhook's words.
 */
export async function waitForProductWebhooks(
  kubeConfig: KubeConfig,
  namespace: string,
  timeoutMs = 30_000,
): Promise<void> {
  const custom = kubeConfig.makeApiClient(CustomObjectsApi);
  const deadline = Date.now() + timeoutMs;
  let last = "";
  for (;;) {
    try {
      await custom.createNamespacedCustomObject({
        group: "worker.gpustack.ai",
        version: "v1",
        namespace,
        plural: "modeldeploymentscalers",
        dryRun: "All",
        body: {
          apiVersion: "worker.gpustack.ai/v1",
          kind: "ModelDeploymentScaler",
          metadata: { name: "probe" },
          spec: {
            targetRef: { name: "probe" },
            roles: [{ name: "server", minReplicas: 3, maxReplicas: 2 }],
            algorithm: { type: "TokenThroughput" },
          },
        },
      });
      last = "the invalid probe was admitted";
    } catch (error) {
      last = String((error as { body?: unknown }).body ?? error);
      if (last.includes("must be at most maxReplicas")) return;
    }
    if (Date.now() > deadline)
      throw new Error(`the product's webhooks did not take effect within ${timeoutMs} ms; last answer: ${last}`);
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
}
