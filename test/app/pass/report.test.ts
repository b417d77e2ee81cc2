/** What a pass reports beside its plan: the floors' calibration date, read from the scaler's annotation. */
import { describe, expect, it } from "vitest";
import { reportOf } from "../../../src/app/pass/report.js";
import { floorsCalibratedAnnotation } from "../../../src/core/api/floors-calibrated.js";
import { ScalerSchema, withInferredAlgorithm, type Scaler } from "../../../src/core/api/scaler.js";
import type { PlanResult } from "../../../src/core/planner/types.js";

function scaler(annotations: Record<string, string>, floors: boolean): Scaler {
  return ScalerSchema.parse({
    apiVersion: "worker.gpustack.ai/v1",
    kind: "ModelDeploymentScaler",
    metadata: { name: "chat", namespace: "llm", annotations },
    spec: {
      targetRef: { name: "chat" },
      roles: [
        {
          name: "server",
          maxReplicas: 4,
          ...(floors ? { floorReplicasByUtcHour: Array.from({ length: 24 }, () => 1) } : {}),
        },
      ],
      algorithm: { tokenThroughput: { serverTargetTokensPerSecond: "1000" } },
    },
  });
}

const planned = { status: { roles: [] } } as unknown as PlanResult;
const reportFor = (s: Scaler) => reportOf(s, withInferredAlgorithm(s.spec), planned, undefined, {});

describe("reportOf", () => {
  it("carries the floors' calibration date where the scaler writes floors", () => {
    const dated = { [floorsCalibratedAnnotation]: "2026-12-07T00:05:12Z" };
    expect(reportFor(scaler(dated, true)).floorsCalibratedAtSeconds).toBe(Date.UTC(2026, 11, 7, 0, 5, 12) / 1000);
    expect(reportFor(scaler(dated, false))).not.toHaveProperty("floorsCalibratedAtSeconds");
    expect(reportFor(scaler({}, true))).not.toHaveProperty("floorsCalibratedAtSeconds");
  });
});
