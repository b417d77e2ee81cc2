import { request as httpRequest, type IncomingMessage } from "node:http";
import { request as httpsRequest } from "node:https";
import { createServer } from "node:net";

/** Loopback only: tests never send traffic anywhere else. */
export const loopbackHost = "127.0.0.1";

/** A port that was free a moment ago; callers retry if they lose the race. */
export async function freeLoopbackPort(): Promise<number> {
  return new Promise<number>((resolvePort, reject) => {
    const server = createServer();
    server.unref();
    server.once("error", reject);
    server.listen(0, loopbackHost, () => {
      const address = server.address();
      const portNumber = typeof address === "object" && address ? address.port : 0;
      server.close(() => (portNumber > 0 ? resolvePort(portNumber) : reject(new Error("no port assigned"))));
    });
  });
}

export interface TlsClientOptions {
  caPem: string;
  certPem?: string;
  keyPem?: string;
}

export interface SimpleResponse {
  statusCode: number;
  body: string;
}

/** One GET with a deadline; used for readiness probes, not for API work. */
export async function getUrl(url: string, timeoutMs: number, tls?: TlsClientOptions): Promise<SimpleResponse> {
  const parsed = new URL(url);
  if (parsed.hostname !== loopbackHost) throw new Error(`refusing non-loopback URL ${url}`);
  return new Promise<SimpleResponse>((resolveResponse, reject) => {
    const onResponse = (res: IncomingMessage): void => {
      const chunks: Buffer[] = [];
      res.on("data", (chunk: Buffer) => chunks.push(chunk));
      res.on("end", () =>
        resolveResponse({ statusCode: res.statusCode ?? 0, body: Buffer.concat(chunks).toString("utf8") }),
      );
      res.on("error", reject);
    };
    const req =
      parsed.protocol === "https:"
        ? httpsRequest(
            parsed,
            { method: "GET", timeout: timeoutMs, ca: tls?.caPem, cert: tls?.certPem, key: tls?.keyPem, agent: false },
            onResponse,
          )
        : httpRequest(parsed, { method: "GET", timeout: timeoutMs, agent: false }, onResponse);
    req.on("timeout", () => req.destroy(new Error(`GET ${url}: no answer in ${timeoutMs} ms`)));
    req.on("error", reject);
    req.end();
  });
}

export interface WaitOptions {
  timeoutMs: number;
  intervalMs?: number;
  /** Returns a reason to give up early (a process died), or undefined. */
  abortReason?: () => string | undefined;
}

/**
 * Polls `probe` until it returns a value other than undefined. Errors thrown by
 * the probe count as "not yet" and the last one is attached to the timeout.
 */
export async function waitFor<T>(what: string, options: WaitOptions, probe: () => Promise<T | undefined>): Promise<T> {
  const deadline = Date.now() + options.timeoutMs;
  const intervalMs = options.intervalMs ?? 100;
  let lastError: unknown;
  for (;;) {
    const abortReason = options.abortReason?.();
    if (abortReason !== undefined) throw new Error(`${what}: ${abortReason}`, { cause: lastError });
    try {
      const value = await probe();
      if (value !== undefined) return value;
    } catch (error) {
      lastError = error;
    }
    if (Date.now() >= deadline) {
      throw new Error(`${what}: not done after ${options.timeoutMs} ms`, { cause: lastError });
    }
    await new Promise((resolveTimer) => setTimeout(resolveTimer, intervalMs));
  }
}
