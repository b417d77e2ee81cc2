/**
 * The shipped dashboards are the generated ones, read only series the scaler
 * or the engines export, let the user pick the data source, show readable
 * table columns, and every query (panels, variables, annotations), with its
 * Grafana variables filled in, parses in a real Prometheus.
 */
import { readFileSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ScalerMetrics } from "../../src/adapters/telemetry/metrics.js";
import { dashboards } from "../../src/dashboards/index.js";
import { PrometheusHarness } from "../../harness/prometheus.js";

const dir = join(import.meta.dirname, "..", "..", "dashboards");
const capturesDir = join(import.meta.dirname, "..", "..", "..", "shared", "fixtures", "engine-expositions");

interface Query {
  expr: string;
  datasource: { uid: string };
  instant?: boolean;
  format?: string;
}
interface Panel {
  type: string;
  title: string;
  description?: string;
  datasource?: { uid: string };
  targets?: Query[];
  transformations?: { id: string; options: { excludeByName?: Record<string, boolean> } }[];
}
interface DashboardJson {
  uid: string;
  panels: Panel[];
  templating: { list: { name: string; type: string; query: unknown }[] };
  annotations?: { list?: { expr?: string }[] };
}

/** Every series name the controller exports (default process metrics included). */
async function controllerSeries(): Promise<Set<string>> {
  const known = new Set<string>();
  for (const m of await new ScalerMetrics().registry.getMetricsAsJSON()) {
    known.add(m.name);
    if (String(m.type) === "histogram") for (const s of ["_bucket", "_sum", "_count"]) known.add(m.name + s);
  }
  return known;
}

/** Every engine series name in the real vLLM and SGLang captures, a histogram's family as a whole. */
function engineSeries(): Set<string> {
  const known = new Set<string>();
  for (const file of readdirSync(capturesDir).filter((f) => f.endsWith(".prom"))) {
    for (const line of readFileSync(join(capturesDir, file), "utf8").split("\n")) {
      const name = /^((?:vllm|sglang):[a-zA-Z0-9_]+)/.exec(line)?.[1];
      if (name === undefined) continue;
      known.add(name);
      const family = /^(.*)_(bucket|sum|count)$/.exec(name)?.[1];
      if (family !== undefined) for (const s of ["_bucket", "_sum", "_count"]) known.add(family + s);
    }
  }
  return known;
}

/** Every PromQL expression of a dashboard: panels, variable queries, annotations. */
function expressions(d: DashboardJson): string[] {
  const variables = d.templating.list.filter((v) => v.type === "query").map((v) => String(v.query));
  return [
    ...d.panels.flatMap((p) => p.targets ?? []).map((t) => t.expr),
    ...variables,
    ...(d.annotations?.list ?? []).flatMap((a) => a.expr ?? []),
  ];
}

/** Fills Grafana's variables the way Grafana does for "All" and the built-in intervals. */
function filled(expr: string): string {
  return expr
    .replaceAll("$__rate_interval", "1m")
    .replaceAll("$__interval", "15s")
    .replace(/\$(namespace|scaler|role|target)\b/g, ".*");
}

const committed = Object.keys(dashboards).map(
  (file) => [file, JSON.parse(readFileSync(join(dir, file), "utf8")) as DashboardJson] as const,
);

describe.each(Object.entries(dashboards))("dashboards/%s", (file, build) => {
  const dashboard = JSON.parse(readFileSync(join(dir, file), "utf8")) as DashboardJson;

  it("is what `npm run generate` writes", () => {
    expect(dashboard).toEqual(JSON.parse(JSON.stringify(build())));
  });

  it("queries only series the controller or the engines export", async () => {
    const known = new Set([...(await controllerSeries()), ...engineSeries()]);
    const exprs = expressions(dashboard);
    expect(exprs.length).toBeGreaterThan(4);
    const names = exprs.flatMap((e) =>
      [...e.matchAll(/(?<![\w:])((?:mds_|vllm:|sglang:)[a-zA-Z0-9_:]+)/g)].map((m) => m[1] ?? ""),
    );
    expect(names.filter((n) => !known.has(n))).toEqual([]);
  });

  it("uses the data source variable in every panel and query", () => {
    const panels = dashboard.panels.filter((p) => p.type !== "row");
    for (const panel of panels) {
      expect(panel.datasource?.uid, panel.title).toBe("${datasource}");
      for (const t of panel.targets ?? []) expect(t.datasource.uid, panel.title).toBe("${datasource}");
    }
  });

  it("says which question each panel answers", () => {
    for (const panel of dashboard.panels.filter((p) => p.type !== "row"))
      expect(panel.description ?? "", panel.title).toMatch(/\?/);
  });

  it("shows tables as named columns from instant queries, never the raw label set", () => {
    for (const table of dashboard.panels.filter((p) => p.type === "table")) {
      for (const t of table.targets ?? []) expect(t, table.title).toMatchObject({ instant: true, format: "table" });
      // Aggregations pick the columns: no scrape label (instance, pod, job) reaches the table.
      for (const t of table.targets ?? []) expect(t.expr, table.title).toMatch(/^max by \(/);
      const organize = table.transformations?.find((x) => x.id === "organize");
      expect(organize?.options.excludeByName?.["Time"], table.title).toBe(true);
    }
  });
});

describe("dashboards/", () => {
  it("ships the fleet overview, the scaler, the engine and the controller dashboards, with unique uids", () => {
    expect(committed.map(([, d]) => d.uid).sort()).toEqual([
      "mds-scaler-controller",
      "mds-scaler-engines",
      "mds-scaler-fleet",
      "mds-scaler-overview",
    ]);
    expect(readdirSync(dir).sort()).toEqual(Object.keys(dashboards).sort());
  });

  it("are described panel by panel, with the question each answers, in docs/install.md", () => {
    const doc = readFileSync(join(import.meta.dirname, "..", "..", "docs", "install.md"), "utf8");
    const section = doc.slice(doc.indexOf("\n## Dashboards\n"), doc.indexOf("\n## Alerts\n"));
    for (const [file, d] of committed) {
      const start = section.indexOf(`(\`${file}\`)`);
      expect(start, file).toBeGreaterThan(0);
      const end = section.indexOf("\n### ", start);
      const table = section.slice(start, end === -1 ? undefined : end).split("\n");
      for (const panel of d.panels.filter((p) => p.type !== "row")) {
        const title = panel.title.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
        const row = table.find((line) => new RegExp(`^\\| ${title} +\\|`).test(line));
        expect(row, `${file}: ${panel.title}`).toBeDefined();
        expect(row, `${file}: ${panel.title}`).toContain(panel.description ?? "");
      }
    }
  });

  it("places every metric the controller exports for a user on some dashboard", async () => {
    const all = committed.flatMap(([, d]) => expressions(d)).join("\n");
    const own = [...(await new ScalerMetrics({ defaultMetrics: false }).registry.getMetricsAsJSON())].map(
      (m) => m.name,
    );
    expect(own.filter((name) => !all.includes(name))).toEqual([]);
  });
});

describe("every dashboard query, variables filled, in a real Prometheus", () => {
  let prometheus: PrometheusHarness;
  beforeAll(async () => {
    prometheus = await PrometheusHarness.start();
  }, 60_000);
  afterAll(async () => {
    await prometheus?.stop();
  });

  it.each(committed)("%s parses and evaluates", async (_file, d) => {
    const failures: string[] = [];
    for (const expr of expressions(d)) {
      // Variable queries use Grafana's label_values(); Prometheus parses the series selector inside.
      const promql = filled(expr).replace(/^label_values\((.*), *\w+\)$/, "$1");
      const response = await fetch(`${prometheus.url}/api/v1/query?query=${encodeURIComponent(promql)}`, {
        signal: AbortSignal.timeout(10_000),
      });
      const body = (await response.json()) as { status: string; error?: string };
      if (body.status !== "success") failures.push(`${promql}: ${body.error ?? response.status}`);
    }
    expect(failures).toEqual([]);
  });
});
