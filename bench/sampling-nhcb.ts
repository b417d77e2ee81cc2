/**
 * What the latency queries cost Prometheus when the engines' histograms are
 * stored as native histograms with custom buckets (NHCB) instead of classic
 * bucket series. Three Prometheus 3.5 servers, one per TSDB: the prepared TSDB
 * (bench/engine-tsdb.ts), its NHCB twin and its mixed twin (NHCB and the classic
 * series both; bench/nhcb-tsdb.ts). The `roles` plan's queries for every
 * deployment, evaluated at the bench's evaluation time, and their NHCB
 * rewrites (bench/nhcb-queries.ts), taking turns: per query and server, the
 * least Prometheus CPU of `--runs` runs (each `--repeat` evaluations, from
 * /proc), the samples touched (`stats=all`), the series answered and the
 * response's bytes; then the whole pass, its 42 queries sent together. Every
 * NHCB answer is compared with the classic one (counts, sums, every role's
 * cumulative bucket at every bound, every role's p95); a difference fails the
 * run. Never run by CI.
 *
 *   npm run bench:sampling-nhcb [-- --size 100 --runs 3 --repeat 3 --query-timeout 600 --no-mixed]
 */
import { rm } from "node:fs/promises";
import { loadavg } from "node:os";
import { defaultPrometheusSignalConfig } from "../src/adapters/prometheus/config.js";
import { PrometheusSignalSource } from "../src/adapters/prometheus/source.js";
import { PrometheusHarness } from "../harness/prometheus.js";
import { findPromBinaries } from "../harness/prom-bin.js";
import { evaluationUnixMs, prepareTsdb, samplingInputs, serveBlocks, servedVersion } from "./engine-tsdb.js";
import {
  nativePodHistogramText,
  nativeQueryText,
  nativeRewriteOf,
  type IssuedQuery,
  type NativeRewrite,
} from "./nhcb-queries.js";
import { prepareNhcbTwin, type TwinKind } from "./nhcb-tsdb.js";
import { instantQuery, type QueryAnswer, type VectorSeries } from "./prometheus-query.js";
import { cpuSecondsOf } from "./proc-cpu.js";
import { wholeFlag } from "./flags.js";

const help = `npm run bench:sampling-nhcb [-- options]

The roles plan's queries against a prepared TSDB and its native-histogram (NHCB) twins,
side by side (docs/prometheus-signals.md, "Native histograms (NHCB), measured").

  --size <n>            deployments of the prepared TSDB (default 100)
  --runs <n>            runs per query and server; the least CPU counts (default 3)
  --repeat <n>          evaluations of a query per run, its CPU divided by them (default 3)
  --query-timeout <s>   budget of one query in seconds (default 600)
  --no-mixed            leave out the mixed TSDB (NHCB and classic series both) and its server
  --help                this text
`;

const size = wholeFlag("size", 100);
const runs = wholeFlag("runs", 3);
const repeat = wholeFlag("repeat", 3);
const queryTimeoutMs = wholeFlag("query-timeout", 600) * 1000;
/** The mixed TSDB is a third server (about as large as the classic one); `--no-mixed` leaves it out. */
const withMixed = !process.argv.includes("--no-mixed");
/** Relative slack for values Prometheus adds in another order (bucket by bucket against whole histograms). */
const relativeSlack = 1e-9;

type TsdbKind = "classic" | TwinKind;

interface Server {
  readonly kind: TsdbKind;
  readonly prometheus: PrometheusHarness;
  readonly storage: string;
}

async function startServer(kind: TsdbKind, blocksPath: string, binaryPath: string): Promise<Server> {
  const { prometheus, storage } = await serveBlocks({
    blocksPath,
    binaryPath,
    queryTimeoutSeconds: queryTimeoutMs / 1000,
    storagePrefix: `mds-bench-${kind}-`,
  });
  return { kind, prometheus, storage };
}

const cpuOf = (s: Server): Promise<number> => cpuSecondsOf(`--web.listen-address=127.0.0.1:${s.prometheus.port}`);

const ask = (s: Server, text: string, stats = false): Promise<QueryAnswer> =>
  instantQuery(s.prometheus.url, text, evaluationUnixMs, { timeoutMs: queryTimeoutMs, stats });

/** Prometheus CPU seconds of one evaluation of `texts` (sent together), the least of `runs` runs of `repeat` each. */
async function leastCpu(s: Server, texts: readonly string[], perRun: number[]): Promise<void> {
  const before = await cpuOf(s);
  for (let i = 0; i < repeat; i++) await Promise.all(texts.map((t) => ask(s, t)));
  perRun.push(((await cpuOf(s)) - before) / repeat);
}

const key = (metric: Readonly<Record<string, string>>, drop: readonly string[] = []): string =>
  JSON.stringify(
    Object.entries(metric)
      .filter(([k]) => !drop.includes(k))
      .sort(([a], [b]) => a.localeCompare(b)),
  );

const close = (a: number, b: number): boolean =>
  a === b ||
  (Number.isNaN(a) && Number.isNaN(b)) ||
  Math.abs(a - b) <= relativeSlack * Math.max(Math.abs(a), Math.abs(b));

/** A float as the Prometheus API writes it (`+Inf`, `-Inf` and `NaN` included). */
function promFloat(text: string | undefined): number {
  if (text === "+Inf") return Infinity;
  if (text === "-Inf") return -Infinity;
  return Number(text);
}

const floatOf = (s: VectorSeries): number => promFloat(s.value?.[1]);

/** Cumulative count of a native histogram's buckets at `le`: the buckets whose upper bound is at most it. */
function cumulativeAt(s: VectorSeries, le: number): number {
  let total = 0;
  for (const [, , upper, count] of s.histogram?.[1].buckets ?? []) {
    const bound = promFloat(upper);
    if (bound <= le || close(bound, le)) total += promFloat(count);
  }
  return total;
}

/** How two answers compare: values compared, how many differ, the largest relative difference and the first one. */
interface Comparison {
  compared: number;
  differing: number;
  maxRelative: number;
  first?: string;
  /** Series one side has and the other not: a difference of shape, never slack. */
  missing: string[];
}

function compareValue(c: Comparison, what: string, classic: number, native: number): void {
  c.compared++;
  if (close(classic, native)) return;
  c.differing++;
  const relative = Math.abs(classic - native) / Math.max(Math.abs(classic), Math.abs(native));
  c.maxRelative = Math.max(c.maxRelative, Number.isNaN(relative) ? Infinity : relative);
  c.first ??= `${what}: classic ${classic}, NHCB ${native}`;
}

/** The NHCB answer against the classic one: per-pod floats by series, or per role every cumulative bucket. */
function compareAnswers(rewrite: NativeRewrite, classic: QueryAnswer, native: QueryAnswer): Comparison {
  const c: Comparison = { compared: 0, differing: 0, maxRelative: 0, missing: [] };
  if (rewrite !== "bucket") {
    const byKey = new Map(classic.result.map((s) => [key(s.metric), floatOf(s)]));
    for (const s of native.result) {
      const want = byKey.get(key(s.metric));
      if (want === undefined) c.missing.push(`no classic series ${key(s.metric)}`);
      else compareValue(c, key(s.metric), want, floatOf(s));
      byKey.delete(key(s.metric));
    }
    for (const k of byKey.keys()) c.missing.push(`no NHCB series ${k}`);
    return c;
  }
  const roles = new Map(native.result.map((s) => [key(s.metric), s]));
  const covered = new Set<string>();
  for (const s of classic.result) {
    const role = key(s.metric, ["le"]);
    const h = roles.get(role);
    if (!h?.histogram) {
      c.missing.push(`no NHCB histogram for ${role}`);
      continue;
    }
    covered.add(role);
    const le = promFloat(s.metric["le"]);
    const got = le === Infinity ? promFloat(h.histogram[1].count) : cumulativeAt(h, le);
    compareValue(c, `${role} le=${s.metric["le"] ?? "?"}`, floatOf(s), got);
  }
  for (const role of roles.keys()) if (!covered.has(role)) c.missing.push(`no classic buckets for ${role}`);
  return c;
}

interface Measured {
  readonly q: IssuedQuery;
  readonly rewrite: NativeRewrite;
  readonly nativeText: string;
  /** Count queries only: the per-pod histogram query that answers the count and the sum together. */
  readonly podHistogramText?: string;
  /** By server and query kind (`classic`/`nhcb` text): CPU seconds per evaluation of each run. */
  readonly cpu: Map<string, number[]>;
  readonly answers: Map<string, QueryAnswer>;
}

const least = (xs: readonly number[] | undefined): number => (xs && xs.length > 0 ? Math.min(...xs) : NaN);
const ms = (s: number): string => (Number.isNaN(s) ? "-" : (s * 1000).toFixed(1));

async function main(): Promise<void> {
  const bins = findPromBinaries();
  const classicTsdb = await prepareTsdb(bins.promtoolPath, size);
  const nhcbTwin = await prepareNhcbTwin(bins.promtoolPath, size, "nhcb");
  const mixedTwin = withMixed ? await prepareNhcbTwin(bins.promtoolPath, size, "mixed") : undefined;
  const loadBefore = loadavg()[0] ?? NaN;
  const servers: Server[] = [];
  try {
    const classic = await startServer("classic", classicTsdb.blocksPath, bins.prometheusPath);
    servers.push(classic);
    const nhcb = await startServer("nhcb", nhcbTwin.blocksPath, bins.prometheusPath);
    servers.push(nhcb);
    const mixed = mixedTwin && (await startServer("mixed", mixedTwin.blocksPath, bins.prometheusPath));
    if (mixed) servers.push(mixed);
    const scalers = samplingInputs(size, { stableWindowSeconds: 180, panicWindowSeconds: 60 });
    const source = new PrometheusSignalSource(
      { instantQuery: () => Promise.reject(new Error("not sent")) },
      {
        ...defaultPrometheusSignalConfig,
        queryPlan: "roles",
      },
    );
    const issued = source.issuedFor(scalers);
    // What runs where: the classic text on the classic and mixed TSDBs, the NHCB text on the NHCB and mixed ones.
    const pairs: readonly (readonly [Server, "classic" | "nhcb"])[] = [
      [classic, "classic"],
      [nhcb, "nhcb"],
      ...(mixed
        ? ([
            [mixed, "classic"],
            [mixed, "nhcb"],
          ] as const)
        : []),
    ];
    const measured: Measured[] = issued.map((q) => ({
      q,
      rewrite: nativeRewriteOf(q),
      nativeText: nativeQueryText(q),
      ...(nativeRewriteOf(q) === "count" ? { podHistogramText: nativePodHistogramText(q) } : {}),
      cpu: new Map(),
      answers: new Map(),
    }));
    const textOf = (m: Measured, text: "classic" | "nhcb"): string => (text === "classic" ? m.q.text : m.nativeText);
    /** The pass with per-pod histograms: each count query asks the histogram, the sum queries go. */
    const podHistogramPass = measured.flatMap((m) => (m.rewrite === "sum" ? [] : [m.podHistogramText ?? m.nativeText]));
    // One cold evaluation of each, with statistics; the answers compared.
    const comparisons: [string, Comparison][] = [];
    for (const m of measured) {
      for (const [s, text] of pairs) m.answers.set(`${s.kind}/${text}`, await ask(s, textOf(m, text), true));
      const c = m.answers.get("classic/classic");
      for (const other of ["nhcb/nhcb", "mixed/nhcb", "mixed/classic"]) {
        const n = m.answers.get(other);
        if (!c || !n || (other !== "mixed/classic" && m.rewrite === "unchanged")) continue;
        comparisons.push([
          `${m.q.family}/${m.q.signal ?? ""} on ${other}`,
          compareAnswers(other === "mixed/classic" ? "unchanged" : m.rewrite, c, n),
        ]);
      }
    }
    // The per-pod histograms: their count and sum against the classic count and sum queries.
    for (const m of measured) {
      if (!m.podHistogramText) continue;
      const answer = await ask(nhcb, m.podHistogramText, true);
      m.answers.set("nhcb/pod-histogram", answer);
      const sumQuery = measured.find(
        (x) => x.rewrite === "sum" && x.q.family === m.q.family && x.q.signal === m.q.signal?.replace(/count$/, "sum"),
      );
      for (const [field, classicAnswer] of [
        ["count", m.answers.get("classic/classic")],
        ["sum", sumQuery?.answers.get("classic/classic")],
      ] as const) {
        if (!classicAnswer) continue;
        const asFloats: QueryAnswer = {
          bytes: answer.bytes,
          result: answer.result.map((x) => ({
            metric: x.metric,
            value: [x.histogram?.[0] ?? NaN, x.histogram?.[1][field] ?? "NaN"] as const,
          })),
        };
        comparisons.push([
          `${m.q.family}/${m.q.signal ?? ""} per-pod histogram's ${field}`,
          compareAnswers("count", classicAnswer, asFloats),
        ]);
      }
    }
    // Every role's p95 from its summed buckets, both ways.
    for (const m of measured.filter((x) => x.rewrite === "bucket")) {
      const c = await ask(classic, `histogram_quantile(0.95, ${m.q.text})`);
      const n = await ask(nhcb, `histogram_quantile(0.95, ${m.nativeText})`);
      comparisons.push([`${m.q.family}/${m.q.signal ?? ""} p95 by role`, compareAnswers("unchanged", c, n)]);
    }
    // The CPU, query by query, the servers taking turns.
    for (let r = 0; r < runs; r++) {
      for (const m of measured) {
        for (const [s, text] of pairs) {
          const k = `${s.kind}/${text}`;
          const list = m.cpu.get(k) ?? [];
          m.cpu.set(k, list);
          await leastCpu(s, [textOf(m, text)], list);
        }
        if (m.podHistogramText) {
          const list = m.cpu.get("nhcb/pod-histogram") ?? [];
          m.cpu.set("nhcb/pod-histogram", list);
          await leastCpu(nhcb, [m.podHistogramText], list);
        }
      }
    }
    // The whole pass: its queries sent together, as the source sends them.
    const passCpu = new Map<string, number[]>();
    for (let r = 0; r < runs; r++) {
      for (const [s, text] of pairs) {
        const k = `${s.kind}/${text}`;
        const list = passCpu.get(k) ?? [];
        passCpu.set(k, list);
        await leastCpu(
          s,
          measured.map((m) => textOf(m, text)),
          list,
        );
      }
      const list = passCpu.get("nhcb/pod-histogram") ?? [];
      passCpu.set("nhcb/pod-histogram", list);
      await leastCpu(nhcb, podHistogramPass, list);
    }
    const loadAfter = loadavg()[0] ?? NaN;
    report(measured, passCpu, loadBefore, loadAfter, await servedVersion(nhcb.prometheus.url));
    const rss = await Promise.all(
      servers.map(async (s) => `${s.kind} ${(((await s.prometheus.peakRssKb()) ?? NaN) / 1024).toFixed(0)} MiB`),
    );
    console.log(`Prometheus peak RSS: ${rss.join(", ")}`);
    console.log(`twins: nhcb ${nhcbTwin.report}${mixedTwin ? `; mixed ${mixedTwin.report}` : ""}`);
    reportComparisons(comparisons);
  } finally {
    for (const s of servers) {
      await s.prometheus.stop();
      await rm(s.storage, { recursive: true, force: true });
    }
  }
}

function report(
  measured: readonly Measured[],
  passCpu: ReadonlyMap<string, number[]>,
  loadBefore: number,
  loadAfter: number,
  version: string,
): void {
  console.log(
    `\nPrometheus ${version}, ${size} deployments (${size * 12} pods), evaluated at the last scrape; least Prometheus CPU of ${runs} runs of ${repeat} evaluations, per evaluation; 1-minute load ${loadBefore.toFixed(1)}-${loadAfter.toFixed(1)}`,
  );
  console.log(
    "query                                                   rewrite   CPU ms: classic  nhcb  mixed(classic)  mixed(nhcb) | samples: classic     nhcb | series: classic  nhcb | bytes: classic     nhcb",
  );
  const col = (s: string | number, w: number): string => String(s).padStart(w);
  for (const m of measured) {
    if (m.rewrite === "unchanged") continue;
    const a = (k: string): QueryAnswer | undefined => m.answers.get(k);
    console.log(
      [
        `${m.q.family}/${m.q.signal ?? ""}`.padEnd(55),
        m.rewrite.padEnd(8),
        col(ms(least(m.cpu.get("classic/classic"))), 15),
        col(ms(least(m.cpu.get("nhcb/nhcb"))), 5),
        col(ms(least(m.cpu.get("mixed/classic"))), 15),
        col(ms(least(m.cpu.get("mixed/nhcb"))), 12),
        "|",
        col(a("classic/classic")?.stats?.samplesTouched ?? NaN, 16),
        col(a("nhcb/nhcb")?.stats?.samplesTouched ?? NaN, 8),
        "|",
        col(a("classic/classic")?.result.length ?? NaN, 15),
        col(a("nhcb/nhcb")?.result.length ?? NaN, 5),
        "|",
        col(a("classic/classic")?.bytes ?? NaN, 14),
        col(a("nhcb/nhcb")?.bytes ?? NaN, 8),
      ].join(" "),
    );
  }
  const groups: readonly (readonly [string, (m: Measured) => boolean])[] = [
    ["the six bucket queries", (m) => m.rewrite === "bucket"],
    ["the twelve count and sum queries", (m) => m.rewrite === "count" || m.rewrite === "sum"],
    ["the 18 latency queries", (m) => m.q.family === "ttft" || m.q.family === "itl"],
    ["the six resets() of histogram counts", (m) => m.rewrite === "resets"],
    ["the 35 gauge and counter queries", (m) => m.q.family === "gauges" || m.q.family === "counters"],
    [`the ${measured.length} queries of a pass, one by one`, () => true],
  ];
  console.log("\nsummed over the queries (least CPU of each), and the whole pass sent together");
  console.log(
    "group                                         CPU ms: classic     nhcb  nhcb/classic  mixed(classic)  mixed(nhcb) | samples: classic     nhcb | series: classic   nhcb | bytes: classic      nhcb",
  );
  const total = (ms: readonly Measured[], k: string): number => ms.reduce((t, m) => t + least(m.cpu.get(k)), 0);
  const sumOf = (ms: readonly Measured[], k: string, f: (a: QueryAnswer) => number): number =>
    ms.reduce((t, m) => t + f(m.answers.get(k) ?? { result: [], bytes: NaN }), 0);
  for (const [name, pick] of groups) {
    const ms_ = measured.filter(pick);
    const c = total(ms_, "classic/classic");
    const n = total(ms_, "nhcb/nhcb");
    console.log(
      [
        name.padEnd(45),
        col(ms(c), 15),
        col(ms(n), 8),
        col((n / c).toFixed(2), 13),
        col(ms(total(ms_, "mixed/classic")), 15),
        col(ms(total(ms_, "mixed/nhcb")), 12),
        "|",
        col(
          sumOf(ms_, "classic/classic", (a) => a.stats?.samplesTouched ?? NaN),
          16,
        ),
        col(
          sumOf(ms_, "nhcb/nhcb", (a) => a.stats?.samplesTouched ?? NaN),
          8,
        ),
        "|",
        col(
          sumOf(ms_, "classic/classic", (a) => a.result.length),
          15,
        ),
        col(
          sumOf(ms_, "nhcb/nhcb", (a) => a.result.length),
          6,
        ),
        "|",
        col(
          sumOf(ms_, "classic/classic", (a) => a.bytes),
          14,
        ),
        col(
          sumOf(ms_, "nhcb/nhcb", (a) => a.bytes),
          9,
        ),
      ].join(" "),
    );
  }
  const pc = least(passCpu.get("classic/classic"));
  const pn = least(passCpu.get("nhcb/nhcb"));
  console.log(
    `${`the pass, ${measured.length} queries sent together`.padEnd(45)} ${col(ms(pc), 15)} ${col(ms(pn), 8)} ${col((pn / pc).toFixed(2), 13)} ${col(ms(least(passCpu.get("mixed/classic"))), 15)} ${col(ms(least(passCpu.get("mixed/nhcb"))), 12)}`,
  );
  const podHistograms = measured.filter((m) => m.podHistogramText !== undefined);
  const ph = total(podHistograms, "nhcb/pod-histogram");
  const phAnswers = podHistograms.map((m) => m.answers.get("nhcb/pod-histogram"));
  console.log(
    `${"the six per-pod histogram queries (NHCB)".padEnd(45)} ${col("", 15)} ${col(ms(ph), 8)} ${col("", 13)} ${col("", 15)} ${col("", 12)} | ${col("", 16)} ${col(
      phAnswers.reduce((t, a) => t + (a?.stats?.samplesTouched ?? NaN), 0),
      8,
    )} | ${col("", 15)} ${col(
      phAnswers.reduce((t, a) => t + (a?.result.length ?? NaN), 0),
      6,
    )} | ${col("", 14)} ${col(
      phAnswers.reduce((t, a) => t + (a?.bytes ?? NaN), 0),
      9,
    )}`,
  );
  const pp = least(passCpu.get("nhcb/pod-histogram"));
  console.log(
    `${`the pass with per-pod histograms, ${measured.length - podHistograms.length} queries`.padEnd(45)} ${col("", 15)} ${col(ms(pp), 8)} ${col((pp / pc).toFixed(2), 13)}`,
  );
  const latency = measured.filter((m) => m.q.family === "ttft" || m.q.family === "itl");
  const lc = total(latency, "classic/classic");
  const ln = total(latency, "nhcb/nhcb");
  console.log(
    `\nlatency queries at ${size} deployments: Prometheus ${((lc * 1000) / size).toFixed(2)} ms classic, ${((ln * 1000) / size).toFixed(2)} ms NHCB of CPU per deployment per pass (${(lc / ln).toFixed(1)} x less)`,
  );
  const buckets = total(
    measured.filter((m) => m.rewrite === "bucket"),
    "nhcb/nhcb",
  );
  console.log(
    `latency queries with per-pod histograms at ${size} deployments: Prometheus ${(((buckets + ph) * 1000) / size).toFixed(2)} ms of CPU per deployment per pass (${(lc / (buckets + ph)).toFixed(1)} x less than classic)`,
  );
  console.log(
    `sampling cost at ${size} deployments (roles plan, histograms as NHCB, per-pod histograms): Prometheus ${((pp * 1000) / size).toFixed(2)} ms of CPU per deployment per pass`,
  );
  console.log(
    `sampling cost at ${size} deployments (roles plan, histograms as NHCB): Prometheus ${((pn * 1000) / size).toFixed(2)} ms of CPU per deployment per pass, against ${((pc * 1000) / size).toFixed(2)} ms classic`,
  );
}

/**
 * The answers compared, query by query. A series one side lacks fails the run; values that differ
 * beyond the slack are printed with their count and largest relative difference, and fail it too.
 */
function reportComparisons(comparisons: readonly (readonly [string, Comparison])[]): void {
  console.log("\nanswers compared with the classic TSDB's classic answer (relative slack 1e-9)");
  let failed = false;
  for (const [what, c] of comparisons) {
    const verdict =
      c.missing.length > 0
        ? `${c.missing.length} series on one side only, e.g. ${c.missing[0] ?? ""}`
        : c.differing === 0
          ? "equal"
          : `${c.differing} differ, at most ${(c.maxRelative * 100).toFixed(2)} % apart; e.g. ${c.first ?? ""}`;
    if (c.missing.length > 0 || c.differing > 0) failed = true;
    console.log(`${what.padEnd(60)} ${String(c.compared).padStart(6)} values: ${verdict}`);
  }
  if (failed) {
    console.error("some NHCB answers differ from the classic ones (above)");
    process.exitCode = 1;
  } else console.log("every NHCB answer equals the classic one");
}

(process.argv.includes("--help") ? Promise.resolve(void process.stdout.write(help)) : main()).catch((err: unknown) => {
  console.error(err);
  process.exitCode = 1;
});
