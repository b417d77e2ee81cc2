/**
 * The controller's share of "at most one writer", with a fake store: decisions carry the leader token,
 * a write refused for lost leadership ends the pass quietly, and a status write that lost a version race
 * is re-planned and written on the next pass rather than forced or dropped. The real API server, the
 * real fence and real processes are in test/integration/leader-fencing.test.ts.
 */
import { describe, expect, it } from "vitest";
import { NotLeaderError } from "../../src/adapters/kubernetes/resources.js";
import { createLogger } from "../../src/adapters/telemetry/logger.js";
import { ScalerMetrics } from "../../src/adapters/telemetry/metrics.js";
import { Controller, finalizer, type SignalSource } from "../../src/app/controller.js";
import { decisionAnnotation, type LeaderToken } from "../../src/core/api/model-deployment.js";
import type { PodSample } from "../../src/core/signals/types.js";
import { FakeStore } from "../fakes/controller.js";

const startMs = Date.UTC(2026, 10, 30, 12, 0, 0);
const key = "team/llm";

function objects(): { scaler: Record<string, unknown>; target: Record<string, unknown> } {
  return {
    scaler: {
      apiVersion: "worker.gpustack.ai/v1",
      kind: "ModelDeploymentScaler",
      metadata: { name: "llm", namespace: "team", uid: "uid-s", generation: 1, finalizers: [finalizer] },
      spec: {
        targetRef: { name: "llm" },
        mode: "Active",
        sampling: { intervalSeconds: 5 },
        roles: [{ name: "server", minReplicas: 1, maxReplicas: 16 }],
        algorithm: {
          type: "Proportional",
          proportional: { metric: "QueueDepth", roleTargets: [{ name: "server", target: "8" }] },
        },
      },
    },
    target: {
      apiVersion: "worker.gpustack.ai/v1",
      kind: "ModelDeployment",
      metadata: { name: "llm", namespace: "team", uid: "uid-t", generation: 1 },
      spec: { roles: [{ name: "server", kind: "Server", instanceType: "h100", replicas: 1 }] },
      status: { roles: [{ name: "server", desired: 1, ready: 1, quotaReserved: 1 }] },
    },
  };
}

/** Ready pods with a total queue of `total`, sampled now. */
function queue(totalOf: () => number, readyOf: () => number, nowMs: () => number): SignalSource {
  return {
    sample: (requests) =>
      Promise.resolve(
        new Map(
          requests.map((r) => {
            const ready = readyOf();
            const pods: PodSample[] = Array.from({ length: ready }, (_, i) => ({
              pod: `llm-server-${i}`,
              engine: "vllm",
              lastSampleUnixSeconds: nowMs() / 1000,
              runningRequests: totalOf() / ready,
              waitingRequests: 0,
              windows: { stable: { established: false }, panic: { established: false } },
            }));
            return [r.key, new Map([["server", { pods }]])];
          }),
        ),
      ),
  };
}

function setup(opts: { token?: LeaderToken; total?: number } = {}) {
  const { scaler, target } = objects();
  const store = new FakeStore();
  store.addScaler(scaler as never);
  store.addTarget(target as never);
  let nowMs = startMs;
  let total = opts.total ?? 16;
  const ready = (): number => (storedTarget(store).spec["roles"] as { replicas: number }[])[0]?.replicas ?? 0;
  // The reconciler admits at once: status follows the spec.
  const mirror = (): void => {
    storedTarget(store).status = {
      roles: [{ name: "server", desired: ready(), ready: ready(), quotaReserved: ready() }],
    };
  };
  const lines: string[] = [];
  const metrics = new ScalerMetrics();
  const controller = new Controller({
    store,
    source: queue(
      () => total,
      ready,
      () => nowMs,
    ),
    metrics,
    logger: createLogger({ level: "warn", write: (line) => lines.push(line) }),
    nowMs: () => nowMs,
    namespace: "",
    ...(opts.token === undefined ? {} : { leaderToken: () => opts.token }),
  });
  return {
    store,
    controller,
    metrics,
    lines,
    mirror,
    advance: (ms: number) => (nowMs += ms),
    demand: (queued: number) => (total = queued),
  };
}

function storedTarget(store: FakeStore) {
  const target = store.targets.get(key);
  if (target === undefined) throw new Error(`no target ${key}`);
  return target;
}

function storedDecision(store: FakeStore): Record<string, unknown> | undefined {
  const text = storedTarget(store).metadata.annotations?.[decisionAnnotation];
  return text === undefined ? undefined : (JSON.parse(text) as Record<string, unknown>);
}

async function errorCount(metrics: ScalerMetrics, kind: string): Promise<number> {
  const text = await metrics.registry.metrics();
  return text
    .split("\n")
    .filter((l) => l.startsWith("mds_errors_total{") && l.includes(`kind="${kind}"`))
    .reduce((sum, l) => sum + Number(l.slice(l.lastIndexOf(" ") + 1)), 0);
}

describe("the controller under leader election", () => {
  it("stamps every decision with the current leadership's token", async () => {
    const { store, controller } = setup({ token: { holder: "replica-a", transitions: 3 } });
    await controller.tick();
    expect(storedDecision(store)).toMatchObject({
      vector: { server: 2 },
      leader: { holder: "replica-a", transitions: 3 },
    });
  });

  it("without leader election, decisions carry no token", async () => {
    const { store, controller } = setup();
    await controller.tick();
    expect(storedDecision(store)).toBeDefined();
    expect(storedDecision(store)).not.toHaveProperty("leader");
  });

  it("a write refused for lost leadership ends the pass: nothing written, no error counted, one log line", async () => {
    const { store, controller, metrics, lines } = setup({ token: { holder: "replica-a", transitions: 3 } });
    store.refuseWrites = new NotLeaderError("replica replica-a stepped down");
    const passed = await controller.tick();
    expect(passed).toEqual([]);
    expect(store.targetPatches).toEqual([]);
    expect(store.statusWrites).toEqual([]);
    expect(await errorCount(metrics, "reconcile")).toBe(0);
    expect(lines.filter((l) => l.includes("leadership lost during the pass"))).toHaveLength(1);
  });

  it("a commit refused for lost leadership is no failed commit: nothing sent, not counted", async () => {
    const world = setup({ token: { holder: "replica-a", transitions: 3 } });
    await world.controller.tick();
    world.mirror();
    const patches = world.store.targetPatches.length;
    expect(patches).toBeGreaterThan(0);
    // More demand: the next pass plans a commit, and its write is refused before it is sent.
    world.demand(64);
    world.advance(5_000);
    world.store.refuseWrites = new NotLeaderError("replica replica-a stepped down");
    expect(await world.controller.tick()).toEqual([]);
    expect(world.store.targetPatches).toHaveLength(patches);
    expect(await world.metrics.registry.getSingleMetricAsString("mds_commit_failures_total")).not.toMatch(/\} [1-9]/);
    expect(await errorCount(world.metrics, "reconcile")).toBe(0);
  });

  it("a status write that lost a version race is not forced; the next pass writes it even if nothing moved", async () => {
    /** Six passes, 5 s apart, the reconciler admitting at once; which of them wrote status. */
    const run = async (raceAt?: number) => {
      const world = setup();
      const wrote: boolean[] = [];
      for (let pass = 0; pass < 6; pass++) {
        if (pass === raceAt) world.store.inject("writeScalerStatus", key, "conflict");
        const before = world.store.statusWrites.length;
        await world.controller.tick();
        wrote.push(world.store.statusWrites.length > before);
        world.mirror();
        world.advance(5_000);
      }
      return { world, wrote };
    };
    // Without a race: a pass that writes, followed by a steady pass that writes nothing (a steady scaler is silent).
    const calm = await run();
    const racePass = calm.wrote.findIndex((w, i) => w && calm.wrote[i + 1] === false);
    expect(racePass).toBeGreaterThanOrEqual(0);

    // The same passes, with a user's edit of the scaler between that pass's list and its status write.
    const raced = await run(racePass);
    expect(raced.wrote[racePass]).toBe(false);
    expect(await errorCount(raced.world.metrics, "conflict")).toBe(1);
    // The next pass, from a fresh list, writes what the race lost, although nothing moved since.
    expect(raced.wrote[racePass + 1]).toBe(true);
    expect(raced.world.store.statusWrites).toHaveLength(calm.world.store.statusWrites.length);
    expect(raced.world.store.scalers.get(key)?.status).toMatchObject({
      lastCommit: (calm.world.store.scalers.get(key)?.status as { lastCommit: unknown }).lastCommit,
    });
  });
});
