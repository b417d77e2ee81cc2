/**
 * `mds-scaler observe` against a real Prometheus scraping two derived SGLang
 * captures (a prefill server from before the bootstrap rename and a 2026
 * decode server), each as two scrapes with the counters doubled in the second.
 */
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { parse } from "yaml";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runCli } from "../../src/cli/commands.js";
import { memoryIo as memoryIoOf } from "../support/memory-io.js";
import { PrometheusHarness, freeLoopbackPort } from "../../harness/prometheus.js";
import { advanceCounters, CaptureServer } from "../support/capture-server.js";

const derived = fileURLToPath(new URL("../fixtures/engine-expositions-derived/", import.meta.url));
const namespace = "ml";
const deployment = "chat";

const scalerYaml = `apiVersion: worker.gpustack.ai/v1
kind: ModelDeploymentScaler
metadata:
  name: chat
  namespace: ${namespace}
spec:
  targetRef:
    name: ${deployment}
  roles:
    - name: prefill
      minReplicas: 1
      maxReplicas: 4
    - name: decode
      minReplicas: 1
      maxReplicas: 4
  sampling:
    intervalSeconds: 5
  algorithm:
    type: TokenThroughput
    tokenThroughput:
      prefillTargetTokensPerSecond: "2000"
      decodeTargetTokensPerSecond: "800"
      stableWindowSeconds: 60
      panicWindowSeconds: 30
`;

const targetYaml = `apiVersion: worker.gpustack.ai/v1
kind: ModelDeployment
metadata:
  name: ${deployment}
  namespace: ${namespace}
spec:
  roles:
    - { name: prefill, kind: Prefill, replicas: 1 }
    - { name: decode, kind: Decode, replicas: 2 }
status:
  roles:
    - { name: prefill, ready: 1 }
    - { name: decode, ready: 2 }
`;

const files: Record<string, string> = {
  "scaler.yaml": scalerYaml,
  "target.yaml": targetYaml,
  "short-panic.yaml": scalerYaml.replace("panicWindowSeconds: 30", "panicWindowSeconds: 20"),
};
const memoryIo = (): ReturnType<typeof memoryIoOf> =>
  memoryIoOf((path) => {
    const text = files[path];
    if (text === undefined) throw new Error("no such file");
    return text;
  });

let server: CaptureServer;
let prometheus: PrometheusHarness;

function served(file: string, role: string, pod: string) {
  const text = readFileSync(`${derived}${file}`, "utf8");
  return {
    labels: { namespace, pod, app_kubernetes_io_instance: deployment, app_kubernetes_io_component: role },
    scrapes: [text, advanceCounters(text, 2)],
  };
}

beforeAll(async () => {
  server = new CaptureServer(
    new Map([
      ["prefill", served("sglang-2025-prefill-from-live-excerpt.prom", "prefill", "chat-prefill-0")],
      ["decode", served("sglang-2026-decode-from-live-excerpt.prom", "decode", "chat-decode-0")],
    ]),
  );
  await server.start();
  prometheus = await PrometheusHarness.start({ scrapeIntervalSeconds: 3, targets: server.fileSdGroups() });
  // Both pods scraped twice (first capture, then the advanced one).
  const deadline = Date.now() + 60_000;
  for (;;) {
    const res = await fetch(
      `${prometheus.url}/api/v1/query?query=${encodeURIComponent("min(count_over_time(up[1m]))")}`,
    );
    const body = (await res.json()) as { data: { result: { value: [number, string] }[] } };
    if (Number(body.data.result[0]?.value[1] ?? 0) >= 2) break;
    if (Date.now() > deadline) throw new Error("targets not scraped twice");
    await new Promise((r) => setTimeout(r, 250));
  }
}, 90_000);

afterAll(async () => {
  await prometheus?.stop();
  await server?.stop();
});

const base = (url: string) => ["observe", "--prometheus-url", url, "-f", "scaler.yaml", "--target", "target.yaml"];

describe("mds-scaler observe", () => {
  it("prints every field per role and pod, the series used, coverage, state and why (json)", async () => {
    const io = memoryIo();
    expect(await runCli([...base(prometheus.url), "-o", "json"], io), io.err).toBe(0);
    const report = JSON.parse(io.out) as {
      scaler: string;
      roles: {
        role: string;
        kind: string;
        signalState: string;
        why: string;
        observation: Record<string, unknown> & { seriesUsed: Record<string, Record<string, number>> };
        pods: Record<string, unknown>[];
      }[];
    };
    expect(report.scaler).toBe("ml/chat");
    const [prefill, decode] = report.roles;
    expect(prefill?.role).toBe("prefill");
    expect(prefill?.kind).toBe("Prefill");
    expect(prefill?.signalState).toBe("Fresh");
    expect(prefill?.why).toBe("current readings with work");
    expect(prefill?.observation).toMatchObject({ readyReplicas: 1, sampledReplicas: 1, runningRequests: 1 });
    // Queue 0 plus the bootstrap queue under its pre-2026 name (3).
    expect(prefill?.observation["waitingRequests"]).toBe(3);
    expect(prefill?.observation.seriesUsed["prefillBootstrapQueue"]).toEqual({
      "sglang:num_prefill_prealloc_queue_reqs": 1,
    });
    // One window, one extrapolation for both counters: the ratio is the capture's effective input / generation.
    const ratio =
      Number(prefill?.observation["promptTokensPerSecond"]) / Number(prefill?.observation["generationTokensPerSecond"]);
    expect(ratio).toBeCloseTo(34819072 / (3263152 + 10828064), 9);
    expect(prefill?.pods[0]).toMatchObject({ pod: "chat-prefill-0", engine: "sglang", fresh: true });
    // Decode: queue 0 + transfer 2 + prealloc 5; coverage 1 of 2 ready replicas.
    expect(decode?.observation).toMatchObject({ readyReplicas: 2, sampledReplicas: 1, waitingRequests: 7 });
    expect(decode?.why).toMatch(/1 of 2 ready replicas sampled/);
  }, 60_000);

  it("prints a pod's own buckets and p95 where the plan asks them per pod, and says so where it does not", async () => {
    const ttftOf = async (plan: string): Promise<Record<string, unknown> | undefined> => {
      const io = memoryIo();
      expect(await runCli([...base(prometheus.url), "--prometheus-queries", plan, "-o", "json"], io), io.err).toBe(0);
      const report = JSON.parse(io.out) as {
        roles: { pods: { panic: { ttftSeconds?: Record<string, unknown> } }[] }[];
      };
      return report.roles[0]?.pods[0]?.panic.ttftSeconds;
    };
    const perPod = await ttftOf("parts");
    expect(perPod?.["count"]).toBeGreaterThan(0);
    expect(perPod?.["buckets"]).toBeGreaterThan(0);
    expect(perPod?.["p95Ms"]).toBeGreaterThan(0);
    // Under roles the buckets are summed by role: no per-pod p95 (it would be the mean); its count and sum are read.
    // (Each run evaluates at its own time, so the figures themselves differ.)
    const summed = await ttftOf("roles");
    expect(summed?.["buckets"]).toBe("none per pod");
    expect(summed?.["count"]).toBeGreaterThan(0);
    expect(summed?.["sumSeconds"]).toBeGreaterThan(0);
    expect(summed).not.toHaveProperty("p95Ms");
  }, 60_000);

  it("notes, under the native plan on a Prometheus that stores no native histograms, each role read from its classic buckets", async () => {
    const json = memoryIo();
    expect(
      await runCli([...base(prometheus.url), "--prometheus-queries", "native", "-o", "json"], json),
      json.err,
    ).toBe(0);
    const report = JSON.parse(json.out) as { notes: string[]; roles: { signalState: string }[] };
    // Debian's 2.42 converts nothing: both roles' TTFT and ITL sums are missing, and their classic buckets were read.
    expect(report.notes.filter((n) => n.startsWith("no native histogram sum"))).toEqual([
      "no native histogram sum, the classic buckets read instead: ml/chat prefill (ttftSeconds, itlSeconds)",
      "no native histogram sum, the classic buckets read instead: ml/chat decode (ttftSeconds, itlSeconds)",
    ]);
    expect(report.roles.map((r) => r.signalState)).toEqual(["Fresh", "Fresh"]);
    const table = memoryIo();
    expect(await runCli([...base(prometheus.url), "--prometheus-queries", "native"], table), table.err).toBe(0);
    expect(table.out).toMatch(/^note: no native histogram sum, .*: ml\/chat prefill \(ttftSeconds/m);
    // The default plan reads no native sums, so it notes none.
    const roles = memoryIo();
    expect(await runCli([...base(prometheus.url), "-o", "json"], roles), roles.err).toBe(0);
    expect((JSON.parse(roles.out) as { notes: string[] }).notes).toEqual([]);
  }, 60_000);

  it("prints a table and yaml with the same content", async () => {
    const table = memoryIo();
    expect(await runCli(base(prometheus.url), table), table.err).toBe(0);
    expect(table.out).toMatch(/ROLE prefill \(Prefill\): Fresh, 1 of 1 ready replicas sampled/);
    expect(table.out).toMatch(/series: prefillBootstrapQueue\s+sglang:num_prefill_prealloc_queue_reqs \(1 pod\)/);
    expect(table.out).toMatch(/POD chat-decode-0 \(sglang\)/);
    // These captures carry no queue-time histogram: the role says no pod exports it (the guard reads TTFT literally).
    expect(table.out).toMatch(/pods exporting queue time\s+\{"pods":0,"of":1\}/);
    const yaml = memoryIo();
    expect(await runCli([...base(prometheus.url), "-o", "yaml"], yaml), yaml.err).toBe(0);
    const parsed = parse(yaml.out) as { roles: { role: string; signalState: string }[] };
    expect(parsed.roles.map((r) => [r.role, r.signalState])).toEqual([
      ["prefill", "Fresh"],
      ["decode", "Fresh"],
    ]);
  }, 60_000);

  it("says why when Prometheus cannot be reached: every role Missing with the failure", async () => {
    const io = memoryIo();
    const closed = `http://127.0.0.1:${await freeLoopbackPort()}`;
    expect(await runCli([...base(closed), "-o", "json", "--prometheus-timeout-ms", "3000"], io), io.err).toBe(0);
    const report = JSON.parse(io.out) as { roles: { signalState: string; why: string }[] };
    for (const role of report.roles) {
      expect(role.signalState).toBe("Missing");
      expect(role.why).toMatch(/^the queries failed: /);
    }
  }, 60_000);

  it("warns, as admission does, about a window shorter than two engine scrapes at --engine-scrape-interval", async () => {
    const closed = `http://127.0.0.1:${await freeLoopbackPort()}`;
    const args = ["observe", "--prometheus-url", closed, "-f", "short-panic.yaml", "--target", "target.yaml"];
    const at15 = memoryIo();
    expect(await runCli([...args, "--prometheus-timeout-ms", "3000"], at15), at15.err).toBe(0);
    expect(at15.out).toContain(
      "warning: spec.algorithm.tokenThroughput.panicWindowSeconds = 20: 20 s holds under two engine scrapes of 15 s",
    );
    // This Prometheus scrapes every 3 s: 20 s holds six scrapes.
    const at3 = memoryIo();
    expect(
      await runCli([...args, "--prometheus-timeout-ms", "3000", "--engine-scrape-interval", "3s", "-o", "json"], at3),
      at3.err,
    ).toBe(0);
    expect((JSON.parse(at3.out) as { warnings: string[] }).warnings.filter((w) => w.includes("scrapes"))).toEqual([]);
  }, 60_000);

  it.each([
    {
      args: ["observe", "-f", "scaler.yaml", "--target", "target.yaml"],
      want: /--prometheus-url \(MDS_PROMETHEUS_URL\) = <unset>: must be an http\(s\) URL/,
    },
    {
      args: [...base("ftp://x"), "-o", "json"],
      want: /--prometheus-url \(MDS_PROMETHEUS_URL\) = "ftp:\/\/x": must be an http\(s\) URL/,
    },
    { args: [...base("http://x"), "--label-pod", "__name__"], want: /--label-pod \(MDS_LABEL_POD\) = "__name__"/ },
    { args: [...base("http://x"), "--metric-name-separator", "_"], want: /Unknown option '--metric-name-separator'/ },
    {
      args: [...base("http://x"), "--label-role", "pod"],
      want: /--label-role \(MDS_LABEL_ROLE\) = pod is also --label-pod/,
    },
    { args: [...base("http://x"), "-o", "xml"], want: /--output: "xml" is not one of table, json, yaml/ },
    {
      args: ["observe", "--prometheus-url", "http://x", "-f", "scaler.yaml", "--scaler", "ml/chat"],
      want: /exactly one of -f <scaler.yaml> and --scaler/,
    },
    {
      args: ["observe", "--prometheus-url", "http://x", "--scaler", "chat"],
      want: /--scaler: "chat" is not <namespace>\/<name>/,
    },
  ])("rejects bad flags naming the flag and value: $want", async ({ args, want }) => {
    const io = memoryIo();
    expect(await runCli(args, io)).toBe(2);
    expect(io.err).toMatch(want);
  });
});
