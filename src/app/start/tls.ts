/**
 * The TLS builder: the serving certificate of the HTTPS servers (admission webhooks, external
 * metrics), from the mounted directory (cert-manager) or the generated Secret shared by every
 * replica, with one renewal check per interval whichever servers take it. Absent when neither server
 * is enabled. The configuration already checked that a source and a host are named.
 */
import { CertificateKeeper, readCertificateDir, watchCertificateDir } from "../../adapters/webhook/certificates.js";
import type { ServingCertificate } from "../../adapters/webhook/server.js";
import { certificateHosts } from "../config.js";
import type { StartContext } from "./context.js";

export interface CertificateSource {
  readonly tls: ServingCertificate;
  /** Calls `apply` with each renewed certificate; returns the unsubscribe. */
  readonly watch: (apply: (tls: ServingCertificate) => void) => () => void;
}

function mountedCertificate(ctx: StartContext, tls: ServingCertificate, checkMs: number): CertificateSource {
  const dir = ctx.config.webhookCertDir;
  return {
    tls,
    watch: (apply) =>
      watchCertificateDir(dir, tls, checkMs, apply, (error) =>
        ctx.logger.warn("re-read the webhook certificate", { error }),
      ),
  };
}

async function generatedCertificate(ctx: StartContext, checkMs: number): Promise<CertificateSource> {
  const { config, logger } = ctx;
  const hosts = certificateHosts(config);
  const keeper = new CertificateKeeper({
    kubeConfig: ctx.kubeConfig,
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
  const tls = await keeper.pass(ctx.nowMs());
  logger.info("serving certificate ready and CA bundle patched", {
    secret: `${config.podNamespace}/${config.webhookTlsSecret}`,
    hosts,
  });
  const subscribers = new Set<(tls: ServingCertificate) => void>();
  let served = tls;
  const timer = setInterval(() => {
    if (subscribers.size === 0) return;
    keeper.pass(Date.now()).then(
      (next) => {
        if (next.certPem === served.certPem && next.keyPem === served.keyPem) return;
        served = next;
        for (const apply of subscribers) apply(next);
      },
      (error: unknown) => logger.warn("check the webhook certificate", { error }),
    );
  }, checkMs);
  timer.unref();
  ctx.lifecycle.onStop("certificate renewal", () => clearInterval(timer));
  return {
    tls,
    watch: (apply) => {
      subscribers.add(apply);
      return () => subscribers.delete(apply);
    },
  };
}

export async function buildTls(ctx: StartContext): Promise<CertificateSource | undefined> {
  const { config } = ctx;
  if (config.webhookAddress === "" && config.externalMetricsAddress === "") return undefined;
  const checkMs = config.webhookCertCheckSeconds * 1000;
  if (config.webhookCertDir !== "") {
    return mountedCertificate(ctx, await readCertificateDir(config.webhookCertDir), checkMs);
  }
  return generatedCertificate(ctx, checkMs);
}
