/**
 * Serves recorded `/metrics` expositions to a real Prometheus: one path per
 * simulated pod, each answering its scrapes from a list of bodies in turn (the
 * last repeats), so a test controls what every scrape saw.
 */
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import type { FileSdGroup } from "../../src/sim/engines/server.js";

export interface ServedCapture {
  /** The pod's labels on every series: namespace, pod, deployment and role labels. */
  readonly labels: Readonly<Record<string, string>>;
  /** Body of the first, second, … scrape; scrapes after the last get the last. */
  readonly scrapes: readonly string[];
}

/**
 * Multiplies every counter and histogram sample (names ending `_total`,
 * `_bucket`, `_count`, `_sum`) by `factor`; gauges and `_created` stay.
 * Advancing all of them by one factor keeps ratios such as cache hits per prompt token.
 */
export function advanceCounters(exposition: string, factor: number): string {
  return exposition
    .split("\n")
    .map((line) => {
      if (line.startsWith("#") || line.trim() === "") return line;
      const match = /^([^{\s]+)(\{.*\})?\s+(\S+)(.*)$/.exec(line);
      if (!match) return line;
      const [, name = "", labels = "", value = "", rest = ""] = match;
      if (!/_(total|bucket|count|sum)$/.test(name)) return line;
      return `${name}${labels} ${String(Number(value) * factor)}${rest}`;
    })
    .join("\n");
}

export class CaptureServer {
  private server: Server | undefined;
  private readonly served = new Map<string, number>();

  constructor(private readonly captures: ReadonlyMap<string, ServedCapture>) {}

  async start(): Promise<void> {
    const server = createServer((req, res) => {
      const key = decodeURIComponent((req.url ?? "").replace(/^\/captures\//, ""));
      const capture = this.captures.get(key);
      if (!capture) {
        res.writeHead(404).end();
        return;
      }
      const n = this.served.get(key) ?? 0;
      this.served.set(key, n + 1);
      const body = capture.scrapes[Math.min(n, capture.scrapes.length - 1)] ?? "";
      res.writeHead(200, { "content-type": "text/plain; version=0.0.4; charset=utf-8" }).end(body);
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    this.server = server;
  }

  /** Scrapes answered so far for one capture. */
  scrapesServed(key: string): number {
    return this.served.get(key) ?? 0;
  }

  fileSdGroups(): FileSdGroup[] {
    const address = this.server?.address() as AddressInfo | undefined;
    if (!address) throw new Error("capture server not started");
    return [...this.captures.entries()].map(([key, capture]) => ({
      targets: [`127.0.0.1:${address.port}`],
      labels: { __metrics_path__: `/captures/${encodeURIComponent(key)}`, ...capture.labels },
    }));
  }

  async stop(): Promise<void> {
    const server = this.server;
    this.server = undefined;
    if (server) await new Promise<void>((resolve) => server.close(() => resolve()));
  }
}
