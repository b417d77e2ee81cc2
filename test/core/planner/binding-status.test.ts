/**
 * plan() decides everything the binding puts into status: the outcome, `Bound`
 * and `Active`, the TargetReplaced generation rule, the cleared status after an
 * acknowledged replacement, the term the pass commits under, and whether the
 * control plane moved. The controller only performs the writes.
 */
import { describe, expect, it } from "vitest";
import { bindingAnnotation } from "../../../src/core/api/model-deployment.js";
import { plan } from "../../../src/core/planner/plan.js";
import type { PlanInput } from "../../../src/core/planner/types.js";
import { condition, inputOf, seconds, specOf, targetOf, want } from "./fixtures.js";

const spec = specOf({ roles: [{ name: "s", minReplicas: 1, maxReplicas: 16 }] });
const owned = { [bindingAnnotation]: JSON.stringify({ scalerName: "llm", scalerUID: "scaler-uid", term: 2 }) };

function withUID(input: PlanInput, uid: string): PlanInput {
  const target = input.target;
  if (target === undefined) return input;
  return { ...input, target: { ...target, metadata: { ...target.metadata, uid } } };
}

describe("binding decided inside plan()", () => {
  it("an Active pass reports the term it commits under and acquires an absent binding", () => {
    const result = plan(
      inputOf({ spec, target: targetOf([{ name: "s", replicas: 2 }]), observations: { s: want(4) } }),
    );
    expect(result.bindingTerm).toBe(1);
    expect(result.bindingWrite).toMatchObject({ kind: "acquire", binding: { term: 1 } });
    expect(result.commit?.binding).toMatchObject({ term: 1 });
    expect(result.status.binding).toMatchObject({ targetUID: "target-uid", term: 1 });
  });

  it("a Shadow pass has no term and releases a binding it owns", () => {
    const result = plan(
      inputOf({
        spec: { ...spec, mode: "Shadow" },
        target: targetOf([{ name: "s", replicas: 2 }], { annotations: owned }),
        observations: { s: want(4) },
      }),
    );
    expect(result.bindingTerm).toBeUndefined();
    expect(result.bindingWrite).toEqual({ kind: "release" });
    expect(result.commit).toBeUndefined();
    expect(condition(result, "Active")).toMatchObject({ status: "False", reason: "ShadowMode" });
  });

  it("TargetReplaced keeps its first generation until a spec edit acknowledges it, then clears the old state", () => {
    const first = plan(
      inputOf({
        spec,
        target: targetOf([{ name: "s", replicas: 2 }], { annotations: owned }),
        observations: { s: want(4) },
      }),
    );
    expect(first.status.lastCommit).toBeDefined();
    const replaced = withUID(
      inputOf({
        spec,
        target: targetOf([{ name: "s", replicas: 2 }]),
        observations: { s: want(4) },
        status: first.status,
        nowMs: seconds(15),
        generation: 1,
      }),
      "new-uid",
    );
    const stopped = plan(replaced);
    expect(condition(stopped, "Bound")).toMatchObject({ status: "False", reason: "TargetReplaced" });
    expect(stopped.statusChanged).toBe(true);
    expect(stopped.bindingTerm).toBeUndefined();
    // Passes at the same generation keep reporting it, and the control plane does not move again.
    const again = plan({ ...replaced, scaler: { ...replaced.scaler, status: stopped.status }, nowMs: seconds(30) });
    expect(again.status.conditions?.find((c) => c.type === "Bound")?.observedGeneration).toBe(1);
    expect(again.statusChanged).toBe(false);
    // A spec edit (generation 2) acknowledges the replacement: no generation carried over, old records cleared.
    const edited = plan({
      ...replaced,
      scaler: { ...replaced.scaler, metadata: { ...replaced.scaler.metadata, generation: 2 }, status: again.status },
      nowMs: seconds(45),
    });
    expect(condition(edited, "Bound")).toMatchObject({ status: "True", reason: "Bound" });
    expect(edited.status.binding?.targetUID).toBe("new-uid");
    expect(edited.status.lastCommit?.baselineVector).toEqual({ s: 2 });
    expect(edited.status.lastCommit?.decisionID).not.toBe(first.status.lastCommit?.decisionID);
  });

  it("a stopped pass whose conditions did not move needs no status write", () => {
    const suspended = { ...spec, suspend: true };
    const once = plan(inputOf({ spec: suspended, target: targetOf([{ name: "s", replicas: 2 }]), observations: {} }));
    expect(once.statusChanged).toBe(true);
    const twice = plan(
      inputOf({
        spec: suspended,
        target: targetOf([{ name: "s", replicas: 2 }]),
        observations: {},
        status: once.status,
        nowMs: seconds(15),
      }),
    );
    expect(twice.statusChanged).toBe(false);
    expect(twice.status.lastPassTime).toBeUndefined();
  });
});
