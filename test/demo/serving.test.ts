/** When the demo's replay may begin: the fleet serves and the scaler reads it. */
import { describe, expect, it } from "vitest";
import { notServingYet } from "../../demo/serving.js";

describe("the replay's start", () => {
  const target = (ready: number) => ({
    spec: { roles: [{ name: "prefill", replicas: 16 }] },
    status: { roles: [{ name: "prefill", ready }] },
  });
  const scaler = (signalState?: string) => ({
    status: { roles: [signalState === undefined ? { name: "prefill" } : { name: "prefill", signalState }] },
  });

  it("waits for every committed replica to be ready and the scaler to read the role, saying which is missing", () => {
    expect(notServingYet(target(12), scaler("Missing"))).toEqual([
      "prefill: 12 of 16 replicas ready",
      "prefill: the scaler's signal state is Missing",
    ]);
    expect(notServingYet(target(16), scaler())).toEqual(["prefill: the scaler's signal state is not reported yet"]);
    expect(notServingYet({}, scaler("Idle"))).toEqual(["the target has no roles yet"]);
  });

  it("begins once they are, whether the scaler sees work or a measured zero", () => {
    expect(notServingYet(target(16), scaler("Idle"))).toEqual([]);
    expect(notServingYet(target(16), scaler("Fresh"))).toEqual([]);
  });
});
