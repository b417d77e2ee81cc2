/**
 * The gap rule and the hold rule over simulated time, through `mds-scaler
 * plan`: each pass feeds the previous pass's printed status back in, as the
 * controller keeps it in memory and as a new leader reads it from the object.
 */
import { describe, expect, it } from "vitest";
import { echo } from "../core/planner/fixtures.js";
import { Timeline } from "./plan-timeline.js";

const start = Date.parse("2026-11-29T12:00:00Z");
const spec = {
  targetRef: { name: "llm" },
  mode: "Active" as const,
  roles: [{ name: "server", minReplicas: 1, maxReplicas: 16 }],
  algorithm: {
    type: "Proportional" as const,
    proportional: { metric: "RunningRequests" as const, roleTargets: [{ name: "server", target: "1" }] },
  },
  behavior: { scaleDown: { stabilizationWindowSeconds: 300 } },
};

/** The seconds at which a pass committed, and the vector it wrote. */
function commits(timeline: Timeline): [number, number | undefined][] {
  return timeline.passes.filter((p) => p.commit !== null).map((p) => [p.atSeconds, p.commit?.vector.server]);
}

describe("mds-scaler plan timelines", () => {
  it("gap rule: a restart after an hour with a dip in demand holds for the scale-down window", () => {
    const timeline = new Timeline(spec, [{ name: "server", replicas: 4 }], start, echo);
    for (let at = 0; at <= 600; at += 15) timeline.pass(at, { server: { runningRequests: 4 } });
    // The leader restarts an hour later and reads the status the last pass wrote; demand dipped to 2.
    const restart = 600 + 3600;
    for (let at = restart; at <= restart + 600; at += 15) timeline.pass(at, { server: { runningRequests: 2 } });
    // Before the gap rule the first pass after the restart shrank at once: [[4200, 3], [4215, 2]].
    expect(commits(timeline)).toEqual([
      [restart + 300, 3],
      [restart + 315, 2],
    ]);
    const first = timeline.passes.find((p) => p.atSeconds === restart);
    expect(first?.status.roles?.[0]?.reason).toBe("ScaleDownStabilization");
    expect(first?.status.roles?.[0]?.stabilizationHistory).toHaveLength(1);
  });

  it("hold rule: one Missing pass inside a falling window does not restart it", () => {
    const timeline = new Timeline(spec, [{ name: "server", replicas: 4 }], start, echo);
    for (let at = 0; at <= 300; at += 15) timeline.pass(at, { server: { runningRequests: 4 } });
    for (let at = 315; at <= 585; at += 15) timeline.pass(at, { server: { runningRequests: 2 } });
    // A 15 s Prometheus outage: the role's signals are Missing for one pass.
    const held = timeline.pass(600, { server: { signalState: "Missing", sampledReplicas: 0 } });
    expect(held.commit).toBeNull();
    expect(held.status.roles?.[0]?.reason).toBe("WaitingForMetrics");
    for (let at = 615; at <= 915; at += 15) timeline.pass(at, { server: { runningRequests: 2 } });
    // Before the hold rule the Missing pass was recorded as a recommendation of 4 at t=600, so the
    // next shrink waited until t=915: [[915, 3]]. Now the next fresh pass shrinks.
    expect(commits(timeline)).toEqual([
      [615, 3],
      [630, 2],
    ]);
  });
});
