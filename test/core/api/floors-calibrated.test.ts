/**
 * The floors' calibration date: the value calibrate writes, what the controller reads back (only beside floors,
 * only a time), and the warning admission gives a value that is not a time.
 */
import { describe, expect, it } from "vitest";
import {
  floorsCalibratedAnnotation,
  floorsCalibratedAtSeconds,
  floorsCalibratedValue,
  floorsCalibratedWarnings,
} from "../../../src/core/api/floors-calibrated.js";
import { validateScaler } from "../../../src/core/api/validation.js";

const floors = Array.from({ length: 24 }, () => 2);
const floored = { roles: [{ name: "server", maxReplicas: 4, floorReplicasByUtcHour: floors }] };
const unfloored = { roles: [{ name: "server", maxReplicas: 4, floorReplicasByUtcHour: undefined }] };

describe("floorsCalibratedValue", () => {
  it("writes RFC 3339 in UTC to the second", () => {
    expect(floorsCalibratedValue(Date.UTC(2026, 11, 7, 0, 5, 12, 987))).toBe("2026-12-07T00:05:12Z");
  });
});

describe("floorsCalibratedAtSeconds", () => {
  const at = { [floorsCalibratedAnnotation]: "2026-12-07T00:05:12Z" };

  it("reads the annotation where the scaler writes floors", () => {
    expect(floorsCalibratedAtSeconds(floored, at)).toBe(Date.UTC(2026, 11, 7, 0, 5, 12) / 1000);
  });

  it("dates nothing without floors, without the annotation, or with a value that is not a time", () => {
    expect(floorsCalibratedAtSeconds(unfloored, at)).toBeUndefined();
    expect(floorsCalibratedAtSeconds(floored, undefined)).toBeUndefined();
    expect(floorsCalibratedAtSeconds(floored, { other: "2026-12-07T00:05:12Z" })).toBeUndefined();
    expect(floorsCalibratedAtSeconds(floored, { [floorsCalibratedAnnotation]: "yesterday" })).toBeUndefined();
  });
});

describe("rule floors-calibrated-at", () => {
  const scaler = (annotations?: Record<string, unknown>) => ({
    apiVersion: "worker.gpustack.ai/v1",
    kind: "ModelDeploymentScaler",
    metadata: { name: "chat", ...(annotations === undefined ? {} : { annotations }) },
    spec: {
      targetRef: { name: "chat" },
      roles: floored.roles,
      algorithm: { tokenThroughput: { serverTargetTokensPerSecond: "1000" } },
    },
  });

  it("warns, naming the annotation and its value, and admits the scaler", () => {
    const result = validateScaler(scaler({ [floorsCalibratedAnnotation]: "yesterday" }));
    expect(result.ok).toBe(true);
    expect(result.warnings).toEqual([
      expect.objectContaining({
        rule: "floors-calibrated-at",
        path: `metadata.annotations["${floorsCalibratedAnnotation}"]`,
        value: "yesterday",
        reason: expect.stringMatching(/^is not an RFC 3339 time .* MdsScalerFloorsStale cannot fire$/) as unknown,
      }),
    ]);
  });

  it("says nothing of a time, of no annotation, or of no annotations at all", () => {
    expect(validateScaler(scaler({ [floorsCalibratedAnnotation]: "2026-12-07T00:05:12Z" })).warnings).toEqual([]);
    expect(validateScaler(scaler({ other: "x" })).warnings).toEqual([]);
    expect(validateScaler(scaler()).warnings).toEqual([]);
    expect(floorsCalibratedWarnings(undefined)).toEqual([]);
  });

  it("warns of a value that is not text", () => {
    expect(floorsCalibratedWarnings({ annotations: { [floorsCalibratedAnnotation]: 7 } })).toEqual([
      expect.objectContaining({ rule: "floors-calibrated-at", value: 7 }),
    ]);
  });
});
