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
});
