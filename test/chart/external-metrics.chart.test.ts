/**
 * The chart's external metrics objects: nothing by default (the APIService is
 * one per cluster), and with `externalMetrics.enabled` an APIService that
 * reaches the controller's HTTPS port, plus exactly the rights delegated
 * authentication and authorization need.
 */
import { join } from "node:path";
import { parseAllDocuments } from "yaml";
import { describe, expect, it } from "vitest";
import { runHelm } from "../../harness/helm.js";

const chartDir = join(import.meta.dirname, "..", "..", "charts", "mds-scaler");

interface K8sObject {
  kind: string;
  metadata: { name: string; namespace?: string; annotations?: Record<string, string> };
  spec?: Record<string, unknown>;
  rules?: { apiGroups: string[]; resources: string[]; resourceNames?: string[]; verbs: string[] }[];
  roleRef?: { kind: string; name: string };
}

function render(set: Record<string, string>): K8sObject[] {
  const args = ["template", "mds", chartDir, "--namespace", "mds-system"];
  for (const [key, value] of Object.entries(set)) args.push("--set", `${key}=${value}`);
  const result = runHelm(args);
  if (result.status !== 0) throw new Error(`helm template failed:\n${result.stderr}`);
  return parseAllDocuments(result.stdout)
    .map((d) => d.toJSON() as K8sObject | null)
    .filter((o): o is K8sObject => o !== null);
}

function containerOf(objects: K8sObject[]): {
  args: string[];
  env: { name: string; value?: string }[];
  ports: { name: string; containerPort: number }[];
} {
  const deployment = objects.find((o) => o.kind === "Deployment");
  const spec = deployment?.spec as { template: { spec: { containers: ReturnType<typeof containerOf>[] } } };
  const container = spec.template.spec.containers[0];
  if (container === undefined) throw new Error("no controller container");
  return container;
}

describe("chart: external metrics", () => {
  it("registers no APIService and grants nothing for it by default", () => {
    const objects = render({});
    expect(objects.filter((o) => o.kind === "APIService")).toEqual([]);
    expect(containerOf(objects).args.some((a) => a.startsWith("--external-metrics-address"))).toBe(false);
    const rules = objects.flatMap((o) => o.rules ?? []);
    expect(rules.some((r) => r.resources.includes("subjectaccessreviews"))).toBe(false);
    expect(objects.some((o) => o.metadata.namespace === "kube-system")).toBe(false);
  });

  it("with externalMetrics.enabled, points the APIService at the controller's HTTPS port", () => {
    const objects = render({ "externalMetrics.enabled": "true" });
    const apiService = objects.find((o) => o.kind === "APIService");
    expect(apiService?.metadata.name).toBe("v1beta1.external.metrics.k8s.io");
    const service = objects.find((o) => o.kind === "Service");
    const servicePorts = (service?.spec as { ports: { name: string; port: number; targetPort: string }[] }).ports;
    const port = servicePorts.find((p) => p.port === (apiService?.spec as { service: { port: number } }).service.port);
    expect(apiService?.spec).toMatchObject({
      group: "external.metrics.k8s.io",
      version: "v1beta1",
      service: { name: service?.metadata.name, namespace: "mds-system" },
    });
    const container = containerOf(objects);
    const containerPort = container.ports.find((p) => p.name === port?.targetPort);
    expect(container.args).toContain(`--external-metrics-address=:${containerPort?.containerPort}`);
    // The generated certificate's CA goes into this APIService, which the controller may patch and nothing else.
    expect(container.env).toContainEqual({
      name: "MDS_EXTERNAL_METRICS_API_SERVICE",
      value: "v1beta1.external.metrics.k8s.io",
    });
    const rules = objects.filter((o) => o.kind === "ClusterRole").flatMap((o) => o.rules ?? []);
    expect(rules).toContainEqual({
      apiGroups: ["apiregistration.k8s.io"],
      resources: ["apiservices"],
      resourceNames: ["v1beta1.external.metrics.k8s.io"],
      verbs: ["get", "patch"],
    });
    expect(rules).toContainEqual({
      apiGroups: ["authorization.k8s.io"],
      resources: ["subjectaccessreviews"],
      verbs: ["create"],
    });
    const reader = objects.find((o) => o.kind === "RoleBinding" && o.metadata.namespace === "kube-system");
    expect(reader?.roleRef).toMatchObject({ kind: "Role", name: "extension-apiserver-authentication-reader" });
  });

  it("with cert-manager, lets it inject the CA and asks for no APIService patch rights", () => {
    const objects = render({ "externalMetrics.enabled": "true", "webhooks.certManager.enabled": "true" });
    const apiService = objects.find((o) => o.kind === "APIService");
    expect(apiService?.metadata.annotations?.["cert-manager.io/inject-ca-from"]).toMatch(/^mds-system\//);
    const rules = objects.flatMap((o) => o.rules ?? []);
    expect(rules.some((r) => r.resources.includes("apiservices"))).toBe(false);
  });

  it("serves the external metrics API without the webhooks, with the same certificate settings", () => {
    const objects = render({ "externalMetrics.enabled": "true", "webhooks.enabled": "false" });
    const env = containerOf(objects).env.map((e) => e.name);
    expect(env).toEqual(expect.arrayContaining(["MDS_WEBHOOK_SERVICE", "MDS_WEBHOOK_TLS_SECRET"]));
    expect(env).not.toContain("MDS_VALIDATING_WEBHOOK_CONFIGURATION");
    expect(objects.some((o) => o.kind === "ValidatingWebhookConfiguration")).toBe(false);
  });
});
