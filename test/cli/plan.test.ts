import { readFileSync } from "node:fs";
import { parse } from "yaml";
import { describe, expect, it } from "vitest";
import { runPlan } from "../../src/cli/plan.js";
import type { CliIo } from "../../src/cli/io.js";
import { decisionAnnotation } from "../../src/core/api/model-deployment.js";
import type { ScalerStatus } from "../../src/core/api/scaler.js";
import { echo } from "../core/planner/fixtures.js";
import { Timeline } from "./plan-timeline.js";

const start = Date.parse("2026-11-29T12:00:00Z");

function io(input: string): CliIo & { out: () => string; err: () => string } {
  let out = "";
  let err = "";
  return {
    stdout: (t) => void (out += t),
    stderr: (t) => void (err += t),
    readFile: (path) => {
      if (path === "-" || path === "input.yaml") return input;
      throw new Error(`ENOENT: no such file ${path}`);
    },
    out: () => out,
    err: () => err,
  };
}

const example = `
now: "2026-11-29T12:00:00Z"
scaler:
  apiVersion: worker.gpustack.ai/v1
  kind: ModelDeploymentScaler
  metadata: { name: llm, namespace: default, uid: scaler-uid, generation: 1 }
  spec:
    targetRef: { name: llm }
    mode: Active
    roles: [{ name: server, minReplicas: 2, maxReplicas: 16 }]
    algorithm:
      type: Proportional
      proportional: { metric: QueueDepth, roleTargets: [{ name: server, target: "8" }] }
target:
  apiVersion: worker.gpustack.ai/v1
  kind: ModelDeployment
  metadata: { name: llm, namespace: default, uid: target-uid, generation: 3, resourceVersion: "1041" }
  spec: { roles: [{ name: server, kind: Server, replicas: 2, instanceType: h100 }] }
  status: { roles: [{ name: server, desired: 2, ready: 2, quotaReserved: 2 }] }
observations:
  server: { readyReplicas: 2, sampledReplicas: 2, signalState: Fresh, runningRequests: 30, waitingRequests: 10 }
`;

describe("mds-scaler plan", () => {
  it("prints {status, commit} as YAML by default and JSON with -o json", () => {
    const yamlIo = io(example);
    expect(runPlan(["-f", "input.yaml"], yamlIo)).toBe(0);
    const fromYaml = parse(yamlIo.out()) as { commit: { vector: Record<string, number> } };
    expect(fromYaml.commit.vector).toEqual({ server: 5 });
    const jsonIo = io(example);
    expect(runPlan(["-f", "-", "-o", "json"], jsonIo)).toBe(0);
    expect(JSON.parse(jsonIo.out())).toEqual(fromYaml);
  });

  it("the worked example in docs/plan.md still produces its documented output", () => {
    const input = readFileSync(new URL("../../docs/examples/plan-input.yaml", import.meta.url), "utf8");
    const doc = readFileSync(new URL("../../docs/plan.md", import.meta.url), "utf8");
    const run = io(input);
    expect(runPlan(["-f", "-"], run)).toBe(0);
    expect(doc).toContain(run.out());
  });

  it("a specification-shaped document, without any extension field, gets the specification's answer", () => {
    const input = readFileSync(new URL("../../docs/examples/plan-spec-shaped.yaml", import.meta.url), "utf8");
    const doc = parse(input) as {
      scaler: { status: ScalerStatus & Record<string, unknown> };
      target: { metadata: { annotations: Record<string, string> } };
    };
    // The example carries no extension (docs/reference.md, Extensions).
    expect(doc.scaler.status).not.toHaveProperty("lastPassTime");
    expect(doc.scaler.status).not.toHaveProperty("predictors");
    const decision = JSON.parse(doc.target.metadata.annotations[decisionAnnotation] as string) as object;
    expect(Object.keys(decision).sort()).toEqual(["decisionID", "term", "vector"]);

    const run = io(input);
    expect(runPlan(["-f", "-", "-o", "json"], run)).toBe(0);
    const out = JSON.parse(run.out()) as {
      status: ScalerStatus;
      commit: { vector: Record<string, number> } | null;
    };
    const roles = Object.fromEntries(
      (out.status.roles ?? []).map((r) => [r.name, [r.rawRecommendedReplicas, r.constrainedReplicas, r.reason]]),
    );
    expect(roles).toEqual({
      chat: [3, 5, "ScaleDownStabilization"], // the window's highest is 5; the 7 is older than the window
      rerank: [2, 6, "ScaleDownLimit"], // the window wanted 2 throughout; the Pods policy removes 4
      summarize: [6, 4, "ScaleUpStabilization"], // the 60 s window's lowest is 4
      embed: [12, 6, "ScaleUpLimit"], // max(4, 100% of 2) = 4 more
      extract: [4, 4, "WithinTolerance"], // 34 / 4 / 8 = 1.06, inside 0.1
    });
    expect(out.commit?.vector).toEqual({ chat: 5, rerank: 6, summarize: 4, embed: 6, extract: 4 });
  });

  it("prints commit: null when nothing is written", () => {
    const shadow = io(example.replace("mode: Active", "mode: Shadow"));
    expect(runPlan(["-f", "-", "-o", "json"], shadow)).toBe(0);
    const out = JSON.parse(shadow.out()) as { commit: unknown; status: { roles: { constrainedReplicas: number }[] } };
    expect(out.commit).toBeNull();
    expect(out.status.roles[0]?.constrainedReplicas).toBe(5);
  });

  it("a blocked plan is an ordinary result (exit 0)", () => {
    const conflict = io(example.replace("replicas: 2, instanceType", "replicas: 20, instanceType"));
    expect(runPlan(["-f", "-", "-o", "json"], conflict)).toBe(0);
    const out = JSON.parse(conflict.out()) as {
      commit: unknown;
      status: { conditions: { type: string; reason: string }[] };
    };
    expect(out.commit).toBeNull();
    expect(out.status.conditions.find((c) => c.type === "Blocked")?.reason).toBe("BoundsConflict");
  });

  it.each([
    {
      why: "a spec field",
      edit: (t: string) => t.replace("maxReplicas: 16", "maxReplicas: 0"),
      field: "scaler.spec.roles[0].maxReplicas",
    },
    {
      why: "an observation field",
      edit: (t: string) => t.replace("readyReplicas: 2, sampledReplicas", "readyReplicas: -1, sampledReplicas"),
      field: "observations.server.readyReplicas",
    },
    { why: "the time", edit: (t: string) => t.replace('now: "2026-11-29T12:00:00Z"', "now: yesterday"), field: "now" },
    {
      why: "a target field",
      edit: (t: string) => t.replace("replicas: 2, instanceType", "replicas: two, instanceType"),
      field: "target.spec.roles[0].replicas",
    },
  ])("invalid input exits 1 naming $why", ({ edit, field }) => {
    const bad = io(edit(example));
    expect(runPlan(["-f", "-"], bad)).toBe(1);
    expect(bad.err()).toContain(field);
    expect(bad.out()).toBe("");
  });

  describe("reads the pass as the controller's flags of the same names say", () => {
    /** Light demand (one replica's worth of four), TTFT 1,000 ms against 500 ms, 100 ms of it waiting. */
    const computeBound = example
      .replace(
        'algorithm:\n      type: Proportional\n      proportional: { metric: QueueDepth, roleTargets: [{ name: server, target: "8" }] }',
        'algorithm:\n      type: TokenThroughput\n      tokenThroughput: { serverTargetTokensPerSecond: "2000", panicWindowSeconds: 15 }',
      )
      .replace("minReplicas: 2", "minReplicas: 1")
      .replaceAll("replicas: 2, instanceType", "replicas: 4, instanceType")
      .replace("desired: 2, ready: 2, quotaReserved: 2", "desired: 4, ready: 4, quotaReserved: 4")
      .replace(
        "{ readyReplicas: 2, sampledReplicas: 2, signalState: Fresh, runningRequests: 30, waitingRequests: 10 }",
        "{ readyReplicas: 4, sampledReplicas: 4, signalState: Fresh, promptTokensPerSecond: 1000, panicPromptTokensPerSecond: 1000, generationTokensPerSecond: 100, panicGenerationTokensPerSecond: 100, ttftMilliseconds: 1000, itlMilliseconds: 20, queueTimeMilliseconds: 100 }",
      );
    const passOf = (args: string[]) => {
      const run = io(computeBound);
      expect(runPlan(["-f", "-", "-o", "json", ...args], run), run.err()).toBe(0);
      const status = (JSON.parse(run.out()) as { status: ScalerStatus }).status;
      return { role: status.roles?.[0], metricsReady: status.conditions?.find((c) => c.type === "MetricsReady") };
    };

    it("--latency-guard-reading: queueing by default holds on a compute-bound TTFT, literal grows", () => {
      for (const args of [[], ["--latency-guard-reading", "queueing"]]) {
        const { role } = passOf(args);
        expect(role?.rawRecommendedReplicas).toBe(1);
        expect(role?.latencyGuard).toMatch(/^queueing: /);
      }
      const { role } = passOf(["--latency-guard-reading", "literal"]);
      expect(role?.rawRecommendedReplicas).toBe(5);
      expect(role?.reason).toBe("LatencyGuardScaleUp");
      expect(role?.latencyGuard).toMatch(/^literal/);
    });

    it("--engine-scrape-interval: 15 s by default names the 15 s panic window that reads nothing; 5 s does not", () => {
      const warning = "spec.algorithm.tokenThroughput.panicWindowSeconds = 15";
      expect(passOf([]).metricsReady?.message).toContain(warning);
      expect(passOf(["--engine-scrape-interval", "15s"]).metricsReady?.message).toContain(warning);
      expect(passOf(["--engine-scrape-interval", "5s"]).metricsReady?.message).not.toContain(warning);
    });

    it.each([
      { args: ["--latency-guard-reading", "strict"], says: '--latency-guard-reading: "strict" is not one of' },
      { args: ["--engine-scrape-interval", "15"], says: '--engine-scrape-interval: "15" is not a Prometheus duration' },
    ])("a bad value of $args.0 exits 2 naming the flag and the value", ({ args, says }) => {
      const run = io(computeBound);
      expect(runPlan(["-f", "-", ...args], run)).toBe(2);
      expect(run.err()).toContain(says);
      expect(run.out()).toBe("");
    });
  });

  it.each([
    { args: [], code: 2 },
    { args: ["-f"], code: 2 },
    { args: ["-f", "-", "-o", "xml"], code: 2 },
    { args: ["--bogus"], code: 2 },
    { args: ["-h"], code: 0 },
    { args: ["-f", "missing.yaml"], code: 1 },
  ])("arguments $args exit $code", ({ args, code }) => {
    expect(runPlan(args, io(example))).toBe(code);
  });
});

const roleOf = (status: ScalerStatus, name: string) => status.roles?.find((r) => r.name === name);
const blocked = (status: ScalerStatus) => status.conditions?.find((c) => c.type === "Blocked");

describe("timelines through mds-scaler plan", () => {
  it("paced scale-up with the Proportional algorithm, then steady", () => {
    const t = new Timeline(
      {
        targetRef: { name: "llm" },
        mode: "Active",
        roles: [{ name: "server", minReplicas: 2, maxReplicas: 24 }],
        algorithm: {
          type: "Proportional",
          proportional: { metric: "QueueDepth", roleTargets: [{ name: "server", target: "8" }] },
        },
      },
      [{ name: "server", replicas: 2 }],
      start,
    );
    // 160 queued requests over a target of 8 per replica: 20 replicas wanted.
    const load = { runningRequests: 120, waitingRequests: 40 };
    const seen: number[] = [];
    for (let pass = 0; pass < 10; pass++) {
      const out = t.pass(pass * 15, { server: load });
      seen.push(t.replicas().server ?? 0);
      t.admit("server"); // the reconciler admits and readies what was committed
      if (pass === 0) {
        expect(roleOf(out.status, "server")).toMatchObject({ constrainedReplicas: 6, reason: "ScaleUpLimit" });
        expect(blocked(out.status)).toMatchObject({ status: "True", reason: "PacingBounded" });
      }
    }
    // max(4, 100%) per pass: 2 -> 6 -> 12 -> 20, then steady.
    expect(seen).toEqual([6, 12, 20, 20, 20, 20, 20, 20, 20, 20]);
    const last = t.passes.at(-1);
    expect(last?.commit).toBeNull();
    expect(blocked(last?.status ?? {})).toMatchObject({ status: "False", reason: "Ready" });
    // Decision IDs are reproducible: replaying the same first pass yields the same ID.
    const replay = new Timeline(t.spec, [{ name: "server", replicas: 2 }], start);
    expect(replay.pass(0, { server: load }).commit?.decision.decisionID).toBe(t.passes[0]?.commit?.decision.decisionID);
  });

  it("both stabilization windows", () => {
    const t = new Timeline(
      {
        targetRef: { name: "llm" },
        mode: "Active",
        roles: [{ name: "s", minReplicas: 1, maxReplicas: 16 }],
        behavior: { scaleUp: { stabilizationWindowSeconds: 60 }, scaleDown: { stabilizationWindowSeconds: 120 } },
      },
      [{ name: "s", replicas: 2 }],
      start,
      echo,
    );
    const wants = [8, 8, 8, 6, 8, 8, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2];
    const counts: number[] = [];
    wants.forEach((w, i) => {
      t.pass(i * 15, { s: { runningRequests: w } });
      t.admit("s");
      counts.push(t.replicas().s ?? 0);
    });
    // Up: growth waits for 60 s of history (t=60), then takes the lowest wish in the window (6 at t=45).
    // Down: the first wish of 2 at t=90; the floor stays 8 until the last 8 (t=75) leaves the 120 s window (t=195),
    // then one replica per pass.
    expect(counts).toEqual([2, 2, 2, 2, 6, 6, 6, 6, 6, 6, 6, 6, 6, 6, 5, 4]);
    expect(roleOf(t.passes[1]?.status ?? {}, "s")?.reason).toBe("ScaleUpStabilization");
    expect(roleOf(t.passes[8]?.status ?? {}, "s")?.reason).toBe("ScaleDownStabilization");
  });

  it("rollback after the pending timeout, then an Opposing rebalance", () => {
    const t = new Timeline(
      {
        targetRef: { name: "llm" },
        mode: "Active",
        sampling: { intervalSeconds: 15, pendingTimeoutSeconds: 60 },
        roles: [
          { name: "prefill", minReplicas: 1, maxReplicas: 8 },
          { name: "decode", minReplicas: 1, maxReplicas: 8 },
        ],
        behavior: { scaleDown: { stabilizationWindowSeconds: 600 } },
        rebalance: { policy: "Opposing" },
      },
      [
        { name: "prefill", kind: "Prefill", replicas: 2, instanceType: "h100" },
        { name: "decode", kind: "Decode", replicas: 3, instanceType: "h100" },
      ],
      start,
      echo,
    );
    const obs = { prefill: { runningRequests: 4 }, decode: { runningRequests: 2 } };
    // t=0: prefill grows to 4; the pool has no room, so admission never comes.
    expect(t.pass(0, obs).commit?.vector).toEqual({ prefill: 4, decode: 3 });
    for (const at of [15, 30, 45]) {
      const held = t.pass(at, obs);
      expect(held.commit).toBeNull();
      expect(held.status.pendingCohort?.targetVector).toEqual({ prefill: 4, decode: 3 });
    }
    // t=60: the whole cohort goes back to its baseline in one write.
    const rolled = t.pass(60, obs);
    expect(rolled.commit).toMatchObject({ vector: { prefill: 2, decode: 3 }, reason: "ResourceExhausted" });
    expect(blocked(rolled.status)).toMatchObject({ reason: "ResourceExhausted" });
    t.admit("prefill", 2);
    // t=75: decode wants to shrink and shares the pool: it donates first (donor -1).
    const donor = t.pass(75, obs);
    expect(donor.commit).toMatchObject({ vector: { prefill: 2, decode: 2 }, reason: "DonorRelease" });
    expect(donor.status.rebalance).toMatchObject({
      receiverRole: "prefill",
      donorRole: "decode",
      donorTargetReplicas: 2,
      receiverTargetReplicas: 3,
      donationAttempted: true,
      reason: "DonorRelease",
    });
    t.retirement = { roleName: "decode", replicaOrdinal: 2, state: "Draining" };
    // t=90: the receiver waits for the donor's retirement; nothing else moves.
    const waiting = t.pass(90, obs);
    expect(waiting.commit).toBeNull();
    expect(roleOf(waiting.status, "prefill")?.constrainedReplicas).toBe(2);
    t.retirement = { roleName: "decode", replicaOrdinal: 2, state: "Completed" };
    // t=105: retirement completed but the donor's workload still holds quota.
    expect(t.pass(105, obs).commit).toBeNull();
    t.admit("decode", 2);
    // t=120: the donor's replica is gone: receiver +1.
    const receiver = t.pass(120, obs);
    expect(receiver.commit).toMatchObject({ vector: { prefill: 3, decode: 2 }, reason: "ReceiverAcquire" });
    expect(receiver.status.rebalance?.reason).toBe("ReceiverAcquire");
    expect(receiver.status.pendingCohort?.targetVector).toEqual({ prefill: 3, decode: 2 });
    t.admit("prefill", 3);
    // t=135: admitted; prefill still wants 4 and grows again as an ordinary scale-up.
    const after = t.pass(135, obs);
    expect(after.status.pendingCohort?.targetVector).toEqual({ prefill: 4, decode: 2 });
    expect(t.passes.length).toBeGreaterThanOrEqual(10);
  });

  it("an aborted scale-down is restored and cools down", () => {
    const t = new Timeline(
      {
        targetRef: { name: "llm" },
        mode: "Active",
        roles: [{ name: "s", minReplicas: 1, maxReplicas: 8 }],
        behavior: { scaleDown: { stabilizationWindowSeconds: 30, cooldownAfterAbortSeconds: 60 } },
      },
      [{ name: "s", replicas: 4 }],
      start,
      echo,
    );
    const obs = { s: { runningRequests: 2 } };
    expect(t.pass(0, obs).commit).toBeNull(); // history does not span the window yet
    expect(t.pass(15, obs).commit).toBeNull();
    const down = t.pass(30, obs);
    expect(down.commit?.vector).toEqual({ s: 3 });
    expect(down.status.lastScaleDown).toMatchObject({
      role: "s",
      ordinal: 3,
      preScaleDownVector: { s: 4 },
      outcome: "Committed",
    });
    t.retirement = { roleName: "s", replicaOrdinal: 3, state: "Draining" };
    expect(roleOf(t.pass(45, obs).status, "s")?.reason).toBe("RetirementActive");
    t.retirement = { roleName: "s", replicaOrdinal: 3, state: "Aborted" };
    const restored = t.pass(60, obs);
    expect(restored.commit).toMatchObject({ vector: { s: 4 }, reason: "ScaleDownAborted" });
    expect(restored.status.lastScaleDown).toMatchObject({
      outcome: "Aborted",
      cooldownUntil: new Date(start + 120_000).toISOString(),
    });
    expect(blocked(restored.status)?.reason).toBe("ScaleDownAborted");
    for (const at of [75, 90, 105]) {
      const cooling = t.pass(at, obs);
      expect(cooling.commit).toBeNull();
      expect(roleOf(cooling.status, "s")?.reason).toBe("AbortCooldown");
      expect(blocked(cooling.status)?.reason).toBe("ScaleDownAborted");
    }
    // The aborted retirement stays on the target (terminal) but no longer blocks; the cooldown ends at t=120.
    const again = t.pass(120, obs);
    expect(again.commit?.vector).toEqual({ s: 3 });
    expect(again.status.lastScaleDown?.outcome).toBe("Committed");
    // This time the retirement completes, and the next replica goes one pass later.
    t.retirement = { roleName: "s", replicaOrdinal: 3, state: "Completed" };
    t.admit("s", 3);
    expect(t.pass(135, obs).commit?.vector).toEqual({ s: 2 });
    expect(t.passes.length).toBeGreaterThanOrEqual(10);
  });

  it("ratio-coupled encode, prefill and decode move as one vector", () => {
    const t = new Timeline(
      {
        targetRef: { name: "llm" },
        mode: "Active",
        roles: [
          { name: "encode", minReplicas: 1, maxReplicas: 8 },
          { name: "prefill", minReplicas: 2, maxReplicas: 16 },
          { name: "decode", minReplicas: 2, maxReplicas: 16 },
        ],
        ratios: [
          { numeratorRole: "prefill", denominatorRole: "decode", target: "1", min: "0.5", max: "2" },
          { numeratorRole: "encode", denominatorRole: "prefill", target: "0.5", min: "0.25", max: "1" },
        ],
        behavior: {
          scaleUp: { stepPolicy: { type: "Pods", value: 2 } },
          scaleDown: { stabilizationWindowSeconds: 30 },
        },
      },
      [
        { name: "encode", kind: "Encode", replicas: 1 },
        { name: "prefill", kind: "Prefill", replicas: 2 },
        { name: "decode", kind: "Decode", replicas: 2 },
      ],
      start,
      echo,
    );
    const vectors: Record<string, number>[] = [];
    // Prefill demand climbs to 12 while decode wants 2 and encode 1: the bands drag both along.
    for (let pass = 0; pass < 8; pass++) {
      t.pass(pass * 15, {
        encode: { runningRequests: 1 },
        prefill: { runningRequests: 12 },
        decode: { runningRequests: 2 },
      });
      for (const r of ["encode", "prefill", "decode"]) t.admit(r);
      vectors.push(t.replicas());
    }
    for (const v of vectors) {
      const { encode = 0, prefill = 0, decode = 0 } = v;
      expect(prefill / decode).toBeGreaterThanOrEqual(0.5);
      expect(prefill / decode).toBeLessThanOrEqual(2);
      expect(encode / prefill).toBeGreaterThanOrEqual(0.25);
    }
    // Two replicas per pass for prefill; decode and encode follow the bands' edges.
    expect(vectors.slice(0, 6)).toEqual([
      { encode: 1, prefill: 4, decode: 2 },
      { encode: 2, prefill: 6, decode: 3 },
      { encode: 2, prefill: 8, decode: 4 },
      { encode: 3, prefill: 10, decode: 5 },
      { encode: 3, prefill: 12, decode: 6 },
      { encode: 3, prefill: 12, decode: 6 },
    ]);
    expect(roleOf(t.passes[1]?.status ?? {}, "decode")?.reason).toBe("RatioCoupled");
    // Demand falls: every role of the component shrinks together, never one up and one down.
    for (let pass = 8; pass < 14; pass++) {
      const out = t.pass(pass * 15, {
        encode: { runningRequests: 1 },
        prefill: { runningRequests: 2 },
        decode: { runningRequests: 2 },
      });
      for (const r of ["encode", "prefill", "decode"]) t.admit(r);
      if (out.commit !== null) {
        for (const role of ["encode", "prefill", "decode"])
          expect(out.commit.vector[role] ?? 0).toBeLessThanOrEqual(out.commit.baselineVector[role] ?? 0);
      }
    }
    expect(t.replicas().prefill).toBeLessThan(12);
  });
});
