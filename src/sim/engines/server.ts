/**
 * Serves a simulated fleet over HTTP, one metrics path per pod
 * (`/pods/<namespace>/<pod>/metrics`), and ticks it in real time. The model
 * stays in engine-fleet.ts; this file owns the clock and the sockets.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { renderExposition } from "./exposition.js";
import { podKey, type EngineFleet } from "./engine-fleet.js";
import type { RankGauges } from "./model.js";

/** What a scrape saw: the ground truth of gauges at the scrape instant. */
export interface ServedScrape {
  readonly unixMs: number;
  readonly restarts: number;
  readonly gauges: Omit<RankGauges, "prefillInflight" | "decodePrealloc"> & { readonly decodeTransfer: number };
}

export interface FleetServerOptions {
  readonly fleet: EngineFleet;
  /** Defaults to Date.now; the fleet's time is unix seconds. */
  readonly nowMs?: () => number;
  /** Background ticking so arrivals keep flowing between scrapes. */
  readonly tickMs?: number;
  /** Scrapes kept per pod for ground truth (0 disables). */
  readonly servedHistory?: number;
}

/** file_sd target group for one pod, labelled as the chart's PodMonitor labels a scraped pod. */
export interface FileSdGroup {
  readonly targets: readonly string[];
  readonly labels: Readonly<Record<string, string>>;
}

export class FleetServer {
  private server: Server | undefined;
  private timer: NodeJS.Timeout | undefined;
  private readonly served = new Map<string, ServedScrape[]>();
  private readonly nowMs: () => number;
  private readonly createdAt = new Map<string, number>();
  scrapes = 0;

  constructor(private readonly options: FleetServerOptions) {
    this.nowMs = options.nowMs ?? Date.now;
  }

  get fleet(): EngineFleet {
    return this.options.fleet;
  }

  /** Listens on a free loopback port; returns `host:port`. */
  async start(): Promise<string> {
    const server = createServer((req, res) => this.handle(req, res));
    // Prometheus keeps one connection per target: a fleet of a thousand pods
    // dials a thousand connections at once and reuses them every interval.
    server.keepAliveTimeout = 120_000;
    server.headersTimeout = 121_000;
    server.maxConnections = 100_000;
    await new Promise<void>((resolve, reject) => {
      server.once("error", reject);
      server.listen({ port: 0, host: "127.0.0.1", backlog: 4096 }, () => resolve());
    });
    this.server = server;
    this.timer = setInterval(() => this.advance(), this.options.tickMs ?? 100);
    return this.address();
  }

  address(): string {
    const addr = this.server?.address() as AddressInfo | null | undefined;
    if (!addr) throw new Error("fleet server not listening");
    return `127.0.0.1:${addr.port}`;
  }

  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
    const server = this.server;
    this.server = undefined;
    if (!server) return;
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }

  advance(): void {
    this.options.fleet.advanceTo(this.nowMs() / 1000);
  }

  /** Scrapes served for a pod, oldest first. */
  servedScrapes(namespace: string, pod: string): readonly ServedScrape[] {
    return this.served.get(podKey(namespace, pod)) ?? [];
  }

  /**
   * The scrape a sample stamped `sampleUnixMs` came from: the first answered from 50 ms before that time
   * (Prometheus may move a scrape's time onto its schedule by a few milliseconds) to 0.6 s after it. A
   * sample carries the time its scrape started and this server notes when it answered, later on a loaded
   * machine (0.2–0.3 s seen with two CPU burners beside a test).
   */
  scrapeOfSample(namespace: string, pod: string, sampleUnixMs: number): ServedScrape | undefined {
    return this.servedScrapes(namespace, pod).find(
      (s) => s.unixMs - sampleUnixMs > -50 && s.unixMs - sampleUnixMs < 600,
    );
  }

  /**
   * Target groups for Prometheus file_sd: the pod path through
   * `__metrics_path__`, and the labels a PodMonitor with `podTargetLabels`
   * for `app.kubernetes.io/instance` and `app.kubernetes.io/component` produces.
   */
  fileSdGroups(
    labelNames: { deployment: string; role: string } = {
      deployment: "app_kubernetes_io_instance",
      role: "app_kubernetes_io_component",
    },
  ): FileSdGroup[] {
    const address = this.address();
    return this.options.fleet.listPods().map((p) => ({
      targets: [address],
      labels: {
        __metrics_path__: metricsPath(p.namespace, p.name),
        namespace: p.namespace,
        pod: p.name,
        container: p.engine,
        endpoint: "http",
        [labelNames.deployment]: p.deployment,
        [labelNames.role]: p.role,
      },
    }));
  }

  private handle(req: IncomingMessage, res: ServerResponse): void {
    const m = /^\/pods\/([^/]+)\/([^/]+)\/metrics$/.exec(req.url ?? "");
    if (!m || req.method !== "GET") {
      res.writeHead(404).end();
      return;
    }
    const namespace = decodeURIComponent(m[1] ?? "");
    const name = decodeURIComponent(m[2] ?? "");
    const at = this.nowMs();
    this.options.fleet.advanceTo(at / 1000);
    const pod = this.options.fleet.pod(namespace, name);
    if (!pod) {
      res.writeHead(404).end();
      return;
    }
    if (pod.phase !== "Ready") {
      // The engine's HTTP server is not up during a cold start.
      res.writeHead(503).end();
      return;
    }
    const key = podKey(namespace, name);
    const createdKey = `${key}#${pod.restarts}`;
    let created = this.createdAt.get(createdKey);
    if (created === undefined) this.createdAt.set(createdKey, (created = pod.readyAtSeconds));
    const body = renderExposition(pod.replica, { createdUnixSeconds: created });
    this.scrapes++;
    const keep = this.options.servedHistory ?? 256;
    if (keep > 0) {
      const t = pod.replica.totals();
      let list = this.served.get(key);
      if (!list) this.served.set(key, (list = []));
      list.push({
        unixMs: at,
        restarts: pod.restarts,
        gauges: { running: t.running, waiting: t.waiting, kvUsage: t.kvUsage, decodeTransfer: t.decodeTransfer },
      });
      if (list.length > keep) list.shift();
    }
    res.writeHead(200, { "Content-Type": "text/plain; version=0.0.4; charset=utf-8" });
    res.end(body);
  }
}

export function metricsPath(namespace: string, pod: string): string {
  return `/pods/${encodeURIComponent(namespace)}/${encodeURIComponent(pod)}/metrics`;
}
