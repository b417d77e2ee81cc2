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
import { decodeReview, denied, encodeReview, type DecodedReview, type Verdict } from "./review.js";

/**
 * Kubernetes accepts request bodies up to 3 MiB; a review carries the object
 * and, on update, the old object, plus JSON escaping. 7 MiB covers both.
 */
export const defaultBodyLimitBytes = 7 * 1024 * 1024;

/**
 * What one replica admits at once. Each review in flight holds its body and
 * its parsed form (at most ~25 MiB for a 7 MiB body within the value cap), so
 * these bound the heap whatever arrives (docs/webhooks.md, "Limits").
 */
export interface AdmissionLimits {
  /** Reviews read and decided at the same time. */
  readonly maxConcurrent: number;
  /** Reviews waiting, unread, for a slot; one more is refused at once with 429. */
  readonly maxQueued: number;
  /** How long a review may wait for a slot before it is refused with 429. */
  readonly queueTimeoutMs: number;
  /** Body size, in bytes. */
  readonly bodyLimitBytes: number;
  /** JSON values (objects, arrays, scalars) one body may hold; checked before parsing. */
  readonly maxJsonValues: number;
}

export const defaultAdmissionLimits: AdmissionLimits = {
  maxConcurrent: 8,
  maxQueued: 64,
  queueTimeoutMs: 2_000,
  bodyLimitBytes: defaultBodyLimitBytes,
  // A real ModelDeployment holds hundreds of values; 250k keeps a hostile 7 MiB
  // body of empty arrays (2.4 million values, ~75 MiB parsed) out.
  maxJsonValues: 250_000,
};

export interface WebhookAppOptions {
  readonly handlers: Readonly<Record<keyof typeof webhookPaths, Handler>>;
  readonly logger: Logger;
  /** Deadline for one answer; keep it below the configurations' timeoutSeconds. */
  readonly answerTimeoutMs: number;
  readonly limits?: Partial<AdmissionLimits>;
  /** Called once per answered review (metrics). */
  readonly observe?: (webhook: string, verdict: Verdict, durationSeconds: number) => void;
  /** Called once per review refused for load before it was read (metrics). */
  readonly onShed?: (reason: "queue-full" | "queue-timeout") => void;
}

function errorText(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/**
 * An upper bound of the JSON values in a body, found without building them,
 * stopping past `limit`. JSON.parse has no size or count limit, and a
 * streaming parser is an order of magnitude slower than it; one pass over the
 * bytes is enough to refuse a body whose parsed form would be large. Every
 * value but the first follows a `[`, `{` or `,` outside a string (a value
 * after a `:` was counted by the `{` or `,` before its key), so this counts
 * each value once and each container once more: at most twice the values.
 */
export function jsonValueCount(body: Buffer, limit: number): number {
  let count = 1;
  let inString = false;
  for (let i = 0; i < body.length; i++) {
    const c = body[i];
    if (inString) {
      if (c === 0x5c)
        i++; // backslash: skip the escaped byte
      else if (c === 0x22) inString = false;
    } else if (c === 0x22) inString = true;
    else if (c === 0x2c || c === 0x5b || c === 0x7b) {
      if (++count > limit) return count;
    }
  }
  return count;
}

/**
 * Reads the request's body into a review, synchronously, and drops the
 * request's reference to the bytes: while the handler awaits a lookup, only
 * the parsed review stays in memory.
 */
function readReview(req: express.Request, maxJsonValues: number): DecodedReview {
  const body: unknown = req.body;
  req.body = undefined;
  if (!Buffer.isBuffer(body)) return decodeReview("");
  if (jsonValueCount(body, maxJsonValues) > maxJsonValues)
    return {
      ok: false,
      uid: "",
      reason: `the body holds more than ${maxJsonValues} JSON values; no ModelDeployment or ModelDeploymentScaler is that large`,
    };
  return decodeReview(body.toString("utf8"));
}

async function decide(
  handler: Handler,
  decoded: DecodedReview,
  timeoutMs: number,
): Promise<{ uid: string; verdict: Verdict }> {
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

/**
 * A counting semaphore with a bounded wait list. A request takes a slot
 * before its body is read, so a waiting request holds a socket, not its body.
 */
class Slots {
  private inUse = 0;
  private readonly waiting: (() => void)[] = [];

  constructor(
    private readonly max: number,
    private readonly maxWaiting: number,
  ) {}

  /** Resolves with a release function, or with the reason the request is refused. */
  acquire(timeoutMs: number): Promise<(() => void) | "queue-full" | "queue-timeout"> {
    if (this.inUse < this.max) {
      this.inUse += 1;
      return Promise.resolve(this.releaser());
    }
    if (this.waiting.length >= this.maxWaiting) return Promise.resolve("queue-full");
    return new Promise((resolve) => {
      const wake = (): void => {
        clearTimeout(timer);
        resolve(this.releaser());
      };
      const timer = setTimeout(() => {
        const index = this.waiting.indexOf(wake);
        if (index >= 0) this.waiting.splice(index, 1);
        resolve("queue-timeout");
      }, timeoutMs);
      this.waiting.push(wake);
    });
  }

  private releaser(): () => void {
    let released = false;
    return () => {
      if (released) return;
      released = true;
      const next = this.waiting.shift();
      // The slot passes straight to the next waiter; the count stays.
      if (next !== undefined) next();
      else this.inUse -= 1;
    };
  }
}

export function webhookApp(opts: WebhookAppOptions): express.Express {
  const limits: AdmissionLimits = { ...defaultAdmissionLimits, ...opts.limits };
  const slots = new Slots(limits.maxConcurrent, limits.maxQueued);
  const app = express();
  app.disable("x-powered-by");
  // A slot before the body is read: the cap bounds the bodies in memory, not only the work.
  app.use((req, res, next) => {
    void slots.acquire(limits.queueTimeoutMs).then((slot) => {
      if (typeof slot === "function") {
        res.once("close", slot);
        next();
        return;
      }
      opts.onShed?.(slot);
      // No body was read, so there is no uid to answer with: an HTTP error the
      // API server reports as a failed call (failurePolicy Fail refuses the write).
      // The body is discarded as it arrives, never kept, and the answer goes once
      // it has been sent, so a client still writing does not see a closed socket.
      const refuse = (): void => {
        res
          .status(429)
          .set("Retry-After", "1")
          .json({
            kind: "Status",
            apiVersion: "v1",
            status: "Failure",
            code: 429,
            reason: "TooManyRequests",
            message:
              slot === "queue-full"
                ? `mds-scaler admission is at its limit (${limits.maxConcurrent} reviews in progress, ${limits.maxQueued} waiting); the write was not admitted, retry it`
                : `mds-scaler admission is at its limit: no slot within ${limits.queueTimeoutMs} ms (${limits.maxConcurrent} reviews in progress); the write was not admitted, retry it`,
          });
      };
      if (req.complete) refuse();
      else {
        req.once("end", refuse);
        req.resume();
      }
    });
  });
  // Any content type is read as bytes: decoding is ours, so every body gets a review back.
  app.use(express.raw({ type: () => true, limit: limits.bodyLimitBytes }));
  for (const [name, path] of Object.entries(webhookPaths) as [keyof typeof webhookPaths, string][]) {
    const handler = opts.handlers[name];
    app.post(path, async (req, res) => {
      const started = process.hrtime.bigint();
      const { uid, verdict } = await decide(handler, readReview(req, limits.maxJsonValues), opts.answerTimeoutMs);
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
