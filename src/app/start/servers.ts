/**
 * The servers builder: the HTTPS admission webhooks and external metrics API when enabled, then the
 * plain HTTP server of /metrics, /healthz, /readyz and the unauthenticated external metric reads.
 * Each registers its close (and its certificate subscription) as soon as it listens.
 */
import type { Server } from "node:http";
import {
  answerUnauthenticated,
  externalMetricReadPath,
  readFrontProxyTrust,
  startExternalMetricsServer,
  SubjectAccessReviewAuthorizer,
  type ScalerReader,
} from "../../adapters/external-metrics/index.js";
import { listen, opsApp } from "../../adapters/http/server.js";
import { KubeResources, modelDeploymentResource } from "../../adapters/kubernetes/resources.js";
import type { WatchedResources } from "../../adapters/kubernetes/watch.js";
import { createHandlers } from "../../adapters/webhook/handlers.js";
import { startWebhookServer, webhookApp } from "../../adapters/webhook/server.js";
import { engineScrapeIntervalSeconds } from "../settings.js";
import type { StartContext } from "./context.js";
import type { Leadership } from "./leadership.js";
import type { CertificateSource } from "./tls.js";

export interface Servers {
  readonly metricsPort: number;
  /** The HTTPS admission server's port, when webhooks are enabled. */
  readonly webhookPort: number | undefined;
  /** The HTTPS external metrics API's port, when it is enabled. */
  readonly externalMetricsPort: number | undefined;
  /** Called after each completed pass: the leader is ready from its first one. */
  readonly passed: () => void;
}

async function startWebhooks(
  ctx: StartContext,
  leadership: Leadership,
  certificate: CertificateSource,
): Promise<number> {
  const { config, logger, metrics } = ctx;
  const lookupTimeoutMs = Math.min(config.kubeTimeoutMs, Math.floor(config.webhookTimeoutMs / 2));
  const lookups = new KubeResources(ctx.kubeConfig, {
    timeoutMs: lookupTimeoutMs,
    targetResource: modelDeploymentResource(config.targetApiVersion),
  });
  const app = webhookApp({
    handlers: createHandlers({
      lookups,
      controllerIdentity: leadership.controllerIdentity,
      lookupTimeoutMs,
      engineScrapeIntervalSeconds: engineScrapeIntervalSeconds(config.engineScrapeInterval),
    }),
    logger,
    answerTimeoutMs: config.webhookTimeoutMs,
    limits: { maxConcurrent: config.webhookMaxConcurrent, maxQueued: config.webhookMaxQueued },
    observe: (webhook, verdict, seconds) => metrics.observeWebhookAnswer(webhook, verdict, seconds),
    onShed: (reason) => metrics.webhookShed.inc({ reason }),
  });
  const server = await startWebhookServer(app, config.webhookAddress, certificate.tls);
  ctx.lifecycle.onStop("webhook server", () => server.close());
  const unsubscribe = certificate.watch((tls) => {
    server.setCertificate(tls);
    logger.info("serving a renewed webhook certificate");
  });
  ctx.lifecycle.onStop("webhook certificate subscription", unsubscribe);
  logger.info("serving admission webhooks over HTTPS", { address: config.webhookAddress, port: server.port });
  return server.port;
}

/** How often the front-proxy CA is re-read from the API server, so a rotated CA is trusted without a restart. */
const frontProxyTrustRefreshMs = 60_000;

async function startExternalMetrics(
  ctx: StartContext,
  leadership: Leadership,
  certificate: CertificateSource,
  reader: ScalerReader,
): Promise<number> {
  const { config, logger } = ctx;
  let trust = await readFrontProxyTrust(ctx.kubeConfig, config.kubeTimeoutMs);
  let tls = certificate.tls;
  const server = await startExternalMetricsServer({
    address: config.externalMetricsAddress,
    tls,
    trust,
    deps: {
      reader,
      authorizer: new SubjectAccessReviewAuthorizer(ctx.kubeConfig, {
        timeoutMs: config.kubeTimeoutMs,
        cacheMs: 10_000,
        nowMs: ctx.nowMs,
      }),
      leaderRenewing: leadership.leaderRenewing,
      logger: logger.child({ server: "external-metrics" }),
    },
  });
  ctx.lifecycle.onStop("external metrics server", () => server.close());
  const unsubscribe = certificate.watch((next) => {
    tls = next;
    server.setTls(tls, trust);
  });
  const refresh = setInterval(() => {
    readFrontProxyTrust(ctx.kubeConfig, config.kubeTimeoutMs).then(
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
  ctx.lifecycle.onStop("external metrics certificate and CA refresh", () => {
    clearInterval(refresh);
    unsubscribe();
  });
  logger.info("serving the external metrics API over HTTPS", {
    address: config.externalMetricsAddress,
    port: server.port,
  });
  return server.port;
}

async function startOps(
  ctx: StartContext,
  leadership: Leadership,
  reader: ScalerReader,
): Promise<{ port: number; passed: () => void }> {
  const { logger } = ctx;
  let passed = false;
  const app = opsApp({
    registry: ctx.metrics.registry,
    // A follower is ready once its webhooks serve; the leader also after its first pass.
    notReadyReason: () => (leadership.leading() && !passed ? "the first pass has not completed" : undefined),
  });
  // The external metrics reads, unauthenticated like /metrics beside them, for a KEDA metrics-api trigger.
  app.get(externalMetricReadPath, (req, res) => {
    answerUnauthenticated({ reader, leaderRenewing: leadership.leaderRenewing, logger }, req.originalUrl).then(
      (answer) => res.status(answer.status).json(answer.body),
      (error: unknown) => {
        logger.error("external metrics read failed", { url: req.originalUrl, error });
        res
          .status(500)
          .json({ kind: "Status", apiVersion: "v1", status: "Failure", code: 500, message: "see the controller log" });
      },
    );
  });
  const { server, port } = await listen(app, ctx.config.metricsAddress);
  ctx.lifecycle.onStop("metrics server", () => closeServer(server));
  logger.info("serving /metrics, /healthz and /readyz", { address: ctx.config.metricsAddress, port });
  return { port, passed: () => void (passed = true) };
}

async function closeServer(server: Server): Promise<void> {
  await new Promise<void>((resolve) => server.close(() => resolve()));
}

export async function buildServers(
  ctx: StartContext,
  leadership: Leadership,
  store: WatchedResources,
  certificate: CertificateSource | undefined,
): Promise<Servers> {
  const { config } = ctx;
  // External metrics are read from the watch cache, so every replica answers.
  const reader: ScalerReader = {
    listScalers: async () => store.listScalers(),
    getTarget: (ns, name) => store.getTarget(ns, name),
  };
  const webhookPort =
    certificate !== undefined && config.webhookAddress !== ""
      ? await startWebhooks(ctx, leadership, certificate)
      : undefined;
  const externalMetricsPort =
    certificate !== undefined && config.externalMetricsAddress !== ""
      ? await startExternalMetrics(ctx, leadership, certificate, reader)
      : undefined;
  const ops = await startOps(ctx, leadership, reader);
  return { metricsPort: ops.port, webhookPort, externalMetricsPort, passed: ops.passed };
}
