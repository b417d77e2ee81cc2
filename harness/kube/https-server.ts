import type { IncomingMessage, ServerResponse } from "node:http";
import { createServer, type Server } from "node:https";
import { loopbackHost } from "./net.js";

export type RequestListener = (req: IncomingMessage, res: ServerResponse) => void | Promise<void>;

/** An HTTPS server in the test process, on a loopback port, with a cert from the harness CA. */
export interface LocalHttpsServer {
  /** `https://127.0.0.1:<port>` */
  url: string;
  portNumber: number;
  /** Base64 PEM of the CA that signed the serving cert: the `caBundle` for webhooks and APIServices. */
  caBundle: string;
  close(): Promise<void>;
}

export interface HttpsServerTls {
  certPem: string;
  keyPem: string;
  caPem: string;
  /** When set, clients are asked for a certificate from this CA (checked by the listener). */
  clientCaPem?: string;
}

/** Writes a JSON body; shared by the webhook and APIService handlers. */
export function sendJson(res: ServerResponse, statusCode: number, body: unknown): void {
  const text = JSON.stringify(body);
  res.writeHead(statusCode, { "content-type": "application/json", "content-length": Buffer.byteLength(text) });
  res.end(text);
}

export async function readBody(req: IncomingMessage, limitBytes = 8 * 1024 * 1024): Promise<string> {
  const chunks: Buffer[] = [];
  let sizeBytes = 0;
  for await (const chunk of req) {
    const buffer = chunk as Buffer;
    sizeBytes += buffer.length;
    if (sizeBytes > limitBytes) throw new Error(`request body over ${limitBytes} bytes`);
    chunks.push(buffer);
  }
  return Buffer.concat(chunks).toString("utf8");
}

export async function startHttpsServer(tls: HttpsServerTls, listener: RequestListener): Promise<LocalHttpsServer> {
  const server: Server = createServer(
    {
      cert: tls.certPem,
      key: tls.keyPem,
      ...(tls.clientCaPem === undefined
        ? {}
        : // Verified per request by the listener, so that it can answer 401 with a reason.
          { ca: tls.clientCaPem, requestCert: true, rejectUnauthorized: false }),
    },
    (req, res) => {
      Promise.resolve()
        .then(() => listener(req, res))
        .catch((error: unknown) => {
          if (!res.headersSent) sendJson(res, 500, { message: `test server handler failed: ${String(error)}` });
          else res.destroy();
        });
    },
  );
  const portNumber = await new Promise<number>((resolvePort, reject) => {
    server.once("error", (cause) => reject(new Error("start local https server", { cause })));
    server.listen(0, loopbackHost, () => {
      const address = server.address();
      resolvePort(typeof address === "object" && address ? address.port : 0);
    });
  });
  let closed: Promise<void> | undefined;
  return {
    url: `https://${loopbackHost}:${portNumber}`,
    portNumber,
    caBundle: Buffer.from(tls.caPem).toString("base64"),
    close: () => {
      closed ??= new Promise<void>((resolveClose) => {
        // The API server keeps connections alive; drop them so close() returns.
        server.close(() => resolveClose());
        server.closeAllConnections();
      });
      return closed;
    },
  };
}
