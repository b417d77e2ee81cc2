/**
 * `--prometheus-matchers`: parsed strictly (the text goes into every query), refused with the item and
 * why, and carried by every selector of every part of a pass.
 */
import { describe, expect, it } from "vitest";
import {
  defaultLabelNames,
  validatePrometheusSignalConfig,
  defaultPrometheusSignalConfig,
} from "../../../src/adapters/prometheus/config.js";
import { matcherText, parseLabelMatchers } from "../../../src/adapters/prometheus/matchers.js";
import { samplingParts } from "../../../src/adapters/prometheus/queries.js";

describe("parseLabelMatchers", () => {
  it("reads PromQL's four operators, spaces and escapes, and gives them back unchanged", () => {
    const parsed = parseLabelMatchers(' cluster="prod-eu" , region=~"eu-.*",zone!="a\\"b", tier !~ "x|y" ');
    expect(parsed).toEqual({
      ok: true,
      matchers: [
        { name: "cluster", operator: "=", quotedValue: "prod-eu" },
        { name: "region", operator: "=~", quotedValue: "eu-.*" },
        { name: "zone", operator: "!=", quotedValue: 'a\\"b' },
        { name: "tier", operator: "!~", quotedValue: "x|y" },
      ],
    });
    if (parsed.ok)
      expect(parsed.matchers.map(matcherText)).toEqual([
        'cluster="prod-eu"',
        'region=~"eu-.*"',
        'zone!="a\\"b"',
        'tier!~"x|y"',
      ]);
  });

  it("reads an empty text as no matcher", () => {
    expect(parseLabelMatchers("")).toEqual({ ok: true, matchers: [] });
    expect(parseLabelMatchers("  ")).toEqual({ ok: true, matchers: [] });
  });

  it.each([
    ["cluster=prod", "cluster=prod: the value must be double-quoted"],
    ["cluster", 'cluster: must be name="value"'],
    ['cluster="prod', 'cluster="prod: must be name="value" with a closed double-quoted value'],
    ['cluster="a" region="b"', 'region="b": matchers must be separated by commas'],
    ['9lives="x"', "9lives: must be a Prometheus label name"],
    ['__name__="up"', "__name__: names starting with __"],
    ['cluster="a",cluster="b"', "cluster: named twice"],
    ['cluster="a"}or vector(1)', "}or vector(1): matchers must be separated by commas"],
  ])("refuses %j, naming the item and why", (text, want) => {
    const parsed = parseLabelMatchers(text);
    expect(parsed.ok).toBe(false);
    if (!parsed.ok) expect(parsed.problem).toContain(want);
  });
});

describe("the matchers in a pass", () => {
  it("are carried by every selector of every part, beside the scaler's own labels", () => {
    const parsed = parseLabelMatchers('cluster="prod-eu",region=~"eu-.*"');
    if (!parsed.ok) throw new Error(parsed.problem);
    const ctx = { labels: defaultLabelNames, separator: ":" as const, matchers: parsed.matchers };
    const sel = { namespaces: ["serving"], deployments: ["llm"], roles: ["decode"] };
    const parts = samplingParts(ctx, sel, [
      { windowSeconds: 60, selection: sel },
      { windowSeconds: 180, selection: sel },
    ]);
    const selectors = Object.values(parts)
      .flat()
      .flatMap((p) => p.expr.match(/\{[^}]*\}/g) ?? []);
    expect(selectors.length).toBeGreaterThan(50);
    for (const s of selectors) {
      expect(s).toContain('cluster="prod-eu"');
      expect(s).toContain('region=~"eu-.*"');
      expect(s).toContain('namespace=~"serving"');
    }
    const without = samplingParts({ labels: defaultLabelNames, separator: ":" }, sel, [
      { windowSeconds: 60, selection: sel },
    ]);
    expect(JSON.stringify(without)).not.toContain("cluster");
  });

  it("may not name a label of the mapping: the scaler sets those itself", () => {
    expect(() =>
      validatePrometheusSignalConfig({
        ...defaultPrometheusSignalConfig,
        matchers: [{ name: "namespace", operator: "=", quotedValue: "x" }],
      }),
    ).toThrow("matchers: namespace: is the namespace label, which the scaler sets itself");
  });
});
