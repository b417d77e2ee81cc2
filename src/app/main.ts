/**
 * The composition root of `mds-scaler controller`: reads the configuration
 * once, builds the adapters, wires them into the controller and the HTTP
 * server, and runs until SIGTERM or SIGINT.
 */
import { randomBytes } from "node:crypto";
import type { Server } from "node:http";
import { hostname } from "node:os";
import { AuthenticationV1Api, type KubeConfig } from "@kubernetes/client-node";
import { LeaderElector } from "../adapters/kubernetes/leader.js";
import { callOptions } from "../adapters/kubernetes/call-options.js";
import { KubeResources, modelDeploymentResource } from "../adapters/kubernetes/resources.js";
import { WatchedResources } from "../adapters/kubernetes/watch.js";
import {
  CertificateKeeper,
  readCertificateDir,
  serviceHosts,
  watchCertificateDir,
} from "../adapters/webhook/certificates.js";
import { createHandlers } from "../adapters/webhook/handlers.js";
import {
  startWebhookServer,
  webhookApp,
  type RunningWebhookServer,
  type ServingCertificate,
} from "../adapters/webhook/server.js";
import { PrometheusClient, type PrometheusQueryClient } from "../adapters/prometheus/client.js";
import { PrometheusSignalSource } from "../adapters/prometheus/source.js";
import { PromqlSignals } from "../adapters/prometheus/signal-port.js";
import { listen, opsApp } from "../adapters/http/server.js";
import {
  answerUnauthenticated,
  externalMetricReadPath,
  readFrontProxyTrust,
  startExternalMetricsServer,
  SubjectAccessReviewAuthorizer,
  type RunningExternalMetricsServer,
  type ScalerReader,
} from "../adapters/external-metrics/index.js";
import { FailureLog, backoffDelayMs } from "../adapters/retry/backoff.js";
import { createLogger, type Logger } from "../adapters/telemetry/logger.js";
import { ScalerMetrics } from "../adapters/telemetry/metrics.js";
import { ClusterUnreachableError, clusterConfigFrom, requireApiServer } from "./cluster.js";
import { ConfigError, loadConfig, prometheusSignalConfigOf, type Config } from "./config.js";
import { Controller, type SignalSource } from "./controller.js";
import { TickLoop } from "./tick-loop.js";

export interface RunningController {
  /** The controller of the current leadership (a new one each time this replica becomes leader). */
  readonly controller: Controller;
  readonly metrics: ScalerMetrics;
  readonly metricsPort: number;
  /** The HTTPS admission server's port, when webhooks are enabled. */
  readonly webhookPort: number | undefined;
  /** The HTTPS external metrics API's port, when it is enabled. */
  readonly externalMetricsPort: number | undefined;
  /** True while this replica may plan and write. */
  isLeader(): boolean;
  /** Stops everything; `releaseLease: false` leaves the Lease to expire, as a crash would. */
  stop(opts?: { releaseLease?: boolean }): Promise<void>;
}

/** Times every query into the PromQL duration histogram. */
function timedClient(inner: PrometheusQueryClient, metrics: ScalerMetrics): PrometheusQueryClient {
  return {
    async instantQuery(query, atUnixMs, name) {
      const end = metrics.timeQuery(query, name);
      try {
        return await inner.instantQuery(query, atUnixMs, name);
      } finally {
        end();
      }
    },
  };
}

/** The username of this process's own API requests, as the API server sees it. */
export async function whoAmI(kubeConfig: KubeConfig, timeoutMs: number): Promise<string> {
  try {
    const review = await kubeConfig
      .makeApiClient(AuthenticationV1Api)
      .createSelfSubjectReview(
        { body: { apiVersion: "authentication.k8s.io/v1", kind: "SelfSubjectReview" } },
        callOptions(timeoutMs),
      );
    const username = review.status?.userInfo?.username ?? "";
    if (username === "") throw new Error("the answer names no user");
    return username;
  } catch (error) {
    throw new Error("ask the API server who this controller is (SelfSubjectReview)", { cause: error });
  }
}

const identityBackoff = { initialMs: 1_000, maxMs: 10_000 } as const;

/** Resolves the controller identity now, or keeps asking in the background; "" until known (the fence then trusts no one). */
function controllerIdentitySource(
  config: Config,
  kubeConfig: KubeConfig,
  logger: Logger,
): { get: () => string; ready: Promise<void>; stop: () => void } {
  let identity = config.controllerIdentity;
  if (identity !== "") return { get: () => identity, ready: Promise.resolve(), stop: () => undefined };
  let timer: NodeJS.Timeout | undefined;
  let stopped = false;
  // Warned once when asking starts failing, not on every retry; retries back off to 10 s, so the fence trusts this replica soon after the API server answers.
  const failures = new FailureLog(
    "asking the API server for the controller identity (the fence refuses every commit until it is known)",
    logger,
  );
  const ready = new Promise<void>((resolve) => {
    const attempt = (): void => {
      whoAmI(kubeConfig, config.kubeTimeoutMs).then(
        (name) => {
          identity = name;
          failures.succeeded(Date.now());
          logger.info("the binding fence trusts commits from this identity", { controllerIdentity: name });
          resolve();
        },
        (error: unknown) => {
          const count = failures.failed(error, Date.now());
          if (!stopped) timer = setTimeout(attempt, backoffDelayMs(count, Math.random(), identityBackoff));
        },
      );
    };
    attempt();
  });
  return {
    get: () => identity,
    ready,
    stop: () => {
      stopped = true;
      clearTimeout(timer);
    },
  };
}

interface Webhooks {
  readonly server: RunningWebhookServer;
  stop(): Promise<void>;
}

type CertificateSource = {
  tls: ServingCertificate;
  watch?: (apply: (tls: ServingCertificate) => void) => () => void;
};

/** The serving certificate of the HTTPS servers: the mounted directory (cert-manager) or the shared generated one. */
async function servingCertificate(
  config: Config,
  kubeConfig: KubeConfig,
  logger: Logger,
  nowMs: number,
): Promise<CertificateSource> {
  const checkMs = config.webhookCertCheckSeconds * 1000;
  if (config.webhookCertDir !== "") {
    const tls = await readCertificateDir(config.webhookCertDir);
    return {
      tls,
      watch: (apply) =>
        watchCertificateDir(config.webhookCertDir, tls, checkMs, apply, (error) =>
          logger.warn("re-read the webhook certificate", { error }),
        ),
    };
  }
  if (config.webhookTlsSecret === "") {
    throw new ConfigError([
      `an HTTPS server (--webhook-address or --external-metrics-address) is set, but neither --webhook-tls-secret (MDS_WEBHOOK_TLS_SECRET) nor --webhook-cert-dir (MDS_WEBHOOK_CERT_DIR) says where its certificate comes from`,
    ]);
  }
  const hosts = serviceHosts(
    config.webhookService,
    config.webhookCertHosts.split(",").map((h) => h.trim()),
  );
  if (hosts.length === 0)
    throw new ConfigError([
      "--webhook-service (MDS_WEBHOOK_SERVICE) or --webhook-cert-hosts must name the host the API server calls",
    ]);
  const keeper = new CertificateKeeper({
    kubeConfig,
    namespace: config.podNamespace,
    secretName: config.webhookTlsSecret,
    hosts,
    timeoutMs: config.kubeTimeoutMs,
    validatingConfiguration: config.validatingWebhookConfiguration,
    mutatingConfiguration: config.mutatingWebhookConfiguration,
    apiService: config.externalMetricsApiService,
    // The API server applies a changed configuration within moments; a few seconds leaves room.
    settleMs: Math.max(checkMs, 5_000),
    onStep: (reason) => logger.info("webhook certificate changed", { reason }),
  });
  const tls = await keeper.pass(nowMs);
  logger.info("serving certificate ready and CA bundle patched", {
    secret: `${config.podNamespace}/${config.webhookTlsSecret}`,
    hosts,
  });
  // One keeper pass per interval, whichever servers take the certificate.
  const subscribers = new Set<(tls: ServingCertificate) => void>();
  let served = tls;
  let timer: NodeJS.Timeout | undefined;
  const tick = (): void => {
    keeper.pass(Date.now()).then(
      (next) => {
        if (next.certPem === served.certPem && next.keyPem === served.keyPem) return;
        served = next;
        for (const apply of subscribers) apply(next);
      },
      (error: unknown) => logger.warn("check the webhook certificate", { error }),
    );
  };
  return {
    tls,
    watch: (apply) => {
      subscribers.add(apply);
      if (timer === undefined) {
        timer = setInterval(tick, checkMs);
        timer.unref();
      }
      return () => {
        subscribers.delete(apply);
        if (subscribers.size === 0) {
          clearInterval(timer);
          timer = undefined;
        }
      };
    },
  };
}

async function startWebhooks(opts: {
  config: Config;
  kubeConfig: KubeConfig;
  logger: Logger;
  metrics: ScalerMetrics;
  identity: () => string;
  certificate: CertificateSource;
}): Promise<Webhooks> {
  const { config, logger } = opts;
  const lookupTimeoutMs = Math.min(config.kubeTimeoutMs, Math.floor(config.webhookTimeoutMs / 2));
  const lookups = new KubeResources(opts.kubeConfig, {
    timeoutMs: lookupTimeoutMs,
    targetResource: modelDeploymentResource(config.targetApiVersion),
  });
  const app = webhookApp({
    handlers: createHandlers({ lookups, controllerIdentity: opts.identity, lookupTimeoutMs }),
    logger,
    answerTimeoutMs: config.webhookTimeoutMs,
    limits: { maxConcurrent: config.webhookMaxConcurrent, maxQueued: config.webhookMaxQueued },
    observe: (webhook, verdict, seconds) => opts.metrics.observeWebhookAnswer(webhook, verdict, seconds),
    onShed: (reason) => opts.metrics.webhookShed.inc({ reason }),
  });
  const { certificate } = opts;
  const server = await startWebhookServer(app, config.webhookAddress, certificate.tls);
  const stopWatch = certificate.watch?.((tls) => {
    server.setCertificate(tls);
    logger.info("serving a renewed webhook certificate");
  });
  logger.info("serving admission webhooks over HTTPS", { address: config.webhookAddress, port: server.port });
  return {
    server,
    stop: async () => {
      stopWatch?.();
      await server.close();
    },
  };
}

interface ExternalMetrics {
  readonly server: RunningExternalMetricsServer;
  stop(): Promise<void>;
}

/** How often the front-proxy CA is re-read from the API server, so a rotated CA is trusted without a restart. */
const frontProxyTrustRefreshMs = 60_000;

async function startExternalMetrics(opts: {
  config: Config;
  kubeConfig: KubeConfig;
  logger: Logger;
  certificate: CertificateSource;
  reader: ScalerReader;
  leaderRenewing: () => boolean;
  nowMs: () => number;
}): Promise<ExternalMetrics> {
  const { config, logger } = opts;
  let trust = await readFrontProxyTrust(opts.kubeConfig, config.kubeTimeoutMs);
  let tls = opts.certificate.tls;
  const server = await startExternalMetricsServer({
    address: config.externalMetricsAddress,
    tls,
    trust,
    deps: {
      reader: opts.reader,
      authorizer: new SubjectAccessReviewAuthorizer(opts.kubeConfig, {
        timeoutMs: config.kubeTimeoutMs,
        cacheMs: 10_000,
        nowMs: opts.nowMs,
      }),
      leaderRenewing: opts.leaderRenewing,
      logger: logger.child({ server: "external-metrics" }),
    },
  });
  const stopWatch = opts.certificate.watch?.((next) => {
    tls = next;
    server.setTls(tls, trust);
  });
  const refresh = setInterval(() => {
    readFrontProxyTrust(opts.kubeConfig, config.kubeTimeoutMs).then(
      (next) => {
        if (next.caPem === trust.caPem && JSON.stringify(next) === JSON.stringify(trust)) return;
        trust = next;
        server.setTls(tls, trust);
        logger.info("trusting a new front-proxy CA for the external metrics API");
      },
      (error: unknown) => logger.warn("re-read the front-proxy CA", { error }),
    );
  }, frontProxyTrustRefreshMs);
  refresh.unref();
  logger.info("serving the external metrics API over HTTPS", {
    address: config.externalMetricsAddress,
    port: server.port,
  });
  return {
    server,
    stop: async () => {
      clearInterval(refresh);
      stopWatch?.();
      await server.close();
    },
  };
}

/** Starts the controller with everything it needs; used by the CLI and the end-to-end tests. */
export async function startController(opts: {
  config: Config;
  kubeConfig: KubeConfig;
  logger?: Logger;
  nowMs?: () => number;
  source?: SignalSource;
}): Promise<RunningController> {
  const { config } = opts;
  const nowMs = opts.nowMs ?? (() => Date.now());
  const logger = opts.logger ?? createLogger({ level: config.logLevel });
  const metrics = new ScalerMetrics();
  const identityName = config.podName !== "" ? config.podName : `${hostname()}-${randomBytes(3).toString("hex")}`;
  const elector =
    config.leaseName === ""
      ? undefined
      : new LeaderElector({
          kubeConfig: opts.kubeConfig,
          namespace: config.podNamespace,
          name: config.leaseName,
          identity: identityName,
          leaseDurationSeconds: config.leaseDurationSeconds,
          retryPeriodMs: config.leaseRetryMs,
          timeoutMs: Math.min(config.kubeTimeoutMs, config.leaseRetryMs * 2),
          renewDeadlineMs: config.leaseRenewDeadlineMs,
          // Every write of the controller is bounded by this timeout; the Lease timing is checked against it.
          writeTimeoutMs: config.kubeTimeoutMs,
          logger: logger.child({ replica: identityName }),
          onStartedLeading: () => {
            metrics.setLeading(true);
            logger.info("leading: the control loop runs on this replica", { replica: identityName });
          },
          onStoppedLeading: () => {
            metrics.setLeading(false);
            logger.info("following: the control loop stops on this replica", { replica: identityName });
          },
        });
  const resources = new KubeResources(opts.kubeConfig, {
    timeoutMs: config.kubeTimeoutMs,
    // Every write asks the Lease first, right before it is sent, and is aborted on step-down.
    ...(elector === undefined ? {} : { writeGuard: () => elector.writePermit() }),
    targetResource: modelDeploymentResource(config.targetApiVersion),
  });
  // Passes read watch caches; commits and conflict re-reads go to the API server.
  const store = new WatchedResources({
    resources,
    namespace: config.watchNamespace,
    logger,
  });
  await store.start();
  const client = timedClient(
    new PrometheusClient({ endpoint: config.prometheusUrl, timeoutMs: config.prometheusTimeoutMs }),
    metrics,
  );
  const source =
    opts.source ??
    new PromqlSignals(new PrometheusSignalSource(client, prometheusSignalConfigOf(config)), nowMs, logger);
  // A fresh controller per leadership: its memory starts from the objects' status.
  const makeController = (): Controller =>
    new Controller({
      store,
      source,
      metrics,
      logger,
      nowMs,
      namespace: config.watchNamespace,
      latencyGuardReading: config.latencyGuardReading,
      ...(elector === undefined ? {} : { leaderToken: () => elector.leaderToken() }),
    });
  let controller = makeController();

  const identity = controllerIdentitySource(config, opts.kubeConfig, logger);
  let webhooks: Webhooks | undefined;
  let certificate: CertificateSource | undefined;
  if (config.webhookAddress !== "" || config.externalMetricsAddress !== "") {
    try {
      certificate = await servingCertificate(config, opts.kubeConfig, logger, nowMs());
      if (config.webhookAddress !== "") {
        webhooks = await startWebhooks({
          config,
          kubeConfig: opts.kubeConfig,
          logger,
          metrics,
          identity: identity.get,
          certificate,
        });
      }
    } catch (error) {
      identity.stop();
      throw error;
    }
  }

  metrics.setLeading(elector === undefined);
  const leading = (): boolean => elector === undefined || elector.isLeader;

  // External metrics are read from the watch cache, so every replica answers.
  const scalerReader: ScalerReader = {
    listScalers: async () => store.listScalers(),
    getTarget: (ns, name) => store.getTarget(ns, name),
  };
  // Without a Lease this replica always leads, and its loop runs while it serves.
  const leaderRenewing = (): boolean => elector === undefined || elector.leaderRenewing();
  let externalMetrics: ExternalMetrics | undefined;
  if (certificate !== undefined && config.externalMetricsAddress !== "") {
    try {
      externalMetrics = await startExternalMetrics({
        config,
        kubeConfig: opts.kubeConfig,
        logger,
        certificate,
        reader: scalerReader,
        leaderRenewing,
        nowMs,
      });
    } catch (error) {
      identity.stop();
      await webhooks?.stop();
      throw error;
    }
  }

  let passed = false;
  const app = opsApp({
    registry: metrics.registry,
    // A follower is ready once its webhooks serve; the leader also after its first pass.
    notReadyReason: () => (leading() && !passed ? "the first pass has not completed" : undefined),
  });
  // The external metrics reads, unauthenticated like /metrics beside them, for a KEDA metrics-api trigger.
  app.get(externalMetricReadPath, (req, res) => {
    answerUnauthenticated(
      {
        reader: scalerReader,
        leaderRenewing,
        logger,
      },
      req.originalUrl,
    ).then(
      (answer) => res.status(answer.status).json(answer.body),
      (error: unknown) => {
        logger.error("external metrics read failed", { url: req.originalUrl, error });
        res
          .status(500)
          .json({ kind: "Status", apiVersion: "v1", status: "Failure", code: 500, message: "see the controller log" });
      },
    );
  });
  let listening: Awaited<ReturnType<typeof listen>>;
  try {
    listening = await listen(app, config.metricsAddress);
  } catch (error) {
    identity.stop();
    await webhooks?.stop();
    await externalMetrics?.stop();
    throw error;
  }
  const { server, port } = listening;
  logger.info("serving /metrics, /healthz and /readyz", { address: config.metricsAddress, port });
  elector?.start();

  let leadership = elector?.leadershipsWon ?? 0;
  const loop = new TickLoop({
    periodMs: config.tickMs,
    logger,
    step: async () => {
      if (!leading()) return;
      const won = elector?.leadershipsWon ?? 0;
      if (won !== leadership) {
        leadership = won;
        controller = makeController();
      }
      await controller.tick();
      passed = true;
      // Leadership lost during the pass: drop what the pass reported after the loss.
      if (!leading()) metrics.setLeading(false);
    },
  });
  loop.start();

  return {
    get controller() {
      return controller;
    },
    metrics,
    metricsPort: port,
    webhookPort: webhooks?.server.port,
    externalMetricsPort: externalMetrics?.server.port,
    isLeader: leading,
    async stop(stopOpts = {}) {
      await loop.stop();
      await elector?.stop({ release: stopOpts.releaseLease !== false });
      identity.stop();
      await webhooks?.stop();
      await externalMetrics?.stop();
      await store.stop();
      await closeServer(server);
    },
  };
}

async function closeServer(server: Server): Promise<void> {
  await new Promise<void>((resolve) => server.close(() => resolve()));
}

/** `mds-scaler controller [flags]`: returns the exit code. */
export async function runController(
  argv: readonly string[],
  env: Readonly<Record<string, string | undefined>>,
  io: { stderr: (text: string) => void },
): Promise<number> {
  let config: Config;
  try {
    config = loadConfig(argv, env);
  } catch (error) {
    if (error instanceof ConfigError) {
      io.stderr(error.message + "\n");
      return 2;
    }
    throw error;
  }
  const logger = createLogger({ level: config.logLevel });
  let running: RunningController;
  try {
    // Before anything retries: a missing configuration or a silent API server ends the start here.
    const cluster = clusterConfigFrom(config, env);
    await requireApiServer(cluster, config.kubeTimeoutMs);
    running = await startController({ config, kubeConfig: cluster.kubeConfig, logger });
  } catch (error) {
    if (error instanceof ConfigError) {
      io.stderr(error.message + "\n");
      return 2;
    }
    if (error instanceof ClusterUnreachableError) {
      io.stderr(error.message + "\n");
      return 1;
    }
    // The Deployment restarts the pod; the log says what failed (certificate, Secret, listen).
    logger.error("start failed", { error });
    return 1;
  }
  await new Promise<void>((resolve) => {
    process.once("SIGTERM", resolve);
    process.once("SIGINT", resolve);
  });
  logger.info("stopping");
  await running.stop();
  logger.info("stopped");
  return 0;
}
