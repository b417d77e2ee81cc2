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
import { floorsCalibratedAnnotation } from "../../src/core/api/floors-calibrated.js";

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

  it("sets the floors' date beside the spec, keeping the other annotations of the version it writes against", async () => {
    const annotated = { ...read, metadata: { resourceVersion: "7", annotations: { team: "search" } } };
    const store = new ScalerStore(structuredClone(annotated));
    // Another writer's annotation lands between the read and the write: the second attempt keeps it.
    let moved = false;
    store.beforePatch = (scaler) => {
      if (moved) return scaler;
      moved = true;
      const metadata = { ...scaler.metadata, annotations: { ...scaler.metadata.annotations, owner: "ml-platform" } };
      return ScalerStore.statusWrite({ ...scaler, metadata });
    };
    const dated = { [floorsCalibratedAnnotation]: "2026-12-07T00:05:12Z" };
    expect(await applyCalibratedSpec(store, { ...request, read: annotated, annotations: dated })).toEqual({
      resourceVersion: "8",
      attempts: 2,
    });
    expect(store.scaler?.metadata.annotations).toEqual({ team: "search", owner: "ml-platform", ...dated });
    expect(store.scaler?.spec).toEqual(calibrated);
  });

  it("writes the first annotation of a scaler that has none", async () => {
    const store = new ScalerStore(structuredClone(read));
    const dated = { [floorsCalibratedAnnotation]: "2026-12-07T00:05:12Z" };
    await applyCalibratedSpec(store, { ...request, annotations: dated });
    expect(store.scaler?.metadata.annotations).toEqual(dated);
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
