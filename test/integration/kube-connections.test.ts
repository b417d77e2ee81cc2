import { subscribe, unsubscribe } from "node:diagnostics_channel";
import { CoreV1Api, KubeConfig, makeInformer, VersionApi, type V1Namespace } from "@kubernetes/client-node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startControlPlane, type ControlPlane } from "../../harness/kube/index.js";
import { callOptions } from "../../src/adapters/kubernetes/call-options.js";
import { pooledConnections, type PooledKubeConfig } from "../../src/adapters/kubernetes/connections.js";
import { whoAmI } from "../../src/app/start/leadership.js";

// The controller's client keeps its connections to a real kube-apiserver:
// counted from undici's diagnostics channel, which reports every connection
// opened (after its TLS handshake), filtered to this API server's port.

describe("kept-alive connections to the API server", () => {
  let plane: ControlPlane;
  let port: string;
  let opened = 0;
  const onConnected = (message: unknown): void => {
    const params = (message as { connectParams?: { port?: string | number } }).connectParams;
    if (String(params?.port) === port) opened += 1;
  };
  const pools: PooledKubeConfig[] = [];
  const pooled = (config: KubeConfig, maxSockets: number, http2 = true): PooledKubeConfig => {
    const p = pooledConnections(config, { maxSockets, http2 });
    pools.push(p);
    return p;
  };
  /** Connections opened while `work` runs. */
  const connectionsDuring = async (work: () => Promise<unknown>): Promise<number> => {
    const before = opened;
    await work();
    return opened - before;
  };
  const versionCalls = (config: KubeConfig, count: number): Promise<unknown> => {
    const api = config.makeApiClient(VersionApi);
    return Promise.all(Array.from({ length: count }, () => api.getCode(callOptions(10_000))));
  };

  beforeAll(async () => {
    plane = await startControlPlane();
    port = new URL(plane.serverUrl).port;
    subscribe("undici:client:connected", onConnected);
  });

  afterAll(async () => {
    unsubscribe("undici:client:connected", onConnected);
    await Promise.all(pools.map((p) => p.close()));
    await plane?.stop();
  });

  it("over HTTP/2, 64 calls at once share one connection, and the next 64 reuse it", async () => {
    const config = pooled(plane.kubeConfig, 4);
    expect(await connectionsDuring(() => versionCalls(config, 64))).toBe(1);
    expect(await connectionsDuring(() => versionCalls(config, 64))).toBe(0);
  });

  it("over HTTP/1.1, 64 calls at once open maxSockets connections, and the next 64 reuse them", async () => {
    const config = pooled(plane.kubeConfig, 4, false);
    expect(await connectionsDuring(() => versionCalls(config, 64))).toBe(4);
    expect(await connectionsDuring(() => versionCalls(config, 64))).toBe(0);
  });

  it("the library's own client opens a connection per call (what the pool replaces)", async () => {
    const api = plane.kubeConfig.makeApiClient(VersionApi);
    const opened = await connectionsDuring(async () => {
      for (let i = 0; i < 8; i++) await api.getCode(callOptions(10_000));
    });
    expect(opened).toBe(8);
  });

  it("over HTTP/1.1, watches have their own connections: with one for calls, calls still answer while three watches run", async () => {
    const config = pooled(plane.kubeConfig, 1, false);
    const core = config.makeApiClient(CoreV1Api);
    const list = async () => core.listNamespace(undefined, callOptions(10_000));
    const informers = ["a", "b", "c"].map(() => makeInformer<V1Namespace>(config, "/api/v1/namespaces", list));
    try {
      await Promise.all(informers.map((i) => i.start()));
      // Each watch holds a connection for as long as it runs; a call waiting for one would time out.
      const opened = await connectionsDuring(() => versionCalls(config, 16));
      // The calls' one connection is kept from the lists that filled the caches.
      expect(opened).toBe(0);
    } finally {
      await Promise.all(informers.map((i) => i.stop()));
    }
  });

  it("keeps the kubeconfig's TLS: a wrong CA is refused, insecure-skip-tls-verify is honoured, a new client certificate is a new identity", async () => {
    const cluster = plane.kubeConfig.getCurrentCluster();
    if (cluster === null) throw new Error("the harness configuration names no cluster");
    const other = await plane.kubeConfigFor({ user: "connections-test-user" });
    // Another CA: this API server's certificate does not chain to it.
    const wrongCa = pooled(plane.kubeConfig, 2);
    wrongCa.loadFromOptions({
      clusters: [{ ...cluster, caData: other.getCurrentUser()?.certData }],
      users: plane.kubeConfig.getUsers(),
      contexts: plane.kubeConfig.getContexts(),
      currentContext: plane.kubeConfig.getCurrentContext(),
    });
    await expect(versionCalls(wrongCa, 1)).rejects.toThrow();

    const skipVerify = pooled(plane.kubeConfig, 2);
    skipVerify.loadFromOptions({
      clusters: [{ ...cluster, caData: undefined, caFile: undefined, skipTLSVerify: true }],
      users: plane.kubeConfig.getUsers(),
      contexts: plane.kubeConfig.getContexts(),
      currentContext: plane.kubeConfig.getCurrentContext(),
    });
    await expect(versionCalls(skipVerify, 1)).resolves.toBeDefined();

    // The same configuration's user given another certificate (a rotation): the next call is that user.
    const rotating = pooled(plane.kubeConfig, 2);
    const admin = await whoAmI(rotating, 10_000);
    const user = rotating.getCurrentUser();
    const otherUser = other.getCurrentUser();
    if (user === null || otherUser === null) throw new Error("the harness configuration names no user");
    rotating.loadFromOptions({
      clusters: rotating.getClusters(),
      users: [{ ...user, certData: otherUser.certData, keyData: otherUser.keyData }],
      contexts: rotating.getContexts(),
      currentContext: rotating.getCurrentContext(),
    });
    expect(await whoAmI(rotating, 10_000)).toBe("connections-test-user");
    expect(admin).not.toBe("connections-test-user");
  });
});
