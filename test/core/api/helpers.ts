/** Shared fixtures for the API tests: a valid scaler to mutate, and a target. */
import { readFileSync } from "node:fs";
import { parse } from "yaml";
import { ModelDeploymentSchema, type ModelDeployment } from "../../../src/core/api/model-deployment.js";

export type Json = Record<string, unknown>;

/** A valid Proportional scaler touching most features; each test edits a fresh copy. */
export function baseScaler(): Json {
  return {
    apiVersion: "worker.gpustack.ai/v1",
    kind: "ModelDeploymentScaler",
    metadata: { name: "llm-serving" },
    spec: {
      targetRef: { name: "llm-serving" },
      roles: [
        { name: "prefill", minReplicas: 1, maxReplicas: 8 },
        { name: "decode", maxReplicas: 8 },
      ],
      ratios: [{ numeratorRole: "prefill", denominatorRole: "decode", target: "1", min: "500m", max: "2" }],
      algorithm: {
        type: "Proportional",
        proportional: {
          metric: "QueueDepth",
          roleTargets: [
            { name: "prefill", target: "8" },
            { name: "decode", target: 4 },
          ],
        },
      },
      behavior: {
        scaleUp: { stepPolicy: { type: "Pods", value: 0 } },
        scaleDown: { stepPolicy: { type: "Percent", value: 10 } },
      },
      rebalance: { policy: "Priority", priority: ["decode", "prefill"] },
    },
  };
}

/** Tests reach into arbitrary spec paths, including wrong types on purpose. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export type LooseSpec = any;

/** A fresh base scaler with `edit` applied to its spec. */
export function withSpec(edit: (spec: LooseSpec) => void): Json {
  const scaler = baseScaler();
  edit(scaler.spec);
  return scaler;
}

export function readYaml(path: string): unknown {
  return parse(readFileSync(path, "utf8"));
}

export function target(name: string): ModelDeployment {
  return ModelDeploymentSchema.parse(readYaml(`test/fixtures/targets/${name}.yaml`));
}

/** A target built inline: roles as [name, kind, extra fields]. */
export function targetWith(deployment: string, roles: readonly [string, string, Json?][]): ModelDeployment {
  return ModelDeploymentSchema.parse({
    apiVersion: "worker.gpustack.ai/v1",
    kind: "ModelDeployment",
    metadata: { name: deployment },
    spec: { roles: roles.map(([name, kind, extra]) => ({ name, kind, replicas: 1, instanceType: "h100", ...extra })) },
  });
}
