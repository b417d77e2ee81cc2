/**
 * The shipped dashboard is the generated one, reads only series the scaler
 * exports (or its recording rules), and lets the user pick the data source.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { ScalerMetrics } from "../../src/adapters/telemetry/metrics.js";
import { dashboards } from "../../src/dashboards/overview.js";

const dir = join(import.meta.dirname, "..", "..", "dashboards");

interface Panel {
  type: string;
  title: string;
  datasource?: { uid: string };
  targets?: { expr: string; datasource: { uid: string } }[];
}

describe.each(Object.entries(dashboards))("dashboards/%s", (file, build) => {
  const committed = JSON.parse(readFileSync(join(dir, file), "utf8")) as { panels: Panel[]; uid: string };

  it("is what `npm run generate` writes", () => {
    expect(committed).toEqual(build());
  });

  it("queries only series the scaler exports", async () => {
    const registry = new ScalerMetrics({ defaultMetrics: false }).registry;
    const known = new Set<string>();
    for (const m of await registry.getMetricsAsJSON()) {
      known.add(m.name);
      if (String(m.type) === "histogram") for (const s of ["_bucket", "_sum", "_count"]) known.add(m.name + s);
    }
    const exprs = committed.panels.flatMap((p) => p.targets ?? []).map((t) => t.expr);
    expect(exprs.length).toBeGreaterThan(10);
    const names = exprs.flatMap((e) => [...e.matchAll(/\b(mds_[a-z_]+)\b/g)].map((m) => m[1] ?? ""));
    expect(names.filter((n) => !known.has(n))).toEqual([]);
  });

  it("uses the data source variable in every panel and query", () => {
    const panels = committed.panels.filter((p) => p.type !== "row");
    for (const panel of panels) {
      expect(panel.datasource?.uid, panel.title).toBe("${datasource}");
      for (const t of panel.targets ?? []) expect(t.datasource.uid, panel.title).toBe("${datasource}");
    }
  });
});
