/**
 * The conformance table (src/core/api/extensions.ts, docs/reference.md) is
 * complete and honest: every status field, TokenThroughput parameter or annotation payload field that
 * the specification does not have is listed, each listed one is optional, and
 * nothing the specification has is listed as an extension.
 */
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { parse } from "yaml";
import { extensions } from "../../../src/core/api/extensions.js";
import { BindingPayloadSchema, boundLabel, DecisionPayloadSchema } from "../../../src/core/api/model-deployment.js";
import { ScalerStatusSchema, TokenThroughputSchema } from "../../../src/core/api/scaler.js";
import { inputJsonSchema } from "../../../tools/crd.js";

type Node = Record<string, unknown>;

/** Every path of a JSON Schema, written as the reference tables write it (`status.roles[].name`). */
function schemaPaths(node: Node, path: string, out: string[] = []): string[] {
  out.push(path);
  const items = node.type === "array" ? (node.items as Node) : undefined;
  const target = items ?? node;
  const prefix = items === undefined ? path : `${path}[]`;
  for (const [key, child] of Object.entries((target.properties ?? {}) as Record<string, Node>))
    schemaPaths(child, `${prefix}.${key}`, out);
  return out;
}

/** Every path of a YAML value, the same way (map keys such as role names become paths too; harmless). */
function valuePaths(value: unknown, path: string, out: Set<string> = new Set()): Set<string> {
  out.add(path);
  if (Array.isArray(value)) for (const item of value) valuePaths(item, `${path}[]`, out);
  else if (typeof value === "object" && value !== null)
    for (const [key, child] of Object.entries(value)) valuePaths(child, `${path}.${key}`, out);
  return out;
}

/** The specification's Status section, its four fragments as one status. */
const specStatus = (parse(readFileSync("test/fixtures/spec-status/status.yaml", "utf8")) as { status: unknown }).status;
/** The specification's decision annotation payload (Binding fence). */
const specDecisionFields = ["decisionID", "term", "vector"];
/** The specification's binding annotation payload (Binding fence). */
const specBindingFields = ["scalerName", "scalerUID", "term"];

const listed = (field: string) => extensions.some((e) => e.field === field);
const statusExtensions = extensions.filter((e) => e.field.startsWith("status.")).map((e) => e.field);
const decisionRows = extensions.filter((e) => e.field.includes("`scaler-decision`")).map((e) => e.field);

describe("the status extensions", () => {
  const specPaths = valuePaths(specStatus, "status");
  const ours = schemaPaths(inputJsonSchema(ScalerStatusSchema) as Node, "status");

  it("every status field the specification does not have is listed as an extension", () => {
    expect(ours.filter((p) => !specPaths.has(p) && !listed(p))).toEqual([]);
  });

  it("no field of the specification is listed as an extension", () => {
    expect(statusExtensions.filter((p) => specPaths.has(p))).toEqual([]);
    expect(statusExtensions).toEqual([
      "status.lastPassTime",
      "status.predictors[].lastUpdateTime",
      "status.roles[].queueTimeMilliseconds",
      "status.roles[].latencyGuard",
    ]);
  });

  it("every listed status extension exists in the schema", () => {
    expect(statusExtensions.filter((p) => !ours.includes(p))).toEqual([]);
  });

  it("the specification's status, without any extension, is a valid status", () => {
    const parsed = ScalerStatusSchema.safeParse(specStatus);
    expect(parsed.success).toBe(true);
    expect(parsed.data).not.toHaveProperty("lastPassTime");
    expect(parsed.data?.predictors?.[0]).not.toHaveProperty("lastUpdateTime");
  });
});

/** TokenThroughput's parameters as the specification's Token throughput section writes them. */
const specTokenThroughputFields = [
  "prefillTargetTokensPerSecond",
  "decodeTargetTokensPerSecond",
  "serverTargetTokensPerSecond",
  "stableWindowSeconds",
  "panicWindowSeconds",
  "panicThreshold",
  "ttftTargetMilliseconds",
  "itlTargetMilliseconds",
];

describe("the spec extensions", () => {
  it("every TokenThroughput parameter beyond the specification's is listed and optional", () => {
    const extra = Object.keys(TokenThroughputSchema.shape).filter((k) => !specTokenThroughputFields.includes(k));
    expect(extra).toEqual(["queueTimeTargetMilliseconds"]);
    for (const key of extra) {
      expect(listed(`spec.algorithm.tokenThroughput.${key}`)).toBe(true);
      expect(TokenThroughputSchema.shape[key as keyof typeof TokenThroughputSchema.shape].isOptional()).toBe(true);
    }
  });
});

describe("the annotation and label extensions", () => {
  it("every decision payload field beyond the specification's is listed and optional", () => {
    const extra = Object.keys(DecisionPayloadSchema.shape).filter((k) => !specDecisionFields.includes(k));
    expect(extra.length).toBeGreaterThan(0);
    for (const key of extra) {
      expect(decisionRows.some((field) => field.includes(`\`${key}\``))).toBe(true);
      expect(DecisionPayloadSchema.shape[key as keyof typeof DecisionPayloadSchema.shape].isOptional()).toBe(true);
    }
    expect(DecisionPayloadSchema.safeParse({ decisionID: "d-1", term: 1, vector: { s: 2 } }).success).toBe(true);
  });

  it("the binding payload is the specification's, with no extension", () => {
    expect(Object.keys(BindingPayloadSchema.shape).sort()).toEqual([...specBindingFields].sort());
  });

  it("the bound label is listed", () => {
    expect(extensions.some((e) => e.field.includes(boundLabel))).toBe(true);
  });

  it("every row says why it exists and what happens without it", () => {
    for (const e of extensions) {
      expect(e.why.length, e.field).toBeGreaterThan(20);
      expect(e.without.length, e.field).toBeGreaterThan(20);
    }
  });
});
