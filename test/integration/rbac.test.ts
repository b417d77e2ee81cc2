/**
 * The chart's RBAC against a real API server: the controller runs as the
 * chart's ServiceAccount with exactly the rendered ServiceAccount, Roles,
 * ClusterRoles and bindings (no other grant), once cluster-wide and once with
 * `controller.watchNamespace`. Each time its whole pass must work (webhook
 * certificate and CA bundles, the Lease, finalizer, binding, commit, status,
 * finalizer removal) without a single refused call, and a write the chart does
 * not grant must be refused by the API server.
 */
import { startControlPlaneWithCrds } from "../support/control-plane.js";
import { join } from "node:path";
import { CoreV1Api, CustomObjectsApi, PatchStrategy, setHeaderOptions, type KubeConfig } from "@kubernetes/client-node";
import { parseAllDocuments } from "yaml";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startController, type RunningController } from "../../src/app/start/controller.js";
import { createLogger } from "../../src/adapters/telemetry/logger.js";
import { bindingAnnotation } from "../../src/core/api/model-deployment.js";
import { finalizer } from "../../src/app/controller.js";
import { runHelm, runKubectl } from "../../harness/helm.js";
import type { ControlPlane } from "../../harness/kube/index.js";
import { freeLoopbackPort } from "../../harness/kube/net.js";
import {
  installWebhookConfigurations,
  productConfig,
  releaseNamespace,
  uninstallWebhookConfigurations,
  waitForProductWebhooks,
} from "../../harness/product-webhooks.js";
import { QueueWorld } from "../support/queue-world.js";

const group = "worker.gpustack.ai";
const version = "v1";
const root = join(import.meta.dirname, "..", "..");
const chartDir = join(root, "charts", "mds-scaler");
const release = "mds";
/** The chart's names for release `mds`: ServiceAccount, Lease, roles. */
const fullname = "mds-mds-scaler";
const controllerUser = `system:serviceaccount:${releaseNamespace}:${fullname}`;
const rbacKinds = new Set(["ServiceAccount", "ClusterRole", "ClusterRoleBinding", "Role", "RoleBinding"]);
const jsonPatch = setHeaderOptions("Content-Type", PatchStrategy.JsonPatch);

let controlPlane: ControlPlane;
let admin: CustomObjectsApi;
let world: QueueWorld;

interface Target {
  metadata: { name: string; annotations?: Record<string, string> };
  spec: { roles: { name: string; replicas: number }[] };
}
interface Scaler {
  metadata: { finalizers?: string[] };
  status?: { conditions?: { type: string; status: string }[] };
}

/** The chart's ServiceAccount and RBAC objects, rendered with `set`, as YAML for kubectl. */
function renderedRbac(set: Record<string, string>): string {
  const args = ["template", release, chartDir, "--namespace", releaseNamespace];
  for (const [key, value] of Object.entries(set)) args.push("--set", `${key}=${value}`);
  const result = runHelm(args);
  if (result.status !== 0) throw new Error(`helm template failed:\n${result.stderr}`);
  return parseAllDocuments(result.stdout)
    .filter((d) => rbacKinds.has(String((d.toJS() as { kind?: unknown } | null)?.kind)))
    .map((d) => d.toString())
    .join("---\n");
}

function kubectl(args: string[], input: string): string {
  const result = runKubectl(["--kubeconfig", controlPlane.kubeConfigPath, ...args], { input });
  if (result.status !== 0) throw new Error(`kubectl ${args.join(" ")} failed:\n${result.stderr}`);
  return result.stdout;
}

async function eventually<T>(what: string, check: () => Promise<T | undefined>, timeoutMs = 60_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  for (;;) {
    const value = await check().catch((error: unknown) => {
      last = error;
      return undefined;
    });
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`, { cause: last });
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

/** The HTTP status of a refused call; fails when the call succeeded. */
async function refusedWith(call: () => Promise<unknown>): Promise<number> {
  try {
    await call();
  } catch (error) {
    return (error as { code?: number }).code ?? -1;
  }
  throw new Error("the call was allowed");
}

async function createTarget(namespace: string, name: string, replicas: number): Promise<void> {
  await admin.createNamespacedCustomObject({
    group,
    version,
    namespace,
    plural: "modeldeployments",
    body: {
      apiVersion: `${group}/${version}`,
      kind: "ModelDeployment",
      metadata: { name },
      spec: { roles: [{ name: "server", kind: "Server", instanceType: "h100", replicas }] },
    },
  });
}

async function createScaler(namespace: string, name: string): Promise<void> {
  await admin.createNamespacedCustomObject({
    group,
    version,
    namespace,
    plural: "modeldeploymentscalers",
    body: {
      apiVersion: `${group}/${version}`,
      kind: "ModelDeploymentScaler",
      metadata: { name },
      spec: {
        targetRef: { name },
        mode: "Active",
        sampling: { intervalSeconds: 5 },
        roles: [{ name: "server", minReplicas: 1, maxReplicas: 8 }],
        algorithm: {
          type: "Proportional",
          proportional: { metric: "QueueDepth", roleTargets: [{ name: "server", target: "8" }] },
        },
      },
    },
  });
}

const getObject = async <T>(namespace: string, plural: string, name: string): Promise<T> =>
  (await admin.getNamespacedCustomObject({ group, version, namespace, plural, name })) as T;

/** One installation: the rendered RBAC applied, the chart's webhooks registered, the controller running as its account. */
interface Installation {
  readonly running: RunningController;
  readonly asController: CustomObjectsApi;
  readonly asControllerCore: CoreV1Api;
  /** Every log line the controller wrote. */
  readonly log: string[];
  uninstall(): Promise<void>;
}

async function install(set: Record<string, string>, watchNamespace: string | undefined): Promise<Installation> {
  const rbac = renderedRbac(set);
  kubectl(["apply", "-f", "-"], rbac);
  const port = await freeLoopbackPort();
  await installWebhookConfigurations(controlPlane.kubeConfig, port, set);
  const controllerKc: KubeConfig = await controlPlane.kubeConfigFor({
    user: controllerUser,
    groups: ["system:serviceaccounts", `system:serviceaccounts:${releaseNamespace}`],
  });
  const log: string[] = [];
  const running = await startController({
    config: productConfig({
      webhookPort: port,
      podName: "replica-a",
      leaseName: fullname,
      extra: watchNamespace === undefined ? [] : [`--namespace=${watchNamespace}`],
    }),
    kubeConfig: controllerKc,
    logger: createLogger({ level: "debug", write: (line) => log.push(line) }),
    source: world.source,
  });
  await waitForProductWebhooks(controlPlane.kubeConfig, watchNamespace ?? "team");
  return {
    running,
    asController: controllerKc.makeApiClient(CustomObjectsApi),
    asControllerCore: controllerKc.makeApiClient(CoreV1Api),
    log,
    async uninstall() {
      await running.stop();
      await uninstallWebhookConfigurations(controlPlane.kubeConfig, set);
      kubectl(["delete", "--wait=true", "-f", "-"], rbac);
    },
  };
}

/** The whole pass in `namespace`: finalizer, binding and commit, status, and the finalizer removed on deletion. */
async function scaleAndDelete(namespace: string, name: string): Promise<void> {
  await createTarget(namespace, name, 1);
  world.startStatusMirror(namespace, name);
  world.setQueue((ready) => 8 * Math.min(ready + 1, 3)); // wants 3 replicas
  await createScaler(namespace, name);
  const committed = await eventually("a commit to 3 replicas", async () => {
    const t = await getObject<Target>(namespace, "modeldeployments", name);
    return t.spec.roles[0]?.replicas === 3 ? t : undefined;
  });
  expect(JSON.parse(committed.metadata.annotations?.[bindingAnnotation] ?? "{}")).toMatchObject({ scalerName: name });
  const scaler = await eventually("status on the scaler", async () => {
    const s = await getObject<Scaler>(namespace, "modeldeploymentscalers", name);
    return (s.status?.conditions ?? []).length > 0 ? s : undefined;
  });
  expect(scaler.metadata.finalizers).toContain(finalizer);
  world.stop();
  await admin.deleteNamespacedCustomObject({ group, version, namespace, plural: "modeldeploymentscalers", name });
  await eventually("the scaler to be gone once the controller removed its finalizer", async () =>
    (await refusedWith(() => getObject(namespace, "modeldeploymentscalers", name))) === 404 ? true : undefined,
  );
}

/** Lines where the API server refused the controller something. */
function refusals(log: readonly string[]): string[] {
  return log.filter((line) => /\b403\b|forbidden/i.test(line));
}

const patchReplicas = (api: CustomObjectsApi, namespace: string, name: string) => () =>
  api.patchNamespacedCustomObject(
    {
      group,
      version,
      namespace,
      plural: "modeldeployments",
      name,
      body: [{ op: "replace", path: "/spec/roles/0/replicas", value: 4 }],
    },
    jsonPatch,
  );

beforeAll(async () => {
  controlPlane = await startControlPlaneWithCrds();
  const core = controlPlane.kubeConfig.makeApiClient(CoreV1Api);
  for (const name of [releaseNamespace, "team", "other"]) await core.createNamespace({ body: { metadata: { name } } });
  admin = controlPlane.kubeConfig.makeApiClient(CustomObjectsApi);
  world = new QueueWorld(controlPlane.kubeConfig);
  await createTarget("other", "elsewhere", 1);
}, 180_000);

afterAll(async () => {
  world?.stop();
  await controlPlane?.stop();
});

describe("the chart's RBAC, cluster-wide (defaults)", () => {
  let installation: Installation;
  beforeAll(async () => {
    installation = await install({}, undefined);
  }, 120_000);
  afterAll(async () => {
    await installation?.uninstall();
  });

  it("is enough for a whole pass, with no call refused", async () => {
    await scaleAndDelete("team", "wide");
    expect(installation.running.isLeader()).toBe(true);
    expect(refusals(installation.log)).toEqual([]);
  }, 120_000);

  it("refuses what the chart does not grant: a full update, a delete, another Secret", async () => {
    const { asController, asControllerCore } = installation;
    const current = await getObject<Record<string, unknown>>("other", "modeldeployments", "elsewhere");
    expect(
      await refusedWith(() =>
        asController.replaceNamespacedCustomObject({
          group,
          version,
          namespace: "other",
          plural: "modeldeployments",
          name: "elsewhere",
          body: current,
        }),
      ),
    ).toBe(403);
    expect(
      await refusedWith(() =>
        asController.deleteNamespacedCustomObject({
          group,
          version,
          namespace: "other",
          plural: "modeldeployments",
          name: "elsewhere",
        }),
      ),
    ).toBe(403);
    expect(await refusedWith(() => asControllerCore.listNamespacedSecret({ namespace: releaseNamespace }))).toBe(403);
    // Granted cluster-wide: a replica patch in any namespace passes RBAC (here the fence admits an unbound target).
    await patchReplicas(asController, "other", "elsewhere")();
  });
});

describe("the chart's RBAC with controller.watchNamespace", () => {
  let installation: Installation;
  beforeAll(async () => {
    installation = await install({ "controller.watchNamespace": "team" }, "team");
  }, 120_000);
  afterAll(async () => {
    await installation?.uninstall();
  });

  it("is enough for a whole pass in the watched namespace, with no call refused", async () => {
    await scaleAndDelete("team", "narrow");
    expect(refusals(installation.log)).toEqual([]);
  }, 120_000);

  it("refuses a write, a read and a cluster-wide list outside the watched namespace", async () => {
    const { asController } = installation;
    expect(await refusedWith(patchReplicas(asController, "other", "elsewhere"))).toBe(403);
    expect(
      await refusedWith(() =>
        asController.getNamespacedCustomObject({
          group,
          version,
          namespace: "other",
          plural: "modeldeploymentscalers",
          name: "any",
        }),
      ),
    ).toBe(403);
    expect(
      await refusedWith(() => asController.listClusterCustomObject({ group, version, plural: "modeldeployments" })),
    ).toBe(403);
  });

  it("leaves other namespaces to others: their writes skip this installation's webhooks", async () => {
    // The webhooks fail closed, and this controller may not read "other": had the API server called them for
    // these writes, the scaler's validation (which reads its target) would have refused the create.
    await patchReplicas(admin, "other", "elsewhere")();
    await createScaler("other", "elsewhere");
    expect((await getObject<Target>("other", "modeldeployments", "elsewhere")).spec.roles[0]?.replicas).toBe(4);
  });
});
