/**
 * The demo's live local page: the dashboards' panels, their PromQL run against
 * the demo's Prometheus (through a same-origin proxy), drawn with uPlot
 * served from node_modules, plus the commits the demo observed. Loopback only.
 */
import { readFileSync } from "node:fs";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import { readPanels, type PagePanel } from "./dashboards.js";
import { repoRoot } from "./options.js";
import { timelineSeries } from "./timeline.js";

/** The page's copy of the timeline drawing rule: the very function, as a script. */
export const timelineScript = `const timelineSeries = ${timelineSeries.toString()};\n`;

export interface PageStatus {
  readonly scaler: string;
  readonly namespace: string;
  readonly replayStartedMs: number | undefined;
  readonly nowMs: number;
  readonly progress: string;
  readonly commits: readonly { atSeconds: number; changes: readonly { role: string; from: number; to: number }[] }[];
}

export interface RunningPage {
  readonly url: string;
  readonly panels: readonly PagePanel[];
  /** What the page shows above the panels; set by the demo once it runs. */
  status: () => Omit<PageStatus, "nowMs" | "scaler" | "namespace">;
  stop(): Promise<void>;
}

const assets: Readonly<Record<string, { file: string; type: string }>> = {
  "/assets/uPlot.iife.min.js": {
    file: join(repoRoot, "node_modules", "uplot", "dist", "uPlot.iife.min.js"),
    type: "text/javascript",
  },
  "/assets/uPlot.min.css": { file: join(repoRoot, "node_modules", "uplot", "dist", "uPlot.min.css"), type: "text/css" },
  "/": { file: join(repoRoot, "src", "demo", "page.html"), type: "text/html; charset=utf-8" },
};

/** Only the read-only query endpoints are passed to Prometheus. */
const proxied = new Set(["/api/v1/query", "/api/v1/query_range"]);

export async function startPage(opts: {
  port: number;
  prometheusUrl: string;
  namespace: string;
  scaler: string;
  /** The rate window Grafana would pick for this scrape interval. */
  rateInterval: string;
}): Promise<RunningPage> {
  const panels = readPanels(join(repoRoot, "dashboards"), {
    // The scaler is the demo's; every other variable is Grafana's "All", so the controller's own series
    // (labelled with its pod's namespace) show beside the scaler's.
    values: { scaler: opts.scaler },
    rateInterval: opts.rateInterval,
    interval: opts.rateInterval,
  });
  let status: RunningPage["status"] = () => ({ replayStartedMs: undefined, progress: "starting", commits: [] });
  const handle = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const url = new URL(req.url ?? "/", "http://127.0.0.1");
    if (req.method !== "GET") {
      res.writeHead(405).end();
      return;
    }
    const asset = assets[url.pathname];
    if (asset !== undefined) {
      res.writeHead(200, { "Content-Type": asset.type, "Cache-Control": "no-store" }).end(readFileSync(asset.file));
      return;
    }
    if (url.pathname === "/assets/timeline.js") {
      res.writeHead(200, { "Content-Type": "text/javascript", "Cache-Control": "no-store" }).end(timelineScript);
      return;
    }
    if (url.pathname === "/api/panels") {
      sendJson(res, panels);
      return;
    }
    if (url.pathname === "/api/status") {
      sendJson(res, { ...status(), nowMs: Date.now(), scaler: opts.scaler, namespace: opts.namespace });
      return;
    }
    const promPath = url.pathname.replace(/^\/prometheus/, "");
    if (url.pathname.startsWith("/prometheus/") && proxied.has(promPath)) {
      const answer = await fetch(`${opts.prometheusUrl}${promPath}${url.search}`, {
        signal: AbortSignal.timeout(10_000),
      });
      res.writeHead(answer.status, { "Content-Type": "application/json" }).end(await answer.text());
      return;
    }
    res.writeHead(404, { "Content-Type": "text/plain" }).end(`no ${url.pathname} here\n`);
  };
  const server: Server = createServer((req, res) => {
    handle(req, res).catch((error: unknown) => {
      if (!res.headersSent) res.writeHead(502, { "Content-Type": "text/plain" });
      res.end(`${error instanceof Error ? error.message : String(error)}\n`);
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(opts.port, "127.0.0.1", () => resolve());
  });
  const port = (server.address() as AddressInfo).port;
  return {
    url: `http://127.0.0.1:${port}/`,
    panels,
    get status() {
      return status;
    },
    set status(fn) {
      status = fn;
    },
    stop: async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

function sendJson(res: ServerResponse, body: unknown): void {
  res.writeHead(200, { "Content-Type": "application/json", "Cache-Control": "no-store" }).end(JSON.stringify(body));
}
