import { CustomObjectsApi, type V1CustomResourceDefinition } from "@kubernetes/client-node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { sendJson, startControlPlane, type ControlPlane } from "../../harness/kube/index.js";
import { rejection } from "../support/rejection.js";

// Proves the test control plane: a real kube-apiserver and etcd, built by
// tools/kube-bin/build.sh. Missing binaries fail this file with that hint.

const group = "smoke.mds-scaler.invalid";
const version = "v1";
const plural = "widgets";
const namespace = "default";

interface Widget {
  apiVersion: string;
  kind: string;
  metadata: { name: string; resourceVersion?: string; labels?: Record<string, string> };
  spec: { size: number };
  status?: { phase?: string; observedSize?: number };
}

const widgetCrd: V1CustomResourceDefinition = {
  apiVersion: "apiextensions.k8s.io/v1",
  kind: "CustomResourceDefinition",
  metadata: { name: `${plural}.${group}` },
  spec: {
    group,
    scope: "Namespaced",
    names: { plural, singular: "widget", kind: "Widget", listKind: "WidgetList" },
    versions: [
      {
        name: version,
        served: true,
        storage: true,
        subresources: { status: {} },
        schema: {
          openAPIV3Schema: {
            type: "object",
            properties: {
              spec: { type: "object", properties: { size: { type: "integer" } }, required: ["size"] },
              status: { type: "object", properties: { phase: { type: "string" }, observedSize: { type: "integer" } } },
            },
          },
        },
      },
    ],
  },
};

function widget(name: string, size: number): Widget {
  return { apiVersion: `${group}/${version}`, kind: "Widget", metadata: { name }, spec: { size } };
}

describe("test control plane (kube-apiserver + etcd)", () => {
  let controlPlane: ControlPlane;
  let customObjects: CustomObjectsApi;

  beforeAll(async () => {
    controlPlane = await startControlPlane();
    console.info(`control plane ready in ${controlPlane.startupMs} ms at ${controlPlane.serverUrl}`);
    customObjects = controlPlane.kubeConfig.makeApiClient(CustomObjectsApi);
    await controlPlane.applyCrd(widgetCrd);
  });

  afterAll(async () => {
    await controlPlane?.stop();
  });

  it("round-trips a custom object through the status subresource and rejects a stale write with 409", async () => {
    const created = (await customObjects.createNamespacedCustomObject({
      group,
      version,
      namespace,
      plural,
      body: { ...widget("round-trip", 3), status: { phase: "IgnoredOnCreate" } },
    })) as Widget;
    // With a status subresource, status in the main resource is not persisted.
    expect(created.status).toBeUndefined();

    const updated = (await customObjects.replaceNamespacedCustomObjectStatus({
      group,
      version,
      namespace,
      plural,
      name: "round-trip",
      body: { ...created, spec: { size: 99 }, status: { phase: "Ready", observedSize: 3 } },
    })) as Widget;
    expect(updated.status).toEqual({ phase: "Ready", observedSize: 3 });
    // ...and the status endpoint ignores spec.
    expect(updated.spec).toEqual({ size: 3 });
    expect(updated.metadata.resourceVersion).not.toBe(created.metadata.resourceVersion);

    const read = (await customObjects.getNamespacedCustomObject({
      group,
      version,
      namespace,
      plural,
      name: "round-trip",
    })) as Widget;
    expect(read.status).toEqual({ phase: "Ready", observedSize: 3 });
    expect(read.metadata.resourceVersion).toBe(updated.metadata.resourceVersion);

    const stale = await rejection(
      customObjects.replaceNamespacedCustomObjectStatus({
        group,
        version,
        namespace,
        plural,
        name: "round-trip",
        body: { ...created, status: { phase: "WrittenFromStaleCopy" } },
      }),
    );
    expect(stale.code).toBe(409);
    expect(stale.message).toMatch(/the object has been modified/);
  });

  it("passes requests through mutating and validating webhooks served by the test process", async () => {
    const webhooks = await controlPlane.registerWebhooks({
      name: "smoke-widgets",
      mutating: [
        {
          name: "label.widgets.smoke.mds-scaler.invalid",
          rules: [{ apiGroups: [group], apiVersions: [version], operations: ["CREATE"], resources: [plural] }],
          handler: (request) => ({
            allowed: true,
            patch: [
              (request.object?.["metadata"] as { labels?: unknown } | undefined)?.labels === undefined
                ? { op: "add", path: "/metadata/labels", value: { "smoke.mds-scaler.invalid/mutated": "true" } }
                : { op: "add", path: "/metadata/labels/smoke.mds-scaler.invalid~1mutated", value: "true" },
            ],
          }),
        },
      ],
      validating: [
        {
          name: "size.widgets.smoke.mds-scaler.invalid",
          rules: [
            { apiGroups: [group], apiVersions: [version], operations: ["CREATE", "UPDATE"], resources: [plural] },
          ],
          handler: (request) => {
            const size = (request.object?.["spec"] as { size?: number } | undefined)?.size ?? 0;
            return size > 10
              ? { allowed: false, code: 422, message: `size ${size} is over the limit of 10` }
              : { allowed: true };
          },
        },
      ],
    });
    try {
      const denied = await rejection(
        customObjects.createNamespacedCustomObject({ group, version, namespace, plural, body: widget("too-big", 11) }),
      );
      expect(denied.code).toBe(422);
      expect(denied.message).toContain("size 11 is over the limit of 10");
      expect(denied.message).toContain("size.widgets.smoke.mds-scaler.invalid");

      const admitted = (await customObjects.createNamespacedCustomObject({
        group,
        version,
        namespace,
        plural,
        body: widget("small", 2),
      })) as Widget;
      expect(admitted.metadata.labels?.["smoke.mds-scaler.invalid/mutated"]).toBe("true");

      const calledWebhooks = webhooks.calls.map(
        (call) => `${call.webhookName} ${call.request.name} ${call.verdict.allowed}`,
      );
      expect(calledWebhooks).toContain("size.widgets.smoke.mds-scaler.invalid too-big false");
      expect(calledWebhooks).toContain("label.widgets.smoke.mds-scaler.invalid small true");
    } finally {
      await webhooks.unregister();
    }
  });

  it("routes requests for an APIService to a server in the test process", async () => {
    const pingGroup = "aggregated.smoke.mds-scaler.invalid";
    const pingVersion = "v1alpha1";
    const apiService = await controlPlane.registerApiService({
      group: pingGroup,
      version: pingVersion,
      resources: [{ name: "pings", singularName: "ping", namespaced: false, kind: "Ping", verbs: ["list"] }],
      handler: (req, res, caller) => {
        if (req.method === "GET" && req.url?.split("?")[0] === `/apis/${pingGroup}/${pingVersion}/pings`) {
          sendJson(res, 200, {
            apiVersion: `${pingGroup}/${pingVersion}`,
            kind: "PingList",
            metadata: {},
            items: [
              {
                apiVersion: `${pingGroup}/${pingVersion}`,
                kind: "Ping",
                metadata: { name: `pong-for-${caller.user}` },
              },
            ],
          });
        } else {
          sendJson(res, 404, { kind: "Status", apiVersion: "v1", status: "Failure", code: 404, message: "not found" });
        }
      },
    });
    try {
      const list = (await customObjects.listClusterCustomObject({
        group: pingGroup,
        version: pingVersion,
        plural: "pings",
      })) as {
        items: Array<{ metadata: { name: string } }>;
      };
      expect(list.items.map((item) => item.metadata.name)).toEqual(["pong-for-mds-harness-admin"]);

      const served = apiService.requests.filter((request) =>
        request.url.startsWith(`/apis/${pingGroup}/${pingVersion}/pings`),
      );
      expect(served).toHaveLength(1);
      expect(served[0]).toMatchObject({ method: "GET", authenticated: true, caller: { user: "mds-harness-admin" } });
      expect(served[0]?.caller.groups).toContain("system:masters");
    } finally {
      await apiService.unregister();
    }
  });

  // Last: it stops the shared control plane (afterAll's stop() is then a no-op).
  it("stop() ends every process it started", async () => {
    const processIds = controlPlane.processIds;
    expect(processIds).toHaveLength(2);
    await controlPlane.stop();
    for (const processId of processIds) {
      expect(() => process.kill(processId, 0)).toThrow(expect.objectContaining({ code: "ESRCH" }));
    }
  });
});
