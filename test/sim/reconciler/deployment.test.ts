import { describe, expect, it } from "vitest";
import { ModelDeploymentSchema, type ModelDeployment } from "../../../src/core/api/model-deployment.js";
import { EngineFleet } from "../../../src/sim/engines/engine-fleet.js";
import {
  DeploymentSim,
  newControls,
  parseRetry,
  retirementRetryAnnotation,
  type DeploymentControls,
  type ReconcilerEvent,
  type ReconcilerTimings,
  type StepEnvironment,
} from "../../../src/sim/reconciler/deployment.js";
import { ManualClock } from "../../../src/sim/reconciler/clock.js";
import { EngineFleetPort, RecordingFleet } from "../../../src/sim/reconciler/fleet-port.js";

// The simulation without an API server: every status is taken as written at
// once, and time moves only when the test says so.

const timings: ReconcilerTimings = {
  coldStartMs: 1_000,
  admitMs: 10,
  withdrawMs: 10,
  drainMs: 100,
  deleteMs: 10,
  settleMs: 10,
};

function deployment(
  replicas: Record<string, number>,
  annotations?: Record<string, string>,
  uid = "uid-1",
): ModelDeployment {
  return ModelDeploymentSchema.parse({
    apiVersion: "worker.gpustack.ai/v1",
    kind: "ModelDeployment",
    metadata: {
      name: "llm",
      namespace: "ns",
      uid,
      generation: 1,
      ...(annotations !== undefined ? { annotations } : {}),
    },
    spec: {
      engine: { name: "SGLang" },
      roles: Object.entries(replicas).map(([name, count]) => ({
        name,
        kind: name === "server" ? "Server" : name === "encode" ? "Encode" : "Decode",
        replicas: count,
        instanceType: "h100",
      })),
    },
  });
}

class Harness {
  readonly sim = new DeploymentSim("ns", "llm");
  readonly events: ReconcilerEvent[] = [];
  readonly errors: Error[] = [];
  controls: DeploymentControls = newControls();

  constructor(
    readonly clock: ManualClock,
    readonly fleet: RecordingFleet | EngineFleetPort = new RecordingFleet(),
  ) {}

  /** Steps until nothing is due now, writing every status. */
  async step(md: ModelDeployment, requests: { abort?: boolean; clear?: boolean } = {}): Promise<void> {
    let first = true;
    for (;;) {
      const env: StepEnvironment = {
        nowMs: this.clock.nowMs(),
        timings,
        controls: this.controls,
        requests: { abort: first && (requests.abort ?? false), clear: first && (requests.clear ?? false) },
        fleet: this.fleet,
        onEvent: (event) => this.events.push(event),
        onError: (error) => this.errors.push(error),
      };
      first = false;
      await this.sim.step(md, env);
      this.sim.markWritten(JSON.stringify(this.sim.status(md)));
      if (this.sim.nextDueMs(timings) > this.clock.nowMs()) return;
    }
  }

  /** Advances time in small steps, stepping the simulation at each. */
  async run(md: ModelDeployment, forMs: number, tickMs = 5): Promise<void> {
    for (let t = 0; t < forMs; t += tickMs) {
      this.clock.advance(tickMs);
      await this.step(md);
    }
  }

  counts(md: ModelDeployment, role: string): string {
    const s = this.sim.status(md).roles.find((r) => r.name === role);
    return `${s?.desired}/${s?.ready}/${s?.quotaReserved}`;
  }

  retirementStates(): string[] {
    return this.events.flatMap((e) => (e.type === "Retirement" ? [`${e.role}/${e.ordinal}:${e.state}`] : []));
  }
}

describe("DeploymentSim", () => {
  it("drops replicas that never served at once when the spec shrinks, without a retirement", async () => {
    const h = new Harness(new ManualClock());
    await h.step(deployment({ server: 1 }));
    await h.run(deployment({ server: 1 }), 1_000);
    h.controls.quotaLimits.set("server", 2);
    await h.step(deployment({ server: 3 }));
    // Ordinal 1 holds quota and cold-starts, ordinal 2 waits for quota.
    expect(h.sim.snapshot().roles["server"]?.map((r) => r.phase)).toEqual(["Running", "Starting", "Pending"]);
    expect(h.counts(deployment({ server: 3 }), "server")).toBe("3/1/2");

    await h.step(deployment({ server: 1 }));
    expect(h.sim.snapshot().roles["server"]?.map((r) => r.phase)).toEqual(["Running"]);
    expect(h.counts(deployment({ server: 1 }), "server")).toBe("1/1/1");
    expect(h.sim.snapshot().retirement).toBeUndefined();
    expect(h.events.filter((e) => e.type === "ReplicaCancelled").map((e) => ("ordinal" in e ? e.ordinal : -1))).toEqual(
      [1, 2],
    );
  });

  it("moves a retirement on only after its state has been written", async () => {
    const clock = new ManualClock();
    const h = new Harness(clock);
    await h.step(deployment({ server: 2 }));
    await h.run(deployment({ server: 2 }), 1_000);
    const shrunk = deployment({ server: 1 });
    // A step without a write: the retirement is admitted and stays so however long it waits.
    await h.sim.step(shrunk, {
      nowMs: clock.nowMs(),
      timings,
      controls: h.controls,
      requests: { abort: false, clear: false },
      fleet: h.fleet,
      onEvent: () => undefined,
      onError: () => undefined,
    });
    expect(h.sim.nextDueMs(timings)).toBe(Infinity);
    clock.advance(10_000);
    expect(h.sim.snapshot().retirement?.state).toBe("Admitted");
    await h.step(shrunk);
    await h.run(shrunk, 500);
    expect(h.sim.snapshot().retirement).toBeUndefined();
    expect(h.counts(shrunk, "server")).toBe("1/1/1");
  });

  it("keeps a retiring replica the spec declares again before delete, and waits out one already being deleted", async () => {
    const h = new Harness(new ManualClock());
    const fleet = h.fleet as RecordingFleet;
    await h.step(deployment({ server: 2 }));
    await h.run(deployment({ server: 2 }), 1_000);

    // Re-declared while draining: adopted, never stopped.
    await h.step(deployment({ server: 1 }));
    await h.run(deployment({ server: 1 }), 30);
    expect(h.sim.snapshot().retirement?.state).toBe("Draining");
    await h.step(deployment({ server: 2 }));
    expect(h.sim.snapshot().retirement).toBeUndefined();
    expect(fleet.runningOrdinals("ns", "llm", "server")).toEqual([0, 1]);

    // Re-declared while deleting: the ordinal comes back only after the retirement, through a cold start.
    await h.step(deployment({ server: 1 }));
    await h.run(deployment({ server: 1 }), 125);
    expect(h.sim.snapshot().retirement?.state).toBe("Deleting");
    await h.step(deployment({ server: 2 }));
    expect(h.sim.snapshot().roles["server"]?.map((r) => r.ordinal)).toEqual([0]);
    await h.run(deployment({ server: 2 }), 30);
    expect(h.sim.snapshot().retirement).toBeUndefined();
    expect(h.sim.snapshot().roles["server"]?.map((r) => r.phase)).toEqual(["Running", "Starting"]);
    await h.run(deployment({ server: 2 }), 1_000);
    expect(fleet.events.filter((e) => e.ordinal === 1).map((e) => e.action)).toEqual(["start", "stop", "start"]);
  });

  it("ignores an abort once the replica is being deleted, and keeps an aborted replica until a new retry token", async () => {
    const h = new Harness(new ManualClock());
    const fleet = h.fleet as RecordingFleet;
    await h.step(deployment({ server: 3 }));
    await h.run(deployment({ server: 3 }), 1_000);

    await h.step(deployment({ server: 2 }));
    await h.run(deployment({ server: 2 }), 125);
    expect(h.sim.snapshot().retirement?.state).toBe("Deleting");
    await h.step(deployment({ server: 2 }), { abort: true });
    expect(h.sim.snapshot().retirement?.state).not.toBe("Aborted");
    await h.run(deployment({ server: 2 }), 50);
    expect(fleet.runningOrdinals("ns", "llm", "server")).toEqual([0, 1]);

    h.controls.abortRetirements = true;
    await h.step(deployment({ server: 1 }));
    await h.run(deployment({ server: 1 }), 500);
    expect(h.sim.snapshot().retirement).toMatchObject({ roleName: "server", replicaOrdinal: 1, state: "Aborted" });
    expect(h.counts(deployment({ server: 1 }), "server")).toBe("1/2/2");

    // The same token twice runs the retry once; a token for another ordinal does nothing.
    h.controls.abortRetirements = false;
    await h.step(deployment({ server: 1 }, { [retirementRetryAnnotation]: "server:2:x" }));
    expect(h.sim.snapshot().retirement?.state).toBe("Aborted");
    const retried = deployment({ server: 1 }, { [retirementRetryAnnotation]: "server:1:t1" });
    await h.step(retried);
    expect(h.sim.snapshot().retirement).toMatchObject({ state: "Admitted", lastConsumedRetryToken: "t1" });
    await h.run(retried, 500);
    expect(h.sim.snapshot().retirement).toBeUndefined();
    expect(fleet.runningOrdinals("ns", "llm", "server")).toEqual([0]);
  });

  it("writes every retirement key, null when unset, so a merge patch leaves nothing stale", async () => {
    const h = new Harness(new ManualClock(Date.parse("2026-03-01T00:00:00Z")));
    await h.step(deployment({ server: 2 }));
    await h.run(deployment({ server: 2 }), 1_000);
    await h.step(deployment({ server: 1 }));
    const retirement = h.sim.status(deployment({ server: 1 })).retirement;
    expect(retirement).toEqual({
      roleName: "server",
      replicaOrdinal: 1,
      state: "Admitted",
      reason: expect.stringContaining("reduced to 1") as unknown as string,
      startedAt: "2026-03-01T00:00:01.000Z",
      phaseStartedAt: "2026-03-01T00:00:01.000Z",
      observedGeneration: 1,
      lastConsumedRetryToken: null,
    });
  });

  it("starts a new deployment from nothing when the object is replaced under the same name", async () => {
    const h = new Harness(new ManualClock());
    const fleet = h.fleet as RecordingFleet;
    await h.step(deployment({ server: 2 }));
    await h.run(deployment({ server: 2 }), 1_000);
    await h.step(deployment({ server: 1 }, undefined, "uid-2"));
    expect(h.sim.snapshot()).toMatchObject({ uid: "uid-2", retirement: undefined });
    expect(fleet.runningOrdinals("ns", "llm", "server")).toEqual([]);
    expect(h.counts(deployment({ server: 1 }, undefined, "uid-2"), "server")).toBe("1/0/1");
  });

  it("runs replicas as engine pods through the fleet adapter; Encode roles have none", async () => {
    const fleet = new EngineFleet({ startSeconds: 0 });
    const h = new Harness(new ManualClock(), new EngineFleetPort(fleet));
    const md = deployment({ encode: 1, decode: 2 });
    await h.step(md);
    await h.run(md, 1_000);
    expect(h.errors).toEqual([]);
    expect(h.counts(md, "decode")).toBe("2/2/2");
    expect(h.counts(md, "encode")).toBe("1/1/1");
    expect(
      fleet
        .listPods()
        .map((p) => `${p.name} ${p.engine} ${p.phase}`)
        .sort(),
    ).toEqual(["llm-decode-0 sglang Ready", "llm-decode-1 sglang Ready"]);

    await h.step(deployment({ encode: 1, decode: 1 }));
    await h.run(deployment({ encode: 1, decode: 1 }), 500);
    expect(fleet.listPods().map((p) => p.name)).toEqual(["llm-decode-0"]);
  });
});

describe("parseRetry", () => {
  it("reads role, ordinal and a token that may contain colons", () => {
    expect(parseRetry("decode:3:a:b")).toEqual({ roleName: "decode", replicaOrdinal: 3, token: "a:b" });
    expect(parseRetry("decode:x:t")).toBeUndefined();
    expect(parseRetry("decode:1:")).toBeUndefined();
    expect(parseRetry(undefined)).toBeUndefined();
  });
});

describe("ManualClock", () => {
  it("fires due timers in time order, and cancelled ones never", () => {
    const clock = new ManualClock(100);
    const fired: string[] = [];
    clock.schedule(30, () => fired.push(`b@${clock.nowMs()}`));
    clock.schedule(10, () => fired.push(`a@${clock.nowMs()}`));
    const cancel = clock.schedule(20, () => fired.push("cancelled"));
    cancel();
    clock.advance(25);
    expect(fired).toEqual(["a@110"]);
    clock.advance(100);
    expect(fired).toEqual(["a@110", "b@130"]);
    expect(clock.nowMs()).toBe(225);
    expect(clock.pendingTimers).toBe(0);
  });
});
