/**
 * `plan()` over sequences of passes, each commit applied to the target as the
 * controller would: gaps in the recommendation history, holds for missing
 * signals, a component's direction, roles driven only by a ratio, and a scaled
 * role nothing drives.
 */
import { describe, expect, it } from "vitest";
import { plan } from "../../../src/core/planner/plan.js";
import type { ScalerSpec, ScalerStatus } from "../../../src/core/api/scaler.js";
import type { ModelDeployment } from "../../../src/core/api/model-deployment.js";
import type { PlanInput, PlanResult } from "../../../src/core/planner/types.js";
import type { RoleObservation } from "../../../src/core/signals/types.js";
import { condition, inputOf, roleOf, seconds, specOf, targetOf, want } from "./fixtures.js";

/** Runs passes and applies each commit to the target, as the controller would. */
class Run {
  status: ScalerStatus | undefined;
  replicas: Record<string, number>;
  readonly commits: { atSeconds: number; vector: Record<string, number> }[] = [];

  constructor(
    readonly spec: ScalerSpec,
    roles: Record<string, number>,
    readonly kinds: Record<string, "Server" | "Prefill" | "Decode" | "Encode"> = {},
    readonly registry = false,
  ) {
    this.replicas = { ...roles };
  }

  target(): ModelDeployment {
    return targetOf(
      Object.entries(this.replicas).map(([name, replicas]) => ({ name, replicas, kind: this.kinds[name] ?? "Server" })),
    );
  }

  pass(atSeconds: number, observations: Record<string, RoleObservation>): PlanResult {
    const input: PlanInput = inputOf({
      spec: this.spec,
      target: this.target(),
      observations,
      nowMs: seconds(atSeconds),
      ...(this.status === undefined ? {} : { status: this.status }),
    });
    const { algorithm: _echo, ...viaRegistry } = input;
    const result = plan(this.registry ? viaRegistry : input);
    this.status = result.status;
    if (result.commit !== undefined) {
      this.replicas = { ...this.replicas, ...result.commit.vector };
      this.commits.push({ atSeconds, vector: result.commit.vector });
    }
    return result;
  }

  /** Passes every `step` seconds over [from, to]. */
  passes(from: number, to: number, step: number, observations: (at: number) => Record<string, RoleObservation>): void {
    for (let at = from; at <= to; at += step) this.pass(at, observations(at));
  }
}

const missing = (ready = 4): RoleObservation => ({ readyReplicas: ready, sampledReplicas: 0, signalState: "Missing" });

const oneRole = specOf({
  roles: [{ name: "s", minReplicas: 1, maxReplicas: 16 }],
  behavior: { scaleDown: { stabilizationWindowSeconds: 300 } },
});

describe("a gap in the recommendation history restarts the scale-down window", () => {
  it("after an hour without passes, a dip in demand holds for the whole window", () => {
    const run = new Run(oneRole, { s: 4 });
    run.passes(0, 600, 15, () => ({ s: want(4, 4) }));
    expect(run.commits).toEqual([]);

    // The controller restarts an hour later; demand has dipped.
    const restart = 600 + 3600;
    const first = run.pass(restart, { s: want(2, 4) });
    expect(first.commit).toBeUndefined();
    expect(roleOf(first, "s").reason).toBe("ScaleDownStabilization");
    run.passes(restart + 15, restart + 285, 15, () => ({ s: want(2, 4) }));
    expect(run.commits).toEqual([]);
    // The window is spanned again 300 s after the restart: now it shrinks.
    run.pass(restart + 300, { s: want(2, 4) });
    expect(run.commits).toEqual([{ atSeconds: restart + 300, vector: { s: 3 } }]);
  });

  it("a pause of a few intervals is a gap; a late pass within it is not", () => {
    const run = new Run(oneRole, { s: 4 });
    run.passes(0, 300, 15, (at) => ({ s: want(at < 15 ? 4 : 2, 4) }));
    // 300 s of history at 2 after the 4 at t=0: the window is spanned at t=315.
    const late = run.pass(315 + 45, { s: want(2, 4) });
    expect(late.commit?.vector).toEqual({ s: 3 });

    const gapped = new Run(oneRole, { s: 4 });
    gapped.passes(0, 300, 15, (at) => ({ s: want(at < 15 ? 4 : 2, 4) }));
    // A pause longer than max(3 × 15 s, 60 s) breaks the history.
    const after = gapped.pass(300 + 61, { s: want(2, 4) });
    expect(after.commit).toBeUndefined();
    expect(roleOf(after, "s").reason).toBe("ScaleDownStabilization");
  });

  it("a suspended period is a gap: the window is spanned again after resuming", () => {
    const run = new Run(oneRole, { s: 4 });
    run.passes(0, 300, 15, () => ({ s: want(4, 4) }));
    const suspended = { ...oneRole, suspend: true };
    const paused = plan(
      inputOf({
        spec: suspended,
        target: run.target(),
        observations: {},
        nowMs: seconds(315),
        ...(run.status === undefined ? {} : { status: run.status }),
      }),
    );
    expect(condition(paused, "Active")).toMatchObject({ status: "False", reason: "Suspended" });
    run.status = paused.status;
    const resumed = run.pass(1200, { s: want(2, 4) });
    expect(resumed.commit).toBeUndefined();
    expect(roleOf(resumed, "s").reason).toBe("ScaleDownStabilization");
  });
});

describe("a pass that holds for missing signals is not a recommendation", () => {
  it("one Missing pass inside a falling window: scale-down proceeds on the next fresh pass", () => {
    const run = new Run(oneRole, { s: 4 });
    run.passes(0, 300, 15, () => ({ s: want(4, 4) }));
    run.passes(315, 585, 15, () => ({ s: want(2, 4) }));
    const held = run.pass(600, { s: missing() });
    expect(held.commit).toBeUndefined();
    // The window [315, 615] holds only recommendations of 2.
    const next = run.pass(615, { s: want(2, 4) });
    expect(next.commit?.vector).toEqual({ s: 3 });
  });

  it("a Stale pass does not block growth for a scale-up window", () => {
    const spec = specOf({
      roles: [{ name: "s", minReplicas: 1, maxReplicas: 16 }],
      behavior: { scaleUp: { stabilizationWindowSeconds: 60 } },
    });
    const run = new Run(spec, { s: 2 });
    run.passes(0, 45, 15, () => ({ s: want(4, 2) }));
    run.pass(60, { s: { ...want(1, 2), signalState: "Stale" } });
    // Before: the Stale pass recorded 2 (the held count) at t=60, so the window's lowest was 2 until t=120.
    const next = run.pass(75, { s: want(4, 2) });
    expect(next.commit?.vector).toEqual({ s: 4 });
  });
});

describe("a component's direction comes from the recommendations", () => {
  const pair = (maxP: number): ScalerSpec =>
    specOf({
      roles: [
        { name: "p", minReplicas: 1, maxReplicas: maxP },
        { name: "d", minReplicas: 1, maxReplicas: 16 },
      ],
      ratios: [{ numeratorRole: "p", denominatorRole: "d", min: "0.5", max: "2" }],
      behavior: { scaleUp: { stabilizationWindowSeconds: 600 }, scaleDown: { stabilizationWindowSeconds: 300 } },
    });

  it("a role whose growth waits for the scale-up window keeps its partner from shrinking", () => {
    const run = new Run(pair(16), { p: 4, d: 4 });
    run.passes(0, 285, 15, () => ({ p: want(4, 4), d: want(3, 4) }));
    const result = run.pass(300, { p: want(6, 4), d: want(3, 4) });
    expect(result.commit).toBeUndefined();
    expect(roleOf(result, "p").reason).toBe("ScaleUpStabilization");
    expect(roleOf(result, "d").reason).toBe("ComponentScalingUp");
  });

  it("a role pinned at maxReplicas does not stop its partner from shrinking", () => {
    const run = new Run(pair(4), { p: 4, d: 4 });
    run.passes(0, 285, 15, () => ({ p: want(4, 4), d: want(3, 4) }));
    const result = run.pass(300, { p: want(9, 4), d: want(3, 4) });
    expect(result.commit?.vector).toEqual({ p: 4, d: 3 });
  });
});

describe("a role driven only by a ratio needs no engine signals of its own", () => {
  const encoded = specOf({
    roles: [
      { name: "p", minReplicas: 1, maxReplicas: 16 },
      { name: "e", minReplicas: 1, maxReplicas: 16 },
    ],
    ratios: [{ numeratorRole: "e", denominatorRole: "p", target: "0.5", min: "0.25", max: "1" }],
    algorithm: {
      type: "Proportional",
      proportional: { metric: "RunningRequests", roleTargets: [{ name: "p", target: "1" }] },
    },
    behavior: { scaleDown: { stabilizationWindowSeconds: 300 } },
  });

  it("an encode role that exposes nothing follows its prefill partner down", () => {
    const run = new Run(encoded, { p: 8, e: 4 }, { p: "Prefill", e: "Encode" }, true);
    const obs = (running: number): Record<string, RoleObservation> => ({
      p: want(running, 8),
      e: missing(4),
    });
    run.passes(0, 285, 15, () => obs(8));
    const steady = run.pass(300, obs(8));
    expect(condition(steady, "MetricsReady")).toMatchObject({ status: "True", reason: "Observed" });
    run.passes(315, 930, 15, () => obs(4));
    expect(run.replicas.p).toBeLessThan(8);
    expect(run.replicas.e).toBeLessThan(4);
  });

  it("an encode role with no observation at all follows too: the target's ready count stands in", () => {
    const run = new Run(encoded, { p: 8, e: 4 }, { p: "Prefill", e: "Encode" }, true);
    run.passes(0, 300, 15, () => ({ p: want(8, 8) }));
    run.passes(315, 930, 15, () => ({ p: want(4, 8) }));
    expect(run.replicas.p).toBeLessThan(8);
    expect(run.replicas.e).toBeLessThan(4);
  });
});

describe("a scaled role nothing drives is reported", () => {
  it("NoTarget sets Blocked=True BoundsConflict naming the missing field", () => {
    const spec = specOf({
      roles: [
        { name: "s", minReplicas: 1, maxReplicas: 16 },
        { name: "x", minReplicas: 1, maxReplicas: 16 },
      ],
      algorithm: {
        type: "Proportional",
        proportional: { metric: "RunningRequests", roleTargets: [{ name: "s", target: "1" }] },
      },
    });
    const run = new Run(spec, { s: 2, x: 2 }, {}, true);
    const result = run.pass(0, { s: want(2, 2), x: want(2, 2) });
    expect(roleOf(result, "x").reason).toBe("NoTarget");
    const blocked = result.status.conditions?.find((c) => c.type === "Blocked");
    expect(blocked).toMatchObject({ status: "True", reason: "BoundsConflict" });
    expect(blocked?.message).toContain("bounds are missing");
    expect(blocked?.message).toContain("spec.algorithm.proportional.roleTargets");
  });
});
