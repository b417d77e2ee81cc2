import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { networkInterfaces, tmpdir } from "node:os";
import { join } from "node:path";
import { ApiException, ApiextensionsV1Api, KubeConfig, type V1CustomResourceDefinition } from "@kubernetes/client-node";
import {
  registerApiService,
  routeApiService,
  type ApiServiceRegistration,
  type ApiServiceRoute,
  type ApiServiceRouteSpec,
  type RegisteredApiService,
} from "./api-service.js";
import {
  startControllerManager,
  type ControllerManagerOptions,
  type RunningControllerManager,
} from "./controller-manager.js";
import { findKubeBinaries, type KubeBinaries } from "./binaries.js";
import { startHttpsServer, type LocalHttpsServer, type RequestListener } from "./https-server.js";
import { freeLoopbackPort, getUrl, loopbackHost, waitFor, type TlsClientOptions } from "./net.js";
import { Pki, type CertificateAuthority, type IssuedCertificate } from "./pki.js";
import { ManagedProcess, removeOnExit } from "./processes.js";
import { registerWebhooks, type RegisteredWebhooks, type WebhookRegistration } from "./webhooks.js";

export interface ControlPlaneOptions {
  /** Directory holding kube-apiserver and etcd; default: MDS_KUBE_BIN_DIR or the build script's cache. */
  binDirPath?: string;
  /** Budget for etcd and the API server to become ready (per attempt). */
  startTimeoutMs?: number;
  /** Keep certificates, data and logs after stop(), for debugging. Also MDS_KUBE_KEEP_WORKDIR=1. */
  keepWorkDir?: boolean;
  extraApiServerArgs?: readonly string[];
}

export interface ApplyCrdOptions {
  timeoutMs?: number;
}

export interface UserCredentials {
  user: string;
  groups?: readonly string[];
}

export interface ControlPlane {
  /** Admin (system:masters) credentials for @kubernetes/client-node. */
  kubeConfig: KubeConfig;
  /** The same, as a file, for processes started by a test. */
  kubeConfigPath: string;
  /** `https://127.0.0.1:<port>` */
  serverUrl: string;
  workDirPath: string;
  binaries: KubeBinaries;
  /** etcd and kube-apiserver, while running. */
  readonly processIds: readonly number[];
  /** Wall time from start to ready, for reports. */
  startupMs: number;
  /** Creates (or replaces) a CRD and waits until it is Established and served. */
  applyCrd(crd: V1CustomResourceDefinition, options?: ApplyCrdOptions): Promise<V1CustomResourceDefinition>;
  /** Serves admission webhooks from the test process; see webhooks.ts. */
  registerWebhooks(registration: WebhookRegistration): Promise<RegisteredWebhooks>;
  /** Serves an aggregated API from the test process; see api-service.ts. */
  registerApiService(registration: ApiServiceRegistration): Promise<RegisteredApiService>;
  /** The front proxy's client certificate, to call an aggregated API server the way the API server does. */
  frontProxyClientTls: { certPem: string; keyPem: string };
  /** Routes an APIService to a loopback port served by another process (a controller under test). */
  routeApiService(spec: ApiServiceRouteSpec): Promise<ApiServiceRoute>;
  /**
   * A directory holding `tls.crt` and `tls.key` signed by the cluster CA (SANs 127.0.0.1, localhost and
   * `dnsNames`), for a process under test to serve; `caBundle` is that CA, base64, for an APIService or webhook.
   */
  servingCertificateDir(dnsNames: readonly string[]): Promise<{ dirPath: string; caBundle: string }>;
  /** kube-controller-manager with only `controllers` running; stopped with the control plane. */
  startControllerManager(options: ControllerManagerOptions): Promise<RunningControllerManager>;
  /** An HTTPS server on loopback whose cert the cluster CA signed (SANs 127.0.0.1, localhost, and `dnsNames`). */
  startHttpsServer(listener: RequestListener, dnsNames?: readonly string[]): Promise<LocalHttpsServer>;
  /** A kubeconfig for another user, authenticated by a client certificate (RBAC applies). */
  kubeConfigFor(credentials: UserCredentials): Promise<KubeConfig>;
  /** The last lines of the API server's log. */
  apiServerLogTail(lineCount?: number): Promise<string>;
  /** Stops every server and process the harness started; safe to call twice. */
  stop(): Promise<void>;
}

const defaultStartTimeoutMs = 90_000;
const startAttempts = 3;
const clusterName = "mds-harness";

function base64(text: string): string {
  return Buffer.from(text).toString("base64");
}

function buildKubeConfig(serverUrl: string, caPem: string, user: string, client: IssuedCertificate): KubeConfig {
  const kubeConfig = new KubeConfig();
  kubeConfig.loadFromOptions({
    clusters: [{ name: clusterName, server: serverUrl, caData: base64(caPem), skipTLSVerify: false }],
    users: [{ name: user, certData: base64(client.certPem), keyData: base64(client.keyPem) }],
    contexts: [{ name: clusterName, cluster: clusterName, user }],
    currentContext: clusterName,
  });
  return kubeConfig;
}

/**
 * The API server needs an address to advertise that is not loopback; pick a
 * local one rather than rely on a default route. Nothing is ever sent to it:
 * the endpoint reconciler is off and every client uses 127.0.0.1.
 */
function advertiseAddress(): string | undefined {
  for (const addresses of Object.values(networkInterfaces())) {
    for (const address of addresses ?? []) {
      if (address.family === "IPv4" && !address.internal) return address.address;
    }
  }
  return undefined;
}

interface Pkis {
  pki: Pki;
  clusterCa: CertificateAuthority;
  frontProxyCa: CertificateAuthority;
  serving: IssuedCertificate;
  admin: IssuedCertificate;
  frontProxyClient: IssuedCertificate;
  serviceAccountKey: { privateKeyPath: string; publicKeyPath: string };
}

async function createPki(dirPath: string): Promise<Pkis> {
  const pki = await Pki.create(dirPath);
  const [clusterCa, frontProxyCa] = await Promise.all([pki.createCa("cluster-ca"), pki.createCa("front-proxy-ca")]);
  const [serving, admin, frontProxyClient, serviceAccountKey] = await Promise.all([
    pki.issue(clusterCa, "apiserver", {
      commonName: "kube-apiserver",
      usage: "server",
      dnsNames: ["localhost", "kubernetes", "kubernetes.default", "kubernetes.default.svc"],
      ipAddresses: [loopbackHost],
    }),
    pki.issue(clusterCa, "admin", {
      commonName: "mds-harness-admin",
      organizations: ["system:masters"],
      usage: "client",
    }),
    pki.issue(frontProxyCa, "front-proxy-client", { commonName: "front-proxy-client", usage: "client" }),
    pki.createSigningKeyPair("service-account"),
  ]);
  return { pki, clusterCa, frontProxyCa, serving, admin, frontProxyClient, serviceAccountKey };
}

async function startEtcd(
  binaries: KubeBinaries,
  workDirPath: string,
  timeoutMs: number,
  orphanDirPath: string | undefined,
): Promise<{ process: ManagedProcess; url: string }> {
  const clientPort = await freeLoopbackPort();
  let peerPort = await freeLoopbackPort();
  // The kernel may hand out the just-released port again.
  while (peerPort === clientPort) peerPort = await freeLoopbackPort();
  const url = `http://${loopbackHost}:${clientPort}`;
  const peerUrl = `http://${loopbackHost}:${peerPort}`;
  const dataDirPath = join(workDirPath, `etcd-data-${clientPort}`);
  const etcdProcess = await ManagedProcess.start({
    name: "etcd",
    command: binaries.etcdPath,
    logPath: join(workDirPath, "etcd.log"),
    cwd: workDirPath,
    ...(orphanDirPath === undefined ? {} : { orphanDirPath }),
    args: [
      "--name=harness",
      `--data-dir=${dataDirPath}`,
      `--listen-client-urls=${url}`,
      `--advertise-client-urls=${url}`,
      `--listen-peer-urls=${peerUrl}`,
      `--initial-advertise-peer-urls=${peerUrl}`,
      `--initial-cluster=harness=${peerUrl}`,
      // Test data is thrown away; fsync only costs time.
      "--unsafe-no-fsync",
      "--log-level=warn",
    ],
  });
  try {
    await waitFor(
      "etcd to report healthy",
      { timeoutMs, abortReason: () => (etcdProcess.hasExited() ? etcdProcess.describeExit() : undefined) },
      async () => {
        const response = await getUrl(`${url}/health`, 2_000);
        return response.statusCode === 200 && response.body.includes('"true"') ? true : undefined;
      },
    );
  } catch (cause) {
    await etcdProcess.stop();
    throw new Error(`start etcd; log tail:\n${await etcdProcess.logTail()}`, { cause });
  }
  return { process: etcdProcess, url };
}

async function startApiServer(
  binaries: KubeBinaries,
  workDirPath: string,
  pkis: Pkis,
  etcdUrl: string,
  options: ControlPlaneOptions,
  timeoutMs: number,
): Promise<{ process: ManagedProcess; serverUrl: string }> {
  const portNumber = await freeLoopbackPort();
  const serverUrl = `https://${loopbackHost}:${portNumber}`;
  const advertise = advertiseAddress();
  const certDirPath = join(workDirPath, "apiserver-certs");
  await mkdir(certDirPath, { recursive: true });
  const apiServerProcess = await ManagedProcess.start({
    name: "kube-apiserver",
    command: binaries.kubeApiServerPath,
    logPath: join(workDirPath, "kube-apiserver.log"),
    cwd: workDirPath,
    args: [
      `--etcd-servers=${etcdUrl}`,
      `--bind-address=${loopbackHost}`,
      `--secure-port=${portNumber}`,
      ...(advertise === undefined ? [] : [`--advertise-address=${advertise}`]),
      // No lease or endpoints bookkeeping for the advertised address.
      "--endpoint-reconciler-type=none",
      `--cert-dir=${certDirPath}`,
      `--tls-cert-file=${pkis.serving.certPath}`,
      `--tls-private-key-file=${pkis.serving.keyPath}`,
      `--client-ca-file=${pkis.clusterCa.certPath}`,
      `--service-account-issuer=${serverUrl}`,
      `--service-account-key-file=${pkis.serviceAccountKey.publicKeyPath}`,
      `--service-account-signing-key-file=${pkis.serviceAccountKey.privateKeyPath}`,
      "--service-cluster-ip-range=10.0.0.0/24",
      "--authorization-mode=RBAC",
      "--allow-privileged=true",
      // No controller manager runs, so nothing would create the default service accounts.
      "--disable-admission-plugins=ServiceAccount",
      // Front-proxy wiring for aggregated APIs (aggregator routing stays off).
      `--requestheader-client-ca-file=${pkis.frontProxyCa.certPath}`,
      "--requestheader-allowed-names=front-proxy-client",
      "--requestheader-username-headers=X-Remote-User",
      "--requestheader-group-headers=X-Remote-Group",
      "--requestheader-extra-headers-prefix=X-Remote-Extra-",
      `--proxy-client-cert-file=${pkis.frontProxyClient.certPath}`,
      `--proxy-client-key-file=${pkis.frontProxyClient.keyPath}`,
      ...(options.extraApiServerArgs ?? []),
    ],
  });
  const tls: TlsClientOptions = {
    caPem: pkis.clusterCa.certPem,
    certPem: pkis.admin.certPem,
    keyPem: pkis.admin.keyPem,
  };
  try {
    const abortReason = (): string | undefined =>
      apiServerProcess.hasExited() ? apiServerProcess.describeExit() : undefined;
    await waitFor("kube-apiserver /readyz", { timeoutMs, intervalMs: 200, abortReason }, async () => {
      const response = await getUrl(`${serverUrl}/readyz`, 5_000, tls);
      if (response.statusCode === 200) return true;
      throw new Error(`/readyz answered ${response.statusCode}: ${response.body.slice(-2_000)}`);
    });
    // The bootstrap controller creates the default namespace shortly after readiness.
    await waitFor("namespace default", { timeoutMs, intervalMs: 200, abortReason }, async () => {
      const response = await getUrl(`${serverUrl}/api/v1/namespaces/default`, 5_000, tls);
      return response.statusCode === 200 ? true : undefined;
    });
  } catch (cause) {
    await apiServerProcess.stop();
    throw new Error(`start kube-apiserver; log tail:\n${await apiServerProcess.logTail()}`, { cause });
  }
  return { process: apiServerProcess, serverUrl };
}

/** True when a start failed because another process took a port first (the log tail is in the message). */
function lostPortRace(error: unknown): boolean {
  for (let current: unknown = error; current instanceof Error; current = current.cause) {
    if (/address already in use/i.test(current.message)) return true;
  }
  return false;
}

/**
 * Starts etcd and kube-apiserver on free loopback ports with fresh
 * certificates, and waits until the API server is ready.
 */
export async function startControlPlane(options: ControlPlaneOptions = {}): Promise<ControlPlane> {
  const binaries = findKubeBinaries(options.binDirPath);
  const startedAtMs = Date.now();
  const timeoutMs = options.startTimeoutMs ?? defaultStartTimeoutMs;
  const keepWorkDir = options.keepWorkDir ?? process.env["MDS_KUBE_KEEP_WORKDIR"] === "1";
  const workDirPath = await mkdtemp(join(tmpdir(), "mds-kube-"));
  const stopRemovingOnExit = keepWorkDir ? () => true : removeOnExit(workDirPath);
  const processes: ManagedProcess[] = [];
  const servers = new Set<LocalHttpsServer>();
  const managers: RunningControllerManager[] = [];
  let stopped: Promise<void> | undefined;

  const stopAll = async (): Promise<void> => {
    // Webhook and APIService registrations live in etcd, which is going away:
    // only the local servers need closing.
    await Promise.all([...servers].map((server) => server.close()));
    servers.clear();
    // Controllers before the API server they talk to.
    for (const manager of managers.splice(0)) await manager.stop();
    // API server first, so it does not log etcd errors while stopping.
    for (const managed of [...processes].reverse()) await managed.stop();
    processes.length = 0;
    if (!keepWorkDir) await rm(workDirPath, { recursive: true, force: true });
    stopRemovingOnExit();
  };

  let pkis: Pkis;
  let serverUrl = "";
  try {
    pkis = await createPki(workDirPath);
    for (let attempt = 1; ; attempt++) {
      try {
        const etcd = await startEtcd(binaries, workDirPath, timeoutMs, keepWorkDir ? undefined : workDirPath);
        processes.push(etcd.process);
        const apiServer = await startApiServer(binaries, workDirPath, pkis, etcd.url, options, timeoutMs);
        processes.push(apiServer.process);
        serverUrl = apiServer.serverUrl;
        break;
      } catch (error) {
        const retry = attempt < startAttempts && lostPortRace(error);
        for (const managed of processes.splice(0).reverse()) await managed.stop();
        if (!retry) throw error;
      }
    }
  } catch (cause) {
    await stopAll().catch(() => undefined);
    throw new Error(`start control plane (binaries in ${binaries.dirPath})`, { cause });
  }

  const kubeConfig = buildKubeConfig(serverUrl, pkis.clusterCa.certPem, "mds-harness-admin", pkis.admin);
  const kubeConfigPath = join(workDirPath, "kubeconfig");
  await writeFile(kubeConfigPath, kubeConfig.exportConfig(), { mode: 0o600 });
  const adminTls: TlsClientOptions = {
    caPem: pkis.clusterCa.certPem,
    certPem: pkis.admin.certPem,
    keyPem: pkis.admin.keyPem,
  };
  const apiServerProcess = processes[processes.length - 1];
  let serverCount = 0;

  const startServer = async (
    listener: RequestListener,
    dnsNames: readonly string[] = [],
    clientCaPem?: string,
  ): Promise<LocalHttpsServer> => {
    serverCount += 1;
    const cert = await pkis.pki.issue(pkis.clusterCa, `local-server-${serverCount}`, {
      commonName: `local-server-${serverCount}`,
      usage: "server",
      dnsNames: ["localhost", ...dnsNames],
      ipAddresses: [loopbackHost],
    });
    const server = await startHttpsServer(
      {
        certPem: cert.certPem,
        keyPem: cert.keyPem,
        caPem: pkis.clusterCa.certPem,
        ...(clientCaPem === undefined ? {} : { clientCaPem }),
      },
      listener,
    );
    servers.add(server);
    return {
      ...server,
      close: async () => {
        servers.delete(server);
        await server.close();
      },
    };
  };

  let userCount = 0;
  let certDirCount = 0;
  const getStatusCode = async (path: string): Promise<number> =>
    (await getUrl(`${serverUrl}${path}`, 10_000, adminTls)).statusCode;
  const controlPlane: ControlPlane = {
    kubeConfig,
    kubeConfigPath,
    serverUrl,
    workDirPath,
    binaries,
    get processIds() {
      return processes.map((managed) => managed.pid);
    },
    startupMs: Date.now() - startedAtMs,
    applyCrd: (crd, applyOptions) => applyCrd(kubeConfig, adminTls, serverUrl, crd, applyOptions?.timeoutMs ?? 30_000),
    registerWebhooks: (registration) =>
      registerWebhooks({ kubeConfig, startServer: (listener) => startServer(listener) }, registration),
    registerApiService: (registration) =>
      registerApiService(
        {
          kubeConfig,
          frontProxyCaPem: pkis.frontProxyCa.certPem,
          startServer,
          getStatusCode,
        },
        registration,
      ),
    frontProxyClientTls: { certPem: pkis.frontProxyClient.certPem, keyPem: pkis.frontProxyClient.keyPem },
    routeApiService: (spec) => routeApiService({ kubeConfig, getStatusCode }, spec),
    servingCertificateDir: async (dnsNames) => {
      certDirCount += 1;
      const dirPath = join(workDirPath, `serving-${certDirCount}`);
      await mkdir(dirPath, { recursive: true });
      const cert = await pkis.pki.issue(pkis.clusterCa, `serving-${certDirCount}`, {
        commonName: dnsNames[0] ?? "localhost",
        usage: "server",
        dnsNames: ["localhost", ...dnsNames],
        ipAddresses: [loopbackHost],
      });
      await writeFile(join(dirPath, "tls.crt"), cert.certPem);
      await writeFile(join(dirPath, "tls.key"), cert.keyPem, { mode: 0o600 });
      return { dirPath, caBundle: base64(pkis.clusterCa.certPem) };
    },
    startControllerManager: async (managerOptions) => {
      const manager = await startControllerManager(
        {
          binaries,
          workDirPath,
          kubeConfigPath,
          ...(keepWorkDir ? {} : { orphanDirPath: workDirPath }),
        },
        managerOptions,
      );
      managers.push(manager);
      return manager;
    },
    startHttpsServer: (listener, dnsNames) => startServer(listener, dnsNames),
    kubeConfigFor: async (credentials) => {
      userCount += 1;
      const cert = await pkis.pki.issue(pkis.clusterCa, `user-${userCount}`, {
        commonName: credentials.user,
        organizations: credentials.groups ?? [],
        usage: "client",
      });
      return buildKubeConfig(serverUrl, pkis.clusterCa.certPem, credentials.user, cert);
    },
    apiServerLogTail: async (lineCount) => (apiServerProcess ? apiServerProcess.logTail(lineCount) : ""),
    stop: () => {
      stopped ??= stopAll();
      return stopped;
    },
  };
  return controlPlane;
}

async function applyCrd(
  kubeConfig: KubeConfig,
  tls: TlsClientOptions,
  serverUrl: string,
  crd: V1CustomResourceDefinition,
  timeoutMs: number,
): Promise<V1CustomResourceDefinition> {
  const name = crd.metadata?.name;
  if (!name) throw new Error("apply CRD: metadata.name is required");
  const api = kubeConfig.makeApiClient(ApiextensionsV1Api);
  try {
    try {
      await api.createCustomResourceDefinition({ body: crd });
    } catch (error) {
      if (!(error instanceof ApiException && error.code === 409)) throw error;
      const existing = await api.readCustomResourceDefinition({ name });
      await api.replaceCustomResourceDefinition({
        name,
        body: { ...crd, metadata: { ...crd.metadata, resourceVersion: existing.metadata?.resourceVersion ?? "" } },
      });
    }
    const established = await waitFor(`CRD ${name} to be Established`, { timeoutMs }, async () => {
      const current = await api.readCustomResourceDefinition({ name });
      const conditions = current.status?.conditions ?? [];
      const isTrue = (type: string): boolean => conditions.some((c) => c.type === type && c.status === "True");
      return isTrue("Established") && isTrue("NamesAccepted") ? current : undefined;
    });
    // Established precedes discovery; clients that map kinds to resources need both.
    const plural = crd.spec.names.plural;
    for (const version of crd.spec.versions.filter((v) => v.served)) {
      await waitFor(`CRD ${name} ${version.name} in discovery`, { timeoutMs }, async () => {
        const response = await getUrl(`${serverUrl}/apis/${crd.spec.group}/${version.name}`, 5_000, tls);
        if (response.statusCode !== 200) return undefined;
        const list = JSON.parse(response.body) as { resources?: Array<{ name: string }> };
        return list.resources?.some((resource) => resource.name === plural) ? true : undefined;
      });
      // Listed in discovery precedes a ready watch cache: until the API server has built the
      // resource's storage, a list or watch from the cache answers 429 "storage is (re)initializing",
      // which a controller started now would log as a failing watch.
      await waitFor(`CRD ${name} ${version.name} served from the watch cache`, { timeoutMs }, async () => {
        const url = `${serverUrl}/apis/${crd.spec.group}/${version.name}/${plural}?limit=1&resourceVersion=0`;
        return (await getUrl(url, 5_000, tls)).statusCode === 200 ? true : undefined;
      });
    }
    // The API server holds every create for 2 s while a CRD was Established
    // less than 2 s ago (for HA peers to catch up); wait that out here so it
    // does not land inside the first test. Same machine, same clock.
    const establishedAt = established.status?.conditions?.find((c) => c.type === "Established")?.lastTransitionTime;
    const settleMs = establishedAt ? new Date(establishedAt).getTime() + 2_100 - Date.now() : 0;
    if (settleMs > 0) await new Promise((resolveTimer) => setTimeout(resolveTimer, Math.min(settleMs, 2_100)));
    return established;
  } catch (cause) {
    throw new Error(`apply CRD ${name}`, { cause });
  }
}
