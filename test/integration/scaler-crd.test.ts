/**
 * The generated ModelDeploymentScaler CRD against a real kube-apiserver: it is
 * accepted as structural, the specification's examples are stored, the API
 * server's defaults agree with `defaultScaler`, and the server itself refuses
 * a retargeting update and an unquoted fractional quantity.
 */
import { readdirSync, readFileSync } from "node:fs";
import { CustomObjectsApi, loadYaml, type V1CustomResourceDefinition } from "@kubernetes/client-node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parse } from "yaml";
import { defaultScaler } from "../../src/core/api/defaulting.js";
import { renderCrd } from "../../tools/crd.js";
import { startControlPlane, type ControlPlane } from "../../harness/kube/index.js";
import { rejection } from "../support/rejection.js";

const group = "worker.gpustack.ai";
const version = "v1";
const plural = "modeldeploymentscalers";
const namespace = "default";
const examples = "test/fixtures/spec-examples";

type Scaler = { metadata: Record<string, unknown>; spec: Record<string, unknown> } & Record<string, unknown>;

describe("the ModelDeploymentScaler CRD on a real API server", () => {
  let controlPlane: ControlPlane;
  let api: CustomObjectsApi;

  beforeAll(async () => {
    controlPlane = await startControlPlane();
    api = controlPlane.kubeConfig.makeApiClient(CustomObjectsApi);
    // loadYaml maps JSON names (x-kubernetes-int-or-string) onto the client's model; a plain object would lose them.
    await controlPlane.applyCrd(loadYaml<V1CustomResourceDefinition>(renderCrd()));
  });

  afterAll(async () => {
    await controlPlane?.stop();
  });

  const create = (body: Scaler): Promise<Scaler> =>
    api.createNamespacedCustomObject({ group, version, namespace, plural, body }) as Promise<Scaler>;

  it.each(readdirSync(examples).filter((f) => f.endsWith(".yaml")))("stores the example %s", async (file) => {
    const example = parse(readFileSync(`${examples}/${file}`, "utf8")) as Scaler;
    const name = file.replace(/\.yaml$/, "");
    const created = await create({ ...example, metadata: { name } });
    expect(created.spec.targetRef).toEqual({ name: "llm-serving" });
  });

  it("applies defaults that agree with defaultScaler", async () => {
    const minimal: Scaler = {
      apiVersion: `${group}/${version}`,
      kind: "ModelDeploymentScaler",
      metadata: { name: "minimal" },
      spec: {
        targetRef: { name: "llm-serving" },
        roles: [{ name: "server", maxReplicas: 4 }],
        algorithm: { tokenThroughput: { serverTargetTokensPerSecond: 2000 } },
        behavior: { scaleUp: {}, scaleDown: {} },
        sampling: {},
        rebalance: {},
      },
    };
    const created = await create(minimal);
    expect(created.spec).toMatchObject({
      mode: "Shadow",
      suspend: false,
      roles: [{ name: "server", minReplicas: 1, maxReplicas: 4 }],
      sampling: { intervalSeconds: 15, pendingTimeoutSeconds: 300 },
      rebalance: { policy: "Opposing" },
    });
    const ours = defaultScaler(created);
    expect(ours.ok).toBe(true);
    if (!ours.ok) return;
    // The server stores a subset of our defaults (it cannot infer the type); an integer quantity stays an integer.
    const { algorithm: serverAlgorithm, ...serverRest } = created.spec;
    const { algorithm: ourAlgorithm, ...ourRest } = ours.value.spec;
    expect(ourRest).toEqual(serverRest);
    expect(ourAlgorithm).toMatchObject({
      type: "TokenThroughput",
      tokenThroughput: {
        ...(serverAlgorithm as { tokenThroughput: object }).tokenThroughput,
        serverTargetTokensPerSecond: "2000",
      },
    });
  });

  it("refuses a changed targetRef.name", async () => {
    const created = await create({
      apiVersion: `${group}/${version}`,
      kind: "ModelDeploymentScaler",
      metadata: { name: "immutable" },
      spec: { targetRef: { name: "first" }, roles: [{ name: "server", maxReplicas: 2 }] },
    });
    const refused = await rejection(
      api.replaceNamespacedCustomObject({
        group,
        version,
        namespace,
        plural,
        name: "immutable",
        body: { ...created, spec: { ...created.spec, targetRef: { name: "second" } } },
      }),
    );
    expect(refused.code).toBe(422);
    expect(refused.message).toContain("create a new scaler to retarget");
  });

  it("refuses an unquoted fractional quantity, as validateScaler does", async () => {
    const refused = await rejection(
      create({
        apiVersion: `${group}/${version}`,
        kind: "ModelDeploymentScaler",
        metadata: { name: "fractional" },
        spec: {
          targetRef: { name: "llm-serving" },
          roles: [{ name: "server", maxReplicas: 2 }],
          algorithm: {
            proportional: { metric: "QueueDepth", tolerance: 0.5, roleTargets: [{ name: "server", target: "8" }] },
          },
        },
      }),
    );
    expect(refused.code).toBe(422);
    expect(refused.message).toContain("tolerance");
  });
});
