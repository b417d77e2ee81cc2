/**
 * The product's admission webhooks against a real API server: registered as
 * the chart registers them (failurePolicy Fail), with the certificate the
 * controller generates and the CA bundle it patches in. The controller runs
 * as its service account, so its acquire and commits pass through the same
 * fence a user's writes meet.
 */
import { X509Certificate } from "node:crypto";
import { connect } from "node:tls";
import {
  AdmissionregistrationV1Api,
  CoreV1Api,
  CustomObjectsApi,
  PatchStrategy,
  setHeaderOptions,
  type KubeConfig,
} from "@kubernetes/client-node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startController, type RunningController } from "../../src/app/start/controller.js";
import { whoAmI } from "../../src/app/start/leadership.js";
import { bindingAnnotation, boundLabel, decisionAnnotation } from "../../src/core/api/model-deployment.js";
import { floorsCalibratedAnnotation } from "../../src/core/api/floors-calibrated.js";
import { startControlPlane, type ControlPlane } from "../../harness/kube/index.js";
import { freeLoopbackPort } from "../../harness/kube/net.js";
import { loadModelDeploymentCrd, loadScalerCrd } from "../support/crds.js";
import {
  configurationName,
  controllerKubeConfig,
  installWebhookConfigurations,
  productConfig,
  releaseNamespace,
  tlsSecretName,
  waitForProductWebhooks,
} from "../../harness/product-webhooks.js";
import { QueueWorld } from "../support/queue-world.js";

const group = "worker.gpustack.ai";
const version = "v1";
const ns = "team";

let controlPlane: ControlPlane;
let admin: CustomObjectsApi;
let alice: CustomObjectsApi;
let running: RunningController;
let world: QueueWorld;

interface Target {
  metadata: {
    name: string;
    uid: string;
    resourceVersion: string;
    annotations?: Record<string, string>;
    labels?: Record<string, string>;
  };
  spec: { roles: { name: string; kind: string; replicas: number }[] };
}

const jsonPatch = setHeaderOptions("Content-Type", PatchStrategy.JsonPatch);

async function getTarget(name: string): Promise<Target> {
  return (await admin.getNamespacedCustomObject({
    group,
    version,
    namespace: ns,
    plural: "modeldeployments",
    name,
  })) as Target;
}

async function createTarget(name: string, roles: Record<string, unknown>[]): Promise<void> {
  await admin.createNamespacedCustomObject({
    group,
    version,
    namespace: ns,
    plural: "modeldeployments",
    body: {
      apiVersion: `${group}/${version}`,
      kind: "ModelDeployment",
      metadata: { name },
      spec: { roles: roles.map((r) => ({ instanceType: "h100", ...r })) },
    },
  });
}

async function createScaler(name: string, spec: Record<string, unknown>): Promise<void> {
  await admin.createNamespacedCustomObject({
    group,
    version,
    namespace: ns,
    plural: "modeldeploymentscalers",
    body: { apiVersion: `${group}/${version}`, kind: "ModelDeploymentScaler", metadata: { name }, spec },
  });
}

/** Creates a scaler and answers the HTTP response, whose `warning` header carries admission's warnings. */
function createScalerAnswered(name: string, spec: Record<string, unknown>) {
  return admin.createNamespacedCustomObjectWithHttpInfo({
    group,
    version,
    namespace: ns,
    plural: "modeldeploymentscalers",
    body: { apiVersion: `${group}/${version}`, kind: "ModelDeploymentScaler", metadata: { name }, spec },
  });
}

/** The API server's refusal text for a failed call, or a failure when the call succeeded. */
async function refusal(call: () => Promise<unknown>): Promise<string> {
  try {
    await call();
  } catch (error) {
    const body = (error as { body?: unknown }).body;
    return typeof body === "string" ? body : JSON.stringify(body ?? String(error));
  }
  throw new Error("the write was admitted");
}

async function eventually<T>(what: string, check: () => Promise<T | undefined>, timeoutMs = 30_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check().catch(() => undefined);
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

const activeSpec = (target: string) => ({
  targetRef: { name: target },
  mode: "Active",
  sampling: { intervalSeconds: 5 },
  roles: [{ name: "server", minReplicas: 1, maxReplicas: 8 }],
  algorithm: {
    type: "Proportional",
    proportional: { metric: "QueueDepth", roleTargets: [{ name: "server", target: "8" }] },
  },
});

beforeAll(async () => {
  controlPlane = await startControlPlane();
  await controlPlane.applyCrd(await loadScalerCrd());
  await controlPlane.applyCrd(await loadModelDeploymentCrd());
  const core = controlPlane.kubeConfig.makeApiClient(CoreV1Api);
  for (const name of [releaseNamespace, ns]) await core.createNamespace({ body: { metadata: { name } } });
  admin = controlPlane.kubeConfig.makeApiClient(CustomObjectsApi);
  alice = (await controlPlane.kubeConfigFor({ user: "alice", groups: ["system:masters"] })).makeApiClient(
    CustomObjectsApi,
  );

  const port = await freeLoopbackPort();
  await installWebhookConfigurations(controlPlane.kubeConfig, port);
  const controllerKc: KubeConfig = await controllerKubeConfig(controlPlane);
  world = new QueueWorld(controlPlane.kubeConfig);
  running = await startController({
    config: productConfig({ webhookPort: port, podName: "replica-a" }),
    kubeConfig: controllerKc,
    source: world.source,
  });
  await waitForProductWebhooks(controlPlane.kubeConfig, ns);
}, 180_000);

afterAll(async () => {
  world?.stop();
  await running?.stop();
  await controlPlane?.stop();
});

describe("certificates", () => {
  it("patches the generated CA bundle into both configurations and keeps the certificate in the Secret", async () => {
    const api = controlPlane.kubeConfig.makeApiClient(AdmissionregistrationV1Api);
    const validating = await api.readValidatingWebhookConfiguration({ name: configurationName });
    const mutating = await api.readMutatingWebhookConfiguration({ name: configurationName });
    const secret = await controlPlane.kubeConfig
      .makeApiClient(CoreV1Api)
      .readNamespacedSecret({ namespace: releaseNamespace, name: "mds-mds-scaler-webhook-tls" });
    // The bundle holds the CA; during a CA rotation it holds the previous one too.
    const ca = secret.data?.["ca-bundle.crt"];
    expect(ca).toBeDefined();
    expect(Buffer.from(ca ?? "", "base64").toString()).toContain(
      Buffer.from(secret.data?.["ca.crt"] ?? "", "base64")
        .toString()
        .trim(),
    );
    for (const w of [...(validating.webhooks ?? []), ...(mutating.webhooks ?? [])]) {
      expect(w.clientConfig.caBundle).toBe(ca);
      expect(w.failurePolicy).toBe("Fail");
    }
  });
});

describe("controller identity", () => {
  it("is learned from the API server without any RBAC grant (SelfSubjectReview)", async () => {
    expect(
      await whoAmI(await controlPlane.kubeConfigFor({ user: "system:serviceaccount:elsewhere:no-grants" }), 5_000),
    ).toBe("system:serviceaccount:elsewhere:no-grants");
  });
});

describe("ModelDeploymentScaler admission", () => {
  it("defaults through the mutating webhook: the inferred type and zero-means-default", async () => {
    await createScaler("defaults", {
      targetRef: { name: "not-yet-created" },
      roles: [{ name: "server", maxReplicas: 4 }],
      algorithm: { proportional: { metric: "QueueDepth", roleTargets: [{ name: "server", target: 8 }] } },
      behavior: { scaleUp: { maxStepReplicas: 0 } },
    });
    const stored = (await admin.getNamespacedCustomObject({
      group,
      version,
      namespace: ns,
      plural: "modeldeploymentscalers",
      name: "defaults",
    })) as { spec: Record<string, unknown> };
    expect(stored.spec).toMatchObject({
      mode: "Shadow",
      algorithm: {
        type: "Proportional",
        proportional: { tolerance: "0.1", roleTargets: [{ name: "server", target: "8" }] },
      },
      behavior: {
        scaleUp: { maxStepReplicas: 4, maxStepPercent: 100 },
        scaleDown: { stabilizationWindowSeconds: 300 },
      },
      roles: [{ name: "server", minReplicas: 1, maxReplicas: 4 }],
    });
  });

  it("admits a window shorter than two engine scrapes with a warning kubectl shows, naming the field and value", async () => {
    const create = (name: string, panicWindowSeconds: number) =>
      createScalerAnswered(name, {
        targetRef: { name: "not-yet-created" },
        roles: [{ name: "server", maxReplicas: 4 }],
        algorithm: { tokenThroughput: { serverTargetTokensPerSecond: "4000", panicWindowSeconds } },
      });
    // The controller runs with the default --engine-scrape-interval, 15s: a 15 s window holds one scrape.
    const short = await create("panic-15", 15);
    expect(short.httpStatusCode).toBe(201);
    expect(short.headers["warning"]).toContain(
      "spec.algorithm.tokenThroughput.panicWindowSeconds = 15: 15 s holds under two engine scrapes of 15 s, so it never reads a rate: panic never engages",
    );
    const enough = await create("panic-30", 30);
    expect(enough.httpStatusCode).toBe(201);
    expect(enough.headers["warning"]).toBeUndefined();
  });

  it("admits floors dated with something that is not a time, with a warning naming the annotation and its value", async () => {
    const dated = (at: string) => ({ [floorsCalibratedAnnotation]: at });
    const body = {
      apiVersion: `${group}/${version}`,
      kind: "ModelDeploymentScaler",
      metadata: { name: "floors-dated", annotations: dated("yesterday") },
      spec: {
        targetRef: { name: "not-yet-created" },
        roles: [{ name: "server", maxReplicas: 4, floorReplicasByUtcHour: new Array(24).fill(1) }],
        algorithm: { tokenThroughput: { serverTargetTokensPerSecond: "4000" } },
      },
    };
    const scalers = { group, version, namespace: ns, plural: "modeldeploymentscalers" };
    const created = await admin.createNamespacedCustomObjectWithHttpInfo({ ...scalers, body });
    expect(created.httpStatusCode).toBe(201);
    const warning = `metadata.annotations["${floorsCalibratedAnnotation}"] = "yesterday": is not an RFC 3339 time`;
    // The warning header quotes the text (RFC 7234), its own quotes escaped.
    const shown = (headers: Record<string, string>) => headers["warning"]?.replaceAll('\\"', '"');
    expect(shown(created.headers)).toContain(warning);
    // The spec edited with the date made a time: admitted without a warning. (An update of the annotation alone
    // never reaches the webhook: the chart's matchConditions send only spec changes, so an outage blocks none.)
    const live = (await admin.getNamespacedCustomObject({ ...scalers, name: "floors-dated" })) as typeof body;
    const fixed = await admin.replaceNamespacedCustomObjectWithHttpInfo({
      ...scalers,
      name: "floors-dated",
      body: {
        ...live,
        metadata: { ...live.metadata, annotations: dated("2026-12-07T00:05:12Z") },
        spec: { ...live.spec, roles: [{ ...live.spec.roles[0], floorReplicasByUtcHour: new Array(24).fill(2) }] },
      },
    });
    expect(fixed.httpStatusCode).toBe(200);
    expect(fixed.headers["warning"]).toBeUndefined();
  });

  it("admits bounds that exclude the target's running count with a warning: planning would stop there", async () => {
    await createTarget("runs-one", [{ name: "server", kind: "Server", replicas: 1 }]);
    const create = (name: string, minReplicas: number) =>
      createScalerAnswered(name, {
        targetRef: { name: "runs-one" },
        roles: [{ name: "server", minReplicas, maxReplicas: 4 }],
        algorithm: { tokenThroughput: { serverTargetTokensPerSecond: "4000" } },
      });
    const above = await create("floor-above-count", 2);
    expect(above.httpStatusCode).toBe(201);
    expect(above.headers["warning"]).toContain(
      "spec.roles[0].minReplicas = 2: excludes the 1 replicas role server runs now: planning stops (BoundsConflict)",
    );
    const around = await create("floor-at-count", 1);
    expect(around.httpStatusCode).toBe(201);
    expect(around.headers["warning"]).toBeUndefined();
  });

  it("refuses a bad spec with every problem, the target-dependent ones included", async () => {
    await createTarget("tooling", [
      { name: "server", kind: "Server", replicas: 2 },
      { name: "tool", kind: "Server", replicas: 1, command: ["serve"] },
    ]);
    const message = await refusal(() =>
      createScaler("bad", {
        targetRef: { name: "tooling" },
        roles: [
          { name: "server", minReplicas: 8, maxReplicas: 4 },
          { name: "ghost", maxReplicas: 2 },
        ],
        algorithm: { proportional: { metric: "QueueDepth", roleTargets: [{ name: "nobody", target: "8" }] } },
      }),
    );
    expect(message).toContain("(7 problems)");
    for (const part of [
      "spec.roles[0].minReplicas = 8: must be at most maxReplicas (4)",
      'roleTargets[0].name = \\"nobody\\"',
      'spec.roles[1].name = \\"ghost\\": is not a role of ModelDeployment',
      "has a custom command",
      'has no entry for target role \\"tool\\"',
    ]) {
      expect(message).toContain(part);
    }
  });
});

describe("the binding fence", () => {
  it("lets the controller bind and commit, and refuses a user's count edit on the bound target with what to do", async () => {
    await createTarget("llm", [{ name: "server", kind: "Server", replicas: 2 }]);
    world.startStatusMirror(ns, "llm");
    world.setQueue((ready) => 8 * Math.min(ready + 1, 3)); // wants 3 replicas
    await createScaler("llm", activeSpec("llm"));
    const committed = await eventually(
      "a commit to 3 replicas",
      async () => {
        const t = await getTarget("llm");
        return t.spec.roles[0]?.replicas === 3 && t.metadata.annotations?.[decisionAnnotation] !== undefined
          ? t
          : undefined;
      },
      60_000,
    );
    expect(JSON.parse(committed.metadata.annotations?.[bindingAnnotation] ?? "{}")).toMatchObject({
      scalerName: "llm",
      term: 1,
    });

    const message = await refusal(() =>
      alice.patchNamespacedCustomObject(
        {
          group,
          version,
          namespace: ns,
          plural: "modeldeployments",
          name: "llm",
          body: [{ op: "replace", path: "/spec/roles/0/replicas", value: 5 }],
        },
        jsonPatch,
      ),
    );
    expect(message).toContain('is bound to ModelDeploymentScaler \\"llm\\"');
    expect(message).toContain("set the scaler to mode Shadow, set suspend: true, or delete it");
    expect(message).toContain("ignoreDifferences");
    expect((await getTarget("llm")).spec.roles[0]?.replicas).toBe(3);

    // Other fields stay editable.
    await alice.patchNamespacedCustomObject(
      {
        group,
        version,
        namespace: ns,
        plural: "modeldeployments",
        name: "llm",
        body: [{ op: "add", path: "/metadata/labels/team", value: "inference" }],
      },
      jsonPatch,
    );
  }, 90_000);

  it("refuses a GitOps-style full update that restores the counts from Git", async () => {
    const live = await getTarget("llm");
    // What a sync without ignoreDifferences sends: the manifest from Git, replacing the live object.
    const fromGit = {
      apiVersion: `${group}/${version}`,
      kind: "ModelDeployment",
      metadata: { name: "llm", namespace: ns } as Record<string, unknown>,
      spec: { roles: [{ name: "server", kind: "Server", instanceType: "h100", replicas: 2 }] },
    };
    /** A replace at the live resourceVersion; a conflict (the status mirror wrote meanwhile) is retried. */
    const replaceFromGit = async (body: typeof fromGit): Promise<string> => {
      for (;;) {
        const resourceVersion = (await getTarget("llm")).metadata.resourceVersion;
        const message = await refusal(() =>
          alice.replaceNamespacedCustomObject({
            group,
            version,
            namespace: ns,
            plural: "modeldeployments",
            name: "llm",
            body: { ...body, metadata: { ...body.metadata, resourceVersion } },
          }),
        );
        if (!message.includes('"code":409')) return message;
      }
    };
    const message = await replaceFromGit(fromGit);
    expect(message).toContain("while that scaler still exists");
    expect(message).toContain("RespectIgnoreDifferences=true");
    // The same sync keeping the scaler's annotations, as with a merge: still refused for the counts.
    const merged = {
      ...fromGit,
      metadata: { ...fromGit.metadata, annotations: live.metadata.annotations, labels: live.metadata.labels },
    };
    expect(await replaceFromGit(merged)).toContain("it changes replicas (server 3→2)");
    const after = await getTarget("llm");
    expect(after.spec.roles[0]?.replicas).toBe(3);
    expect(after.metadata.annotations?.[bindingAnnotation]).toBe(live.metadata.annotations?.[bindingAnnotation]);
  });

  it("refuses a binding annotation installed by hand on an unbound target", async () => {
    await createTarget("free", [{ name: "server", kind: "Server", replicas: 1 }]);
    const binding = JSON.stringify({ scalerName: "mine", scalerUID: "made-up", term: 1 });
    const message = await refusal(() =>
      alice.patchNamespacedCustomObject(
        {
          group,
          version,
          namespace: ns,
          plural: "modeldeployments",
          name: "free",
          body: [{ op: "add", path: "/metadata/annotations", value: { [bindingAnnotation]: binding } }],
        },
        jsonPatch,
      ),
    );
    // Without the bound label the API server's own policy refuses it; with the label the fence does.
    expect(message).toContain(`label ${boundLabel} must be set while annotation ${bindingAnnotation} is`);
    expect(
      await refusal(() =>
        alice.patchNamespacedCustomObject(
          {
            group,
            version,
            namespace: ns,
            plural: "modeldeployments",
            name: "free",
            body: [
              { op: "add", path: "/metadata/annotations", value: { [bindingAnnotation]: binding } },
              { op: "add", path: "/metadata/labels", value: { [boundLabel]: "true" } },
            ],
          },
          jsonPatch,
        ),
      ),
    ).toContain("cannot be installed by hand");
    // Counts on an unbound target are the user's.
    await alice.patchNamespacedCustomObject(
      {
        group,
        version,
        namespace: ns,
        plural: "modeldeployments",
        name: "free",
        body: [{ op: "replace", path: "/spec/roles/0/replicas", value: 4 }],
      },
      jsonPatch,
    );
    expect((await getTarget("free")).spec.roles[0]?.replicas).toBe(4);
  });

  it("accepts the same count edit once the scaler is deleted and its finalizer released the binding", async () => {
    await admin.deleteNamespacedCustomObject({
      group,
      version,
      namespace: ns,
      plural: "modeldeploymentscalers",
      name: "llm",
    });
    await eventually("the binding to be released", async () =>
      (await getTarget("llm")).metadata.annotations?.[bindingAnnotation] === undefined ? true : undefined,
    );
    await alice.patchNamespacedCustomObject(
      {
        group,
        version,
        namespace: ns,
        plural: "modeldeployments",
        name: "llm",
        body: [{ op: "replace", path: "/spec/roles/0/replicas", value: 5 }],
      },
      jsonPatch,
    );
    const target = await getTarget("llm");
    expect(target.spec.roles[0]?.replicas).toBe(5);
    // The decision stays: its term keeps the next binding's term above it.
    expect(target.metadata.annotations?.[decisionAnnotation]).toBeDefined();
  });

  it("allows orphan recovery only when the named scaler is gone or was recreated with another UID", async () => {
    // An orphan: the controller stops watching this namespace's scaler before it can release.
    await createTarget("orphan", [{ name: "server", kind: "Server", replicas: 2 }]);
    world.startStatusMirror(ns, "orphan");
    await createScaler("orphan", activeSpec("orphan"));
    // Bound and committed: the pass that binds commits next.
    await eventually("the orphan target to be bound and committed", async () => {
      const t = await getTarget("orphan");
      const annotations = t.metadata.annotations ?? {};
      return annotations[bindingAnnotation] !== undefined && annotations[decisionAnnotation] !== undefined
        ? t
        : undefined;
    });
    const removeBinding = [{ op: "remove", path: `/metadata/annotations/${bindingAnnotation.replace("/", "~1")}` }];
    const patchAsAlice = (body: object[]) =>
      alice.patchNamespacedCustomObject(
        { group, version, namespace: ns, plural: "modeldeployments", name: "orphan", body },
        jsonPatch,
      );

    // The scaler exists with the same UID: refused.
    expect(await refusal(() => patchAsAlice(removeBinding))).toContain("while that scaler still exists");

    // Orphan the binding: restart the controller watching another namespace (its
    // webhooks still serve every namespace), then delete the scaler past its finalizer.
    await running.stop();
    running = await restartController({ watchNamespace: "elsewhere" });
    await admin.patchNamespacedCustomObject(
      {
        group,
        version,
        namespace: ns,
        plural: "modeldeploymentscalers",
        name: "orphan",
        body: [{ op: "remove", path: "/metadata/finalizers" }],
      },
      jsonPatch,
    );
    await admin.deleteNamespacedCustomObject({
      group,
      version,
      namespace: ns,
      plural: "modeldeploymentscalers",
      name: "orphan",
    });

    // The scaler is absent: recovery is allowed, but not together with a count change.
    expect(
      await refusal(() =>
        patchAsAlice([...removeBinding, { op: "replace", path: "/spec/roles/0/replicas", value: 7 }]),
      ),
    ).toContain("must leave replica counts");
    // A new scaler of the same name has another UID: the binding is still an orphan, and removing it alone passes.
    await createScaler("orphan", { ...activeSpec("orphan"), mode: "Shadow" });
    // The controller may have committed after binding and before its restart: compare with the counts now.
    const orphaned = await getTarget("orphan");
    await patchAsAlice(removeBinding);
    const recovered = await getTarget("orphan");
    expect(recovered.metadata.annotations?.[bindingAnnotation]).toBeUndefined();
    expect(recovered.spec.roles[0]?.replicas).toBe(orphaned.spec.roles[0]?.replicas);
  }, 90_000);
});

let restarts = 0;
async function restartController(
  opts: { watchNamespace?: string; flags?: readonly string[] } = {},
): Promise<RunningController> {
  restarts += 1;
  const port = Number(
    new URL(
      (
        await controlPlane.kubeConfig
          .makeApiClient(AdmissionregistrationV1Api)
          .readValidatingWebhookConfiguration({ name: configurationName })
      ).webhooks?.[0]?.clientConfig.url ?? "",
    ).port,
  );
  const extra = [
    ...(opts.watchNamespace === undefined ? [] : [`--namespace=${opts.watchNamespace}`]),
    ...(opts.flags ?? []),
  ];
  const next = await startController({
    config: productConfig({ webhookPort: port, podName: `replica-r${restarts}`, extra }),
    kubeConfig: await controllerKubeConfig(controlPlane),
    source: world.source,
  });
  await waitForProductWebhooks(controlPlane.kubeConfig, ns);
  return next;
}

describe("certificate rotation", () => {
  const secretApi = () => controlPlane.kubeConfig.makeApiClient(CoreV1Api);
  const readSecret = () => secretApi().readNamespacedSecret({ namespace: releaseNamespace, name: tlsSecretName });
  const pem = (data: Record<string, string> | undefined, key: string) =>
    Buffer.from(data?.[key] ?? "", "base64").toString("utf8");

  /** The certificate the replica presents on its webhook port now. */
  async function served(): Promise<X509Certificate> {
    const raw = await new Promise<Buffer>((resolve, reject) => {
      const socket = connect(
        { host: "127.0.0.1", port: running.webhookPort ?? 0, servername: "localhost", rejectUnauthorized: false },
        () => {
          resolve(socket.getPeerCertificate().raw);
          socket.end();
        },
      );
      socket.once("error", reject);
    });
    return new X509Certificate(raw);
  }

  it("rotates the CA and renews the serving certificate while reviews flow, and none fails", async () => {
    await running.stop();
    running = await restartController({ flags: ["--webhook-cert-check-seconds=1"] });
    const before = await readSecret();
    const firstCa = pem(before.data, "ca.crt");

    // Reviews through the API server, back to back: every one must reach the webhook.
    const failures: string[] = [];
    let reviews = 0;
    let flowing = true;
    const flow = (async () => {
      while (flowing) {
        const message = await refusal(() =>
          admin.createNamespacedCustomObject({
            group,
            version,
            namespace: ns,
            plural: "modeldeploymentscalers",
            dryRun: "All",
            body: {
              apiVersion: `${group}/${version}`,
              kind: "ModelDeploymentScaler",
              metadata: { name: "probe" },
              spec: { targetRef: { name: "probe" }, roles: [{ name: "server", minReplicas: 3, maxReplicas: 2 }] },
            },
          }),
        ).catch((error: unknown) => `admitted: ${String(error)}`);
        reviews += 1;
        if (!message.includes("must be at most maxReplicas")) failures.push(message.slice(0, 400));
      }
    })();
    try {
      // CA rotation, as docs/webhooks.md says: remove the CA key; the replicas do the rest.
      await secretApi().patchNamespacedSecret(
        { namespace: releaseNamespace, name: tlsSecretName, body: [{ op: "remove", path: "/data/ca.key" }] },
        jsonPatch,
      );
      const rotated = await eventually(
        "a certificate from the new CA served",
        async () => {
          const secret = await readSecret();
          const ca = pem(secret.data, "ca.crt");
          if (ca === firstCa || !pem(secret.data, "ca-bundle.crt").includes(firstCa.trim())) return undefined;
          return (await served()).verify(new X509Certificate(ca).publicKey) ? secret : undefined;
        },
        60_000,
      );
      // Reviews flowed through both steps of the CA change.
      const atCaSwitch = reviews;
      expect(atCaSwitch).toBeGreaterThanOrEqual(3);
      // Serving renewal with the same CA: empty the serving certificate (a TLS Secret must keep the key).
      const rotatedCert = pem(rotated.data, "tls.crt");
      await secretApi().patchNamespacedSecret(
        {
          namespace: releaseNamespace,
          name: tlsSecretName,
          body: [{ op: "replace", path: "/data/tls.crt", value: "" }],
        },
        jsonPatch,
      );
      await eventually(
        "a renewed serving certificate served",
        async () => {
          const secret = await readSecret();
          const cert = pem(secret.data, "tls.crt");
          if (cert === "" || cert === rotatedCert) return undefined;
          return (await served()).fingerprint256 === new X509Certificate(cert).fingerprint256 ? true : undefined;
        },
        60_000,
      );
      expect(reviews).toBeGreaterThan(atCaSwitch);
      // A few more reviews on the final certificate.
      const settledAt = reviews;
      await eventually("reviews on the renewed certificate", async () => (reviews >= settledAt + 5 ? true : undefined));
    } finally {
      flowing = false;
      await flow;
    }
    expect(failures).toEqual([]);
    // Both configurations carry the bundle of the old and the new CA.
    const api = controlPlane.kubeConfig.makeApiClient(AdmissionregistrationV1Api);
    const bundle = (await readSecret()).data?.["ca-bundle.crt"];
    for (const w of [
      ...((await api.readValidatingWebhookConfiguration({ name: configurationName })).webhooks ?? []),
      ...((await api.readMutatingWebhookConfiguration({ name: configurationName })).webhooks ?? []),
    ])
      expect(w.clientConfig.caBundle).toBe(bundle);
    console.log(
      `certificate rotation: ${reviews} reviews through the API server during a CA rotation and a renewal, 0 failed`,
    );
  }, 150_000);
});

describe("blast radius: with every replica stopped", () => {
  const patchAs = (api: CustomObjectsApi, name: string, body: object[]) =>
    api.patchNamespacedCustomObject(
      { group, version, namespace: ns, plural: "modeldeployments", name, body },
      jsonPatch,
    );
  const labelPointer = `/metadata/labels/${boundLabel.replace("/", "~1")}`;
  const bindingPointer = `/metadata/annotations/${bindingAnnotation.replace("/", "~1")}`;

  it("a bound target carries the bound label, and the policy refuses removing it while the binding stays", async () => {
    await running.stop();
    running = await restartController();
    await createTarget("kept", [{ name: "server", kind: "Server", replicas: 2 }]);
    world.startStatusMirror(ns, "kept");
    await createScaler("kept", activeSpec("kept"));
    const bound = await eventually("the kept target to be bound", async () => {
      const t = await getTarget("kept");
      return t.metadata.annotations?.[bindingAnnotation] !== undefined ? t : undefined;
    });
    expect(bound.metadata.labels?.[boundLabel]).toBe("true");
    expect(await refusal(() => patchAs(alice, "kept", [{ op: "remove", path: labelPointer }]))).toContain(
      `label ${boundLabel} must be set while annotation ${bindingAnnotation} is`,
    );
  }, 60_000);

  it("unbound targets are created, edited, finalized and deleted; a bound one stays fenced", async () => {
    await running.stop();
    // The API server's own policy still refuses a hand-made decision on an unbound target.
    expect(
      await refusal(() =>
        admin.createNamespacedCustomObject({
          group,
          version,
          namespace: ns,
          plural: "modeldeployments",
          body: {
            apiVersion: `${group}/${version}`,
            kind: "ModelDeployment",
            metadata: { name: "forged", annotations: { [decisionAnnotation]: "{}" } },
            spec: { roles: [{ name: "server", kind: "Server", instanceType: "h100", replicas: 1 }] },
          },
        }),
      ),
    ).toContain("cannot be added or changed by hand");

    // Unbound: everything the operator and users do passes without the scaler.
    await createTarget("loose", [{ name: "server", kind: "Server", replicas: 1 }]);
    await patchAs(alice, "loose", [{ op: "replace", path: "/spec/roles/0/replicas", value: 6 }]);
    await patchAs(admin, "loose", [{ op: "add", path: "/metadata/finalizers", value: ["operator.example/cleanup"] }]);
    await admin.deleteNamespacedCustomObject({
      group,
      version,
      namespace: ns,
      plural: "modeldeployments",
      name: "loose",
    });
    await patchAs(admin, "loose", [{ op: "remove", path: "/metadata/finalizers" }]);
    await eventually("the unbound target to be deleted", async () =>
      (await getTarget("loose").catch(() => undefined)) === undefined ? true : undefined,
    );

    // Bound: counts, the binding and the label stay fenced (the webhook does not answer, so Fail refuses).
    const before = await getTarget("kept");
    expect(
      await refusal(() => patchAs(alice, "kept", [{ op: "replace", path: "/spec/roles/0/replicas", value: 7 }])),
    ).toContain("fence.modeldeployments.worker.gpustack.ai");
    expect(
      await refusal(() =>
        patchAs(alice, "kept", [
          { op: "remove", path: bindingPointer },
          { op: "remove", path: labelPointer },
        ]),
      ),
    ).toContain("fence.modeldeployments.worker.gpustack.ai");
    expect(await refusal(() => patchAs(alice, "kept", [{ op: "remove", path: labelPointer }]))).toContain(
      "must be set while annotation",
    );
    // A finalizer on a bound target changes nothing the fence guards: it passes without the scaler.
    await patchAs(admin, "kept", [{ op: "add", path: "/metadata/finalizers", value: ["operator.example/cleanup"] }]);
    const after = await getTarget("kept");
    expect(after.spec.roles[0]?.replicas).toBe(before.spec.roles[0]?.replicas);
    expect(after.metadata.annotations?.[bindingAnnotation]).toBe(before.metadata.annotations?.[bindingAnnotation]);
    expect(after.metadata.labels?.[boundLabel]).toBe("true");
  }, 60_000);
});
