/**
 * `calibrate --apply`'s write (src/cli/calibrate/apply.ts) against an in-memory scaler with the API server's
 * resourceVersion guard: the cases a real API server cannot be made to show on cue (another writer at every
 * attempt, a deletion between read and write, a write refused for another reason). The real API server's
 * conflicts are in test/integration/calibrate-prometheus.test.ts.
 */
import { describe, expect, it } from "vitest";
import { KubeCallError } from "../../src/adapters/kubernetes/resources.js";
import { applyAttempts, applyCalibratedSpec } from "../../src/cli/calibrate/apply.js";
import { ScalerStore, type StoredScaler } from "../fakes/scaler-store.js";

const read: StoredScaler = {
  metadata: { resourceVersion: "7" },
  spec: { roles: [{ name: "server", maxReplicas: 8 }] },
};
const calibrated = { roles: [{ name: "server", maxReplicas: 8, floorReplicasByUtcHour: new Array(24).fill(3) }] };
const request = { namespace: "serving", name: "chat", read, spec: calibrated };

describe("calibrate --apply's guarded write", () => {
  it("writes the spec against the version read, in one attempt where nothing moved", async () => {
    const store = new ScalerStore(structuredClone(read));
    expect(await applyCalibratedSpec(store, request)).toEqual({ resourceVersion: "7", attempts: 1 });
    expect(store.scaler?.spec).toEqual(calibrated);
  });

  it(`gives up after ${applyAttempts} attempts while status writes keep moving the version, writing nothing`, async () => {
    const store = new ScalerStore(structuredClone(read));
    store.beforePatch = ScalerStore.statusWrite;
    await expect(applyCalibratedSpec(store, request)).rejects.toThrow(
      `--apply: ModelDeploymentScaler serving/chat moved on ${applyAttempts} times while calibrate wrote it (last resourceVersion 10); nothing written`,
    );
    expect(store.patches).toBe(applyAttempts);
    expect(store.scaler?.spec).toEqual(read.spec);
  });

  it("says the scaler was deleted after the read", async () => {
    const store = new ScalerStore(structuredClone(read));
    store.beforePatch = () => "delete";
    await expect(applyCalibratedSpec(store, request)).rejects.toThrow(
      "--apply: ModelDeploymentScaler serving/chat was deleted after calibrate read it; nothing written",
    );
  });

  it("passes on a refusal that is not a conflict (an admission webhook's 422) without retrying", async () => {
    const refused = new KubeCallError("patch modeldeploymentscalers serving/chat: spec.roles[0]: invalid", 422, {
      cause: 422,
    });
    const store = {
      patches: 0,
      getScaler: () => Promise.resolve(structuredClone(read) as unknown),
      patchScaler(): Promise<unknown> {
        this.patches++;
        return Promise.reject(refused);
      },
    };
    await expect(applyCalibratedSpec(store, request)).rejects.toBe(refused);
    expect(store.patches).toBe(1);
  });

  it("refuses a scaler read without a resourceVersion, which no write could be guarded by", async () => {
    const store = new ScalerStore(structuredClone(read));
    await expect(applyCalibratedSpec(store, { ...request, read: { spec: read.spec } })).rejects.toThrow(
      "--apply: ModelDeploymentScaler serving/chat as read has no metadata.resourceVersion, so a write could not be guarded",
    );
    expect(store.patches).toBe(0);
  });
});
