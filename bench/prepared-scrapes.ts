/**
 * The prepared TSDB's samples served as scrapes, so that a Prometheus scraping them holds in its head what the
 * prepared blocks hold (`bench:sampling-head --prepared`): the same series, labels and values, scrape after scrape.
 *
 * The deployments are split into targets of `deploymentsPerTarget` each: one target of 1,000 deployments is a
 * scrape of 1.3 M series, which outlasts any scrape timeout. Each target answers its requests with the data's
 * scrapes in order, one per request, and 503 once they are spent. Every sample carries its timestamp (a scrape job
 * with `honor_timestamps` keeps it), moved so that the last scrape falls at `lastScrapeUnixMs`: a head takes
 * samples of the last hour, not of the data's own day. Each family's lines are written together and the histograms
 * typed, so a job with `convert_classic_histograms_to_nhcb` also stores them as native histograms with custom
 * buckets, as the `mixed` twin does (bench/nhcb-tsdb.ts).
 */
import { createServer, type Server } from "node:http";
import type { SamplingPass } from "../src/adapters/prometheus/source.js";
import type { FileSdGroup } from "../src/sim/engines/index.js";
import { preparedPods, tsdbShape, type PreparedPods } from "./engine-tsdb.js";

export class PreparedScrapes {
  /** Per target, how many of the data's scrapes it has answered: the next request gets the next one. */
  private readonly served: number[];
  private readonly histograms: ReadonlySet<string>;
  /** Each series name's family: a histogram's `_bucket`, `_count` and `_sum` are one family. */
  private readonly families = new Map<string, string>();
  /** How far the data's timestamps are moved. */
  private readonly shiftMs: number;

  private constructor(
    private readonly server: Server,
    private readonly prepared: PreparedPods,
    private readonly deployments: number,
    private readonly deploymentsPerTarget: number,
    /** The time the last scrape is stamped with, where a pass reads what the blocks' `evaluationUnixMs` reads. */
    readonly lastScrapeUnixMs: number,
  ) {
    this.shiftMs = lastScrapeUnixMs - dataScrapeUnixMs(prepared.scrapeCount - 1);
    this.served = new Array<number>(Math.ceil(deployments / deploymentsPerTarget)).fill(0);
    // Every engine's histograms: deployments 0 and 1 run the two engines (engineOf).
    const names = new Set<string>();
    for (let d = 0; d < Math.min(2, deployments); d++)
      for (const pod of prepared.pods(d)) for (const line of pod.scrapes[0] ?? []) names.add(line.name);
    this.histograms = new Set(
      [...names].filter((n) => n.endsWith("_bucket")).map((n) => n.slice(0, -"_bucket".length)),
    );
  }

  /** Simulates the data's templates and listens on loopback; nothing is served before Prometheus asks. */
  static async start(
    deployments: number,
    options: { readonly deploymentsPerTarget: number; readonly lastScrapeUnixMs: number },
  ): Promise<PreparedScrapes> {
    const prepared = preparedPods(deployments);
    const server = createServer();
    const scrapes = new PreparedScrapes(
      server,
      prepared,
      deployments,
      options.deploymentsPerTarget,
      options.lastScrapeUnixMs,
    );
    server.on("request", (req, res) => {
      const target = Number(/^\/targets\/(\d+)$/.exec(req.url ?? "")?.[1] ?? NaN);
      const scrape = scrapes.served[target];
      if (scrape === undefined || scrape >= prepared.scrapeCount) {
        res.writeHead(scrape === undefined ? 404 : 503).end();
        return;
      }
      scrapes.served[target] = scrape + 1;
      res.writeHead(200, { "content-type": "text/plain; version=0.0.4; charset=utf-8" });
      res.end(scrapes.render(target, scrape));
    });
    await new Promise<void>((resolve, reject) => {
      server.once("error", reject);
      server.listen(0, "127.0.0.1", () => resolve());
    });
    return scrapes;
  }

  /** The targets, for Prometheus' file discovery: one address, each target its own path. */
  get groups(): FileSdGroup[] {
    const address = this.server.address();
    const port = typeof address === "object" && address !== null ? address.port : 0;
    return this.served.map((_, k) => ({
      targets: [`127.0.0.1:${port}`],
      labels: { __metrics_path__: `/targets/${k}` },
    }));
  }

  /** How many of the targets' scrapes have been served, and of how many. */
  progress(): { readonly served: number; readonly of: number } {
    return {
      served: this.served.reduce((a, b) => a + b, 0),
      of: this.served.length * this.prepared.scrapeCount,
    };
  }

  async stop(): Promise<void> {
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  /** Target `k`'s scrape `s` in the text format: each family's lines together, histograms typed. */
  private render(k: number, s: number): string {
    const timestampMs = String(dataScrapeUnixMs(s) + this.shiftMs);
    const families = new Map<string, string[]>();
    const end = Math.min(this.deployments, (k + 1) * this.deploymentsPerTarget);
    for (let d = k * this.deploymentsPerTarget; d < end; d++)
      for (const { target, scrapes } of this.prepared.pods(d))
        for (const line of scrapes[s] ?? []) {
          const family = this.familyOf(line.name);
          let lines = families.get(family);
          if (lines === undefined) families.set(family, (lines = []));
          const labels = line.labels === "" ? target : `${target},${line.labels}`;
          lines.push(`${line.name}{${labels}} ${line.value} ${timestampMs}\n`);
        }
    const out: string[] = [];
    for (const [family, lines] of families) {
      if (this.histograms.has(family)) out.push(`# TYPE ${family} histogram\n`);
      for (const line of lines) out.push(line);
    }
    return out.join("");
  }

  private familyOf(name: string): string {
    let family = this.families.get(name);
    if (family === undefined) {
      const suffix = /_(bucket|count|sum)$/.exec(name);
      const base = suffix === null ? name : name.slice(0, suffix.index);
      family = this.histograms.has(base) ? base : name;
      this.families.set(name, family);
    }
    return family;
  }
}

/** The time the data stamps its scrape `s` with (the prepared blocks' own). */
function dataScrapeUnixMs(s: number): number {
  return (tsdbShape.startUnixSeconds + s * tsdbShape.scrapeIntervalSeconds) * 1000;
}

/**
 * A pass as plain data, its times counted from the time it was asked at: a pass over the head, whose samples are
 * stamped with the present, and one over the blocks compare equal when they read the same samples.
 */
export function passFromItsTime(pass: SamplingPass): string {
  const at = pass.atUnixMs / 1000;
  return JSON.stringify({ ...pass, atUnixMs: 0, scalers: [...pass.scalers].map(([k, r]) => [k, [...r]]) }, (k, v) =>
    k === "lastSampleUnixSeconds" && typeof v === "number" ? v - at : v,
  );
}
