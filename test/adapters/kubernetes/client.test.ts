/**
 * The one Kubernetes client's error family and how it writes "all namespaces":
 * the controller, the webhooks, the CLI and the simulated reconciler all see
 * the same `KubeCallError`, a `ConflictError` on 409, and the same paths.
 */
import { ApiException } from "@kubernetes/client-node";
import { describe, expect, it } from "vitest";
import { ConflictError, KubeCallError, kubeCall, wrapKubeError } from "../../../src/adapters/kubernetes/errors.js";
import {
  allNamespaces,
  collectionPath,
  describeScope,
  modelDeploymentResource,
  scalerResource,
} from "../../../src/adapters/kubernetes/resources.js";
import { apiGroup } from "../../../src/core/api/scaler.js";

const status = (code: number, message: string): ApiException<string> =>
  new ApiException(code, "call failed", JSON.stringify({ kind: "Status", code, message }), {});

describe("Kubernetes call errors", () => {
  it("turns a 409 into a ConflictError that is also a KubeCallError, naming the call and the server's reason", () => {
    const error = wrapKubeError("patch modeldeployments team/llm", status(409, "the object has been modified"));
    expect(error).toBeInstanceOf(ConflictError);
    expect(error).toBeInstanceOf(KubeCallError);
    expect(error.statusCode).toBe(409);
    expect(error.message).toBe(
      "patch modeldeployments team/llm: the object changed since it was read (HTTP 409: the object has been modified)",
    );
  });

  it("keeps any other status, with the server's reason, and the original error as cause", () => {
    const original = status(403, 'modeldeployments is forbidden: User "x" cannot patch');
    const error = wrapKubeError("patch modeldeployments other/llm", original);
    expect(error).not.toBeInstanceOf(ConflictError);
    expect(error.statusCode).toBe(403);
    expect(error.message).toBe(
      'patch modeldeployments other/llm: HTTP 403: modeldeployments is forbidden: User "x" cannot patch',
    );
    expect(error.cause).toBe(original);
  });

  it("names the socket error when no server answered, with no status", async () => {
    const refused = new TypeError("fetch failed", {
      cause: Object.assign(new Error("connect"), { code: "ECONNREFUSED" }),
    });
    const failure = await kubeCall("list modeldeployments in all namespaces", () => Promise.reject(refused)).catch(
      (error: unknown) => error,
    );
    expect(failure).toBeInstanceOf(KubeCallError);
    expect((failure as KubeCallError).statusCode).toBeUndefined();
    expect((failure as KubeCallError).message).toBe(
      "list modeldeployments in all namespaces: fetch failed (ECONNREFUSED)",
    );
  });

  it("does not wrap an error twice", () => {
    const inner = wrapKubeError("get modeldeployments team/a", status(500, "etcd"));
    expect(wrapKubeError("watch modeldeployments", inner)).toBe(inner);
  });
});

describe("resource paths", () => {
  it("builds every resource from the API group constant", () => {
    expect(scalerResource.group).toBe(apiGroup);
    expect(modelDeploymentResource("v1alpha1")).toEqual({
      group: apiGroup,
      version: "v1alpha1",
      plural: "modeldeployments",
    });
  });

  it("writes all namespaces one way: the empty string, as --namespace has it", () => {
    expect(allNamespaces).toBe("");
    expect(collectionPath(scalerResource, allNamespaces)).toBe(`/apis/${apiGroup}/v1/modeldeploymentscalers`);
    expect(collectionPath(modelDeploymentResource(), "team")).toBe(
      `/apis/${apiGroup}/v1/namespaces/team/modeldeployments`,
    );
    expect(describeScope(allNamespaces)).toBe("all namespaces");
    expect(describeScope("team")).toBe("namespace team");
  });
});
