/**
 * `npm run bench:controller -- --live`: the end-to-end figure. One controller, N Active scalers (default 100),
 * each on its own ModelDeployment with one simulated vLLM engine, against a
 * real kube-apiserver, a real Prometheus and the simulated reconciler. Prints
 * the duration of passes that planned scalers (p50/p99), scalers per pass, and
 * the process's peak RSS.
 */
import { createLogger } from "../src/adapters/telemetry/logger.js";
import { Testbed } from "../test/support/testbed.js";

const scalerCount = Number(process.env["MDS_BENCH_SCALERS"] ?? 100);
const durationSeconds = Number(process.env["MDS_BENCH_SECONDS"] ?? 90);

function quantile(sorted: readonly number[], q: number): number {
  if (sorted.length === 0) return Number.NaN;
  return sorted[Math.min(sorted.length - 1, Math.ceil(q * sorted.length) - 1)] ?? Number.NaN;
}

const bed = await Testbed.start({ timings: { coldStartMs: 0 } });
try {
  const ns = await bed.namespace("bench");
  for (let i = 0; i < scalerCount; i++) {
    const name = `model-${String(i).padStart(3, "0")}`;
    await bed.createDeployment(ns, name, [{ name: "server", kind: "Server", replicas: 1 }]);
    await bed.createScaler(ns, name, {
      targetRef: { name },
      mode: "Active",
      sampling: { intervalSeconds: 15 },
      roles: [{ name: "server", minReplicas: 1, maxReplicas: 4 }],
      algorithm: {
        type: "TokenThroughput",
        tokenThroughput: { serverTargetTokensPerSecond: "1000", stableWindowSeconds: 30, panicWindowSeconds: 10 },
      },
    });
    bed.load.set(ns, name, 1 + (i % 3));
  }
  // Drive the controller by hand so each pass is timed on its own.
  const phases: { sampleMs: number; reconcileMs: number }[] = [];
  const logger = createLogger({
    level: "debug",
    write: (line) => {
      const record = JSON.parse(line) as { msg: string; sampleMs?: number; reconcileMs?: number };
      if (record.msg === "pass" && record.sampleMs !== undefined && record.reconcileMs !== undefined)
        phases.push({ sampleMs: record.sampleMs, reconcileMs: record.reconcileMs });
    },
  });
  const { controller, stop: stopWatch } = await bed.controller({ namespace: ns, logger });
  const passes: { ms: number; scalers: number }[] = [];
  let peakRssBytes = process.memoryUsage().rss;
  const endMs = Date.now() + durationSeconds * 1000;
  while (Date.now() < endMs) {
    const started = performance.now();
    const passed = await controller.tick();
    const ms = performance.now() - started;
    if (passed.length > 0) passes.push({ ms, scalers: passed.length });
    peakRssBytes = Math.max(peakRssBytes, process.memoryUsage().rss);
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
  await stopWatch();
  const sorted = passes.map((p) => p.ms).sort((a, b) => a - b);
  const planned = passes.reduce((n, p) => n + p.scalers, 0);
  const scalers = await bed.custom.listNamespacedCustomObject({
    group: "worker.gpustack.ai",
    version: "v1",
    namespace: ns,
    plural: "modeldeploymentscalers",
  });
  const bound = (
    (scalers as { items: { status?: { conditions?: { type: string; status: string }[] } }[] }).items ?? []
  ).filter((s) => s.status?.conditions?.some((c) => c.type === "Active" && c.status === "True")).length;
  process.stdout.write(
    [
      `scalers: ${scalerCount} (Active and bound after the run: ${bound})`,
      `passes that planned: ${passes.length}, scalers planned: ${planned} (mean ${(planned / Math.max(1, passes.length)).toFixed(1)} per pass)`,
      `pass duration p50: ${quantile(sorted, 0.5).toFixed(1)} ms, p99: ${quantile(sorted, 0.99).toFixed(1)} ms, max: ${(sorted.at(-1) ?? Number.NaN).toFixed(1)} ms`,
      `of which sampling (PromQL) p50: ${quantile(
        phases.map((p) => p.sampleMs).sort((a, b) => a - b),
        0.5,
      ).toFixed(0)} ms, reconciling (API calls, planning) p50: ${quantile(
        phases.map((p) => p.reconcileMs).sort((a, b) => a - b),
        0.5,
      ).toFixed(0)} ms`,
      `peak RSS of this process (controller, fleet simulator, reconciler, harness): ${(peakRssBytes / 2 ** 20).toFixed(0)} MiB`,
      `heap used at the end: ${(process.memoryUsage().heapUsed / 2 ** 20).toFixed(0)} MiB`,
    ].join("\n") + "\n",
  );
} finally {
  await bed.stop();
}
