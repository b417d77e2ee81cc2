/**
 * `mds-scaler observe` reading the scaler and its target from a real API
 * server (kubeconfig), and the engine series from a real Prometheus scraping
 * a derived SGLang decode capture.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { CoreV1Api, CustomObjectsApi } from "@kubernetes/client-node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runCli } from "../../src/cli/commands.js";
import { startControlPlane, type ControlPlane } from "../../harness/kube/index.js";
import { PrometheusHarness } from "../../harness/prometheus.js";
import { advanceCounters, CaptureServer } from "../support/capture-server.js";
import { loadModelDeploymentCrd, loadScalerCrd } from "../support/crds.js";

const root = fileURLToPath(new URL("../../", import.meta.url));
const derived = join(root, "test", "fixtures", "engine-expositions-derived");
const group = "worker.gpustack.ai";
const version = "v1";
const namespace = "ml";

let controlPlane: ControlPlane;
let server: CaptureServer;
let prometheus: PrometheusHarness;

beforeAll(async () => {
  const text = readFileSync(join(derived, "sglang-2026-decode-from-live-excerpt.prom"), "utf8");
  server = new CaptureServer(
    new Map([
      [
        "decode",
        {
          labels: {
            namespace,
            pod: "chat-decode-0",
            app_kubernetes_io_instance: "chat",
            app_kubernetes_io_component: "decode",
          },
          scrapes: [text, advanceCounters(text, 2)],
        },
      ],
    ]),
  );
  await server.start();
  [controlPlane, prometheus] = await Promise.all([
    startControlPlane(),
    PrometheusHarness.start({ scrapeIntervalSeconds: 2, targets: server.fileSdGroups() }),
  ]);
  await controlPlane.applyCrd(await loadScalerCrd());
  await controlPlane.applyCrd(await loadModelDeploymentCrd());
  await controlPlane.kubeConfig.makeApiClient(CoreV1Api).createNamespace({ body: { metadata: { name: namespace } } });
  const custom = controlPlane.kubeConfig.makeApiClient(CustomObjectsApi);
  const target = {
    apiVersion: `${group}/${version}`,
    kind: "ModelDeployment",
    metadata: { name: "chat", namespace },
    spec: { roles: [{ name: "decode", kind: "Decode", replicas: 3, instanceType: "h100" }] },
  };
  const created = (await custom.createNamespacedCustomObject({
    group,
    version,
    namespace,
    plural: "modeldeployments",
    body: target,
  })) as { metadata: { resourceVersion: string } };
  // Ready replicas live in the status subresource.
  await custom.replaceNamespacedCustomObjectStatus({
    group,
    version,
    namespace,
    plural: "modeldeployments",
    name: "chat",
    body: {
      ...target,
      metadata: { ...target.metadata, resourceVersion: created.metadata.resourceVersion },
      status: { roles: [{ name: "decode", ready: 2 }] },
    },
  });
  await custom.createNamespacedCustomObject({
    group,
    version,
    namespace,
    plural: "modeldeploymentscalers",
    body: {
      apiVersion: `${group}/${version}`,
      kind: "ModelDeploymentScaler",
      metadata: { name: "chat", namespace },
      spec: {
        targetRef: { name: "chat" },
        roles: [{ name: "decode", minReplicas: 1, maxReplicas: 4 }],
        algorithm: { type: "TokenThroughput", tokenThroughput: { decodeTargetTokensPerSecond: "800" } },
      },
    },
  });
  const deadline = Date.now() + 60_000;
  for (;;) {
    const res = await fetch(`${prometheus.url}/api/v1/query?query=${encodeURIComponent("count_over_time(up[1m])")}`);
    const body = (await res.json()) as { data: { result: { value: [number, string] }[] } };
    if (Number(body.data.result[0]?.value[1] ?? 0) >= 2) break;
    if (Date.now() > deadline) throw new Error("target not scraped twice");
    await new Promise((r) => setTimeout(r, 250));
  }
}, 180_000);

afterAll(async () => {
  await prometheus?.stop();
  await controlPlane?.stop();
  await server?.stop();
});

describe("mds-scaler observe with a kubeconfig", () => {
  it("reads the scaler and its target from the cluster, with ready replicas from the target's status", async () => {
    let out = "";
    let err = "";
    const io = {
      stdout: (t: string) => void (out += t),
      stderr: (t: string) => void (err += t),
      readFile: () => {
        throw new Error("no files in this test");
      },
    };
    const args = [
      "observe",
      "--prometheus-url",
      prometheus.url,
      "--scaler",
      `${namespace}/chat`,
      "--kubeconfig",
      controlPlane.kubeConfigPath,
      "-o",
      "json",
    ];
    expect(await runCli(args, io), err).toBe(0);
    const report = JSON.parse(out) as {
      scaler: string;
      target: string;
      roles: {
        role: string;
        kind: string;
        readyReplicasFrom: string;
        why: string;
        observation: Record<string, unknown>;
      }[];
    };
    expect(report.scaler).toBe("ml/chat");
    expect(report.target).toBe("ml/chat");
    const [decode] = report.roles;
    expect(decode).toMatchObject({ role: "decode", kind: "Decode", readyReplicasFrom: "status" });
    // Queue 0 + transfer 2 + prealloc 5; one of the two ready replicas answers.
    expect(decode?.observation).toMatchObject({ readyReplicas: 2, sampledReplicas: 1, waitingRequests: 7 });
    expect(decode?.why).toMatch(/1 of 2 ready replicas sampled/);
  }, 60_000);

  it("names a scaler that is not there", async () => {
    let err = "";
    const io = { stdout: () => undefined, stderr: (t: string) => void (err += t), readFile: () => "" };
    const args = ["observe", "--prometheus-url", prometheus.url, "--scaler", `${namespace}/nope`];
    expect(await runCli([...args, "--kubeconfig", controlPlane.kubeConfigPath], io)).toBe(1);
    expect(err).toMatch(/ModelDeploymentScaler ml\/nope not found/);
  }, 60_000);

  it("reads the target at the controller's --target-api-version, and names the version none is served at", async () => {
    let err = "";
    const io = { stdout: () => undefined, stderr: (t: string) => void (err += t), readFile: () => "" };
    const args = ["observe", "--prometheus-url", prometheus.url, "--scaler", `${namespace}/chat`];
    const at = (version: string) => [
      ...args,
      "--kubeconfig",
      controlPlane.kubeConfigPath,
      "--target-api-version",
      version,
    ];
    expect(await runCli(at("v1"), io), err).toBe(0);
    expect(await runCli(at("v1beta1"), io)).toBe(1);
    expect(err).toContain("target: ModelDeployment ml/chat (worker.gpustack.ai/v1beta1) not found in the cluster");
  }, 60_000);
});
