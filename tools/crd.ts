/**
 * Renders the ModelDeploymentScaler CRD and the docs reference table from the
 * zod schemas in src/core/api/scaler.ts. `tools/generate-crd.ts` writes the
 * files; test/core/api/crd.test.ts fails when the committed files differ.
 */
import { z } from "zod";
import { stringify } from "yaml";
import { extensions } from "../src/core/api/extensions.js";
import { apiGroup, scalerKind, ScalerSpecSchema, ScalerStatusSchema, type FieldMeta } from "../src/core/api/scaler.js";

export const crdPath = "charts/mds-scaler/crds/modeldeploymentscalers.worker.gpustack.ai.yaml";
export const referencePath = "docs/reference.md";

type JsonSchema = Record<string, unknown>;

/** JSON Schema of the input side (what users write), with defaults taken from FieldMeta. */
export function inputJsonSchema(schema: z.ZodType): JsonSchema {
  return z.toJSONSchema(schema, {
    io: "input",
    target: "openapi-3.0",
    // zod drops defaults on transformed fields in input mode; ours live in FieldMeta.
    override: (ctx) => {
      const meta = z.globalRegistry.get(ctx.zodSchema) as FieldMeta | undefined;
      if (meta?.default !== undefined) ctx.jsonSchema.default = meta.default as never;
    },
  }) as JsonSchema;
}

/** Keywords a structural OpenAPI v3 schema may keep as they are. */
const structuralKeys = new Set([
  "type",
  "description",
  "properties",
  "required",
  "items",
  "enum",
  "minimum",
  "maximum",
  "exclusiveMinimum",
  "exclusiveMaximum",
  "minLength",
  "maxLength",
  "pattern",
  "minItems",
  "maxItems",
  "format",
  "default",
  "nullable",
]);

/** zod writes the safe-integer range on every integer; Kubernetes needs no such bound. */
const safeIntegerBound = (key: string, value: unknown): boolean =>
  (key === "minimum" && value === Number.MIN_SAFE_INTEGER) || (key === "maximum" && value === Number.MAX_SAFE_INTEGER);

/** Converts one JSON Schema node into a structural OpenAPI v3 schema node. */
export function toStructural(node: JsonSchema): JsonSchema {
  const meta = node as FieldMeta & JsonSchema;
  if (meta.quantity === true) {
    return {
      ...(node.description === undefined ? {} : { description: node.description }),
      ...(node.default === undefined ? {} : { default: node.default }),
      "x-kubernetes-int-or-string": true,
      anyOf: [{ type: "integer" }, { type: "string" }],
    };
  }
  const out: JsonSchema = {};
  for (const [key, value] of Object.entries(node)) {
    if (!structuralKeys.has(key) || safeIntegerBound(key, value)) continue;
    if (key === "properties") {
      out.properties = Object.fromEntries(
        Object.entries(value as Record<string, JsonSchema>).map(([k, v]) => [k, toStructural(v)]),
      );
    } else if (key === "items") {
      out.items = toStructural(value as JsonSchema);
    } else {
      out[key] = value;
    }
  }
  if ("const" in node) out.enum = [node.const];
  const extra = node.additionalProperties;
  if (typeof extra === "object" && extra !== null) {
    // A record (`z.record`) keeps its value schema; an open object (`{}`) preserves unknown fields.
    if (Object.keys(extra).length === 0) out["x-kubernetes-preserve-unknown-fields"] = true;
    else out.additionalProperties = toStructural(extra as JsonSchema);
    out.type = "object";
  }
  if (meta.immutable === true) {
    out["x-kubernetes-validations"] = [
      { rule: "self == oldSelf", message: "is immutable; create a new scaler to retarget" },
    ];
  }
  return out;
}

const conditionColumn = (type: string) => ({
  name: type,
  type: "string",
  jsonPath: `.status.conditions[?(@.type=="${type}")].status`,
});

/** The CRD as an object. */
export function crdObject(): JsonSchema {
  return {
    apiVersion: "apiextensions.k8s.io/v1",
    kind: "CustomResourceDefinition",
    metadata: { name: `modeldeploymentscalers.${apiGroup}`, labels: { "app.kubernetes.io/name": "mds-scaler" } },
    spec: {
      group: apiGroup,
      names: {
        kind: scalerKind,
        listKind: `${scalerKind}List`,
        plural: "modeldeploymentscalers",
        singular: "modeldeploymentscaler",
        shortNames: ["mds"],
      },
      scope: "Namespaced",
      versions: [
        {
          name: "v1",
          served: true,
          storage: true,
          subresources: { status: {} },
          additionalPrinterColumns: [
            { name: "Target", type: "string", jsonPath: ".spec.targetRef.name" },
            { name: "Mode", type: "string", jsonPath: ".spec.mode" },
            { name: "Algorithm", type: "string", jsonPath: ".spec.algorithm.type" },
            conditionColumn("Bound"),
            conditionColumn("Active"),
            conditionColumn("Blocked"),
            { name: "Age", type: "date", jsonPath: ".metadata.creationTimestamp" },
          ],
          schema: {
            openAPIV3Schema: {
              type: "object",
              description: "Plans replica counts for one ModelDeployment from engine metrics.",
              required: ["spec"],
              properties: {
                apiVersion: { type: "string" },
                kind: { type: "string" },
                metadata: { type: "object" },
                spec: toStructural(inputJsonSchema(ScalerSpecSchema)),
                status: toStructural(inputJsonSchema(ScalerStatusSchema)),
              },
            },
          },
        },
      ],
    },
  };
}

const generatedNote = "Generated by `npm run generate` from src/core/api/scaler.ts; do not edit.";

export function renderCrd(): string {
  return `# ${generatedNote}\n${stringify(crdObject(), { lineWidth: 0 })}`;
}

// ---------------------------------------------------------------- docs table

interface Row {
  readonly field: string;
  readonly type: string;
  readonly defaultText: string;
  readonly range: string;
  readonly description: string;
}

function typeOf(node: JsonSchema): string {
  const meta = node as FieldMeta & JsonSchema;
  if (meta.quantity === true) return "quantity";
  if (Array.isArray(node.enum)) return "enum";
  if (node.type === "array") {
    const items = (node.items ?? {}) as JsonSchema;
    return `list of ${typeOf(items)}`;
  }
  if (typeof node.additionalProperties === "object" && node.properties === undefined) return "map";
  return typeof node.type === "string" ? node.type : "any";
}

function rangeOf(node: JsonSchema): string {
  const meta = node as FieldMeta & JsonSchema;
  if (typeof meta.range === "string") return meta.range;
  if (Array.isArray(node.enum)) return node.enum.map((v) => `\`${String(v)}\``).join(", ");
  const lo = safeIntegerBound("minimum", node.minimum) ? undefined : node.minimum;
  const hi = safeIntegerBound("maximum", node.maximum) ? undefined : node.maximum;
  if (lo !== undefined && hi !== undefined) return `${String(lo)} to ${String(hi)}`;
  if (lo !== undefined) return `>= ${String(lo)}`;
  if (hi !== undefined) return `<= ${String(hi)}`;
  if (node.minItems !== undefined || node.maxItems !== undefined) {
    return `${String(node.minItems ?? 0)} to ${String(node.maxItems ?? "any")} entries`;
  }
  if (node.pattern !== undefined) return node.maxLength === 63 ? "DNS label" : "object name";
  return "";
}

function defaultOf(node: JsonSchema, required: boolean): string {
  const meta = node as FieldMeta & JsonSchema;
  if (required) return "required";
  if (node.default === undefined) return "";
  const text = `\`${typeof node.default === "string" ? node.default : JSON.stringify(node.default)}\``;
  if (meta.zeroMeansDefault === true) return `${text} (also when 0)`;
  if (meta.nonPositiveMeansDefault === true) return `${text} (also when <= 0)`;
  return text;
}

function rows(node: JsonSchema, path: string, required: boolean, out: Row[]): void {
  out.push({
    field: path,
    type: typeOf(node),
    defaultText: defaultOf(node, required),
    range: rangeOf(node),
    description: typeof node.description === "string" ? node.description : "",
  });
  const target = node.type === "array" ? ((node.items ?? {}) as JsonSchema) : node;
  const prefix = node.type === "array" ? `${path}[]` : path;
  const props = target.properties as Record<string, JsonSchema> | undefined;
  const req = new Set((target.required as string[] | undefined) ?? []);
  for (const [key, child] of Object.entries(props ?? {})) rows(child, `${prefix}.${key}`, req.has(key), out);
}

const cell = (text: string): string => text.replaceAll("|", "\\|");

const extensionFields = new Set(extensions.map((e) => e.field));

/** A field the specification does not have says so first; Predictive's fallback block is TokenThroughput's. */
function describeRow(r: Row): string {
  const field = r.field.replace("spec.algorithm.predictive.tokenThroughput.", "spec.algorithm.tokenThroughput.");
  if (!extensionFields.has(field)) return r.description;
  return `Extension ([Extensions](#extensions)). ${r.description}`.trim();
}

/** The conformance table: each extension, why it exists, and what happens without it. */
function extensionsTable(): string {
  const lines = ["| Extension | Why it exists | Without it |", "|---|---|---|"];
  for (const e of extensions) {
    const field = e.field.startsWith("status.") || e.field.startsWith("spec.") ? `\`${e.field}\`` : e.field;
    lines.push(`| ${cell(field)} | ${cell(e.why)} | ${cell(e.without)} |`);
  }
  return lines.join("\n");
}

function table(root: JsonSchema, name: string): string {
  const out: Row[] = [];
  const props = root.properties as Record<string, JsonSchema>;
  const req = new Set((root.required as string[] | undefined) ?? []);
  for (const [key, child] of Object.entries(props)) rows(child, `${name}.${key}`, req.has(key), out);
  const lines = ["| Field | Type | Default | Range | Description |", "|---|---|---|---|---|"];
  for (const r of out)
    lines.push(`| \`${r.field}\` | ${r.type} | ${cell(r.defaultText)} | ${cell(r.range)} | ${cell(describeRow(r))} |`);
  return lines.join("\n");
}

export function renderReference(): string {
  return [
    "# ModelDeploymentScaler reference",
    "",
    `<!-- ${generatedNote} -->`,
    "",
    "Every field of `worker.gpustack.ai/v1` `ModelDeploymentScaler`. Quantities are Kubernetes quantities",
    '(`"0.5"`, `"500m"`, `"2k"`) written as strings or integers. Cross-field rules are listed in [api.md](api.md).',
    "",
    "## spec",
    "",
    table(inputJsonSchema(ScalerSpecSchema), "spec"),
    "",
    "## status",
    "",
    table(inputJsonSchema(ScalerStatusSchema), "status"),
    "",
    "## Extensions",
    "",
    "Fields the project writes beyond the specification, on the scaler's status and on the target. Each is",
    "optional: a status or target written by another implementation of the specification, by an earlier",
    "version, or restored from a backup without them plans as the specification's rules say, with the fallback",
    "below (`test/core/planner/spec-shaped.test.ts`). The annotations are the binding fence's",
    "`modeldeployment.gpustack.ai/scaler-decision`, whose specified payload is `decisionID`, `term` and `vector`.",
    "",
    extensionsTable(),
    "",
  ].join("\n");
}
