/** The committed CRD and docs table are what the schema generates, and the CRD is structural. */
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { parse } from "yaml";
import { crdObject, crdPath, referencePath, renderCrd, renderReference } from "../../../tools/crd.js";

type Node = Record<string, unknown>;

/** Every schema node of the CRD with its path. */
function* nodes(node: Node, path = "openAPIV3Schema"): Generator<[string, Node]> {
  yield [path, node];
  for (const [key, child] of Object.entries((node.properties ?? {}) as Record<string, Node>))
    yield* nodes(child, `${path}.${key}`);
  if (typeof node.items === "object" && node.items !== null) yield* nodes(node.items as Node, `${path}[]`);
  if (typeof node.additionalProperties === "object" && node.additionalProperties !== null)
    yield* nodes(node.additionalProperties as Node, `${path}{}`);
}

function schemaRoot(): Node {
  const crd = crdObject() as { spec: { versions: { schema: { openAPIV3Schema: Node } }[] } };
  return crd.spec.versions[0]!.schema.openAPIV3Schema;
}

describe("generated files", () => {
  it("the committed CRD matches the schema (run `npm run generate`)", () => {
    expect(readFileSync(crdPath, "utf8")).toBe(renderCrd());
  });

  it("the committed docs/reference.md matches the schema (run `npm run generate`)", () => {
    expect(readFileSync(referencePath, "utf8")).toBe(renderReference());
  });
});

describe("the CRD", () => {
  it("names the resource, its short name, status subresource and printer columns", () => {
    const crd = parse(renderCrd());
    expect(crd.metadata.name).toBe("modeldeploymentscalers.worker.gpustack.ai");
    expect(crd.spec.names.shortNames).toEqual(["mds"]);
    expect(crd.spec.scope).toBe("Namespaced");
    const version = crd.spec.versions[0];
    expect(version.subresources).toEqual({ status: {} });
    expect(version.additionalPrinterColumns.map((c: { name: string }) => c.name)).toEqual([
      "Target",
      "Mode",
      "Algorithm",
      "Bound",
      "Active",
      "Blocked",
      "Age",
    ]);
  });

  it("uses only structural keywords, with a type on every node but int-or-string ones", () => {
    const forbidden = [
      "$schema",
      "$ref",
      "$defs",
      "const",
      "propertyNames",
      "oneOf",
      "allOf",
      "not",
      "additionalItems",
    ];
    for (const [path, node] of nodes(schemaRoot())) {
      for (const key of forbidden) expect(node, `${path} has ${key}`).not.toHaveProperty(key);
      expect(node.additionalProperties === false, `${path} closes additionalProperties`).toBe(false);
      if (node["x-kubernetes-int-or-string"] === true) {
        expect(node.anyOf).toEqual([{ type: "integer" }, { type: "string" }]);
        expect(node).not.toHaveProperty("type");
      } else {
        expect(typeof node.type, `${path} has no type`).toBe("string");
        expect(node).not.toHaveProperty("anyOf");
      }
    }
  });

  it("writes quantities as int-or-string and carries defaults and ranges", () => {
    const found = new Map(nodes(schemaRoot()));
    expect(found.get("openAPIV3Schema.spec.algorithm.proportional.tolerance")).toMatchObject({
      "x-kubernetes-int-or-string": true,
      default: "0.1",
    });
    expect(found.get("openAPIV3Schema.spec.roles[].maxReplicas")).toMatchObject({
      type: "integer",
      minimum: 1,
      maximum: 1024,
    });
    expect(found.get("openAPIV3Schema.spec.behavior.scaleUp.maxStepReplicas")).toMatchObject({ default: 4 });
    expect(found.get("openAPIV3Schema.spec.mode")).toMatchObject({ default: "Shadow", enum: ["Shadow", "Active"] });
    expect(found.get("openAPIV3Schema.spec.targetRef.name")).toMatchObject({
      "x-kubernetes-validations": [expect.objectContaining({ rule: "self == oldSelf" })],
    });
    expect(found.get("openAPIV3Schema.status.lastCommit.vector")).toMatchObject({
      type: "object",
      additionalProperties: { type: "integer", minimum: 0 },
    });
  });
});
