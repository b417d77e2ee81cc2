/**
 * The controller end to end: a real kube-apiserver and etcd, a real Prometheus
 * scraping simulated vLLM engines, and a simulated ModelDeployment reconciler
 * that starts and retires those engines. Nothing here is mocked.
 */
import type { JsonPatchOp } from "../../src/core/binding/patch.js";
import type { ScalerStore } from "../../src/app/controller.js";
import { KubeResources } from "../../src/adapters/kubernetes/resources.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { bindingAnnotation, decisionAnnotation } from "../../src/core/api/model-deployment.js";
import { condition, eventually, group, replicasOf, Testbed, Timeline, version } from "../support/testbed.js";

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

const tokenThroughputSpec = (target: string, extra: Record<string, unknown> = {}): Record<string, unknown> => ({
  targetRef: { name: target },
  mode: "Active",
  sampling: { intervalSeconds: 5, pendingTimeoutSeconds: 60 },
  roles: [{ name: "server", minReplicas: 1, maxReplicas: 4 }],
  algorithm: {
    type: "TokenThroughput",
    tokenThroughput: {
      serverTargetTokensPerSecond: "1000",
      stableWindowSeconds: 30,
      panicWindowSeconds: 10,
      ttftTargetMilliseconds: "5000",
      itlTargetMilliseconds: "1000",
    },
  },
  // The scale-down window spans the stable window, so the drop from a panic recommendation to a
  // stable window still filling up does not shrink the target (the defaults, 300 s and 180 s, keep that order).
  behavior: { scaleDown: { stabilizationWindowSeconds: 30, cooldownAfterAbortSeconds: 600 } },
  ...extra,
});

describe("controller end to end", () => {
  let bed: Testbed;

  beforeAll(async () => {
    bed = await Testbed.start();
  }, 240_000);

  afterAll(async () => {
    await bed?.stop();
  }, 60_000);

  it("scales an Active target up under a load step and back down after it ends", async () => {
    const ns = await bed.namespace("load-step");
    await bed.createDeployment(ns, "chat", [{ name: "server", kind: "Server", replicas: 1 }]);
    await bed.createScaler(ns, "chat", tokenThroughputSpec("chat"));
    const running = await bed.startController({ namespace: ns });
    const timeline = new Timeline(bed, ns, "chat");

    // Bound and Active before any load: the binding annotation is installed under term 1.
    const bound = await eventually(
      "the scaler to bind",
      async () => {
        const s = await bed.getScaler(ns, "chat");
        return condition(s, "Active")?.status === "True" ? s : undefined;
      },
      60_000,
    );
    expect(condition(bound, "Bound")).toMatchObject({ status: "True", reason: "Bound" });
    const target = await bed.getTarget(ns, "chat");
    expect(JSON.parse(target.metadata.annotations?.[bindingAnnotation] ?? "{}")).toMatchObject({
      scalerName: "chat",
      term: 1,
    });

    // 5 requests/s of 400 prompt + 100 output tokens = 2500 tokens/s over a 1000 tokens/s replica: 3 replicas.
    bed.load.set(ns, "chat", 5);
    const grown = await eventually(
      "three server replicas",
      async () => {
        const t = await bed.getTarget(ns, "chat");
        return replicasOf(t, "server") === 3 ? t : undefined;
      },
      120_000,
    );
    const decision = JSON.parse(grown.metadata.annotations?.[decisionAnnotation] ?? "{}") as {
      term: number;
      vector: Record<string, number>;
    };
    expect(decision).toMatchObject({ term: 1, vector: { server: 3 } });
    // The status follows the commit in the same pass.
    const afterGrowth = await eventually(
      "status to record the commit",
      async () => {
        const s = await bed.getScaler(ns, "chat");
        return s.status?.lastCommit?.vector["server"] === 3 ? s : undefined;
      },
      10_000,
    );
    expect(afterGrowth.status?.roles?.[0]?.rawRecommendedReplicas).toBeGreaterThanOrEqual(3);
    const exported = await running.metrics.registry.getSingleMetricAsString("mds_commits_total");
    expect(exported).toMatch(/mds_commits_total\{namespace="load-step",scaler="chat",target="chat"\} [1-9]/);

    // Sustained load holds the count: no flapping while demand is steady.
    await new Promise((resolve) => setTimeout(resolve, 30_000));
    expect(replicasOf(await bed.getTarget(ns, "chat"), "server")).toBe(3);

    // Load ends: the windows drain, the scale-down window passes, and one replica retires per pass.
    bed.load.set(ns, "chat", 0);
    await eventually(
      "the target back at one replica",
      async () => {
        const t = await bed.getTarget(ns, "chat");
        return replicasOf(t, "server") === 1 ? t : undefined;
      },
      240_000,
      1_000,
    );
    const idle = await bed.getScaler(ns, "chat");
    expect(idle.status?.roles?.[0]?.signalState).toMatch(/Idle|Fresh/);
    expect(condition(idle, "MetricsReady")?.status).toBe("True");
    await running.stop();
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    const story = timeline.stop();
    console.log(`load step timeline (seconds, replicas, role reasons, Blocked):\n${story}`);
    // Growth may jump (panic, step limit 4); shrinking goes one replica per pass.
    expect(timeline.counts("server")).toEqual([1, 3, 2, 1]);
  }, 420_000);
  it("in Shadow writes status and never touches the target", async () => {
    const ns = await bed.namespace("shadow");
    await bed.createDeployment(ns, "chat", [{ name: "server", kind: "Server", replicas: 1 }]);
    await bed.createScaler(ns, "chat", { ...tokenThroughputSpec("chat"), mode: "Shadow" });
    const before = await bed.getTarget(ns, "chat");
    const running = await bed.startController({ namespace: ns });
    bed.load.set(ns, "chat", 5);
    const recommended = await eventually(
      "a Shadow recommendation above the live count",
      async () => {
        const s = await bed.getScaler(ns, "chat");
        return (s.status?.roles?.[0]?.rawRecommendedReplicas ?? 0) >= 3 ? s : undefined;
      },
      90_000,
    );
    expect(condition(recommended, "Active")).toMatchObject({ status: "False", reason: "ShadowMode" });
    expect(condition(recommended, "Bound")).toMatchObject({ status: "True", reason: "Bound" });
    expect(recommended.status?.lastCommit).toBeUndefined();
    const after = await bed.getTarget(ns, "chat");
    // Only the reconciler's status writes touch the object: the spec generation never moves.
    expect(after.metadata.generation).toBe(before.metadata.generation);
    expect(replicasOf(after, "server")).toBe(1);
    expect(after.metadata.annotations ?? {}).toEqual({});
    bed.load.set(ns, "chat", 0);
    await running.stop();
  }, 180_000);

  it("lets one of two scalers bind; deleting it releases the binding and leaves the replicas", async () => {
    const ns = await bed.namespace("two-scalers");
    await bed.createDeployment(ns, "chat", [{ name: "server", kind: "Server", replicas: 2 }]);
    await bed.createScaler(ns, "first", {
      ...tokenThroughputSpec("chat"),
      roles: [{ name: "server", minReplicas: 2, maxReplicas: 4 }],
    });
    const running = await bed.startController({ namespace: ns });
    await eventually(
      "the first scaler to bind",
      async () => (condition(await bed.getScaler(ns, "first"), "Bound")?.status === "True" ? true : undefined),
      60_000,
    );
    await bed.createScaler(ns, "second", {
      ...tokenThroughputSpec("chat"),
      roles: [{ name: "server", minReplicas: 2, maxReplicas: 4 }],
    });
    const second = await eventually(
      "the second scaler to report AlreadyBound",
      async () => {
        const s = await bed.getScaler(ns, "second");
        return condition(s, "Bound")?.reason === "AlreadyBound" ? s : undefined;
      },
      60_000,
    );
    expect(condition(second, "Active")).toMatchObject({ status: "False", reason: "AlreadyBound" });
    const owner = JSON.parse((await bed.getTarget(ns, "chat")).metadata.annotations?.[bindingAnnotation] ?? "{}") as {
      scalerName: string;
      term: number;
    };
    expect(owner).toMatchObject({ scalerName: "first", term: 1 });

    // A finalizer releases the binding on deletion; the target keeps serving at its counts.
    await running.stop();
    await bed.custom.deleteNamespacedCustomObject({
      group,
      version,
      namespace: ns,
      plural: "modeldeploymentscalers",
      name: "first",
    });
    const onlySecond = await bed.startController({ namespace: ns });
    const rebound = await eventually(
      "the second scaler to take the released target",
      async () => {
        const t = await bed.getTarget(ns, "chat");
        const b = JSON.parse(t.metadata.annotations?.[bindingAnnotation] ?? "{}") as {
          scalerName?: string;
          term?: number;
        };
        return b.scalerName === "second" ? { t, b } : undefined;
      },
      60_000,
    );
    expect(replicasOf(rebound.t, "server")).toBe(2);
    // Terms never move backwards: the new owner starts above every term the target has seen.
    expect(rebound.b.term).toBeGreaterThanOrEqual(1);
    await eventually(
      "the first scaler to be gone",
      async () => {
        try {
          await bed.getScaler(ns, "first");
          return undefined;
        } catch {
          return true;
        }
      },
      30_000,
    );
    await onlySecond.stop();
  }, 240_000);

  it("re-plans a commit that meets a stale resourceVersion and applies it once", async () => {
    const ns = await bed.namespace("conflict");
    await bed.createDeployment(ns, "chat", [{ name: "server", kind: "Server", replicas: 1 }]);
    await bed.createScaler(ns, "chat", tokenThroughputSpec("chat"));
    let interfered = 0;
    // Just before the first replica commit lands, someone else edits the target.
    const wrapStore = (store: ScalerStore): ScalerStore => ({
      listScalers: (n) => store.listScalers(n),
      getTarget: (n, name, options) => store.getTarget(n, name, options),
      patchScaler: (n, name, ops) => store.patchScaler(n, name, ops),
      writeScalerStatus: (n, name, status) => store.writeScalerStatus(n, name, status),
      async patchTarget(n: string, name: string, ops: readonly JsonPatchOp[]) {
        if (interfered === 0 && ops.some((op) => op.path.startsWith("/spec/roles/"))) {
          interfered += 1;
          await new KubeResources(bed.controlPlane.kubeConfig, { timeoutMs: 10_000 }).patchTarget(n, name, [
            { op: "add", path: "/metadata/labels", value: { touched: "yes" } },
          ]);
        }
        return store.patchTarget(n, name, ops);
      },
    });
    const running = await bed.startController({ namespace: ns, wrapStore });
    bed.load.set(ns, "chat", 5);
    const grown = await eventually(
      "the scale-up to land",
      async () => {
        const t = await bed.getTarget(ns, "chat");
        return (replicasOf(t, "server") ?? 1) > 1 ? t : undefined;
      },
      120_000,
    );
    bed.load.set(ns, "chat", 0);
    expect(interfered).toBe(1);
    expect(grown.metadata.labels?.["touched"]).toBe("yes");
    const conflicts = await running.metrics.registry.getSingleMetricAsString("mds_commit_conflicts_total");
    expect(conflicts).toMatch(/scaler="chat",target="chat"\} 1\b/);
    // Applied once: one commit from the baseline of one replica, not a second one stacked on it.
    const scaler = await eventually(
      "the commit in status",
      async () => {
        const s = await bed.getScaler(ns, "chat");
        return s.status?.lastCommit !== undefined ? s : undefined;
      },
      10_000,
    );
    const lastCommit = scaler.status?.lastCommit;
    expect(lastCommit?.baselineVector).toEqual({ server: 1 });
    expect(lastCommit?.vector).toEqual({ server: replicasOf(grown, "server") });
    const commits = await running.metrics.registry.getSingleMetricAsString("mds_commits_total");
    expect(commits).toMatch(/scaler="chat",target="chat"\} 1\b/);
    await running.stop();
  }, 180_000);

  it("rolls a scale-up back when quota never arrives (ResourceExhausted)", async () => {
    const ns = await bed.namespace("quota");
    await bed.createDeployment(ns, "chat", [{ name: "server", kind: "Server", replicas: 1 }]);
    await bed.createScaler(ns, "chat", { ...tokenThroughputSpec("chat"), rebalance: { policy: "Disabled" } });
    const running = await bed.startController({ namespace: ns });
    await eventually(
      "the scaler to bind",
      async () => (condition(await bed.getScaler(ns, "chat"), "Active")?.status === "True" ? true : undefined),
      60_000,
    );
    bed.reconciler.withholdQuota(ns, "chat");
    bed.load.set(ns, "chat", 5);
    await eventually(
      "the scale-up commit",
      async () => ((replicasOf(await bed.getTarget(ns, "chat"), "server") ?? 1) > 1 ? true : undefined),
      90_000,
    );
    const pending = await bed.getScaler(ns, "chat");
    expect(pending.status?.pendingCohort).toBeDefined();
    // pendingTimeoutSeconds is 60: then the whole cohort's baseline is restored in one write.
    const rolledBack = await eventually(
      "the rollback to the baseline",
      async () => {
        const s = await bed.getScaler(ns, "chat");
        const t = await bed.getTarget(ns, "chat");
        return replicasOf(t, "server") === 1 && condition(s, "Blocked")?.reason === "ResourceExhausted" ? s : undefined;
      },
      120_000,
      1_000,
    );
    expect(condition(rolledBack, "Blocked")?.status).toBe("True");
    expect(rolledBack.status?.pendingCohort).toBeUndefined();
    expect(await running.metrics.registry.getSingleMetricAsString("mds_rollbacks_total")).toMatch(
      /scaler="chat",target="chat"\} 1\b/,
    );
    bed.load.set(ns, "chat", 0);
    bed.reconciler.grantQuota(ns, "chat");
    await running.stop();
  }, 300_000);

  it("restores the vector after an aborted retirement and holds scale-down during the cooldown", async () => {
    const ns = await bed.namespace("abort");
    await bed.createDeployment(ns, "chat", [{ name: "server", kind: "Server", replicas: 3 }]);
    bed.reconciler.abortRetirements(ns, "chat", true);
    await bed.createScaler(ns, "chat", {
      ...tokenThroughputSpec("chat"),
      behavior: { scaleDown: { stabilizationWindowSeconds: 10, cooldownAfterAbortSeconds: 600 } },
    });
    const running = await bed.startController({ namespace: ns });
    const timeline = new Timeline(bed, ns, "chat");
    // Idle engines recommend one replica: the scaler shrinks to 2, the retirement aborts, 3 comes back.
    await eventually(
      "a scale-down commit",
      async () => (replicasOf(await bed.getTarget(ns, "chat"), "server") === 2 ? true : undefined),
      120_000,
      500,
    );
    const aborted = await eventually(
      "ScaleDownAborted",
      async () => {
        const s = await bed.getScaler(ns, "chat");
        return s.status?.lastScaleDown?.outcome === "Aborted" ? s : undefined;
      },
      120_000,
      500,
    );
    expect(replicasOf(await bed.getTarget(ns, "chat"), "server")).toBe(3);
    expect(aborted.status?.lastScaleDown?.cooldownUntil).toBeDefined();
    expect(condition(aborted, "Blocked")?.reason).toBe("ScaleDownAborted");
    // The cooldown (600 s) holds every further scale-down although the engines stay idle.
    await sleep(20_000);
    expect(replicasOf(await bed.getTarget(ns, "chat"), "server")).toBe(3);
    expect(await running.metrics.registry.getSingleMetricAsString("mds_aborted_scale_downs_total")).toMatch(
      /scaler="chat",target="chat"\} 1\b/,
    );
    await running.stop();
    console.log(`aborted retirement timeline:\n${timeline.stop()}`);
  }, 300_000);

  // Last: it stops the Prometheus every other scenario reads.
  it("holds scale-down while Prometheus is down and recovers when it returns", async () => {
    const ns = await bed.namespace("prometheus-down");
    await bed.createDeployment(ns, "chat", [{ name: "server", kind: "Server", replicas: 2 }]);
    await bed.createScaler(ns, "chat", {
      ...tokenThroughputSpec("chat"),
      behavior: { scaleDown: { stabilizationWindowSeconds: 10 } },
    });
    const running = await bed.startController({ namespace: ns });
    // Fresh and ready before the outage, so MetricsReady=False afterwards can only come from the outage.
    await eventually(
      "fresh signals and MetricsReady=True",
      async () => {
        const s = await bed.getScaler(ns, "chat");
        return s.status?.roles?.[0]?.signalState === "Idle" && condition(s, "MetricsReady")?.status === "True"
          ? true
          : undefined;
      },
      90_000,
    );
    await bed.prometheus.pause();
    const blind = await eventually(
      "MetricsReady=False",
      async () => {
        const s = await bed.getScaler(ns, "chat");
        return condition(s, "MetricsReady")?.status === "False" ? s : undefined;
      },
      60_000,
    );
    expect(blind.status?.roles?.[0]?.signalState).toMatch(/Missing|Stale/);
    // Idle engines would justify one replica, but unknown is not zero: nothing shrinks.
    await sleep(20_000);
    expect(replicasOf(await bed.getTarget(ns, "chat"), "server")).toBe(2);
    expect(condition(await bed.getScaler(ns, "chat"), "MetricsReady")?.status).toBe("False");
    await bed.prometheus.resume();
    await eventually(
      "MetricsReady=True again",
      async () => (condition(await bed.getScaler(ns, "chat"), "MetricsReady")?.status === "True" ? true : undefined),
      90_000,
    );
    await eventually(
      "the scale-down it held",
      async () => (replicasOf(await bed.getTarget(ns, "chat"), "server") === 1 ? true : undefined),
      120_000,
      1_000,
    );
    await running.stop();
  }, 360_000);
});
