/**
 * The sampling benchmark's prepared TSDB (bench/engine-tsdb.ts), at 2
 * deployments: promtool turns the generated OpenMetrics into blocks, a real
 * Prometheus 3 serves them, and the signal source reads every pod as a
 * current pod with both windows established, rates, latency and KV usage, at
 * the evaluation time inside the data.
 */
import { spawnSync } from "node:child_process";
import { existsSync } from "node:fs";
import { mkdtemp, readdir, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { PrometheusClient } from "../../src/adapters/prometheus/client.js";
import { defaultPrometheusSignalConfig } from "../../src/adapters/prometheus/config.js";
import { findPromBinaries } from "../../harness/prom-bin.js";
import { PrometheusHarness } from "../../harness/prometheus.js";
import { BothPlans } from "../support/both-plans.js";
import {
  buildBlocks,
  copyBlocks,
  engineOf,
  evaluationUnixMs,
  podsPerRole,
  prepareTsdb,
  roles,
  samplingInputs,
} from "../../bench/engine-tsdb.js";

const deployments = 2;
let dir = "";
let prometheus: PrometheusHarness | undefined;

beforeAll(async () => {
  const bins = findPromBinaries();
  dir = await mkdtemp(join(tmpdir(), "mds-bench-tsdb-test-"));
  await buildBlocks(bins.promtoolPath, deployments, join(dir, "blocks"));
  await copyBlocks(join(dir, "blocks"), join(dir, "storage"));
  prometheus = await PrometheusHarness.start({ binaryPath: bins.prometheusPath, storagePath: join(dir, "storage") });
});

afterAll(async () => {
  await prometheus?.stop();
  if (dir !== "") await rm(dir, { recursive: true, force: true });
});

describe("the prepared TSDB of the sampling benchmark", () => {
  it("answers every pod of every deployment as current, established and with its engine's fields", async () => {
    if (!prometheus) throw new Error("prometheus did not start");
    // Both query plans read every pass, compared field by field.
    const source = new BothPlans(
      new PrometheusClient({ endpoint: prometheus.url, timeoutMs: 20_000 }),
      defaultPrometheusSignalConfig,
    );
    const scalers = samplingInputs(deployments, { stableWindowSeconds: 180, panicWindowSeconds: 60 });
    const pass = await source.sample(scalers, evaluationUnixMs);
    expect(pass.queries).toBe(4);
    expect(pass.warnings).toEqual([]);
    expect(pass.unknownFamilies).toEqual({});
    for (const [i, s] of scalers.entries()) {
      for (const role of roles) {
        const pods = pass.scalers.get(s.key)?.get(role)?.pods ?? [];
        expect(pods.map((p) => p.pod)).toEqual(
          Array.from({ length: podsPerRole }, (_, k) => `${s.deployment}-${role}-${k}`),
        );
        for (const pod of pods) {
          expect(pod.engine).toBe(engineOf(i));
          expect(pod.lastSampleUnixSeconds).toBe(evaluationUnixMs / 1000);
          expect(pod.kvCacheUsage).toBeGreaterThanOrEqual(0);
          for (const window of [pod.windows.stable, pod.windows.panic]) expect(window.established).toBe(true);
          expect(pod.windows.stable.promptTokensPerSecond).toBeGreaterThanOrEqual(0);
        }
      }
      // Entry pods take requests: their prompt rate and first-token latency are measured, not zero.
      const server = pass.scalers.get(s.key)?.get("server")?.pods ?? [];
      expect(server.some((p) => (p.windows.stable.promptTokensPerSecond ?? 0) > 0)).toBe(true);
      expect(server.some((p) => (p.windows.stable.ttftSeconds?.count ?? 0) > 0)).toBe(true);
    }
  }, 60_000);
});

describe("prepareTsdb, the cache of prepared TSDBs", () => {
  const withCache = async (body: (cache: string, promtoolPath: string) => Promise<void>): Promise<void> => {
    // The binaries live in the real cache; the prepared TSDBs go to a fresh one.
    const { promtoolPath } = findPromBinaries();
    const cache = await mkdtemp(join(tmpdir(), "mds-bench-cache-"));
    const before = process.env["XDG_CACHE_HOME"];
    process.env["XDG_CACHE_HOME"] = cache;
    try {
      await body(cache, promtoolPath);
    } finally {
      if (before === undefined) delete process.env["XDG_CACHE_HOME"];
      else process.env["XDG_CACHE_HOME"] = before;
      await rm(cache, { recursive: true, force: true });
    }
  };

  it("builds once when two benchmarks ask together: the second waits for the first's blocks", async () => {
    await withCache(async (_cache, promtoolPath) => {
      const [a, b] = await Promise.all([prepareTsdb(promtoolPath, 1), prepareTsdb(promtoolPath, 1)]);
      expect([a.built, b.built].sort()).toEqual([false, true]);
      expect(a.blocksPath).toBe(b.blocksPath);
      expect((await readdir(a.blocksPath)).length).toBeGreaterThan(0);
      expect(existsSync(join(a.blocksPath, "..", "done"))).toBe(true);
      expect(existsSync(`${join(a.blocksPath, "..")}.lock`)).toBe(false);
    });
  }, 120_000);

  it("takes over a lock whose process is gone", async () => {
    await withCache(async (_cache, promtoolPath) => {
      // Where the blocks will go, found by asking once; then a lock left by a process that has exited.
      const first = await prepareTsdb(promtoolPath, 1);
      const dir = join(first.blocksPath, "..");
      await rm(dir, { recursive: true, force: true });
      const gone = spawnSync(process.execPath, ["-e", "0"]).pid;
      await writeFile(`${dir}.lock`, String(gone));
      const again = await prepareTsdb(promtoolPath, 1);
      expect(again.built).toBe(true);
      expect(existsSync(`${dir}.lock`)).toBe(false);
    });
  }, 120_000);
});
