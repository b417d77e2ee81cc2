import { describe, expect, it } from "vitest";
import { z } from "zod";
import { schemaProblems } from "../../../src/core/api/rules/schema.js";
import { parseTarget } from "../../../src/core/api/validation.js";

describe("schemaProblems", () => {
  it("words exclusive bounds as below and above", () => {
    const schema = z.object({ high: z.number().lt(5), low: z.number().gt(1) });
    const input = { high: 7, low: 0 };
    const parsed = schema.safeParse(input);
    expect(parsed.success).toBe(false);
    if (parsed.success) return;
    expect(schemaProblems(parsed.error.issues, input).map((p) => [p.path, p.reason])).toEqual([
      ["high", "must be below 5"],
      ["low", "must be above 1"],
    ]);
  });

  it("counts one list entry in the singular", () => {
    const schema = z.object({ roles: z.array(z.string()).min(1) });
    const parsed = schema.safeParse({ roles: [] });
    if (parsed.success) throw new Error("an empty list parsed");
    expect(schemaProblems(parsed.error.issues, { roles: [] })[0]?.reason).toBe("must have at least 1 entry");
  });
});

describe("parseTarget", () => {
  const target = {
    apiVersion: "worker.gpustack.ai/v1",
    kind: "ModelDeployment",
    metadata: { name: "llm" },
    spec: { roles: [{ name: "server", replicas: 2 }] },
  };

  it("a role without a kind is a Server role", () => {
    const parsed = parseTarget(target);
    expect(parsed.ok).toBe(true);
    if (parsed.ok) expect(parsed.value.spec.roles[0]?.kind).toBe("Server");
  });

  it("problems name the field under target", () => {
    const parsed = parseTarget({ ...target, spec: { roles: [{ name: "server", replicas: -1 }] } });
    expect(parsed).toEqual({
      ok: false,
      problems: [
        { rule: "target-schema", path: "target.spec.roles[0].replicas", value: -1, reason: "must be at least 0" },
      ],
    });
  });
});

describe("schema reasons", () => {
  const reasons = (schema: z.ZodType, input: unknown) => {
    const parsed = schema.safeParse(input);
    if (parsed.success) throw new Error("parsed");
    return schemaProblems(parsed.error.issues, input).map((p) => [p.path, p.reason]);
  };

  it("counts entries and characters", () => {
    expect(reasons(z.object({ roles: z.array(z.string()).min(2) }), { roles: [] })).toEqual([
      ["roles", "must have at least 2 entries"],
    ]);
    expect(reasons(z.object({ name: z.string().min(3) }), { name: "a" })).toEqual([
      ["name", "must be at least 3 characters long"],
    ]);
  });

  it("an enum value that is missing is also required", () => {
    const schema = z.object({ mode: z.enum(["Shadow", "Active"]) });
    expect(reasons(schema, {})).toEqual([["mode", "is required; must be one of Shadow, Active"]]);
    expect(reasons(schema, { mode: "Off" })).toEqual([["mode", "must be one of Shadow, Active"]]);
  });

  it("names each unknown key with its value", () => {
    const input = { spec: { extra: 1 } };
    const parsed = z.object({ spec: z.strictObject({}) }).safeParse(input);
    if (parsed.success) throw new Error("parsed");
    expect(schemaProblems(parsed.error.issues, input, ["root"])).toEqual([
      { rule: "schema", path: "root.spec.extra", value: 1, reason: "is not a field of this object" },
    ]);
  });
});
