import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { PooledKubeConfig } from "../../src/adapters/kubernetes/connections.js";
import { clusterConfigFrom } from "../../src/app/cluster.js";

// Every configuration the controller and observe find keeps its connections;
// the connections themselves are tested against a real API server
// (test/integration/kube-connections.test.ts).

/** One cluster, user and context named `name`, at `server`. */
const kubeconfigText = (name: string, server: string): string => `apiVersion: v1
kind: Config
clusters:
  - name: ${name}
    cluster: { server: "${server}", insecure-skip-tls-verify: true }
users:
  - name: ${name}
    user: { token: "t" }
contexts:
  - name: ${name}
    context: { cluster: ${name}, user: ${name} }
current-context: ${name}
`;

describe("clusterConfigFrom", () => {
  let dir: string;
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), "mds-cluster-config-"));
  });
  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it("returns the found configuration on kept-alive connections, its current context kept", async () => {
    const first = join(dir, "first.yaml");
    const second = join(dir, "second.yaml");
    await writeFile(first, kubeconfigText("first", "https://127.0.0.2:6443"));
    await writeFile(second, kubeconfigText("second", "https://127.0.0.3:6443"));
    const found = clusterConfigFrom({ kubeconfig: `${first}:${second}` }, {});
    expect(found.kubeConfig).toBeInstanceOf(PooledKubeConfig);
    // As kubectl does: the first file's current context wins.
    expect(found.kubeConfig.getCurrentCluster()?.server).toBe("https://127.0.0.2:6443");
    expect(found.source).toBe(`--kubeconfig ${first}:${second}`);
  });
});
