import { randomBytes } from "node:crypto";
import { createServer, connect as connectTcp, type Server, type Socket } from "node:net";
import { CoreV1Api, CustomObjectsApi, KubeConfig, Watch } from "@kubernetes/client-node";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import {
  ManualClock,
  RecordingFleet,
  SimulatedReconciler,
  type ReconcilerTimings,
} from "../../src/sim/reconciler/index.js";
import { startControlPlane, type ControlPlane } from "../../harness/kube/index.js";
import { loadModelDeploymentCrd } from "../support/crds.js";

// The simulated ModelDeployment reconciler against a real API server: what
// the scaler will read in status (desired, ready, quotaReserved, retirement)
// as replicas are added, held without quota, retired and kept after an abort.

const group = "worker.gpustack.ai";
const version = "v1";
const plural = "modeldeployments";

/** Short delays keep the file fast; a retirement walks five states. */
const fastTimings: Partial<ReconcilerTimings> = {
  coldStartMs: 300,
  admitMs: 50,
  withdrawMs: 50,
  drainMs: 300,
  deleteMs: 50,
  settleMs: 50,
};

interface RoleStatus {
  name: string;
  kind?: string;
  desired?: number;
  ready?: number;
  quotaReserved?: number;
}

interface RetirementStatus {
  roleName: string;
  replicaOrdinal: number;
  state: string;
  reason?: string;
  lastConsumedRetryToken?: string;
}

interface ModelDeploymentObject {
  metadata: {
    name: string;
    namespace: string;
    generation?: number;
    resourceVersion?: string;
    annotations?: Record<string, string>;
  };
  spec: { roles: { name: string; kind?: string; replicas: number }[] };
  status?: { observedGeneration?: number; roles?: RoleStatus[]; retirement?: RetirementStatus | null };
}

/** Polls `probe` until it returns a value other than undefined; fails with the last value seen. */
async function eventually<T>(what: string, probe: () => Promise<T | undefined>, timeoutMs = 15_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    last = value;
    if (Date.now() > deadline)
      throw new Error(`timed out after ${timeoutMs} ms waiting for ${what} (last: ${JSON.stringify(last)})`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

function roleStatus(md: ModelDeploymentObject | undefined, role: string): RoleStatus | undefined {
  return md?.status?.roles?.find((r) => r.name === role);
}

/** `desired/ready/quotaReserved` of a role, compact for comparisons. */
function counts(md: ModelDeploymentObject | undefined, role: string): string {
  const s = roleStatus(md, role);
  return `${s?.desired}/${s?.ready}/${s?.quotaReserved}`;
}

describe("simulated ModelDeployment reconciler", () => {
  let controlPlane: ControlPlane;
  let customObjects: CustomObjectsApi;
  let core: CoreV1Api;
  const cleanups: (() => Promise<void> | void)[] = [];

  beforeAll(async () => {
    controlPlane = await startControlPlane();
    customObjects = controlPlane.kubeConfig.makeApiClient(CustomObjectsApi);
    core = controlPlane.kubeConfig.makeApiClient(CoreV1Api);
    await controlPlane.applyCrd(await loadModelDeploymentCrd());
  });

  afterEach(async () => {
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  });

  afterAll(async () => {
    await controlPlane?.stop();
  });

  async function newNamespace(prefix: string): Promise<string> {
    const name = `${prefix}-${randomBytes(3).toString("hex")}`;
    await core.createNamespace({ body: { metadata: { name } } });
    return name;
  }

  /**
   * Every version of every ModelDeployment in the namespace, in the order the
   * API server sent them. Reconnects from the last version seen; right after
   * a CRD is created the API server may answer a watch with 429 for a while.
   */
  async function record(namespace: string): Promise<ModelDeploymentObject[]> {
    const seen: ModelDeploymentObject[] = [];
    let resourceVersion: string | undefined;
    let stopped = false;
    let current: AbortController | undefined;
    let connected!: () => void;
    const firstConnection = new Promise<void>((resolve) => (connected = resolve));
    const connect = async (): Promise<void> => {
      if (stopped) return;
      let failed = false;
      current = await new Watch(controlPlane.kubeConfig).watch(
        `/apis/${group}/${version}/namespaces/${namespace}/${plural}`,
        resourceVersion === undefined ? {} : { resourceVersion },
        (phase, obj: ModelDeploymentObject) => {
          if (phase === "ADDED" || phase === "MODIFIED") seen.push(obj);
          resourceVersion = obj.metadata.resourceVersion ?? resourceVersion;
        },
        (error: unknown) => {
          failed = true;
          if (!stopped) setTimeout(() => void connect(), error ? 100 : 0);
        },
      );
      if (!failed) connected();
    };
    await connect();
    await firstConnection;
    cleanups.push(() => {
      stopped = true;
      current?.abort();
    });
    return seen;
  }

  /**
   * A TCP relay in front of the API server that a test can cut: TLS passes
   * through untouched, so the reconciler talks to the real server, but its
   * connections can be dropped and refused at will.
   */
  async function relay(): Promise<{ kubeConfig: KubeConfig; cut(): Promise<void>; restore(): Promise<void> }> {
    const upstream = new URL(controlPlane.serverUrl);
    const sockets = new Set<Socket>();
    let server: Server | undefined;
    let port = 0;
    const listen = async (): Promise<void> => {
      const s = createServer((client) => {
        const backend = connectTcp(Number(upstream.port), upstream.hostname);
        for (const socket of [client, backend]) {
          sockets.add(socket);
          socket.on("close", () => sockets.delete(socket));
          socket.on("error", () => undefined);
        }
        client.pipe(backend).pipe(client);
        client.on("close", () => backend.destroy());
        backend.on("close", () => client.destroy());
      });
      await new Promise<void>((resolve, reject) => {
        s.once("error", reject);
        s.listen(port, "127.0.0.1", () => resolve());
      });
      port = (s.address() as { port: number }).port;
      server = s;
    };
    const cut = async (): Promise<void> => {
      const s = server;
      server = undefined;
      for (const socket of sockets) socket.destroy();
      if (s !== undefined) await new Promise<void>((resolve) => s.close(() => resolve()));
    };
    await listen();
    cleanups.push(cut);
    const kubeConfig = new KubeConfig();
    kubeConfig.loadFromString(controlPlane.kubeConfig.exportConfig());
    kubeConfig.loadFromOptions({
      clusters: kubeConfig.getClusters().map((c) => ({ ...c, server: `https://127.0.0.1:${port}` })),
      users: kubeConfig.getUsers(),
      contexts: kubeConfig.getContexts(),
      currentContext: kubeConfig.getCurrentContext(),
    });
    return { kubeConfig, cut, restore: listen };
  }

  interface Bed {
    namespace: string;
    fleet: RecordingFleet;
    reconciler: SimulatedReconciler;
    errors: Error[];
    /** Every version of every ModelDeployment in the namespace, as the API server sent it. */
    seen: ModelDeploymentObject[];
  }

  async function bed(
    prefix: string,
    options: { timings?: Partial<ReconcilerTimings>; clock?: ManualClock; kubeConfig?: KubeConfig } = {},
  ): Promise<Bed> {
    const namespace = await newNamespace(prefix);
    const seen = await record(namespace);
    const fleet = new RecordingFleet();
    const errors: Error[] = [];
    const reconciler = new SimulatedReconciler({
      kubeConfig: options.kubeConfig ?? controlPlane.kubeConfig,
      fleet,
      namespace,
      timings: options.timings ?? fastTimings,
      ...(options.clock !== undefined ? { clock: options.clock } : {}),
      apiTimeoutMs: 5_000,
      onError: (error) => errors.push(error),
    });
    await reconciler.start();
    cleanups.push(() => reconciler.stop());
    return { namespace, fleet, reconciler, errors, seen };
  }

  async function create(
    namespace: string,
    name: string,
    roles: { name: string; kind?: string; replicas: number }[],
  ): Promise<void> {
    await customObjects.createNamespacedCustomObject({
      group,
      version,
      namespace,
      plural,
      body: {
        apiVersion: `${group}/${version}`,
        kind: "ModelDeployment",
        metadata: { name },
        spec: {
          model: { name: "qwen3-8b" },
          engine: { name: "vLLM" },
          roles: roles.map((r) => ({ instanceType: "h100", ...r })),
        },
      },
    });
  }

  /** Sets one role's replicas with a JSON patch, the way the scaler commits. */
  async function scale(namespace: string, name: string, roleIndex: number, replicas: number): Promise<void> {
    await customObjects.patchNamespacedCustomObject({
      group,
      version,
      namespace,
      plural,
      name,
      body: [{ op: "replace", path: `/spec/roles/${roleIndex}/replicas`, value: replicas }],
    });
  }

  async function read(namespace: string, name: string): Promise<ModelDeploymentObject> {
    return (await customObjects.getNamespacedCustomObject({
      group,
      version,
      namespace,
      plural,
      name,
    })) as ModelDeploymentObject;
  }

  /** Waits until the role reports `desired/ready/quotaReserved` and the status reflects the current generation. */
  async function until(
    namespace: string,
    name: string,
    role: string,
    expected: string,
    extra: (md: ModelDeploymentObject) => boolean = () => true,
  ): Promise<ModelDeploymentObject> {
    let last: ModelDeploymentObject | undefined;
    try {
      return await eventually(
        `${role} of ${namespace}/${name} at desired/ready/quotaReserved ${expected}`,
        async () => {
          const md = (last = await read(namespace, name));
          return md.status?.observedGeneration === md.metadata.generation && counts(md, role) === expected && extra(md)
            ? md
            : undefined;
        },
      );
    } catch (error) {
      throw new Error(`last seen: ${JSON.stringify(last?.status)}`, { cause: error });
    }
  }

  /** Waits until the recorder has received the version `md` was read at. */
  async function caughtUp(seen: readonly ModelDeploymentObject[], md: ModelDeploymentObject): Promise<void> {
    const target = md.metadata.resourceVersion;
    await eventually(`the watch to deliver resourceVersion ${target}`, async () =>
      seen.some((s) => s.metadata.resourceVersion === target) ? true : undefined,
    );
  }

  /** The retirement states as the API server recorded them, deduplicated: `ordinal:state`, `-` for none. */
  function retirementTrail(seen: readonly ModelDeploymentObject[]): string[] {
    const trail: string[] = [];
    for (const md of seen) {
      if (md.status === undefined) continue;
      const r = md.status.retirement;
      const entry = r === undefined || r === null ? "-" : `${r.roleName}/${r.replicaOrdinal}:${r.state}`;
      if (trail.at(-1) !== entry) trail.push(entry);
    }
    return trail;
  }

  it("reserves quota, reports desired at once and ready after the cold start, and writes through the status subresource", async () => {
    const clock = new ManualClock(Date.parse("2026-01-01T00:00:00Z"));
    const { namespace, fleet, reconciler, errors, seen } = await bed("md-up", {
      clock,
      timings: { ...fastTimings, coldStartMs: 30_000 },
    });
    await create(namespace, "llm", [
      { name: "prefill", kind: "Prefill", replicas: 1 },
      { name: "decode", kind: "Decode", replicas: 1 },
    ]);

    // Admitted at once, ready only when the cold start is over on the reconciler's clock.
    let md = await until(namespace, "llm", "decode", "1/0/1");
    expect(counts(md, "prefill")).toBe("1/0/1");
    expect(fleet.runningOrdinals(namespace, "llm", "decode")).toEqual([]);
    clock.advance(30_000);
    md = await until(namespace, "llm", "decode", "1/1/1");
    expect(counts(md, "prefill")).toBe("1/1/1");
    expect(roleStatus(md, "decode")?.kind).toBe("Decode");
    expect(md.status?.retirement ?? undefined).toBeUndefined();

    await scale(namespace, "llm", 1, 3);
    md = await until(namespace, "llm", "decode", "3/1/3");
    await reconciler.whenIdle();
    // Time has not moved: nothing more becomes ready however long we look.
    expect(counts(await read(namespace, "llm"), "decode")).toBe("3/1/3");
    expect(fleet.runningOrdinals(namespace, "llm", "decode")).toEqual([0]);
    clock.advance(29_999);
    await reconciler.whenIdle();
    expect(counts(await read(namespace, "llm"), "decode")).toBe("3/1/3");
    clock.advance(1);
    md = await until(namespace, "llm", "decode", "3/3/3");
    await caughtUp(seen, md);
    expect(fleet.runningOrdinals(namespace, "llm", "decode")).toEqual([0, 1, 2]);
    expect(fleet.runningOrdinals(namespace, "llm", "prefill")).toEqual([0]);
    expect(counts(md, "prefill")).toBe("1/1/1");

    // Status went only through the status subresource: the spec is as the test wrote it.
    expect(md.spec.roles.map((r) => r.replicas)).toEqual([1, 3]);
    // The API server saw the pending step (reserved, not ready) before the ready one.
    const decodeTrail = seen.map((s) => counts(s, "decode")).filter((c, i, all) => c !== all[i - 1]);
    expect(decodeTrail).toEqual(expect.arrayContaining(["3/1/3", "3/3/3"]));
    expect(decodeTrail.indexOf("3/1/3")).toBeLessThan(decodeTrail.indexOf("3/3/3"));

    // Deleting the deployment stops its replicas.
    await customObjects.deleteNamespacedCustomObject({ group, version, namespace, plural, name: "llm" });
    await eventually("replicas stopped after delete", async () =>
      fleet.runningOrdinals(namespace, "llm", "decode").length +
        fleet.runningOrdinals(namespace, "llm", "prefill").length ===
      0
        ? true
        : undefined,
    );
    expect(errors).toEqual([]);
  });

  it("keeps quotaReserved below desired while quota is withheld, and drops never-admitted replicas on a rollback without a retirement", async () => {
    const { namespace, fleet, reconciler, errors, seen } = await bed("md-quota");
    await create(namespace, "llm", [{ name: "server", replicas: 1 }]);
    await until(namespace, "llm", "server", "1/1/1");

    reconciler.withholdQuota(namespace, "llm", "server");
    await scale(namespace, "llm", 0, 3);
    await until(namespace, "llm", "server", "3/1/1");
    // Several cold starts later nothing has been admitted or started.
    await new Promise((resolve) => setTimeout(resolve, 4 * 300));
    await reconciler.whenIdle();
    expect(counts(await read(namespace, "llm"), "server")).toBe("3/1/1");
    expect(fleet.runningOrdinals(namespace, "llm", "server")).toEqual([0]);
    expect(reconciler.snapshot(namespace, "llm")?.roles["server"]?.map((r) => r.phase)).toEqual([
      "Running",
      "Pending",
      "Pending",
    ]);

    // A partial grant admits the lowest pending ordinal only.
    reconciler.setQuotaLimit(namespace, "llm", "server", 2);
    await until(namespace, "llm", "server", "3/2/2");
    expect(fleet.runningOrdinals(namespace, "llm", "server")).toEqual([0, 1]);

    // The scaler's rollback after a pending timeout: the unadmitted ordinal is dropped, no retirement.
    await scale(namespace, "llm", 0, 2);
    await until(namespace, "llm", "server", "2/2/2");
    await reconciler.whenIdle();
    await caughtUp(seen, await read(namespace, "llm"));
    expect(retirementTrail(seen)).toEqual(["-"]);

    // Quota returns: growth is admitted again.
    reconciler.grantQuota(namespace, "llm");
    await scale(namespace, "llm", 0, 3);
    await until(namespace, "llm", "server", "3/3/3");
    expect(fleet.runningOrdinals(namespace, "llm", "server")).toEqual([0, 1, 2]);
    expect(errors).toEqual([]);
  });

  it("retires the highest ordinal first, one at a time, through every retirement state", async () => {
    const { namespace, fleet, reconciler, errors, seen } = await bed("md-down");
    await create(namespace, "llm", [{ name: "server", replicas: 3 }]);
    await until(namespace, "llm", "server", "3/3/3");

    await scale(namespace, "llm", 0, 1);
    await until(namespace, "llm", "server", "1/1/1", (m) => (m.status?.retirement ?? undefined) === undefined);
    await reconciler.whenIdle();
    const md = await read(namespace, "llm");
    await caughtUp(seen, md);

    const states = ["Admitted", "Withdrawing", "Draining", "Deleting", "Settling"];
    expect(retirementTrail(seen)).toEqual([
      "-",
      ...states.map((s) => `server/2:${s}`),
      ...states.map((s) => `server/1:${s}`),
      "-",
    ]);
    expect(fleet.runningOrdinals(namespace, "llm", "server")).toEqual([0]);
    expect(fleet.events.filter((e) => e.action === "stop").map((e) => e.ordinal)).toEqual([2, 1]);

    // A withdrawn replica stops counting as ready at once; its quota is held until its pods are deleted.
    const during = (ordinal: number, state: string): string[] =>
      seen
        .filter((s) => s.status?.retirement?.replicaOrdinal === ordinal && s.status.retirement.state === state)
        .map((s) => counts(s, "server"));
    expect(during(2, "Admitted")).toContain("1/3/3");
    expect(during(2, "Draining")).toContain("1/2/3");
    expect(during(2, "Deleting")).toContain("1/2/2");
    expect(during(1, "Draining")).toContain("1/1/2");
    expect(md.status?.retirement ?? undefined).toBeUndefined();
    expect(errors).toEqual([]);
  });

  it("aborts a retirement on request: the replica is kept, Aborted stays visible until the spec declares the replica again", async () => {
    // A long drain holds the retirement in Draining until the test aborts it.
    const { namespace, fleet, reconciler, errors, seen } = await bed("md-abort", {
      timings: { ...fastTimings, drainMs: 600_000 },
    });
    await create(namespace, "llm", [{ name: "server", replicas: 2 }]);
    await until(namespace, "llm", "server", "2/2/2");

    await scale(namespace, "llm", 0, 1);
    await eventually("retirement of server/1 draining", async () =>
      (await read(namespace, "llm")).status?.retirement?.state === "Draining" ? true : undefined,
    );
    expect(await reconciler.abortRetirement(namespace, "llm")).toBe(true);

    // Aborted is terminal: the replica keeps serving and holding quota, and no other retirement starts.
    let md = await until(namespace, "llm", "server", "1/2/2", (m) => m.status?.retirement?.state === "Aborted");
    expect(md.status?.retirement).toMatchObject({ roleName: "server", replicaOrdinal: 1, state: "Aborted" });
    expect(md.status?.retirement?.reason).toMatch(/retained/);
    await new Promise((resolve) => setTimeout(resolve, 500));
    await reconciler.whenIdle();
    expect((await read(namespace, "llm")).status?.retirement?.state).toBe("Aborted");
    expect(fleet.runningOrdinals(namespace, "llm", "server")).toEqual([0, 1]);
    expect(await reconciler.abortRetirement(namespace, "llm")).toBe(true);

    // The scaler restores the pre-scale-down vector: the kept replica is adopted, not restarted.
    await scale(namespace, "llm", 0, 2);
    md = await until(namespace, "llm", "server", "2/2/2", (m) => (m.status?.retirement ?? undefined) === undefined);
    await caughtUp(seen, md);
    expect(fleet.runningOrdinals(namespace, "llm", "server")).toEqual([0, 1]);
    expect(fleet.events.filter((e) => e.ordinal === 1).map((e) => e.action)).toEqual(["start"]);
    expect(retirementTrail(seen)).toEqual([
      "-",
      "server/1:Admitted",
      "server/1:Withdrawing",
      "server/1:Draining",
      "server/1:Aborted",
      "-",
    ]);
    expect(errors).toEqual([]);
  });

  it("aborts every retirement when told its drains never finish, and runs it again on the retry annotation", async () => {
    const { namespace, fleet, reconciler, errors } = await bed("md-retry");
    reconciler.abortRetirements(namespace, "llm");
    await create(namespace, "llm", [{ name: "server", replicas: 2 }]);
    await until(namespace, "llm", "server", "2/2/2");

    await scale(namespace, "llm", 0, 1);
    let md = await until(namespace, "llm", "server", "1/2/2", (m) => m.status?.retirement?.state === "Aborted");
    expect(md.status?.retirement).toMatchObject({ roleName: "server", replicaOrdinal: 1 });
    expect(fleet.runningOrdinals(namespace, "llm", "server")).toEqual([0, 1]);

    // The operator's retry: a new token on the annotation runs the retirement again, once.
    reconciler.abortRetirements(namespace, "llm", false);
    await customObjects.patchNamespacedCustomObject({
      group,
      version,
      namespace,
      plural,
      name: "llm",
      body: [
        {
          op: "add",
          path: "/metadata/annotations",
          value: { "modeldeployment.gpustack.ai/retirement-retry": "server:1:first" },
        },
      ],
    });
    md = await until(namespace, "llm", "server", "1/1/1", (m) => (m.status?.retirement ?? undefined) === undefined);
    expect(fleet.runningOrdinals(namespace, "llm", "server")).toEqual([0]);
    expect(errors).toEqual([]);
  });

  it("keeps reconciling after its connections to the API server are cut and refused for a while", async () => {
    const link = await relay();
    const { namespace, fleet, errors } = await bed("md-reconnect", { kubeConfig: link.kubeConfig });
    await create(namespace, "llm", [{ name: "server", replicas: 1 }]);
    await until(namespace, "llm", "server", "1/1/1");

    await link.cut();
    // Changed while the reconciler cannot see it: it must catch up from the watch it resumes.
    await scale(namespace, "llm", 0, 2);
    await new Promise((resolve) => setTimeout(resolve, 800));
    expect(counts(await read(namespace, "llm"), "server")).toBe("1/1/1");
    await link.restore();

    await until(namespace, "llm", "server", "2/2/2");
    expect(fleet.runningOrdinals(namespace, "llm", "server")).toEqual([0, 1]);
    // The outage was reported, each time with the failed call and its cause.
    expect(errors.length).toBeGreaterThan(0);
    for (const error of errors) {
      expect(error.message).toMatch(/modeldeployments/);
      expect(error.cause).toBeDefined();
    }
  });

  it("serves the test CRD with the operator's defaults and a frozen role set", async () => {
    const namespace = await newNamespace("md-crd");
    await customObjects.createNamespacedCustomObject({
      group,
      version,
      namespace,
      plural,
      body: {
        apiVersion: `${group}/${version}`,
        kind: "ModelDeployment",
        metadata: { name: "llm" },
        spec: { engine: { name: "vLLM", image: "kept-as-is" }, roles: [{ name: "server", instanceType: "h100" }] },
      },
    });
    const md = (await read(namespace, "llm")) as ModelDeploymentObject & { spec: { engine?: { image?: string } } };
    expect(md.spec.roles).toEqual([{ name: "server", kind: "Server", replicas: 1, instanceType: "h100" }]);
    expect(md.spec.engine?.image).toBe("kept-as-is");

    const addRole = customObjects.patchNamespacedCustomObject({
      group,
      version,
      namespace,
      plural,
      name: "llm",
      body: [{ op: "add", path: "/spec/roles/-", value: { name: "extra", instanceType: "h100" } }],
    });
    await expect(addRole).rejects.toMatchObject({ code: 422 });
    await expect(addRole).rejects.toThrow(/role set is frozen/);
    await expect(scale(namespace, "llm", 0, 1025)).rejects.toMatchObject({ code: 422 });
  });
});
