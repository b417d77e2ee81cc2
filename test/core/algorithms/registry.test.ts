import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { algorithmFor, algorithms } from "../../../src/core/algorithms/index.js";
import { algorithmTypes } from "../../../src/core/api/scaler.js";

describe("algorithm registry", () => {
  it("has one entry per algorithm type, in alphabetical order", () => {
    expect(Object.keys(algorithms)).toEqual([...algorithmTypes].sort());
  });

  it.each([...algorithmTypes])("%s resolves to an algorithm of that type", (type) => {
    expect(algorithmFor(type).type).toBe(type);
  });
});

describe("every place an algorithm touches (docs/algorithms.md, Adding an algorithm)", () => {
  const root = join(import.meta.dirname, "..", "..", "..");
  const read = (path: string): string => readFileSync(join(root, path), "utf8");
  const kebab = (type: string): string => type.replace(/([a-z])([A-Z])/g, "$1-$2").toLowerCase();
  const section = read("docs/algorithms.md").split("## Adding an algorithm")[1] ?? "";

  it("the guide names files that exist", () => {
    const paths = [...section.matchAll(/`((?:src|test)\/[^`<>]+\.ts)`/g)].map((m) => m[1] ?? "");
    expect(paths.length).toBeGreaterThan(6);
    expect(paths.filter((path) => !existsSync(join(root, path)))).toEqual([]);
  });

  it.each([...algorithmTypes])(
    "%s has its file, its tests, its section and its place in the quality matrix",
    (type) => {
      expect(existsSync(join(root, "src", "core", "algorithms", `${kebab(type)}.ts`))).toBe(true);
      expect(existsSync(join(root, "test", "core", "algorithms", `${kebab(type)}.test.ts`))).toBe(true);
      expect(read("docs/algorithms.md")).toMatch(new RegExp(`^## ${type}$`, "m"));
      expect(read("src/sim/quality/matrix.ts")).toContain(`"${type}"`);
    },
  );
});
