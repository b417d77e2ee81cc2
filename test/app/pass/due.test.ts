/** Which listed scalers a tick passes (src/app/pass/due.ts) and the memory a pass starts from (memory.ts). */
import { describe, expect, it } from "vitest";
import { ScalerSchema, type Scaler } from "../../../src/core/api/scaler.js";
import { dueScalers, forgottenKeys } from "../../../src/app/pass/due.js";
import { memoryForPass, type ScalerMemory } from "../../../src/app/pass/memory.js";

const t0 = Date.parse("2026-12-07T12:00:00Z");

function scaler(name: string, extra: { uid?: string; deleting?: boolean; intervalSeconds?: number } = {}): Scaler {
  return ScalerSchema.parse({
    apiVersion: "worker.gpustack.ai/v1",
    kind: "ModelDeploymentScaler",
    metadata: {
      name,
      namespace: "llm",
      uid: extra.uid ?? `${name}-uid`,
      resourceVersion: "7",
      ...(extra.deleting === true ? { deletionTimestamp: "2026-12-07T11:59:00Z", finalizers: ["x"] } : {}),
    },
    spec: {
      targetRef: { name },
      mode: "Active",
      roles: [{ name: "server", minReplicas: 1, maxReplicas: 4 }],
      sampling: { intervalSeconds: extra.intervalSeconds ?? 15 },
      algorithm: {
        type: "Proportional",
        proportional: { metric: "RunningRequests", roleTargets: [{ name: "server", target: "1" }] },
      },
    },
  });
}

function remembered(uid: string, lastPassMs: number): Pick<ScalerMemory, "uid" | "lastPassMs"> {
  return { uid, lastPassMs };
}

describe("dueScalers", () => {
  it.each([
    ["a new scaler is due", undefined, t0, true],
    ["within its interval it is not", remembered("chat-uid", t0 - 14_999), t0, false],
    ["once its interval has passed it is", remembered("chat-uid", t0 - 15_000), t0, true],
    ["a recreated scaler (another uid) is due at once", remembered("old-uid", t0 - 1_000), t0, true],
  ])("%s", (_case, memory, nowMs, due) => {
    const chat = scaler("chat");
    const kept = new Map(memory === undefined ? [] : [["llm/chat", memory]]);
    expect(dueScalers({ scalers: [chat], memory: kept, running: new Set(), nowMs })).toEqual(due ? [chat] : []);
  });

  it("a scaler being deleted is due on every tick, so its finalizer comes off without waiting", () => {
    const chat = scaler("chat", { deleting: true });
    const kept = new Map([["llm/chat", remembered("chat-uid", t0 - 1_000)]]);
    expect(dueScalers({ scalers: [chat], memory: kept, running: new Set(), nowMs: t0 })).toEqual([chat]);
  });

  it("a scaler whose last pass still runs is skipped, due or not, and the others keep their order", () => {
    const [a, b, c] = [scaler("a"), scaler("b"), scaler("c")];
    const due = dueScalers({ scalers: [a, b, c], memory: new Map(), running: new Set(["llm/b"]), nowMs: t0 });
    expect(due.map((s) => s.metadata.name)).toEqual(["a", "c"]);
  });

  it("the interval is each scaler's own", () => {
    const [fast, slow] = [scaler("fast", { intervalSeconds: 5 }), scaler("slow", { intervalSeconds: 60 })];
    const kept = new Map([
      ["llm/fast", remembered("fast-uid", t0 - 10_000)],
      ["llm/slow", remembered("slow-uid", t0 - 10_000)],
    ]);
    expect(dueScalers({ scalers: [fast, slow], memory: kept, running: new Set(), nowMs: t0 })).toEqual([fast]);
  });
});

describe("forgottenKeys", () => {
  it("names the remembered scalers the list no longer holds", () => {
    expect(forgottenKeys(["llm/a", "llm/b", "ops/c"], new Set(["llm/b"]))).toEqual(["llm/a", "ops/c"]);
  });
});

describe("memoryForPass", () => {
  it("starts a new scaler's memory from the object's status and guards writes by its resourceVersion", () => {
    const memory = memoryForPass(undefined, scaler("chat"), t0);
    expect(memory).toEqual({
      status: undefined,
      lastPassMs: t0,
      uid: "chat-uid",
      unwritten: "Nothing",
      scalerVersion: "7",
    });
  });

  it("keeps what a pass left unwritten while the uid is the same, and drops it for a recreated scaler", () => {
    const kept: ScalerMemory = { status: undefined, lastPassMs: t0 - 15_000, uid: "chat-uid", unwritten: "Record" };
    expect(memoryForPass(kept, scaler("chat"), t0)).toMatchObject({ unwritten: "Record", lastPassMs: t0 });
    expect(memoryForPass(kept, scaler("chat", { uid: "new-uid" }), t0)).toMatchObject({
      unwritten: "Nothing",
      uid: "new-uid",
    });
  });
});

describe("one uid rule for due and memory", () => {
  it("a scaler without a uid (a hand-made object) waits for its interval like any other", () => {
    const bare = ScalerSchema.parse({ ...scaler("bare"), metadata: { name: "bare", namespace: "llm" } });
    const memory = memoryForPass(undefined, bare, t0);
    const kept = new Map([["llm/bare", memory]]);
    expect(dueScalers({ scalers: [bare], memory: kept, running: new Set(), nowMs: t0 + 1_000 })).toEqual([]);
    expect(dueScalers({ scalers: [bare], memory: kept, running: new Set(), nowMs: t0 + 15_000 })).toEqual([bare]);
  });
});
