/**
 * The prepared TSDB's samples served as scrapes (bench/prepared-scrapes.ts, `bench:sampling-head --prepared`),
 * at 2 deployments, one target each: a real Prometheus 3 scrapes them every second with their timestamps, and
 * a pass over its head reads what a pass over the blocks promtool builds from the same data reads, sample for
 * sample, the times counted from each pass's own.
 */
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { PrometheusClient } from "../../src/adapters/prometheus/client.js";
import { defaultPrometheusSignalConfig } from "../../src/adapters/prometheus/config.js";
import { PrometheusSignalSource } from "../../src/adapters/prometheus/source.js";
import { findPromBinaries } from "../../harness/prom-bin.js";
import { PrometheusHarness } from "../../harness/prometheus.js";
import { buildBlocks, copyBlocks, evaluationUnixMs, samplingInputs } from "../../bench/engine-tsdb.js";
import { passFromItsTime, PreparedScrapes } from "../../bench/prepared-scrapes.js";

const deployments = 2;
let dir = "";
let blocks: PrometheusHarness | undefined;
let head: PrometheusHarness | undefined;
let scrapes: PreparedScrapes | undefined;

beforeAll(async () => {
  const bins = findPromBinaries();
  dir = await mkdtemp(join(tmpdir(), "mds-prepared-scrapes-test-"));
  await buildBlocks(bins.promtoolPath, deployments, join(dir, "blocks"));
  await copyBlocks(join(dir, "blocks"), join(dir, "storage"));
  blocks = await PrometheusHarness.start({ binaryPath: bins.prometheusPath, storagePath: join(dir, "storage") });
  scrapes = await PreparedScrapes.start(deployments, { deploymentsPerTarget: 1, lastScrapeUnixMs: Date.now() });
  head = await PrometheusHarness.start({
    binaryPath: bins.prometheusPath,
    scrapeIntervalSeconds: 1,
    targets: scrapes.groups,
    honorLabels: true,
    scrapeSettings: { honor_timestamps: true },
  });
}, 60_000);

afterAll(async () => {
  await head?.stop();
  await blocks?.stop();
  await scrapes?.stop();
  if (dir !== "") await rm(dir, { recursive: true, force: true });
});

describe("the prepared TSDB served as scrapes", () => {
  it("fills a head that reads the pass the blocks read, then answers 503", async () => {
    if (!head || !blocks || !scrapes) throw new Error("a Prometheus did not start");
    const deadline = Date.now() + 90_000;
    for (let p = scrapes.progress(); p.served < p.of; p = scrapes.progress()) {
      if (Date.now() > deadline) throw new Error(`${p.served} of ${p.of} scrapes served in 90 s`);
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
    expect(scrapes.progress().of).toBe(2 * 21);
    const scalers = samplingInputs(deployments, { stableWindowSeconds: 180, panicWindowSeconds: 60 });
    const sourceOf = (url: string): PrometheusSignalSource =>
      new PrometheusSignalSource(
        new PrometheusClient({ endpoint: url, timeoutMs: 20_000 }),
        defaultPrometheusSignalConfig,
      );
    const fromBlocks = await sourceOf(blocks.url).sample(scalers, evaluationUnixMs);
    expect(fromBlocks.scalers.get(scalers[0]!.key)?.get("server")?.pods).toHaveLength(4);
    // The last scrape is stored when its answer has been read: asked again until it is, or the deadline.
    let fromHead = await sourceOf(head.url).sample(scalers, scrapes.lastScrapeUnixMs);
    while (passFromItsTime(fromHead) !== passFromItsTime(fromBlocks) && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 500));
      fromHead = await sourceOf(head.url).sample(scalers, scrapes.lastScrapeUnixMs);
    }
    expect(passFromItsTime(fromHead)).toBe(passFromItsTime(fromBlocks));
    const target = scrapes.groups[0]!;
    const spent = await fetch(`http://${target.targets[0]}${target.labels["__metrics_path__"]}`);
    expect(spent.status).toBe(503);
  }, 120_000);
});
