import { describe, expect, it } from "vitest";
import {
  defaultLabelNames,
  defaultPrometheusSignalConfig,
  validatePrometheusSignalConfig,
} from "../../../src/adapters/prometheus/config.js";
import {
  anyOf,
  bucketParts,
  escapePromQLString,
  resetGroups,
  escapeRegex,
  gaugesQuery,
  union,
} from "../../../src/adapters/prometheus/queries.js";
import { PrometheusSignalSource, type ScalerSamplingInput } from "../../../src/adapters/prometheus/source.js";

const neverCalled = { instantQuery: () => Promise.reject(new Error("not in this test")) };

function scaler(i: number, overrides: Partial<ScalerSamplingInput> = {}): ScalerSamplingInput {
  return {
    key: `ns-${i % 7}/s-${i}`,
    namespace: `ns-${i % 7}`,
    deployment: `md-${i}`,
    roles: ["prefill", "decode"],
    stableWindowSeconds: 180,
    panicWindowSeconds: 60,
    intervalSeconds: 15,
    ...overrides,
  };
}

/** Reads back a PromQL double-quoted literal the way Prometheus' lexer does. */
function unquote(literal: string): string {
  return literal.replace(/\\(x[0-9a-f]{2}|.)/g, (_, e: string) => {
    if (e.startsWith("x")) return String.fromCharCode(parseInt(e.slice(1), 16));
    return ({ n: "\n", r: "\r", t: "\t" } as Record<string, string>)[e] ?? e;
  });
}

describe("label value escaping", () => {
  it.each([
    ["plain", "md-1"],
    ["quotes and braces", 'x"} or vector(1) or {a="'],
    ["backslashes", "a\\b\\\\"],
    ["regex metacharacters", "a.c|.*(x)[y]{2}^$+?"],
    ["control characters", "a\nb\tc\u0001"],
  ])("round-trips %s through string and regex escaping", (_what, value) => {
    const matcher = anyOf("app_kubernetes_io_instance", [value]);
    const m = /^app_kubernetes_io_instance=~"((?:[^"\\]|\\.)*)"$/.exec(matcher);
    expect(m, matcher).not.toBeNull();
    const regex = unquote(m?.[1] ?? "");
    // Prometheus anchors label regexes; JS needs it spelled out.
    const re = new RegExp(`^(?:${regex})$`);
    expect(re.test(value)).toBe(true);
    expect(re.test(`${value}x`)).toBe(false);
    expect(re.test("md-2")).toBe(value === "md-2");
  });

  it("keeps one literal per value, so a dot matches only a dot", () => {
    const re = new RegExp(`^(?:${escapeRegex("a.c")})$`);
    expect(re.test("abc")).toBe(false);
    expect(escapePromQLString('"')).toBe('\\"');
  });

  it("cannot break out of the selector whatever the name", () => {
    const hostile = 'evil"} or vector(1) or {x="\\';
    const q = gaugesQuery(
      { labels: defaultLabelNames, separator: ":" },
      { namespaces: ["ns"], deployments: [hostile], roles: ["server"] },
    );
    // Remove every well-formed string literal: what is left must not contain the payload.
    const code = q.replace(/"(?:[^"\\]|\\.)*"/g, '""');
    expect(code).not.toContain("vector(1)");
    expect(code).not.toContain("evil");
  });
});

describe("configuration", () => {
  it("defaults to the PodMonitor's labels and the engines' colon names", () => {
    expect(defaultPrometheusSignalConfig.labels).toEqual({
      namespace: "namespace",
      pod: "pod",
      deployment: "app_kubernetes_io_instance",
      role: "app_kubernetes_io_component",
    });
    expect(defaultPrometheusSignalConfig.metricNameSeparator).toBe(":");
  });

  it.each([["app.kubernetes.io/instance"], ['x"}'], [""], ["__name__"], ["mds_signal"]])(
    "refuses the label name %j",
    (name) => {
      expect(() =>
        validatePrometheusSignalConfig({
          ...defaultPrometheusSignalConfig,
          labels: { ...defaultLabelNames, deployment: name },
        }),
      ).toThrow();
    },
  );

  it("uses the configured separator and label names", () => {
    const source = new PrometheusSignalSource(neverCalled, {
      ...defaultPrometheusSignalConfig,
      metricNameSeparator: "_",
      labels: { namespace: "ns", pod: "pod_name", deployment: "md", role: "workload_role" },
    });
    const q = source.queriesFor([scaler(1)]);
    expect(q.gauges).toContain("vllm_num_requests_running{");
    expect(q.gauges).toContain("sglang_num_running_reqs{");
    expect(q.gauges).not.toContain("vllm:");
    expect(q.gauges).toContain('md=~"md-1"');
    expect(q.counters).toContain("sum by (ns, pod_name, md, workload_role)");
  });
});

describe("one pass, a fixed number of queries", () => {
  const source = new PrometheusSignalSource(neverCalled, defaultPrometheusSignalConfig);

  it("issues the same four queries for 1 or 500 scalers and any mix of windows", () => {
    const one = source.queriesFor([scaler(1)]);
    const many = source.queriesFor(
      Array.from({ length: 500 }, (_, i) =>
        scaler(i, { stableWindowSeconds: 30 + (i % 20) * 10, panicWindowSeconds: 10 + (i % 5) }),
      ),
    );
    expect(Object.keys(one)).toEqual(["gauges", "counters", "ttft", "itl"]);
    expect(Object.keys(many)).toEqual(["gauges", "counters", "ttft", "itl"]);
    // Distinct windows are parts of the same query, tagged by window.
    expect(many.counters).toContain('"mds_window_seconds", "190"');
    expect(many.counters).toContain('"mds_window_seconds", "14"');
  });

  it("asks the same 42 queries, one per signal, for 1 or 500 scalers and any mix of windows in the parts plan", () => {
    const parts = new PrometheusSignalSource(neverCalled, { ...defaultPrometheusSignalConfig, queryPlan: "parts" });
    const one = parts.issuedFor([scaler(1)]);
    const many = parts.issuedFor(
      Array.from({ length: 500 }, (_, i) =>
        scaler(i, { stableWindowSeconds: 30 + (i % 20) * 10, panicWindowSeconds: 10 + (i % 5) }),
      ),
    );
    expect(one).toHaveLength(42);
    expect(many.map((q) => `${q.family}/${q.signal}`)).toEqual(one.map((q) => `${q.family}/${q.signal}`));
    // The signal is the query's own: no series is tagged with it.
    expect(one.some((q) => q.text.includes("mds_signal"))).toBe(false);
    // With two windows, each series says its window; alone, a window is the query's.
    const prompt = one.find((q) => q.signal === "vllm/prompt");
    expect(prompt?.windowSeconds).toBeUndefined();
    expect(prompt?.text).toContain('"mds_window_seconds", "60"');
    const single = parts.issuedFor([scaler(1, { stableWindowSeconds: 60, panicWindowSeconds: 60 })]);
    expect(single.find((q) => q.signal === "vllm/prompt")?.windowSeconds).toBe(60);
    expect(single.some((q) => q.text.includes("mds_window_seconds"))).toBe(false);
    expect(one[0]?.family).toBe("gauges");
  });

  it("asks the parts plan's 42 queries in the roles plan, its six bucket queries summed by role over the panic window and its resets over the longer window, for 1 or 500 scalers", () => {
    const config = { ...defaultPrometheusSignalConfig, queryPlan: "roles" } as const;
    const roles = new PrometheusSignalSource(neverCalled, config);
    const parts = new PrometheusSignalSource(neverCalled, { ...config, queryPlan: "parts" }).issuedFor([scaler(1)]);
    const one = roles.issuedFor([scaler(1)]);
    const many = roles.issuedFor(Array.from({ length: 500 }, (_, i) => scaler(i)));
    const signals = (qs: readonly { family: string; signal?: string }[]): string[] =>
      qs.map((q) => `${q.family}/${q.signal}`).sort();
    expect(signals(one)).toEqual(signals(parts));
    expect(many.map((q) => `${q.family}/${q.signal}`)).toEqual(one.map((q) => `${q.family}/${q.signal}`));
    const summed = one.filter((q) => q.perRole === true);
    expect(summed.map((q) => `${q.family}/${q.signal}`)).toEqual([
      "ttft/vllm/bucket",
      "ttft/sglang/bucket",
      "ttft/vllm/queue/bucket",
      "ttft/sglang/queue/bucket",
      "itl/vllm/bucket",
      "itl/sglang/bucket",
    ]);
    const l = defaultPrometheusSignalConfig.labels;
    const byRole = `sum by (${l.namespace}, ${l.deployment}, ${l.role}, le)`;
    for (const q of summed) expect(q.text, `${q.signal} is summed by role`).toContain(byRole);
    // Of the panic window alone: the stable window's buckets are asked where the panic window held no observation.
    for (const q of summed) {
      expect(q.windowSeconds, `${q.signal} reads one window`).toBe(60);
      expect(q.text, `${q.signal} reads the panic window`).toContain("[60s]");
      expect(q.text, `${q.signal} does not read the stable window`).not.toContain("[180s]");
    }
    // The resets of the longer window alone: the shorter window's are read from it, or asked where it saw a reset.
    const resets = one.filter((q) => (q.signal ?? "").includes("/resets/"));
    expect(resets).toHaveLength(4);
    for (const q of resets) {
      expect(q.windowSeconds, `${q.signal} reads one window`).toBe(180);
      expect(q.text, `${q.signal} reads the stable window`).toContain("[180s]");
      expect(q.text, `${q.signal} does not read the panic window`).not.toContain("[60s]");
    }
    // Everything else is the parts plan's query, word for word: the counts and sums stay per pod.
    const asked = (q: { signal?: string; perRole?: true }): boolean =>
      q.perRole !== true && !(q.signal ?? "").includes("/resets/");
    const rest = one.filter(asked).map((q) => q.text);
    expect(rest.sort()).toEqual(
      parts
        .filter((q) => !(q.signal ?? "").endsWith("/bucket") && asked(q))
        .map((q) => q.text)
        .sort(),
    );
    // The per-pod choice between ITL names and SGLang's rank filter happen before the role's sum.
    const itl = summed.find((q) => q.family === "itl" && q.signal === "vllm/bucket");
    expect(itl?.text).toContain(`or on (${l.namespace}, ${l.pod}, ${l.deployment}, ${l.role})`);
    expect(summed.find((q) => q.signal === "sglang/queue/bucket")?.text).toContain('pp_rank=~"0|"');
  });

  it("asks the roles plan's queries in the native plan but the pods' sums, its six bucket queries reading the native histograms", () => {
    const rolesPlan = new PrometheusSignalSource(neverCalled, { ...defaultPrometheusSignalConfig, queryPlan: "roles" });
    const native = new PrometheusSignalSource(neverCalled, { ...defaultPrometheusSignalConfig, queryPlan: "native" });
    const scalers = Array.from({ length: 3 }, (_, i) => scaler(i));
    // The pods' histogram sums are not asked under `native`: the role's native sum carries them.
    const podSum = (q: { readonly signal?: string; readonly perRole?: true }): boolean =>
      q.perRole !== true && (q.signal ?? "").endsWith("/sum");
    const r = rolesPlan.issuedFor(scalers).filter((q) => !podSum(q));
    const n = native.issuedFor(scalers);
    expect(rolesPlan.issuedFor(scalers).filter(podSum)).toHaveLength(6);
    expect(n.filter(podSum)).toEqual([]);
    expect(n.map((q) => `${q.family}/${q.signal}/${q.windowSeconds}/${q.perRole}`)).toEqual(
      r.map((q) => `${q.family}/${q.signal}/${q.windowSeconds}/${q.perRole}`),
    );
    // Every query but the sums word for word: the per-pod counts are the classic series'.
    expect(n.filter((q) => q.perRole !== true).map((q) => q.text)).toEqual(
      r.filter((q) => q.perRole !== true).map((q) => q.text),
    );
    const l = defaultPrometheusSignalConfig.labels;
    for (const [i, q] of n.entries()) {
      if (q.perRole !== true) continue;
      const classic = r[i]?.text ?? "";
      // The base name in place of `_bucket`, no `le`; the same selectors, windows and per-pod ITL fallback.
      expect(q.text, q.signal).not.toMatch(/_bucket|\ble\b/);
      expect(q.text, q.signal).toBe(
        classic
          .replaceAll("_bucket{", "{")
          .replaceAll(", le)", ")")
          .replace(/max by \(([^)]*)\) \(sglang:queue_time_seconds\{/g, "avg by ($1) (sglang:queue_time_seconds{")
          .replace(
            /max by \(([^)]*)\) \(increase\(sglang:queue_time_seconds\{/g,
            "avg by ($1) (increase(sglang:queue_time_seconds{",
          ),
      );
      expect(q.text, q.signal).toContain(`sum by (${l.namespace}, ${l.deployment}, ${l.role})`);
    }
    // SGLang's duplicate ranks collapse with `avg`: `max` ignores native histograms.
    expect(n.find((q) => q.perRole === true && q.signal === "sglang/queue/bucket")?.text).toMatch(
      /^sum by \([^)]*\) \(avg by/,
    );
  });

  it("refuses a query plan it does not know, naming it", () => {
    expect(() =>
      validatePrometheusSignalConfig({ ...defaultPrometheusSignalConfig, queryPlan: "joins" as "parts" }),
    ).toThrow('queryPlan: "joins" is not one of unions, parts, roles, native');
  });

  it("reads rank-zero SGLang scheduler series and sums data-parallel ranks", () => {
    const q = source.queriesFor([scaler(1)]).gauges;
    expect(q).toContain('tp_rank=~"0|"');
    expect(q).toContain('pp_rank=~"0|"');
    expect(q).toContain('dp_rank!=""');
    expect(q).toContain(
      "max by (namespace, pod, app_kubernetes_io_instance, app_kubernetes_io_component, dp_rank, instance)",
    );
  });

  it("keeps gauges apart per scrape target and counts targets per window, so a recreated pod is not added up", () => {
    const { gauges, counters } = source.queriesFor([scaler(1)]);
    expect(gauges).toContain(
      "sum by (namespace, pod, app_kubernetes_io_instance, app_kubernetes_io_component, instance) (vllm:num_requests_running{",
    );
    expect(counters).toContain(
      "min by (namespace, pod, app_kubernetes_io_instance, app_kubernetes_io_component, instance) (count_over_time(vllm:num_requests_running{",
    );
  });

  it("asks a pod's resets in groups: vLLM's token counters; SGLang's first-use family, its start-up counter's input mode and its TTFT count apart", () => {
    const parts = new PrometheusSignalSource(neverCalled, { ...defaultPrometheusSignalConfig, queryPlan: "parts" });
    const resets = parts.issuedFor([scaler(1)]).filter((q) => q.signal?.includes("/resets/"));
    expect(resets.map((q) => q.signal)).toEqual([
      "vllm/resets/first",
      "sglang/resets/first_use",
      "sglang/resets/startup",
      "sglang/resets/first_token",
    ]);
    const group = "namespace, pod, app_kubernetes_io_instance, app_kubernetes_io_component";
    const tagged = (engine: string, counter: string): string => `label_replace(resets(${engine}:${counter}{`;
    for (const counter of resetGroups.vllm.first) expect(resets[0]?.text).toContain(tagged("vllm", counter));
    for (const other of ["prefix_cache_hits_total", "_count"]) expect(resets[0]?.text).not.toContain(other);
    const firstUse = resets[1]?.text ?? "";
    for (const counter of resetGroups.sglang.first_use) {
      // Each counter tagged with its name before the sum, so the counters' series do not collide.
      expect(firstUse).toContain(tagged("sglang", counter));
      expect(firstUse).toContain(`"mds_series", "${counter}"`);
    }
    // Summed by pod, the tags dropped: one row per pod and window.
    expect(firstUse).toMatch(new RegExp(`sum by \\(${group}\\) \\(\\(*label_replace\\(resets`));
    // A group of one counter needs no tag.
    expect(resets[2]?.text).not.toContain("mds_series");
    expect(resets[2]?.text).toMatch(/\(resets\(sglang:prefill_effective_tokens_total\{[^}]*mode="input"[^}]*\}\[/);
    expect(resets[3]?.text).toContain("(resets(sglang:time_to_first_token_seconds_count{");
    expect(resets[3]?.text).not.toContain("inter_token");
  });
});

describe("queue time", () => {
  const source = new PrometheusSignalSource(neverCalled, defaultPrometheusSignalConfig);

  it("rides in the TTFT query, per window, for both engines: no query of its own", () => {
    const { ttft, itl, counters, gauges } = source.queriesFor([scaler(1)]);
    for (const w of ["60", "180"]) {
      for (const part of ["vllm/queue/bucket", "vllm/queue/count", "vllm/queue/sum", "sglang/queue/bucket"]) {
        expect(ttft).toContain(`"mds_signal", "${part}", "", ""), "mds_window_seconds", "${w}"`);
      }
    }
    expect(ttft).toContain("increase(vllm:request_queue_time_seconds_bucket{");
    expect(ttft).toContain("increase(sglang:queue_time_seconds_count{");
    for (const other of [itl, counters, gauges]) expect(other).not.toContain("queue_time");
  });

  it("reads SGLang's scheduler histogram from rank zero or per data-parallel rank, buckets by le", () => {
    const { ttft } = source.queriesFor([scaler(1)]);
    const group = "namespace, pod, app_kubernetes_io_instance, app_kubernetes_io_component";
    expect(ttft).toContain(
      `sum by (${group}, le) (max by (${group}, dp_rank, instance, le) (increase(sglang:queue_time_seconds_bucket{`,
    );
    expect(ttft).toMatch(/sglang:queue_time_seconds_bucket\{[^}]*tp_rank=~"0\|"/);
  });
});

describe("joining a query's parts", () => {
  /** The deepest parenthesis nesting of a PromQL text whose parts have none of their own. */
  const depth = (text: string): number =>
    [...text].reduce(
      (acc, c) => {
        const level = acc.level + (c === "(" ? 1 : c === ")" ? -1 : 0);
        return { level, max: Math.max(acc.max, level) };
      },
      { level: 0, max: 0 },
    ).max;

  it("keeps the parts in order, left before right, so an earlier part still wins a label clash", () => {
    expect(union(["a", "b", "c"])).toBe("((a)\n or (b))\n or (c)");
    expect(union(["a"])).toBe("a");
    expect(union([])).toBe("");
    const parts = Array.from({ length: 48 }, (_, i) => `p${i}`);
    expect(union(parts).match(/p\d+/g)).toEqual(parts);
  });

  it("nests as a balanced tree: 48 parts (the counter query's count) are six levels deep, not 47", () => {
    const parts = Array.from({ length: 48 }, (_, i) => `p${i}`);
    expect(depth(union(parts))).toBe(Math.ceil(Math.log2(48)));
  });
});

describe("the follow-ups' sums where the first ask left the pods' sums out (`native`)", () => {
  const ctx = { labels: defaultLabelNames, separator: ":" as const, matchers: [] };
  const sel = { namespaces: ["ns"], deployments: ["md"], roles: ["decode"] };
  const windows = [{ windowSeconds: 60, selection: sel }];
  const signals = (parts: ReturnType<typeof bucketParts>): string[] =>
    [...parts.ttft, ...parts.itl].map((p) => `${p.signal}${p.perRole === true ? " by role" : ""}`);
  const sums = ["vllm/sum", "sglang/sum", "vllm/queue/sum", "sglang/queue/sum", "vllm/sum", "sglang/sum"];

  it("asks the pods' own sums beside classic buckets, whether those are per pod or by role", () => {
    expect(signals(bucketParts(ctx, windows, "pod"))).not.toContain("vllm/sum");
    expect(signals(bucketParts(ctx, windows, "pod", true))).toEqual([
      "vllm/bucket",
      "vllm/sum",
      "sglang/bucket",
      "sglang/sum",
      "vllm/queue/bucket",
      "vllm/queue/sum",
      "sglang/queue/bucket",
      "sglang/queue/sum",
      "vllm/bucket",
      "vllm/sum",
      "sglang/bucket",
      "sglang/sum",
    ]);
    // A `_sum` summed by role could not tell a pod missing from it: the pods' own, as the pods' buckets ask them.
    const byRole = bucketParts(ctx, windows, "role", true);
    expect(signals(byRole).filter((s) => s.includes("/sum"))).toEqual(sums);
    const perPod = bucketParts(ctx, windows, "pod", true);
    const texts = (parts: ReturnType<typeof bucketParts>): string[] =>
      [...parts.ttft, ...parts.itl].filter((p) => p.signal.endsWith("/sum")).map((p) => p.expr);
    expect(texts(byRole)).toEqual(texts(perPod));
    expect(texts(byRole)[0]).toMatch(
      /^sum by \(namespace, pod, app_kubernetes_io_instance, app_kubernetes_io_component\) \(increase\(vllm:time_to_first_token_seconds_sum\{/,
    );
    // A native sum carries its sum: nothing is asked beside it.
    expect(signals(bucketParts(ctx, windows, "native", true))).toEqual(signals(bucketParts(ctx, windows, "native")));
  });
});
