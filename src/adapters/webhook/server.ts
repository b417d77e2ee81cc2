/**
 * The HTTPS admission server every replica runs. Whatever arrives, it answers
 * with a well-formed AdmissionReview: a malformed body, an unknown path, a
 * failed or slow lookup all become an explicit refusal with a reason
 * (failurePolicy Fail would refuse the write anyway; this says why). It never
 * lets a request hang past its own deadline.
 */
import type { AddressInfo } from "node:net";
import { createServer, type Server } from "node:https";
import express from "express";
import type { Logger } from "../telemetry/logger.js";
import { webhookPaths, type Handler } from "./handlers.js";
import { decodeReview, denied, encodeReview, type Verdict } from "./review.js";

/**
 * Kubernetes accepts request bodies up to 3 MiB; a review carries the object
 * and, on update, the old object, plus JSON escaping. 7 MiB covers both.
 */
export const defaultBodyLimitBytes = 7 * 1024 * 1024;

export interface WebhookAppOptions {
  readonly handlers: Readonly<Record<keyof typeof webhookPaths, Handler>>;
  readonly logger: Logger;
  /** Deadline for one answer; keep it below the configurations' timeoutSeconds. */
  readonly answerTimeoutMs: number;
  readonly bodyLimitBytes?: number;
  /** Called once per answered review (metrics). */
  readonly observe?: (webhook: string, verdict: Verdict, durationSeconds: number) => void;
}

function errorText(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

async function decide(handler: Handler, body: string, timeoutMs: number): Promise<{ uid: string; verdict: Verdict }> {
  const decoded = decodeReview(body);
  if (!decoded.ok) return { uid: decoded.uid, verdict: denied(400, `malformed admission review: ${decoded.reason}`) };
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<Verdict>((resolve) => {
    timer = setTimeout(
      () =>
        resolve(denied(500, `internal error: no verdict within ${timeoutMs} ms; the write was not admitted, retry it`)),
      timeoutMs,
    );
  });
  try {
    const verdict = await Promise.race([
      handler(decoded.request).catch((error: unknown) =>
        denied(500, `internal error: ${errorText(error)}; the write was not admitted, retry it`),
      ),
      late,
    ]);
    return { uid: decoded.request.uid, verdict };
  } finally {
    clearTimeout(timer);
  }
}

export function webhookApp(opts: WebhookAppOptions): express.Express {
  const app = express();
  app.disable("x-powered-by");
  // Any content type is read as text: decoding is ours, so every body gets a review back.
  app.use(
    express.text({ type: () => true, limit: opts.bodyLimitBytes ?? defaultBodyLimitBytes, defaultCharset: "utf-8" }),
  );
  for (const [name, path] of Object.entries(webhookPaths) as [keyof typeof webhookPaths, string][]) {
    const handler = opts.handlers[name];
    app.post(path, async (req, res) => {
      const started = process.hrtime.bigint();
      const body = typeof req.body === "string" ? req.body : "";
      const { uid, verdict } = await decide(handler, body, opts.answerTimeoutMs);
      if (!verdict.allowed && verdict.code === 500)
        opts.logger.warn("admission failed internally", { webhook: name, uid, message: verdict.message });
      opts.observe?.(name, verdict, Number(process.hrtime.bigint() - started) / 1e9);
      res.status(200).json(encodeReview(uid, verdict));
    });
  }
  app.use((req, res) => {
    res
      .status(404)
      .json(
        encodeReview(
          "",
          denied(
            400,
            `no admission webhook at ${req.method} ${req.path}; paths: ${Object.values(webhookPaths).join(", ")}`,
          ),
        ),
      );
  });
  // Body errors (too large, bad charset, aborted) still get a review.
  app.use((error: unknown, _req: express.Request, res: express.Response, next: express.NextFunction) => {
    if (res.headersSent) {
      next(error);
      return;
    }
    const status =
      typeof error === "object" && error !== null && typeof (error as { status?: unknown }).status === "number"
        ? (error as { status: number }).status
        : 500;
    const code = status >= 400 && status < 500 ? 400 : 500;
    res.status(200).json(encodeReview("", denied(code, `cannot read the admission review: ${errorText(error)}`)));
  });
  return app;
}

export interface ServingCertificate {
  readonly certPem: string;
  readonly keyPem: string;
}

export interface RunningWebhookServer {
  readonly server: Server;
  readonly port: number;
  /** Serves a new certificate to new connections (rotation). */
  setCertificate(tls: ServingCertificate): void;
  close(): Promise<void>;
}

/** Listens on "host:port" over HTTPS; resolves once bound. */
export async function startWebhookServer(
  app: express.Express,
  address: string,
  tls: ServingCertificate,
): Promise<RunningWebhookServer> {
  const index = address.lastIndexOf(":");
  const host = address.slice(0, index);
  const portNumber = Number(address.slice(index + 1));
  const server = createServer({ cert: tls.certPem, key: tls.keyPem }, app);
  // The API server keeps connections open; a stalled client must not hold one forever.
  server.requestTimeout = 30_000;
  server.headersTimeout = 20_000;
  await new Promise<void>((resolve, reject) => {
    server.once("error", (cause) => reject(new Error(`listen on ${address} (https)`, { cause })));
    if (host === "") server.listen(portNumber, () => resolve());
    else server.listen(portNumber, host, () => resolve());
  });
  let closed: Promise<void> | undefined;
  return {
    server,
    port: (server.address() as AddressInfo).port,
    setCertificate: (next) => server.setSecureContext({ cert: next.certPem, key: next.keyPem }),
    close: () => {
      closed ??= new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      });
      return closed;
    },
  };
}
