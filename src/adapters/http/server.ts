/**
 * The plain-HTTP server every replica runs: `/metrics` (the scaler's own
 * registry), `/healthz` (the process answers) and `/readyz` (it can do its job).
 */
import type { Server } from "node:http";
import express from "express";
import type { Registry } from "prom-client";

export interface OpsServerOptions {
  readonly registry: Registry;
  /** Ready when this returns undefined; otherwise the reason it is not. */
  readonly notReadyReason: () => string | undefined;
}

export function opsApp(opts: OpsServerOptions): express.Express {
  const app = express();
  app.disable("x-powered-by");
  app.get("/metrics", async (_req, res) => {
    try {
      const body = await opts.registry.metrics();
      res.setHeader("Content-Type", opts.registry.contentType);
      res.send(body);
    } catch (error) {
      res
        .status(500)
        .type("text/plain")
        .send(`collect metrics: ${error instanceof Error ? error.message : String(error)}\n`);
    }
  });
  app.get("/healthz", (_req, res) => {
    res.type("text/plain").send("ok\n");
  });
  app.get("/readyz", (_req, res) => {
    const reason = opts.notReadyReason();
    if (reason === undefined) res.type("text/plain").send("ok\n");
    else res.status(503).type("text/plain").send(`not ready: ${reason}\n`);
  });
  return app;
}

/** Listens on "host:port" (an empty host means all interfaces); resolves once bound. */
export async function listen(app: express.Express, address: string): Promise<{ server: Server; port: number }> {
  const index = address.lastIndexOf(":");
  const host = address.slice(0, index);
  const port = Number(address.slice(index + 1));
  return new Promise((resolve, reject) => {
    const onListening = (error?: Error): void => {
      if (error !== undefined) {
        reject(new Error(`listen on ${address}`, { cause: error }));
        return;
      }
      const bound = server.address();
      resolve({ server, port: typeof bound === "object" && bound !== null ? bound.port : port });
    };
    const server = host === "" ? app.listen(port, onListening) : app.listen(port, host, onListening);
  });
}
