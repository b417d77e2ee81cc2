/**
 * The shipped rules are checked and unit-tested by the real promtool, and every
 * series they read is one the scaler actually exports.
 */
import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { parse } from "yaml";
import { describe, expect, it } from "vitest";
import { ScalerMetrics } from "../../src/adapters/telemetry/metrics.js";

const rulesDir = join(import.meta.dirname, "..", "..", "rules");

function promtool(args: string[]): string {
  try {
    return execFileSync("promtool", args, { cwd: rulesDir, encoding: "utf8", timeout: 60_000 });
  } catch (error) {
    const e = error as { stdout?: string; stderr?: string; message: string };
    throw new Error(`promtool ${args.join(" ")} failed:\n${e.stdout ?? ""}${e.stderr ?? e.message}`);
  }
}

/** Names of the scaler's own series, histogram and counter suffixes included. */
async function exportedNames(): Promise<Set<string>> {
  const metrics = new ScalerMetrics({ defaultMetrics: false });
  const names = new Set<string>();
  for (const metric of await metrics.registry.getMetricsAsJSON()) {
    names.add(metric.name);
    if (String(metric.type) === "histogram") for (const s of ["_bucket", "_sum", "_count"]) names.add(metric.name + s);
  }
  return names;
}

describe("rules/", () => {
  it("passes promtool check rules", () => {
    expect(promtool(["check", "rules", "mds-scaler.rules.yaml"])).toContain("SUCCESS");
  });

  it("passes its promtool unit tests", () => {
    expect(promtool(["test", "rules", "tests/mds-scaler.test.yaml"])).toContain("SUCCESS");
  });

  it("reads only series the scaler exports or records", async () => {
    const doc = parse(readFileSync(join(rulesDir, "mds-scaler.rules.yaml"), "utf8")) as {
      groups: { rules: { expr: string; record?: string }[] }[];
    };
    const known = await exportedNames();
    for (const group of doc.groups)
      for (const rule of group.rules) if (rule.record !== undefined) known.add(rule.record);
    const referenced = doc.groups.flatMap((g) =>
      g.rules.flatMap((r) => [...r.expr.matchAll(/\b(mds_[a-z_]+|[a-z_]+:mds_[a-z_:]+)\b/g)].map((m) => m[1] ?? "")),
    );
    expect(referenced.length).toBeGreaterThan(5);
    expect(referenced.filter((name) => !known.has(name))).toEqual([]);
  });

  it("gives every alert a summary, a description and a runbook", () => {
    const doc = parse(readFileSync(join(rulesDir, "mds-scaler.rules.yaml"), "utf8")) as {
      groups: { rules: { alert?: string; annotations?: Record<string, string> }[] }[];
    };
    const alerts = doc.groups.flatMap((g) => g.rules).filter((r) => r.alert !== undefined);
    expect(alerts.map((a) => a.alert)).toContain("MdsScalerBlocked");
    for (const alert of alerts)
      expect(Object.keys(alert.annotations ?? {}).sort()).toEqual(["description", "runbook_url", "summary"]);
  });

  it("tests every alert with a case that fires and a case that stays quiet", () => {
    const doc = parse(readFileSync(join(rulesDir, "mds-scaler.rules.yaml"), "utf8")) as {
      groups: { rules: { alert?: string }[] }[];
    };
    const tests = parse(readFileSync(join(rulesDir, "tests", "mds-scaler.test.yaml"), "utf8")) as {
      tests: { alert_rule_test?: { alertname: string; exp_alerts: unknown[] }[] }[];
    };
    const cases = tests.tests.flatMap((t) => t.alert_rule_test ?? []);
    for (const alert of doc.groups.flatMap((g) => g.rules).flatMap((r) => r.alert ?? [])) {
      const mine = cases.filter((c) => c.alertname === alert);
      expect(
        mine.some((c) => c.exp_alerts.length > 0),
        `${alert} fires in a test`,
      ).toBe(true);
      expect(
        mine.some((c) => c.exp_alerts.length === 0),
        `${alert} stays quiet in a test`,
      ).toBe(true);
    }
  });

  it("links every alert to its own section of docs/runbook.md, as the chart's runbookUrlPrefix rewrites it", () => {
    const doc = parse(readFileSync(join(rulesDir, "mds-scaler.rules.yaml"), "utf8")) as {
      groups: { rules: { alert?: string; annotations?: Record<string, string> }[] }[];
    };
    const values = parse(readFileSync(join(rulesDir, "..", "charts", "mds-scaler", "values.yaml"), "utf8")) as {
      prometheusRule: { runbookUrlPrefix: string };
    };
    const runbook = readFileSync(join(rulesDir, "..", "docs", "runbook.md"), "utf8");
    for (const alert of doc.groups.flatMap((g) => g.rules).filter((r) => r.alert !== undefined)) {
      const name = alert.alert ?? "";
      expect(alert.annotations?.["runbook_url"]).toBe(values.prometheusRule.runbookUrlPrefix + name.toLowerCase());
      expect(runbook, `docs/runbook.md has a section for ${name}`).toContain(`\n## ${name}\n`);
    }
  });

  it("keeps the scaler's namespace: every per-scaler rule aggregates by namespace and scaler", () => {
    const doc = parse(readFileSync(join(rulesDir, "mds-scaler.rules.yaml"), "utf8")) as {
      groups: { rules: { alert?: string; record?: string; expr: string }[] }[];
    };
    for (const rule of doc.groups.flatMap((g) => g.rules)) {
      const perScaler = /mds_(role|scaler|commit|rollbacks|aborted)/.test(rule.expr);
      if (!perScaler) continue;
      const groupings = [...rule.expr.matchAll(/\b(?:by|on) \(([^)]*)\)/g)].map((m) => m[1] ?? "");
      expect(groupings.length, rule.alert ?? rule.record).toBeGreaterThan(0);
      for (const labels of groupings) expect(labels, rule.alert ?? rule.record).toMatch(/^namespace, scaler\b/);
    }
  });

  it("lists every alert in docs/install.md", () => {
    const doc = parse(readFileSync(join(rulesDir, "mds-scaler.rules.yaml"), "utf8")) as {
      groups: { rules: { alert?: string }[] }[];
    };
    const install = readFileSync(join(rulesDir, "..", "docs", "install.md"), "utf8");
    const table = install.slice(install.indexOf("\n## Alerts\n"), install.indexOf("### Tuning the alerts"));
    const listed = [...table.matchAll(/^\| `(MdsScaler\w+)` /gm)].map((m) => m[1]);
    expect(listed).toEqual(doc.groups.flatMap((g) => g.rules).flatMap((r) => r.alert ?? []));
  });
});
