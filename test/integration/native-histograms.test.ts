/**
 * The `native` query plan against Prometheus 3.5 (built by tools/prom-bin) scraping
 * simulated vLLM and SGLang engines with `convert_classic_histograms_to_nhcb` and
 * `always_scrape_classic_histograms`, the settings docs/prometheus-signals.md tells a
 * user to turn on: each engine histogram is stored twice, as one native histogram with
 * custom buckets (NHCB) and as its classic `_bucket`, `_count` and `_sum` series.
 *
 * - the plan reads every role's latency buckets from the native histograms, in the
 *   first 36 queries (no role asked again for its pods' buckets; no pod's sum asked, the
 *   role's native sum carrying it), and reads the same samples but for buckets and sums
 *   and the same observations as the `parts` plan reading the classic series, asked at
 *   the same evaluation time;
 * - the SGLang deployment runs data-parallel attention with every scheduler writing
 *   stats (TP rank 1 repeats rank 0): its queue time is collapsed per DP rank by `avg`
 *   over native histograms where the classic plans take `max`;
 * - a pod of a role whose histogram has other buckets (an engine version that changed
 *   them, mid-rollout): Prometheus 3.5 cannot add the role's native histograms, leaves the
 *   role out with a warning, and the plan reads that role's classic buckets summed by role,
 *   then, as this pod's count is not a sampled pod's (it exposes no gauges) and the proof
 *   fails, its pods' own buckets, in the same pass; the family stays known, the warning is
 *   reported as an info;
 * - a pod whose TTFT sum is NaN (a NaN observation): its role's native sum is NaN, no proof
 *   accepts it, and the role is read from its pods' own buckets and sums, which leave that
 *   pod out of the latency as the `parts` plan does;
 * - without the conversion (Debian's Prometheus 2.42 in the other source tests, through
 *   test/support/both-plans.ts) every role falls back to its classic buckets summed by role.
 */
import { createServer, type Server } from "node:http";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { PrometheusClient } from "../../src/adapters/prometheus/client.js";
import { defaultPrometheusSignalConfig } from "../../src/adapters/prometheus/config.js";
import { RangeAnswers } from "../../src/adapters/prometheus/range-answers.js";
import { PrometheusSignalSource } from "../../src/adapters/prometheus/source.js";
import type { EngineFleet, FleetServer } from "../../src/sim/engines/index.js";
import { PrometheusHarness } from "../../harness/prometheus.js";
import { findPromBinaries } from "../../harness/prom-bin.js";
import { backendScalers, startBackendFleet } from "../support/backend-fleet.js";
import { toDigits } from "../support/digits.js";
import { observationsOf, withoutBucketsAndSums } from "../support/plan-observations.js";

const namespace = "serving";
const stableWindowSeconds = 10;
const panicWindowSeconds = 3;
const scalers = backendScalers(namespace, stableWindowSeconds, panicWindowSeconds);
/** Longer than a 1 s scrape takes to land in the TSDB on a loaded machine. */
const ingestionSettleMs = 2_000;

let fleet: EngineFleet;
let server: FleetServer;
let prometheus: PrometheusHarness;
/** Serves one pod's TTFT histogram with two buckets where the engines have more. */
let oddPod: Server;
/** Serves one simulated pod's metrics with its TTFT sum NaN. */
let nanPod: Server;

const sourceOf = (queryPlan: "parts" | "native"): PrometheusSignalSource =>
  new PrometheusSignalSource(new PrometheusClient({ endpoint: prometheus.url, timeoutMs: 10_000 }), {
    ...defaultPrometheusSignalConfig,
    queryPlan,
  });

beforeAll(async () => {
  ({ fleet, server } = await startBackendFleet(namespace));
  prometheus = await PrometheusHarness.start({
    binaryPath: findPromBinaries().prometheusPath,
    scrapeIntervalSeconds: 1,
    targets: server.fileSdGroups(),
    extraArgs: ["--enable-feature=native-histograms"],
    scrapeSettings: { convert_classic_histograms_to_nhcb: true, always_scrape_classic_histograms: true },
  });
  await prometheus.waitForHealthyTargets(fleet.listPods().length);
  // A full stable window of scrapes under steady load, and every histogram's low buckets past their first observation.
  await new Promise((r) => setTimeout(r, (stableWindowSeconds + 5) * 1000));
}, 120_000);

afterAll(async () => {
  await prometheus?.stop();
  await server?.stop();
  await new Promise<void>((resolve) => (oddPod ? oddPod.close(() => resolve()) : resolve()));
  await new Promise<void>((resolve) => (nanPod ? nanPod.close(() => resolve()) : resolve()));
});

describe("the native plan on Prometheus 3.5 storing the engines' histograms as NHCB and classic", () => {
  it("stores both: one native series per histogram and pod beside the classic buckets", async () => {
    const count = async (query: string): Promise<number> => {
      const res = await fetch(`${prometheus.url}/api/v1/query`, {
        method: "POST",
        body: new URLSearchParams({ query }),
      });
      const body = (await res.json()) as { data: { result: { value: [number, string] }[] } };
      return Number(body.data.result[0]?.value[1] ?? 0);
    };
    const pods = fleet.listPods().filter((p) => p.deployment === "pd-vllm").length;
    expect(await count(`count(vllm:time_to_first_token_seconds{namespace="${namespace}"})`)).toBe(pods);
    expect(await count(`count(vllm:time_to_first_token_seconds_bucket{namespace="${namespace}"})`)).toBeGreaterThan(
      pods * 5,
    );
  });

  it("reads every role's buckets from the native sums, in the first ask, as the parts plan reads the classic ones", async () => {
    const at = Date.now() - 1000;
    await new Promise((r) => setTimeout(r, Math.max(0, at + ingestionSettleMs - Date.now())));
    const [parts, native] = await Promise.all([
      sourceOf("parts").sample(scalers, at),
      sourceOf("native").sample(scalers, at),
    ]);
    expect(native.queries, "no role asked again for its pods' buckets").toBe(36);
    expect(native.nativeSumsMissing, "every role's native sums answered").toEqual([]);
    expect(native.warnings).toEqual([]);
    for (const s of scalers)
      for (const role of s.roles) {
        const samples = native.scalers.get(s.key)?.get(role);
        const panic = samples?.roleHistograms?.panic ?? {};
        expect(Object.keys(panic).length, `${s.key}/${role} sums`).toBeGreaterThan(0);
        for (const [field, sum] of Object.entries(panic)) {
          // A sum the proof accepts: its `+Inf` count is its pods' counts' total.
          expect(sum.buckets.at(-1)?.upperBound, `${s.key}/${role} ${field}`).toBe(Infinity);
          expect(Number.isFinite(sum.buckets.at(-1)?.count), `${s.key}/${role} ${field}`).toBe(true);
        }
      }
    expect(withoutBucketsAndSums(native), "the same samples but for buckets and sums").toEqual(
      withoutBucketsAndSums(parts),
    );
    // No pod's sum asked: the roles' native sums carry them, and the means read those.
    for (const roles of native.scalers.values())
      for (const [role, samples] of roles) {
        expect(
          samples.pods.flatMap((p) => (p.windows.panic.ttftSeconds?.sum === undefined ? [] : [p.pod])),
          role,
        ).toEqual([]);
        expect(Number.isFinite(samples.roleHistograms?.panic?.ttftSeconds?.sum), role).toBe(true);
      }
    const expected = observationsOf(parts, scalers);
    const observations = observationsOf(native, scalers);
    for (const [key, observation] of observations)
      expect(observation, `${key} under the native plan`).toEqual(expected.get(key));
    // Brackets placed inside buckets: the sums carried their bounds, not only their counts.
    const brackets = [...observations.values()].flatMap((o) => [o.ttftBracket, o.itlBracket, o.queueTimeBracket]);
    expect(brackets.filter((b) => b !== undefined && Number.isFinite(b.upperMilliseconds)).length).toBeGreaterThan(6);
  }, 60_000);

  it("answers a period's passes from range queries as from instant ones (calibrate's path), the native sums included", async () => {
    // Steps whose scrapes have all landed (a scrape stamped before a step but stored after the range query would
    // be in the instant pass only), as the first test's pass waits for them.
    const last = Math.floor((Date.now() - ingestionSettleMs) / 1000) - 2;
    const grid = { firstUnixSeconds: last - 4, lastUnixSeconds: last, stepSeconds: 1 };
    const client = new PrometheusClient({ endpoint: prometheus.url, timeoutMs: 10_000 });
    const config = { ...defaultPrometheusSignalConfig, queryPlan: "native" as const };
    const answers = new RangeAnswers(client, grid);
    for (let t = grid.firstUnixSeconds; t <= grid.lastUnixSeconds; t += grid.stepSeconds) {
      const [instant, ranged] = await Promise.all(
        [client, answers].map((c) => new PrometheusSignalSource(c, config).sample(scalers, t * 1000)),
      );
      expect(ranged?.queries, `${t}: no role asked again`).toBe(36);
      expect(
        ranged?.scalers.get(`${namespace}/pd-vllm`)?.get("prefill")?.roleHistograms?.panic?.ttftSeconds,
      ).toBeDefined();
      // A range query adds a role's native histograms in another order than an instant one: the last bits differ.
      expect(toDigits(ranged), `step ${t}`).toEqual(toDigits(instant));
    }
  }, 60_000);

  it("asks a role its native histograms cannot be added for (other buckets on one pod) for its pods' buckets, the family known", async () => {
    let scrapes = 0;
    oddPod = createServer((_req, res) => {
      scrapes++;
      res.writeHead(200, { "content-type": "text/plain; version=0.0.4" });
      res.end(
        [
          "# TYPE vllm:time_to_first_token_seconds histogram",
          `vllm:time_to_first_token_seconds_bucket{le="0.5"} ${scrapes}`,
          `vllm:time_to_first_token_seconds_bucket{le="+Inf"} ${2 * scrapes}`,
          `vllm:time_to_first_token_seconds_sum ${1.5 * scrapes}`,
          `vllm:time_to_first_token_seconds_count ${2 * scrapes}`,
          "",
        ].join("\n"),
      );
    });
    await new Promise<void>((resolve) => oddPod.listen(0, "127.0.0.1", resolve));
    const address = oddPod.address();
    const port = typeof address === "object" && address !== null ? address.port : 0;
    const l = defaultPrometheusSignalConfig.labels;
    await prometheus.setTargets([
      ...server.fileSdGroups(),
      {
        targets: [`127.0.0.1:${port}`],
        labels: { namespace, pod: "pd-vllm-prefill-odd", [l.deployment]: "pd-vllm", [l.role]: "prefill" },
      },
    ]);
    // Scraped for longer than the panic window, so its increase is in the role's sum.
    const deadline = Date.now() + 30_000;
    while (scrapes < panicWindowSeconds + 2 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 250));
    expect(scrapes, "the odd pod scraped").toBeGreaterThanOrEqual(panicWindowSeconds + 2);
    const at = Date.now() - 1000;
    await new Promise((r) => setTimeout(r, Math.max(0, at + ingestionSettleMs - Date.now())));
    const [parts, native] = await Promise.all([
      sourceOf("parts").sample(scalers, at),
      sourceOf("native").sample(scalers, at),
    ]);
    expect(native.unknownFamilies).toEqual({});
    expect(native.warnings).toEqual([]);
    expect(native.infos.join("\n")).toMatch(/ttft: .*incompatible custom buckets/);
    // The classic sums by role with their `_sum`s (12), whose proof fails on a count no sampled pod answered, then
    // the pods' buckets and sums (12).
    expect(native.queries, "the role asked again for its classic sums, then its pods' buckets").toBe(36 + 12 + 12);
    // The role Prometheus could not add is named, with the histogram it could not add; no other role.
    expect(native.nativeSumsMissing).toEqual([`${namespace}/pd-vllm prefill (ttftSeconds)`]);
    const prefill = native.scalers.get(`${namespace}/pd-vllm`)?.get("prefill");
    expect(prefill?.roleHistograms, "the prefill role read from its pods' own buckets").toBeUndefined();
    expect(prefill?.pods.some((p) => (p.windows.panic.ttftSeconds?.buckets.length ?? 0) > 0)).toBe(true);
    // The same pass but for buckets and the info the warning became.
    expect(withoutBucketsAndSums({ ...native, infos: [] })).toEqual(withoutBucketsAndSums(parts));
    const expected = observationsOf(parts, scalers);
    for (const [key, observation] of observationsOf(native, scalers))
      expect(observation, `${key} under the native plan`).toEqual(expected.get(key));
  }, 60_000);

  it("reads a role one of whose pods has a NaN TTFT sum from its pods' own buckets and sums, leaving that pod out as parts does", async () => {
    // One SGLang pod scraped through a proxy that writes its TTFT sum as NaN (a NaN observation makes the sum NaN
    // for the rest of the process' life); the same `instance`, so its series stay the same series.
    const groups = server.fileSdGroups();
    const target = groups.find((g) => g.labels.pod?.startsWith("chat-sglang-server") === true);
    if (target === undefined) throw new Error("no chat-sglang server pod in the fleet");
    const upstream = target.targets[0] ?? "";
    nanPod = createServer((req, res) => {
      fetch(`http://${upstream}${req.url ?? "/"}`)
        .then(async (r) => {
          const text = (await r.text()).replace(
            /^(sglang:time_to_first_token_seconds_sum(?:\{[^}]*\})?) \S+$/gm,
            "$1 NaN",
          );
          res.writeHead(r.status, { "content-type": "text/plain; version=0.0.4" });
          res.end(text);
        })
        .catch((e: unknown) => res.writeHead(502).end(String(e)));
    });
    await new Promise<void>((resolve) => nanPod.listen(0, "127.0.0.1", resolve));
    const address = nanPod.address();
    const port = typeof address === "object" && address !== null ? address.port : 0;
    await prometheus.setTargets(
      groups.map((g) =>
        g === target ? { targets: [`127.0.0.1:${port}`], labels: { ...g.labels, instance: upstream } } : g,
      ),
    );
    // The NaN scraped, and the odd pod of the test before gone from every window.
    const nanSum = async (): Promise<boolean> => {
      const res = await fetch(`${prometheus.url}/api/v1/query`, {
        method: "POST",
        body: new URLSearchParams({ query: `sglang:time_to_first_token_seconds_sum{pod="${target.labels.pod}"}` }),
      });
      const body = (await res.json()) as { data: { result: { value: [number, string] }[] } };
      return body.data.result.some((r) => r.value[1] === "NaN");
    };
    const deadline = Date.now() + 30_000;
    while (!(await nanSum()) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 250));
    expect(await nanSum(), "the NaN sum scraped").toBe(true);
    await new Promise((r) => setTimeout(r, (stableWindowSeconds + 3) * 1000));
    const at = Date.now() - 1000;
    await new Promise((r) => setTimeout(r, Math.max(0, at + ingestionSettleMs - Date.now())));
    const [parts, native] = await Promise.all([
      sourceOf("parts").sample(scalers, at),
      sourceOf("native").sample(scalers, at),
    ]);
    const sglang = (pass: typeof parts) => pass.scalers.get(`${namespace}/chat-sglang`)?.get("server");
    // The first ask (36), then the role's pods' own buckets and sums (12): its native sum answered, NaN.
    expect(native.queries, "the role asked again for its pods' buckets and sums").toBe(36 + 12);
    expect(native.nativeSumsMissing).toEqual([]);
    expect(sglang(native)?.roleHistograms, "the role read from its pods' own buckets").toBeUndefined();
    for (const pass of [parts, native]) {
      const pod = sglang(pass)?.pods.find((p) => p.pod === target.labels.pod);
      expect(pod?.windows.stable.established, "the NaN pod established").toBe(true);
      expect(pod?.windows.stable.ttftSeconds, "the NaN pod has no TTFT histogram").toBeUndefined();
    }
    expect(withoutBucketsAndSums(native)).toEqual(withoutBucketsAndSums(parts));
    const expected = observationsOf(parts, scalers);
    for (const [key, observation] of observationsOf(native, scalers))
      expect(observation, `${key} under the native plan`).toEqual(expected.get(key));
    expect(expected.get(`${namespace}/chat-sglang/server/Server`)?.ttftMilliseconds).toBeGreaterThan(0);
  }, 90_000);
});
