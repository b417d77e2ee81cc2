/**
 * The Helm chart, rendered by a real helm and checked three ways: `helm lint`
 * on every ci/*-values.yaml scenario, assertions on the rendered objects
 * (including that the controller's own flag parser accepts the rendered
 * arguments), and a server-side dry-run of every object against a real
 * kube-apiserver.
 */
import { spawnSync } from "node:child_process";
import { readFileSync, readdirSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { CoreV1Api, loadAllYaml, type V1CustomResourceDefinition } from "@kubernetes/client-node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parse, parseAllDocuments } from "yaml";
import { bindingAnnotation, boundLabel, decisionAnnotation } from "../../src/core/api/model-deployment.js";
import { ConfigSchema, loadConfig } from "../../src/app/config.js";
import { settings } from "../../src/app/settings.js";
import { chartAssets, staleChartAssets } from "../../tools/generate-chart-assets.js";
import { startControlPlane, type ControlPlane } from "../../harness/kube/index.js";
import { runHelm, runKubectl } from "../../harness/helm.js";
import { runCalibrate } from "../../src/cli/calibrate.js";
import { memoryIo } from "../support/memory-io.js";

const repoRoot = join(dirname(fileURLToPath(import.meta.url)), "..", "..");
const chartDir = join(repoRoot, "charts", "mds-scaler");
const ciValuesFiles = readdirSync(join(chartDir, "ci"))
  .filter((f) => f.endsWith("-values.yaml"))
  .sort();
const namespace = "mds-system";
const release = "mds";

// ---------------------------------------------------------------- rendering

interface K8sObject {
  apiVersion: string;
  kind: string;
  metadata: { name: string; namespace?: string; labels?: Record<string, string>; annotations?: Record<string, string> };
  [field: string]: unknown;
}

interface RenderOptions {
  valuesFile?: string;
  set?: Record<string, string>;
  includeCrds?: boolean;
}

function helmArgs(command: string[], options: RenderOptions): string[] {
  const args = [...command, chartDir, "--namespace", namespace];
  if (options.valuesFile !== undefined) args.push("-f", join(chartDir, "ci", options.valuesFile));
  for (const [key, value] of Object.entries(options.set ?? {})) args.push("--set", `${key}=${value}`);
  return args;
}

// Rendering is deterministic, and many tests share the same inputs: render each once.
const rendered = new Map<string, string>();

/** `helm template` output as YAML text; fails the test with helm's message. */
function renderText(options: RenderOptions = {}): string {
  const args = helmArgs(["template", release], options);
  if (options.includeCrds === true) args.push("--include-crds");
  const key = JSON.stringify(args);
  const cached = rendered.get(key);
  if (cached !== undefined) return cached;
  const result = runHelm(args);
  if (result.status !== 0) throw new Error(`helm template failed:\n${result.stderr}`);
  rendered.set(key, result.stdout);
  return result.stdout;
}

/** The notes `helm install` prints for these values (a client-side dry run). */
function installNotes(set: Record<string, string>): string {
  const result = runHelm(helmArgs(["install", release, "--dry-run=client"], { set }));
  expect(result.status, result.stderr).toBe(0);
  return result.stdout.slice(result.stdout.indexOf("NOTES:"));
}

function render(options: RenderOptions = {}): K8sObject[] {
  return parseAllDocuments(renderText(options))
    .map((doc) => {
      if (doc.errors.length > 0)
        throw new Error(`rendered YAML does not parse: ${doc.errors.map((e) => e.message).join("; ")}`);
      return doc.toJS() as K8sObject | null;
    })
    .filter((o): o is K8sObject => o !== null);
}

function all(objects: K8sObject[], kind: string): K8sObject[] {
  return objects.filter((o) => o.kind === kind);
}

function one(objects: K8sObject[], kind: string): K8sObject {
  const found = all(objects, kind);
  expect(
    found.map((o) => o.metadata.name),
    `exactly one ${kind}`,
  ).toHaveLength(1);
  return found[0] as K8sObject;
}

// Typed views of the parts the assertions read.
interface Container {
  name: string;
  image: string;
  args: string[];
  env?: { name: string; value?: string }[];
  ports?: { name: string; containerPort: number }[];
  securityContext?: Record<string, unknown>;
  volumeMounts?: { name: string; mountPath: string }[];
}
interface PodSpec {
  containers: Container[];
  securityContext?: Record<string, unknown>;
  volumes?: { name: string; secret?: { secretName: string }; emptyDir?: object }[];
}
interface DeploymentSpec {
  replicas: number;
  selector: { matchLabels: Record<string, string> };
  template: { metadata: { labels: Record<string, string> }; spec: PodSpec };
}
interface Webhook {
  name: string;
  failurePolicy: string;
  sideEffects: string;
  clientConfig: { service: { name: string; namespace: string; path: string; port: number } };
  rules: { apiGroups: string[]; resources: string[]; apiVersions: string[] }[];
  objectSelector?: { matchExpressions?: { key: string; operator: string }[] };
  matchConditions?: { name: string; expression: string }[];
}
interface PolicyRule {
  apiGroups: string[];
  resources: string[];
  verbs: string[];
  resourceNames?: string[];
}

function deploymentSpec(objects: K8sObject[]): DeploymentSpec {
  return one(objects, "Deployment")["spec"] as DeploymentSpec;
}

function controllerContainer(objects: K8sObject[]): Container {
  const container = deploymentSpec(objects).template.spec.containers.find((c) => c.name === "controller");
  if (container === undefined) throw new Error("no controller container");
  return container;
}

/**
 * The rendered arguments and literal environment as the controller's own parser reads them: the
 * configuration checks join flags and variables (an HTTPS server needs the certificate source the
 * chart sets as a variable), so both go in.
 */
function parsedControllerArgs(objects: K8sObject[]): ReturnType<typeof loadConfig> {
  const container = controllerContainer(objects);
  const [subcommand, ...flags] = container.args;
  expect(subcommand).toBe("controller");
  return loadConfig(flags, literalEnv(objects));
}

/** The controller's variables the chart sets to a literal value (not from a field or a Secret). */
function literalEnv(objects: K8sObject[]): Record<string, string> {
  const env = controllerContainer(objects).env ?? [];
  return Object.fromEntries(env.flatMap((e) => (e.value === undefined ? [] : [[e.name, e.value] as const])));
}

/** The settings those variables set, by their names in the configuration. */
function settingsSetByEnv(objects: K8sObject[]): string[] {
  const env = literalEnv(objects);
  return Object.entries(settings)
    .filter(([, setting]) => env[setting.env] !== undefined)
    .map(([name]) => name);
}

function allows(rules: PolicyRule[], group: string, resource: string, verb: string, name?: string): boolean {
  return rules.some(
    (r) =>
      r.apiGroups.includes(group) &&
      r.resources.includes(resource) &&
      r.verbs.includes(verb) &&
      (r.resourceNames === undefined || (name !== undefined && r.resourceNames.includes(name))),
  );
}

function rulesOf(objects: K8sObject[], kind: "ClusterRole" | "Role"): PolicyRule[] {
  return one(objects, kind)["rules"] as PolicyRule[];
}

/**
 * Every rule of every rendered Role and ClusterRole, one line per resource:
 * "<Kind> <namespace>: <group>/<resource>[<names>] <verbs>", sorted.
 */
function grants(objects: K8sObject[]): string[] {
  return objects
    .filter((o) => o.kind === "Role" || o.kind === "ClusterRole")
    .flatMap((o) =>
      (o["rules"] as PolicyRule[]).flatMap((r) =>
        r.apiGroups.flatMap((g) =>
          r.resources.map(
            (res) =>
              `${o.kind}${o.metadata.namespace === undefined ? "" : ` ${o.metadata.namespace}`}: ${g === "" ? "core" : g}/${res}${r.resourceNames === undefined ? "" : `[${r.resourceNames.join(",")}]`} ${r.verbs.join(",")}`,
          ),
        ),
      ),
    )
    .sort();
}

/** What the controller calls on scalers and targets (src/adapters/kubernetes/resources.ts and watch.ts). */
function workloadGrants(where: string): string[] {
  return [
    `${where}: worker.gpustack.ai/modeldeploymentscalers get,list,watch,patch`,
    `${where}: worker.gpustack.ai/modeldeploymentscalers/status patch`,
    `${where}: worker.gpustack.ai/modeldeployments get,list,watch,patch`,
  ];
}

/** The Lease (leader.ts) and, with a generated certificate, its Secret (certificates.ts): read, create, replace. */
function releaseGrants(opts: { secret: boolean }): string[] {
  return [
    `Role ${namespace}: coordination.k8s.io/leases create`,
    `Role ${namespace}: coordination.k8s.io/leases[mds-mds-scaler] get,update`,
    ...(opts.secret
      ? [
          `Role ${namespace}: core/secrets create`,
          `Role ${namespace}: core/secrets[mds-mds-scaler-webhook-tls] get,update`,
        ]
      : []),
  ];
}

/** Prometheus Operator sanitizes pod label names into Prometheus label names this way. */
function prometheusLabelName(podLabel: string): string {
  return podLabel.replace(/[^a-zA-Z0-9_]/g, "_");
}

const controllerDefaults = ConfigSchema.parse({ prometheusUrl: "http://prometheus.invalid:9090" });
const chartValues = parse(readFileSync(join(chartDir, "values.yaml"), "utf8")) as {
  labels: Record<"namespace" | "pod" | "deployment" | "role", string>;
  metricSeparator: string;
  prometheus: { timeoutMs: number; queries: string };
  controller: {
    targetApiVersion: string;
    logLevel: string;
    tickMs: number;
    kubeTimeoutMs: number;
    latencyGuardReading: string;
  };
  podMonitor: { endpoint: { interval: string } };
};

// ---------------------------------------------------------------- lint

describe("helm lint", () => {
  it.each(ciValuesFiles)("passes --strict with ci/%s", (file) => {
    const result = runHelm(helmArgs(["lint", "--strict"], { valuesFile: file }));
    expect(result.stderr + result.stdout).toContain("0 chart(s) failed");
    expect(result.status).toBe(0);
  });

  it("finds the three scenarios the chart promises", () => {
    expect(ciValuesFiles).toEqual([
      "cert-manager-values.yaml",
      "defaults-values.yaml",
      "floor-refresh-values.yaml",
      "minimal-values.yaml",
    ]);
  });

  it.each([
    ["a Prometheus URL without a scheme", { "prometheus.url": "prometheus:9090" }, "/prometheus/url"],
    [
      "a pod label name where a Prometheus label name belongs",
      { "labels.role": "app.kubernetes.io/component" },
      "/labels/role",
    ],
    ["a misspelled key", { "serviceMonitor.enable": "true" }, "enable"],
    ["a webhook timeout the API server refuses", { "webhooks.timeoutSeconds": "31" }, "/webhooks/timeoutSeconds"],
    [
      "a watched namespace that is not a namespace name",
      { "controller.watchNamespace": "Team_A" },
      "/controller/watchNamespace",
    ],
    [
      "a latency guard reading the controller does not know",
      { "controller.latencyGuardReading": "loose" },
      "/controller/latencyGuardReading",
    ],
    // Prometheus, the Operator and the controller's --engine-scrape-interval read units largest first, once each.
    [
      "an engine scrape interval with its units out of order",
      { "podMonitor.endpoint.interval": "30s1m" },
      "/podMonitor/endpoint/interval",
    ],
    ["an empty engine scrape interval", { "podMonitor.endpoint.interval": "" }, "/podMonitor/endpoint/interval"],
    ["a scrape timeout with a unit twice", { "serviceMonitor.scrapeTimeout": "5s5s" }, "/serviceMonitor/scrapeTimeout"],
  ])("rejects %s through values.schema.json", (_why, set, where) => {
    const result = runHelm(helmArgs(["lint", "--strict"], { set }));
    expect(result.status).not.toBe(0);
    expect(result.stderr + result.stdout).toContain(where);
  });

  it.each(["1m30s", "500ms", "1h"])("accepts the engine scrape interval %s", (interval) => {
    const result = runHelm(helmArgs(["lint", "--strict"], { set: { "podMonitor.endpoint.interval": interval } }));
    expect(result.stderr + result.stdout).toContain("0 chart(s) failed");
  });
});

// ---------------------------------------------------------------- rendered objects

describe("helm template with defaults", () => {
  let objects: K8sObject[] = [];
  beforeAll(() => {
    objects = render();
  });

  it("renders every part of the product", () => {
    const kinds = new Set(objects.map((o) => o.kind));
    for (const kind of [
      "ServiceAccount",
      "ClusterRole",
      "ClusterRoleBinding",
      "Role",
      "RoleBinding",
      "Service",
      "Deployment",
      "PodDisruptionBudget",
      "ServiceMonitor",
      "PodMonitor",
      "PrometheusRule",
      "ConfigMap",
      "ValidatingWebhookConfiguration",
      "MutatingWebhookConfiguration",
    ]) {
      expect(kinds, kind).toContain(kind);
    }
    expect(kinds).not.toContain("Certificate");
    // Off by default: a policy would cut off readers nobody listed (docs/install.md, NetworkPolicy).
    expect(kinds).not.toContain("NetworkPolicy");
  });

  it("runs two controller replicas", () => {
    expect(deploymentSpec(objects).replicas).toBe(2);
  });

  it("passes only flags the controller accepts, with its own defaults", () => {
    const config = parsedControllerArgs(objects);
    expect(config.prometheusUrl).toBe("http://prometheus-operated.monitoring.svc:9090");
    expect(config.metricsAddress).toBe(":8080");
    expect(config.webhookAddress).toBe(":9443");
    // Flags only: what the chart sets through variables (the certificate source, the webhook names) is
    // checked by the tests of those values.
    const fromEnv = Object.fromEntries(settingsSetByEnv(objects).map((name) => [name, ""]));
    expect({ ...config, prometheusUrl: "", webhookAddress: "", ...fromEnv }).toEqual({
      ...controllerDefaults,
      prometheusUrl: "",
      webhookAddress: "",
      ...fromEnv,
    });
  });

  it("keeps values.yaml defaults equal to the controller's defaults", () => {
    expect(chartValues.labels).toEqual({
      namespace: controllerDefaults.namespaceLabel,
      pod: controllerDefaults.podLabel,
      deployment: controllerDefaults.deploymentLabel,
      role: controllerDefaults.roleLabel,
    });
    expect(chartValues.metricSeparator).toBe(controllerDefaults.metricSeparator);
    expect(chartValues.prometheus.timeoutMs).toBe(controllerDefaults.prometheusTimeoutMs);
    // Empty: the chart picks the plan from the PodMonitor (below), the controller's default without conversion.
    expect(chartValues.prometheus.queries).toBe("");
    expect(chartValues.controller).toMatchObject({
      targetApiVersion: controllerDefaults.targetApiVersion,
      logLevel: controllerDefaults.logLevel,
      tickMs: controllerDefaults.tickMs,
      kubeTimeoutMs: controllerDefaults.kubeTimeoutMs,
      latencyGuardReading: controllerDefaults.latencyGuardReading,
    });
    expect(chartValues.podMonitor.endpoint.interval).toBe(controllerDefaults.engineScrapeInterval);
  });

  it("tells the controller the engines' scrape interval the PodMonitor scrapes at, for admission's warnings", () => {
    const args = controllerContainer(objects).args;
    expect(args).toContain("--engine-scrape-interval=15s");
    const at30 = render({ set: { "podMonitor.endpoint.interval": "30s" } });
    expect(parsedControllerArgs(at30).engineScrapeInterval).toBe("30s");
  });

  it("scrapes engine pods so their series carry the labels the controller groups by", () => {
    const spec = one(objects, "PodMonitor")["spec"] as {
      selector: { matchLabels: Record<string, string>; matchExpressions: unknown[] };
      namespaceSelector: { any?: boolean };
      podTargetLabels: string[];
      podMetricsEndpoints: { portNumber?: number; path: string }[];
      scrapeClassicHistograms?: boolean;
    };
    expect(spec.selector.matchLabels).toEqual({ "app.kubernetes.io/name": "model-deployment" });
    // Only engine pods, which carry a role: a pod of the deployment without one is not scraped.
    expect(spec.selector.matchExpressions).toEqual([{ key: "app.kubernetes.io/component", operator: "Exists" }]);
    expect(spec.namespaceSelector.any).toBe(true);
    expect(spec.podTargetLabels.map(prometheusLabelName)).toEqual([
      controllerDefaults.deploymentLabel,
      controllerDefaults.roleLabel,
    ]);
    expect(spec.podMetricsEndpoints).toEqual([expect.objectContaining({ portNumber: 8000, path: "/metrics" })]);
    // The classic bucket series the controller reads survive a Prometheus that converts histograms to NHCB.
    expect(spec.scrapeClassicHistograms).toBe(true);
    // Converting them is the user's choice (the native query plan reads the native ones), off by default.
    expect(spec).not.toHaveProperty("convertClassicHistogramsToNHCB");
    const converted = one(render({ set: { "podMonitor.convertClassicHistogramsToNHCB": "true" } }), "PodMonitor")[
      "spec"
    ] as { convertClassicHistogramsToNHCB?: boolean; scrapeClassicHistograms?: boolean };
    expect(converted).toMatchObject({ convertClassicHistogramsToNHCB: true, scrapeClassicHistograms: true });
  });

  it("scrapes the controller's own /metrics through a named Service port", () => {
    const monitor = one(objects, "ServiceMonitor")["spec"] as {
      selector: { matchLabels: Record<string, string> };
      endpoints: { port: string; path: string }[];
    };
    const service = one(objects, "Service");
    const serviceLabels = service.metadata.labels ?? {};
    for (const [key, value] of Object.entries(monitor.selector.matchLabels))
      expect(serviceLabels[key], key).toBe(value);
    const ports = (service["spec"] as { ports: { name: string; targetPort: string }[] }).ports;
    expect(ports.map((p) => p.name)).toContain(monitor.endpoints[0]?.port);
    expect(monitor.endpoints[0]?.path).toBe("/metrics");
    const containerPorts = controllerContainer(objects).ports?.map((p) => p.name);
    for (const port of ports) expect(containerPorts).toContain(port.targetPort);
  });

  it("keeps the scaler's own namespace label instead of renaming it exported_namespace", () => {
    // Per-scaler series carry `namespace` = the scaler's namespace. Without
    // honorLabels, Prometheus moves it to exported_namespace and writes the
    // controller's namespace in its place (test/e2e/stack.e2e.test.ts shows it
    // with the operator and a real Prometheus).
    const monitor = one(objects, "ServiceMonitor");
    const endpoints = (monitor["spec"] as { endpoints: { honorLabels?: boolean; scheme: string }[] }).endpoints;
    expect(endpoints).toEqual([expect.objectContaining({ honorLabels: true, scheme: "http" })]);
    expect(monitor.metadata.namespace).toBe(namespace);
  });

  it("names the controller image mds-scaler at the chart's appVersion by default (nothing is published)", () => {
    const chart = parse(readFileSync(join(repoRoot, "charts", "mds-scaler", "Chart.yaml"), "utf8")) as {
      appVersion: string;
    };
    expect(controllerContainer(objects).image).toBe(`mds-scaler:${chart.appVersion}`);
  });

  it("ships the rule groups of rules/ unchanged, including MdsScalerBlocked", () => {
    const spec = one(objects, "PrometheusRule")["spec"] as { groups: { name: string; rules: { alert?: string }[] }[] };
    const alerts = spec.groups.flatMap((g) => g.rules.map((r) => r.alert)).filter((a) => a !== undefined);
    expect(alerts).toContain("MdsScalerBlocked");
    const source = readdirSync(join(repoRoot, "rules"))
      .filter((f) => f.endsWith(".rules.yaml"))
      .sort()
      .flatMap((f) => (parse(readFileSync(join(repoRoot, "rules", f), "utf8")) as { groups: unknown[] }).groups);
    expect(spec.groups).toEqual(source);
  });

  it("ships each dashboard as a ConfigMap the Grafana sidecar picks up, with valid JSON", () => {
    const configMaps = all(objects, "ConfigMap");
    const sources = readdirSync(join(repoRoot, "dashboards")).filter((f) => f.endsWith(".json"));
    expect(configMaps).toHaveLength(sources.length);
    for (const cm of configMaps) {
      expect(cm.metadata.labels?.["grafana_dashboard"]).toBe("1");
      const data = cm["data"] as Record<string, string>;
      for (const [file, text] of Object.entries(data)) {
        const dashboard = JSON.parse(text) as { uid?: unknown; panels?: unknown[] };
        expect(typeof dashboard.uid).toBe("string");
        expect(dashboard).toEqual(JSON.parse(readFileSync(join(repoRoot, "dashboards", file), "utf8")));
      }
    }
  });

  it("registers webhooks that fail closed and reach the controller's HTTPS port", () => {
    const service = one(objects, "Service");
    const webhookPort = (service["spec"] as { ports: { name: string; port: number; targetPort: string }[] }).ports.find(
      (p) => p.name === "https-webhook",
    );
    expect(webhookPort).toBeDefined();
    const container = controllerContainer(objects);
    const containerPort = container.ports?.find((p) => p.name === webhookPort?.targetPort)?.containerPort;
    expect(parsedControllerArgs(objects).webhookAddress).toBe(`:${containerPort}`);

    const webhooks = [
      ...all(objects, "ValidatingWebhookConfiguration"),
      ...all(objects, "MutatingWebhookConfiguration"),
    ].flatMap((c) => c["webhooks"] as Webhook[]);
    expect(webhooks.map((w) => w.name).sort()).toEqual([
      "default.modeldeploymentscalers.worker.gpustack.ai",
      "fence.modeldeployments.worker.gpustack.ai",
      "validate.modeldeploymentscalers.worker.gpustack.ai",
    ]);
    for (const webhook of webhooks) {
      expect(webhook.failurePolicy, webhook.name).toBe("Fail");
      expect(webhook.sideEffects, webhook.name).toBe("None");
      expect(webhook.clientConfig.service).toMatchObject({
        name: service.metadata.name,
        namespace,
        port: webhookPort?.port,
      });
    }
    const fence = webhooks.find((w) => w.name.startsWith("fence."));
    expect(fence?.rules[0]).toMatchObject({ apiGroups: ["worker.gpustack.ai"], resources: ["modeldeployments"] });
    // Only bound targets reach the fence, and only writes that change what it guards.
    expect(fence?.objectSelector).toEqual({ matchExpressions: [{ key: boundLabel, operator: "Exists" }] });
    expect(fence?.matchConditions?.map((c) => c.name)).toEqual(["fenced-fields-change"]);
    for (const webhook of webhooks.filter((w) => w.name.endsWith("modeldeploymentscalers.worker.gpustack.ai")))
      expect(
        webhook.matchConditions?.map((c) => c.name),
        webhook.name,
      ).toEqual(["spec-changes"]);
    // The static half: a policy the API server checks itself keeps the label on every bound target.
    const policy = one(objects, "ValidatingAdmissionPolicy");
    const policyText = JSON.stringify(policy["spec"]);
    for (const key of [boundLabel, bindingAnnotation, decisionAnnotation]) expect(policyText).toContain(key);
    expect(policyText).toContain(`system:serviceaccount:${namespace}:`);
    expect(one(objects, "ValidatingAdmissionPolicyBinding")["spec"]).toMatchObject({
      policyName: policy.metadata.name,
      validationActions: ["Deny"],
    });
  });

  it("lets the controller patch its CA bundle into its own webhook configurations only", () => {
    const clusterRules = rulesOf(objects, "ClusterRole");
    for (const kind of ["ValidatingWebhookConfiguration", "MutatingWebhookConfiguration"]) {
      const name = one(objects, kind).metadata.name;
      const resource = `${kind.toLowerCase()}s`;
      expect(allows(clusterRules, "admissionregistration.k8s.io", resource, "patch", name), kind).toBe(true);
      expect(allows(clusterRules, "admissionregistration.k8s.io", resource, "patch", "someone-elses"), kind).toBe(
        false,
      );
    }
    const env = Object.fromEntries((controllerContainer(objects).env ?? []).map((e) => [e.name, e.value]));
    const secret = env["MDS_WEBHOOK_TLS_SECRET"];
    expect(secret).toBeDefined();
    const roleRules = rulesOf(objects, "Role");
    expect(allows(roleRules, "", "secrets", "get", secret)).toBe(true);
    expect(allows(roleRules, "", "secrets", "get", "another-secret")).toBe(false);
  });

  it("grants exactly the calls the controller makes (docs/install.md, RBAC), and no more", () => {
    expect(grants(objects)).toEqual(
      [
        ...workloadGrants("ClusterRole"),
        "ClusterRole: admissionregistration.k8s.io/mutatingwebhookconfigurations[mds-mds-scaler] get,patch",
        "ClusterRole: admissionregistration.k8s.io/validatingwebhookconfigurations[mds-mds-scaler] get,patch",
        ...releaseGrants({ secret: true }),
      ].sort(),
    );
    const env = Object.fromEntries((controllerContainer(objects).env ?? []).map((e) => [e.name, e.value]));
    expect(env["MDS_LEASE_NAME"]).toBe(one(objects, "Deployment").metadata.name);
    expect(env["MDS_WEBHOOK_TLS_SECRET"]).toBe("mds-mds-scaler-webhook-tls");
    expect(one(objects, "Role").metadata.namespace).toBe(namespace);
  });

  it("binds the roles to the ServiceAccount the pods run as", () => {
    const serviceAccount = one(objects, "ServiceAccount").metadata.name;
    expect(deploymentSpec(objects).template.spec).toMatchObject({ serviceAccountName: serviceAccount });
    for (const kind of ["ClusterRoleBinding", "RoleBinding"]) {
      const binding = one(objects, kind);
      expect(binding["subjects"], kind).toEqual([{ kind: "ServiceAccount", name: serviceAccount, namespace }]);
      expect((binding["roleRef"] as { name: string }).name).toBe(
        one(objects, kind.replace("Binding", "")).metadata.name,
      );
    }
  });

  it("runs as non-root on a read-only root filesystem with a writable /tmp", () => {
    const pod = deploymentSpec(objects).template.spec;
    const container = controllerContainer(objects);
    expect(pod.securityContext).toMatchObject({ runAsNonRoot: true, seccompProfile: { type: "RuntimeDefault" } });
    expect(container.securityContext).toMatchObject({
      readOnlyRootFilesystem: true,
      allowPrivilegeEscalation: false,
      capabilities: { drop: ["ALL"] },
    });
    const tmp = container.volumeMounts?.find((m) => m.mountPath === "/tmp");
    expect(pod.volumes?.find((v) => v.name === tmp?.name)?.emptyDir).toBeDefined();
  });

  it("selects its own pods with labels the pod template carries", () => {
    const spec = deploymentSpec(objects);
    expect(spec.template.metadata.labels).toMatchObject(spec.selector.matchLabels);
    const pdb = one(objects, "PodDisruptionBudget")["spec"] as { selector: { matchLabels: Record<string, string> } };
    expect(pdb.selector.matchLabels).toEqual(spec.selector.matchLabels);
  });
});

describe("helm template with values", () => {
  it("mounts the Prometheus headers Secret and passes the file, only when one is named", () => {
    const objects = render({ set: { "prometheus.headersSecret": "tenant-headers" } });
    expect(parsedControllerArgs(objects).prometheusHeadersFile).toBe("/etc/mds-scaler/prometheus-headers/headers");
    const spec = deploymentSpec(objects) as unknown as {
      template: { spec: { volumes: { name: string; secret?: { secretName: string } }[] } };
    };
    expect(spec.template.spec.volumes.find((v) => v.name === "prometheus-headers")?.secret?.secretName).toBe(
      "tenant-headers",
    );
    expect(parsedControllerArgs(render({})).prometheusHeadersFile).toBe("");
  });

  it("passes the query plan to the controller", () => {
    expect(parsedControllerArgs(render({ set: { "prometheus.queries": "unions" } })).prometheusQueries).toBe("unions");
  });

  it.each([
    ["the controller's default without conversion", {}, controllerDefaults.prometheusQueries],
    ["native where the PodMonitor converts", { "podMonitor.convertClassicHistogramsToNHCB": "true" }, "native"],
    [
      "the plan set, conversion or not",
      { "podMonitor.convertClassicHistogramsToNHCB": "true", "prometheus.queries": "roles" },
      "roles",
    ],
  ])("with prometheus.queries empty picks %s", (_case, set, plan) => {
    expect(parsedControllerArgs(render({ set })).prometheusQueries).toBe(plan);
  });

  it("passes label matchers to the controller only when set, quotes and all", () => {
    // helm's --set splits on unescaped commas.
    const objects = render({ set: { "prometheus.matchers": 'cluster="prod-eu"\\,region=~"eu-.*"' } });
    expect(parsedControllerArgs(objects).prometheusMatchers).toBe('cluster="prod-eu",region=~"eu-.*"');
    expect(parsedControllerArgs(render({})).prometheusMatchers).toBe("");
  });

  it("runs the controller with a young generation of its own, options Node accepts, and none when emptied", () => {
    const options = literalEnv(render({}))["NODE_OPTIONS"];
    expect(options).toBe("--max-semi-space-size=32");
    // Node refuses an option it does not know in NODE_OPTIONS (exit 9): the controller would not start.
    const node = spawnSync(process.execPath, ["-e", "0"], { env: { ...process.env, NODE_OPTIONS: options } });
    expect(node.status, node.stderr.toString()).toBe(0);
    expect(literalEnv(render({ set: { "controller.nodeOptions": "" } }))["NODE_OPTIONS"]).toBeUndefined();
  });

  it("passes the latency guard reading to the controller", () => {
    const objects = render({ set: { "controller.latencyGuardReading": "literal" } });
    expect(parsedControllerArgs(objects).latencyGuardReading).toBe("literal");
  });

  it("with one watched namespace, grants scalers and targets there only, and narrows the webhooks to it", () => {
    const objects = render({ set: { "controller.watchNamespace": "team" } });
    expect(parsedControllerArgs(objects).watchNamespace).toBe("team");
    expect(grants(objects)).toEqual(
      [
        ...workloadGrants("Role team"),
        "ClusterRole: admissionregistration.k8s.io/mutatingwebhookconfigurations[mds-mds-scaler] get,patch",
        "ClusterRole: admissionregistration.k8s.io/validatingwebhookconfigurations[mds-mds-scaler] get,patch",
        ...releaseGrants({ secret: true }),
      ].sort(),
    );
    const serviceAccount = one(objects, "ServiceAccount").metadata.name;
    const binding = all(objects, "RoleBinding").find((b) => b.metadata.namespace === "team");
    expect(binding?.["subjects"]).toEqual([{ kind: "ServiceAccount", name: serviceAccount, namespace }]);
    expect(binding?.["roleRef"]).toEqual({
      apiGroup: "rbac.authorization.k8s.io",
      kind: "Role",
      name: all(objects, "Role").find((r) => r.metadata.namespace === "team")?.metadata.name,
    });
    // The controller may read objects in "team" only: a webhook called for another namespace could not look them up.
    const webhooks = [
      ...all(objects, "ValidatingWebhookConfiguration"),
      ...all(objects, "MutatingWebhookConfiguration"),
    ].flatMap((c) => c["webhooks"] as (Webhook & { namespaceSelector?: unknown })[]);
    expect(webhooks).toHaveLength(3);
    for (const webhook of webhooks)
      expect(webhook.namespaceSelector, webhook.name).toEqual({
        matchExpressions: [{ key: "kubernetes.io/metadata.name", operator: "In", values: ["team"] }],
      });
  });

  it("with one watched namespace and no webhooks, renders no cluster-wide grant at all", () => {
    const objects = render({ valuesFile: "minimal-values.yaml", set: { "controller.watchNamespace": "team" } });
    expect(all(objects, "ClusterRole")).toEqual([]);
    expect(all(objects, "ClusterRoleBinding")).toEqual([]);
    expect(grants(objects)).toEqual([...workloadGrants("Role team"), ...releaseGrants({ secret: false })].sort());
  });

  it("keeps the user's fence namespaceSelector and adds the watched namespace to it", () => {
    const objects = render({
      set: { "controller.watchNamespace": "team", "webhooks.namespaceSelector.matchLabels.mds": "on" },
    });
    const fence = (one(objects, "ValidatingWebhookConfiguration")["webhooks"] as Webhook[]).find((w) =>
      w.name.startsWith("fence."),
    ) as (Webhook & { namespaceSelector?: unknown }) | undefined;
    expect(fence?.namespaceSelector).toEqual({
      matchLabels: { mds: "on" },
      matchExpressions: [{ key: "kubernetes.io/metadata.name", operator: "In", values: ["team"] }],
    });
  });

  it("passes the configured Prometheus URL and label mapping to the controller", () => {
    const objects = render({
      set: {
        "prometheus.url": "http://kps-prometheus.monitoring:9090",
        "labels.namespace": "kubernetes_namespace",
        "labels.pod": "kubernetes_pod_name",
        "labels.deployment": "md",
        "labels.role": "md_role",
        metricSeparator: "_",
        "controller.watchNamespace": "llm",
      },
    });
    const config = parsedControllerArgs(objects);
    expect(config).toMatchObject({
      prometheusUrl: "http://kps-prometheus.monitoring:9090",
      namespaceLabel: "kubernetes_namespace",
      podLabel: "kubernetes_pod_name",
      deploymentLabel: "md",
      roleLabel: "md_role",
      metricSeparator: "_",
      watchNamespace: "llm",
    });
  });

  it("sets the ServiceMonitor options users expect", () => {
    const objects = render({
      set: {
        "serviceMonitor.namespace": "monitoring",
        "serviceMonitor.honorLabels": "false",
        "serviceMonitor.jobLabel": "app.kubernetes.io/name",
        "serviceMonitor.targetLabels[0]": "team",
        "serviceMonitor.scheme": "https",
        "serviceMonitor.tlsConfig.insecureSkipVerify": "true",
        "serviceMonitor.tlsConfig.serverName": "mds.mds-system.svc",
        "podMonitor.namespace": "monitoring",
        "podMonitor.endpoint.tlsConfig.serverName": "engine",
      },
    });
    const monitor = one(objects, "ServiceMonitor");
    expect(monitor.metadata.namespace).toBe("monitoring");
    expect(monitor["spec"]).toMatchObject({
      jobLabel: "app.kubernetes.io/name",
      targetLabels: ["team"],
      // The object moves; what it selects stays in the release namespace.
      namespaceSelector: { matchNames: [namespace] },
      endpoints: [
        {
          honorLabels: false,
          scheme: "https",
          tlsConfig: { insecureSkipVerify: true, serverName: "mds.mds-system.svc" },
        },
      ],
    });
    const podMonitor = one(objects, "PodMonitor");
    expect(podMonitor.metadata.namespace).toBe("monitoring");
    expect(podMonitor["spec"]).toMatchObject({ podMetricsEndpoints: [{ tlsConfig: { serverName: "engine" } }] });
  });

  it("pulls the image through another registry, or by digest", () => {
    const mirrored = render({ set: { "image.registry": "mirror.example.com", "image.tag": "1.2.3" } });
    expect(controllerContainer(mirrored).image).toBe("mirror.example.com/mds-scaler:1.2.3");
    const digest = `sha256:${"a".repeat(64)}`;
    const pinned = render({ set: { "image.registry": "", "image.repository": "me/mds", "image.digest": digest } });
    expect(controllerContainer(pinned).image).toBe(`me/mds@${digest}`);
  });

  it("refuses an image digest that is not algorithm:hex, naming the field", () => {
    const result = runHelm(helmArgs(["template", release], { set: { "image.digest": "latest" } }));
    expect(result.status).not.toBe(0);
    expect(result.stderr).toMatch(/image\.digest|\/image\/digest/);
  });

  it("labels the monitors and rules for the kube-prometheus-stack selector", () => {
    const objects = render({ valuesFile: "cert-manager-values.yaml" });
    for (const kind of ["ServiceMonitor", "PodMonitor", "PrometheusRule"]) {
      expect(one(objects, kind).metadata.labels?.["release"], kind).toBe("kube-prometheus-stack");
    }
    const dashboards = all(objects, "ConfigMap");
    expect(dashboards.length).toBeGreaterThan(1);
    for (const cm of dashboards) expect(cm.metadata.annotations).toEqual({ grafana_folder: "LLM" });
  });

  it("with cert-manager, injects the CA and mounts the certificate cert-manager writes", () => {
    const objects = render({ valuesFile: "cert-manager-values.yaml" });
    const certificates = all(objects, "Certificate");
    const certificate = certificates.find((c) => !(c["spec"] as { isCA?: boolean }).isCA) as K8sObject;
    const certSpec = certificate["spec"] as {
      secretName: string;
      dnsNames: string[];
      issuerRef: { kind: string; name: string };
    };
    const service = one(objects, "Service").metadata.name;
    expect(certSpec.dnsNames).toContain(`${service}.${namespace}.svc`);
    // A CA of the release's own signs the serving certificate, so renewals leave the injected CA bundle alone.
    const caIssuer = all(objects, "Issuer").find((i) => i.metadata.name === certSpec.issuerRef.name);
    const caSecret = (caIssuer?.["spec"] as { ca?: { secretName: string } } | undefined)?.ca?.secretName;
    const caCertificate = certificates.find((c) => (c["spec"] as { secretName: string }).secretName === caSecret);
    expect(caCertificate?.["spec"]).toMatchObject({ isCA: true, duration: "87600h" });
    const selfSigned = all(objects, "Issuer").find(
      (i) => i.metadata.name === (caCertificate?.["spec"] as { issuerRef: { name: string } }).issuerRef.name,
    );
    expect(selfSigned?.["spec"]).toEqual({ selfSigned: {} });
    for (const kind of ["ValidatingWebhookConfiguration", "MutatingWebhookConfiguration"]) {
      expect(one(objects, kind).metadata.annotations?.["cert-manager.io/inject-ca-from"], kind).toBe(
        `${namespace}/${certificate.metadata.name}`,
      );
    }
    const pod = deploymentSpec(objects).template.spec;
    const volume = pod.volumes?.find((v) => v.secret?.secretName === certSpec.secretName);
    expect(volume).toBeDefined();
    const mount = controllerContainer(objects).volumeMounts?.find((m) => m.name === volume?.name);
    const env = Object.fromEntries((controllerContainer(objects).env ?? []).map((e) => [e.name, e.value]));
    expect(env["MDS_WEBHOOK_CERT_DIR"]).toBe(mount?.mountPath);
    // cert-manager owns the certificate: the controller needs no Secret or webhook-configuration rights.
    expect(allows(rulesOf(objects, "Role"), "", "secrets", "create")).toBe(false);
    expect(rulesOf(objects, "ClusterRole").some((r) => r.apiGroups.includes("admissionregistration.k8s.io"))).toBe(
      false,
    );
  });

  it("uses a given issuer instead of creating one", () => {
    const objects = render({
      valuesFile: "cert-manager-values.yaml",
      set: { "webhooks.certManager.issuerRef.kind": "ClusterIssuer", "webhooks.certManager.issuerRef.name": "corp-ca" },
    });
    expect(all(objects, "Issuer")).toHaveLength(0);
    expect((one(objects, "Certificate")["spec"] as { issuerRef: unknown }).issuerRef).toEqual({
      kind: "ClusterIssuer",
      name: "corp-ca",
    });
  });

  it.each([
    ["serviceMonitor.enabled", ["ServiceMonitor"]],
    ["podMonitor.enabled", ["PodMonitor"]],
    ["prometheusRule.enabled", ["PrometheusRule"]],
    ["dashboards.enabled", ["ConfigMap"]],
    [
      "webhooks.enabled",
      [
        "ValidatingWebhookConfiguration",
        "MutatingWebhookConfiguration",
        "ValidatingAdmissionPolicy",
        "ValidatingAdmissionPolicyBinding",
      ],
    ],
    ["podDisruptionBudget.enabled", ["PodDisruptionBudget"]],
    ["serviceAccount.create", ["ServiceAccount"]],
    ["rbac.create", ["ClusterRole", "ClusterRoleBinding", "Role", "RoleBinding"]],
  ])("%s=false removes its objects and nothing else", (toggle, kinds) => {
    const before = render();
    const after = render({ set: { [toggle]: "false" } });
    const key = (o: K8sObject): string => `${o.kind}/${o.metadata.name}`;
    const removed = before.map(key).filter((k) => !after.map(key).includes(k));
    expect(new Set(removed.map((k) => k.split("/")[0]))).toEqual(new Set(kinds));
    expect(after.map(key).filter((k) => !before.map(key).includes(k))).toEqual([]);
  });

  it("without webhooks, serves no webhook port and asks for no certificate rights", () => {
    const objects = render({ set: { "webhooks.enabled": "false" } });
    expect(parsedControllerArgs(objects).webhookAddress).toBe("");
    const ports = (one(objects, "Service")["spec"] as { ports: { name: string }[] }).ports.map((p) => p.name);
    expect(ports).toEqual(["http-metrics"]);
    expect(allows(rulesOf(objects, "Role"), "", "secrets", "create")).toBe(false);
    expect(rulesOf(objects, "ClusterRole").some((r) => r.apiGroups.includes("admissionregistration.k8s.io"))).toBe(
      false,
    );
  });

  it("drops the PodDisruptionBudget with a single replica, where it would block node drains", () => {
    const objects = render({ valuesFile: "minimal-values.yaml" });
    expect(all(objects, "PodDisruptionBudget")).toEqual([]);
    expect(deploymentSpec(objects).replicas).toBe(1);
    expect(objects.map((o) => o.kind).sort()).toEqual([
      "ClusterRole",
      "ClusterRoleBinding",
      "Deployment",
      "Role",
      "RoleBinding",
      "Service",
      "ServiceAccount",
    ]);
  });

  it("warns in the notes when the label mapping does not match the PodMonitor", () => {
    expect(installNotes({})).not.toContain("WARNING");
    expect(installNotes({ "labels.role": "role" })).toContain('labels.role is "role"');
  });

  it("names the query plan in the notes, and what the native plan needs of Prometheus", () => {
    const plain = installNotes({});
    expect(plain).toContain("with the roles query plan.");
    expect(plain).not.toContain("native-histograms");
    const converted = installNotes({ "podMonitor.convertClassicHistogramsToNHCB": "true" });
    expect(converted).toContain("with the native query plan.");
    expect(converted).toContain("spec.enableFeatures: [native-histograms]");
  });
});

// ---------------------------------------------------------------- generated assets

describe("floorRefresh: the daily refresh of floors by the hour", () => {
  interface JobSpec {
    schedule: string;
    timeZone: string;
    concurrencyPolicy: string;
    jobTemplate: {
      spec: { template: { spec: { serviceAccountName: string; containers: { name: string; args: string[] }[] } } };
    };
  }
  const refresh = { "floorRefresh.scalers[0]": "team-a/chat", "floorRefresh.scalers[1]": "team-b/code" };

  it("renders nothing while no scaler is listed", () => {
    const objects = render();
    expect(all(objects, "CronJob")).toEqual([]);
    expect(objects.filter((o) => o.metadata.labels?.["app.kubernetes.io/component"] === "floor-refresh")).toEqual([]);
  });

  it("runs the docs' daily command per scaler, with the controller's own Prometheus and label flags", async () => {
    const set = { ...refresh, "prometheus.matchers": 'cluster="prod"', "labels.role": "role" };
    const objects = render({ set });
    const jobs = all(objects, "CronJob");
    expect(jobs.map((j) => j.metadata.annotations?.["mds-scaler.io/scaler"])).toEqual(["team-a/chat", "team-b/code"]);
    const spec = jobs[0]?.["spec"] as JobSpec;
    expect(spec).toMatchObject({ schedule: "5 0 * * *", timeZone: "Etc/UTC", concurrencyPolicy: "Forbid" });
    const args = spec.jobTemplate.spec.template.spec.containers[0]?.args ?? [];
    const controllerFlags = controllerContainer(objects).args.filter((a) => /^--(prometheus|metric|label)-/.test(a));
    expect(controllerFlags).toContain('--prometheus-matchers=cluster="prod"');
    expect(args).toEqual([
      "calibrate",
      "--scaler=team-a/chat",
      ...controllerFlags,
      "--target-api-version=v1",
      "--last=15m",
      "--keep-targets",
      "--hourly-floors-from=prometheus",
      "--apply",
    ]);
    // calibrate's own parser knows every flag (an unknown one is a usage error before --help answers).
    const io = memoryIo();
    expect(await runCalibrate([...args.slice(1), "--help"], io), io.err).toBe(0);
    expect(new Set(jobs.map((j) => j.metadata.name)).size).toBe(2);
    for (const job of jobs) expect(job.metadata.name.length).toBeLessThanOrEqual(52);
  });

  it("grants each job its one scaler (get, patch) and its namespace's ModelDeployments (get), and nothing else", () => {
    const objects = render({ set: refresh });
    const refreshGrants = grants(
      objects.filter((o) => o.metadata.labels?.["app.kubernetes.io/component"] === "floor-refresh"),
    );
    expect(refreshGrants).toEqual([
      "Role team-a: worker.gpustack.ai/modeldeployments get",
      "Role team-a: worker.gpustack.ai/modeldeploymentscalers[chat] get,patch",
      "Role team-b: worker.gpustack.ai/modeldeployments get",
      "Role team-b: worker.gpustack.ai/modeldeploymentscalers[code] get,patch",
    ]);
    const serviceAccount = all(objects, "ServiceAccount").find((a) => a.metadata.name.endsWith("-floor-refresh"));
    const job = all(objects, "CronJob")[0]?.["spec"] as JobSpec;
    expect(job.jobTemplate.spec.template.spec.serviceAccountName).toBe(serviceAccount?.metadata.name);
    const binding = all(objects, "RoleBinding").find((b) => b.metadata.namespace === "team-a");
    expect(binding?.["subjects"]).toEqual([{ kind: "ServiceAccount", name: serviceAccount?.metadata.name, namespace }]);
  });

  it("labels the jobs' pods so that no selector of the controller's picks them (webhooks, metrics, PDB, policy)", () => {
    const objects = render({ set: { ...refresh, "networkPolicy.enabled": "true" } });
    const job = all(objects, "CronJob")[0]?.["spec"] as {
      jobTemplate: { spec: { template: { metadata: { labels: Record<string, string> } } } };
    };
    const podLabels = job.jobTemplate.spec.template.metadata.labels;
    type Selected = [string, Record<string, string>];
    const specOf = <T>(o: K8sObject): T => o["spec"] as T;
    const selectors: Selected[] = [
      ...all(objects, "Service").map((o): Selected => [
        `Service ${o.metadata.name}`,
        specOf<{ selector: Record<string, string> }>(o).selector,
      ]),
      ...all(objects, "PodDisruptionBudget").map((o): Selected => [
        "PodDisruptionBudget",
        specOf<{ selector: { matchLabels: Record<string, string> } }>(o).selector.matchLabels,
      ]),
      ...all(objects, "NetworkPolicy").map((o): Selected => [
        "NetworkPolicy",
        specOf<{ podSelector: { matchLabels: Record<string, string> } }>(o).podSelector.matchLabels,
      ]),
      ["Deployment", deploymentSpec(objects).selector.matchLabels],
    ];
    expect(selectors.map(([kind]) => kind.split(" ")[0])).toEqual(
      expect.arrayContaining(["Service", "PodDisruptionBudget", "NetworkPolicy", "Deployment"]),
    );
    for (const [kind, selector] of selectors) {
      const matchesController = Object.entries(selector).every(
        ([k, v]) => deploymentSpec(objects).template.metadata.labels[k] === v,
      );
      const matchesJob = Object.entries(selector).every(([k, v]) => podLabels[k] === v);
      expect([kind, matchesController, matchesJob]).toEqual([kind, true, false]);
    }
  });

  it("names the refreshed scalers, the schedule and the alert in the notes, and says nothing while none is listed", () => {
    const notes = installNotes(refresh);
    expect(notes).toContain('Floors by the hour are refreshed at "5 0 * * *" (UTC) for team-a/chat, team-b/code:');
    expect(notes).toContain("MdsScalerFloorsStale fires where a scaler's floors are more than 26 hours old");
    expect(installNotes({})).not.toContain("Floors by the hour");
  });

  it("refuses a scaler that is not NAMESPACE/NAME, naming the value", () => {
    const result = runHelm(helmArgs(["template", release], { set: { "floorRefresh.scalers[0]": "chat" } }));
    expect(result.status).not.toBe(0);
    expect(result.stderr).toMatch(/floorRefresh\/scalers\/0': 'chat' does not match pattern/);
  });
});

describe("NetworkPolicy", () => {
  interface Peer {
    ipBlock?: { cidr: string };
    namespaceSelector?: { matchLabels: Record<string, string> };
    podSelector?: { matchLabels: Record<string, string> };
  }
  interface PolicyPort {
    port: number | string;
    protocol: string;
  }
  interface PolicySpec {
    podSelector: { matchLabels: Record<string, string> };
    policyTypes: string[];
    ingress: { ports: PolicyPort[]; from?: Peer[] }[];
    egress?: { ports: PolicyPort[]; to?: Peer[] }[];
  }
  const policyOf = (objects: K8sObject[]): PolicySpec => one(objects, "NetworkPolicy")["spec"] as PolicySpec;
  const portsOf = (rule: { ports: PolicyPort[] } | undefined): string[] =>
    (rule?.ports ?? []).map((p) => `${p.port}/${p.protocol}`);

  it("selects exactly the controller pods and admits only its named ports, from any source unless told", () => {
    const objects = render({ set: { "networkPolicy.enabled": "true", "externalMetrics.enabled": "true" } });
    const policy = policyOf(objects);
    expect(policy.podSelector.matchLabels).toEqual(deploymentSpec(objects).selector.matchLabels);
    expect(policy.policyTypes).toEqual(["Ingress"]);
    expect(policy.egress).toBeUndefined();
    const containerPorts = (controllerContainer(objects).ports ?? []).map((p) => p.name);
    expect(policy.ingress.flatMap((r) => r.ports.map((p) => p.port)).sort()).toEqual([...containerPorts].sort());
    expect(policy.ingress.map(portsOf)).toEqual([["http-metrics/TCP"], ["https-webhook/TCP", "https-metricapi/TCP"]]);
    // No `from`: every source, so KEDA's metrics-api scaler and the API server still get in.
    for (const rule of policy.ingress) expect(rule.from).toBeUndefined();
  });

  it("limits the metrics port and the API server's ports to the sources given", () => {
    const policy = policyOf(render({ valuesFile: "cert-manager-values.yaml" }));
    expect(policy.ingress[0]?.from).toEqual([
      { namespaceSelector: { matchLabels: { "kubernetes.io/metadata.name": "monitoring" } } },
    ]);
    expect(policy.ingress[1]?.from).toEqual([{ ipBlock: { cidr: "10.0.0.0/24" } }]);
  });

  it("with egress, lets the controller reach DNS, the API server and Prometheus, and nothing else", () => {
    const policy = policyOf(render({ valuesFile: "cert-manager-values.yaml" }));
    expect(policy.policyTypes).toEqual(["Ingress", "Egress"]);
    expect(policy.egress?.map(portsOf)).toEqual([["53/UDP", "53/TCP"], ["443/TCP", "6443/TCP"], ["9090/TCP"]]);
    expect(policy.egress?.map((r) => r.to)).toEqual([
      [
        {
          namespaceSelector: { matchLabels: { "kubernetes.io/metadata.name": "kube-system" } },
          podSelector: { matchLabels: { "k8s-app": "kube-dns" } },
        },
      ],
      [{ ipBlock: { cidr: "10.0.0.0/24" } }],
      [
        {
          namespaceSelector: { matchLabels: { "kubernetes.io/metadata.name": "monitoring" } },
          podSelector: { matchLabels: { "app.kubernetes.io/name": "prometheus" } },
        },
      ],
    ]);
  });

  it("without webhooks, admits the metrics port only", () => {
    const policy = policyOf(render({ valuesFile: "minimal-values.yaml", set: { "networkPolicy.enabled": "true" } }));
    expect(policy.ingress.map(portsOf)).toEqual([["http-metrics/TCP"]]);
  });

  it("rejects a peer with a misspelled key through values.schema.json", () => {
    const result = runHelm(
      helmArgs(["lint", "--strict"], {
        set: { "networkPolicy.ingress.metricsFrom[0].namespaceSelectr.matchLabels.a": "b" },
      }),
    );
    expect(result.status).not.toBe(0);
    expect(result.stderr + result.stdout).toContain("namespaceSelectr");
  });
});

describe("PrometheusRule tuning", () => {
  interface Rule {
    alert?: string;
    record?: string;
    for?: string;
    labels?: Record<string, string>;
    annotations?: Record<string, string>;
  }
  const rulesOf = (objects: K8sObject[]): Rule[] =>
    (one(objects, "PrometheusRule")["spec"] as { groups: { rules: Rule[] }[] }).groups.flatMap((g) => g.rules);
  const alert = (rules: Rule[], name: string): Rule | undefined => rules.find((r) => r.alert === name);
  const sourceAlerts = (
    parse(readFileSync(join(repoRoot, "rules", "mds-scaler.rules.yaml"), "utf8")) as { groups: { rules: Rule[] }[] }
  ).groups
    .flatMap((g) => g.rules)
    .filter((r) => r.alert !== undefined);

  it("drops a disabled alert, changes for and severity, adds labels and the runbook prefix", () => {
    const rules = rulesOf(render({ valuesFile: "cert-manager-values.yaml" }));
    const defaults = rulesOf(render());
    expect(alert(rules, "MdsScalerWebhookSlow")).toBeUndefined();
    expect(alert(defaults, "MdsScalerWebhookSlow")).toBeDefined();
    expect(alert(rules, "MdsScalerBlocked")).toMatchObject({
      for: "30m",
      labels: { severity: "warning", team: "ml-platform", page: "false" },
      annotations: { runbook_url: "https://wiki.example.com/mds-scaler/runbook#mdsscalerblocked" },
    });
    expect(alert(rules, "MdsScalerScaleUpRolledBack")?.labels).toEqual({ severity: "warning", team: "ml-platform" });
    // Untouched alerts keep their own for and severity, and get the shared labels.
    expect(alert(rules, "MdsScalerControllerAbsent")).toMatchObject({
      for: "10m",
      labels: { severity: "critical", team: "ml-platform" },
    });
    // Recording rules are never tuned away.
    expect(rules.filter((r) => r.record !== undefined)).toEqual(defaults.filter((r) => r.record !== undefined));
  });

  it("keeps every other alert field as the tested rules file has it", () => {
    const rules = rulesOf(render({ valuesFile: "cert-manager-values.yaml" }));
    for (const source of sourceAlerts) {
      const tuned = alert(rules, source.alert ?? "");
      if (tuned === undefined) continue;
      const { summary, description } = source.annotations ?? {};
      expect({ ...tuned, for: undefined, labels: undefined }, source.alert).toEqual({
        ...source,
        for: undefined,
        labels: undefined,
        annotations: { summary, description, runbook_url: tuned.annotations?.["runbook_url"] },
      });
    }
  });

  it("lists every shipped alert, and only those, as a tunable name in values.schema.json", () => {
    const schema = JSON.parse(readFileSync(join(chartDir, "values.schema.json"), "utf8")) as {
      properties: { prometheusRule: { properties: { alerts: { propertyNames: { enum: string[] } } } } };
    };
    const names = schema.properties.prometheusRule.properties.alerts.propertyNames.enum;
    expect([...names].sort()).toEqual(sourceAlerts.map((a) => a.alert).sort());
  });

  it.each([
    [
      "an alert name that does not exist",
      { "prometheusRule.alerts.MdsScalerBlockd.enabled": "false" },
      "MdsScalerBlockd",
    ],
    [
      "a for that is not a duration",
      { "prometheusRule.alerts.MdsScalerBlocked.for": "soon" },
      "/prometheusRule/alerts/MdsScalerBlocked/for",
    ],
    ["a misspelled tuning key", { "prometheusRule.alerts.MdsScalerBlocked.severty": "info" }, "severty"],
    ["a label name Prometheus refuses", { "prometheusRule.alertLabels.team-name": "x" }, "team-name"],
  ])("rejects %s through values.schema.json", (_why, set, where) => {
    const result = runHelm(helmArgs(["lint", "--strict"], { set }));
    expect(result.status).not.toBe(0);
    expect(result.stderr + result.stdout).toContain(where);
  });
});

describe("chart assets", () => {
  it("holds a current copy of every rule file and dashboard", () => {
    const targets = chartAssets().map((a) => a.target);
    expect(targets.some((t) => t.endsWith(join("files", "rules", "mds-scaler.rules.yaml")))).toBe(true);
    expect(targets.some((t) => t.endsWith(join("files", "dashboards", "mds-scaler.json")))).toBe(true);
    expect(staleChartAssets(), "run: npx tsx tools/generate-chart-assets.ts").toEqual([]);
  });
});

// ---------------------------------------------------------------- docs

describe("docs/install.md", () => {
  interface SchemaNode {
    properties?: Record<string, SchemaNode>;
  }

  /** Value paths a user sets: schema properties down to blocks with no declared properties (or a small free map). */
  function leafPaths(node: SchemaNode, prefix: string): string[] {
    if (node.properties === undefined || prefix.endsWith("issuerRef")) return [prefix];
    return Object.entries(node.properties).flatMap(([key, child]) =>
      leafPaths(child, prefix === "" ? key : `${prefix}.${key}`),
    );
  }

  it("documents every value in values.schema.json, and only those", () => {
    const schema = JSON.parse(readFileSync(join(chartDir, "values.schema.json"), "utf8")) as SchemaNode;
    const leaves = leafPaths(schema, "").sort();
    const doc = readFileSync(join(repoRoot, "docs", "install.md"), "utf8");
    const table = doc.slice(doc.indexOf("## Values"), doc.indexOf("## Permissions"));
    const documented = [...table.matchAll(/^\| `([^`]+)` +\|/gm)].map((m) => m[1] ?? "").sort();
    expect(documented).toEqual(leaves);
  });
});

// ---------------------------------------------------------------- real API server

describe("server-side dry-run against a real kube-apiserver", () => {
  let controlPlane: ControlPlane;

  beforeAll(async () => {
    controlPlane = await startControlPlane();
    // Stand-ins for the CRDs kube-prometheus-stack and cert-manager install.
    for (const file of ["monitoring.coreos.com.yaml", "cert-manager.io.yaml"]) {
      const text = readFileSync(join(repoRoot, "test", "fixtures", "crds", "chart", file), "utf8");
      // loadAllYaml maps x-kubernetes-* keys into the typed model; a plain object would lose them.
      for (const crd of loadAllYaml(text) as V1CustomResourceDefinition[]) await controlPlane.applyCrd(crd);
    }
    // The release namespace enforces the restricted Pod Security profile, so a
    // pod made from the chart's template proves it meets it.
    await controlPlane.kubeConfig.makeApiClient(CoreV1Api).createNamespace({
      body: {
        metadata: {
          name: namespace,
          labels: {
            "pod-security.kubernetes.io/enforce": "restricted",
            "pod-security.kubernetes.io/enforce-version": "latest",
          },
        },
      },
    });
  });

  afterAll(async () => {
    await controlPlane?.stop();
  });

  function dryRun(manifest: string): ReturnType<typeof runKubectl> {
    return runKubectl(
      ["--kubeconfig", controlPlane.kubeConfigPath, "apply", "--dry-run=server", "--validate=strict", "-f", "-"],
      {
        input: manifest,
      },
    );
  }

  it.each(ciValuesFiles)("accepts every object rendered with ci/%s", (file) => {
    const manifest = renderText({ valuesFile: file, includeCrds: true });
    const objects = render({ valuesFile: file, includeCrds: true });
    const result = dryRun(manifest);
    expect(result.stderr).toBe("");
    expect(result.status).toBe(0);
    const accepted = result.stdout.split("\n").filter((line) => line.endsWith("(server dry run)"));
    expect(accepted).toHaveLength(objects.length);
  });

  it("rejects a field the schema does not know, so the acceptance above means something", () => {
    const manifest = renderText().replace("portNumber: 8000", "portNumbr: 8000");
    const result = dryRun(manifest);
    expect(result.status).not.toBe(0);
    expect(result.stderr).toContain("portNumbr");
  });

  it("runs a pod from the controller's template under the restricted Pod Security profile", () => {
    const objects = render();
    const deployment = one(objects, "Deployment");
    const template = (deployment["spec"] as DeploymentSpec).template;
    const pod = {
      apiVersion: "v1",
      kind: "Pod",
      metadata: { name: "controller-template", namespace, labels: template.metadata.labels },
      spec: template.spec,
    };
    const result = runKubectl(["--kubeconfig", controlPlane.kubeConfigPath, "create", "--dry-run=server", "-f", "-"], {
      input: JSON.stringify(pod),
    });
    expect(result.stderr).toBe("");
    expect(result.stdout).toContain("(server dry run)");
  });

  it("refuses that pod once it runs as root, so the check above is enforced", () => {
    const template = deploymentSpec(render()).template;
    const spec = {
      ...template.spec,
      securityContext: { ...template.spec.securityContext, runAsNonRoot: false, runAsUser: 0 },
    };
    const pod = { apiVersion: "v1", kind: "Pod", metadata: { name: "controller-root", namespace }, spec };
    const result = runKubectl(["--kubeconfig", controlPlane.kubeConfigPath, "create", "--dry-run=server", "-f", "-"], {
      input: JSON.stringify(pod),
    });
    expect(result.status).not.toBe(0);
    expect(result.stderr).toContain("restricted");
  });
});
