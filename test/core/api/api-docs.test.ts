/** docs/api.md names every rule id and the file that owns it. */
import { existsSync, readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { specRules } from "../../../src/core/api/rules/index.js";
import { targetChecks } from "../../../src/core/api/target-checks.js";
import { targetWarnings } from "../../../src/core/api/target-warnings.js";
import { windowScrapesRule } from "../../../src/core/api/window-scrapes.js";
import { floorsCalibratedRule } from "../../../src/core/api/floors-calibrated.js";

const doc = readFileSync("docs/api.md", "utf8");
const ids = [
  "schema",
  "ratio-feasibility",
  windowScrapesRule,
  floorsCalibratedRule,
  ...specRules.map((r) => r.id),
  ...targetChecks.map((c) => c.id),
  ...targetWarnings.map((w) => w.id),
];

describe("docs/api.md", () => {
  it.each(ids)("lists rule %s with an existing owning file", (id) => {
    const row = doc.split("\n").find((line) => line.startsWith(`| \`${id}\` `));
    expect(row, `no row for ${id}`).toBeDefined();
    const file = /`(src\/[^`]+\.ts)`/.exec(row ?? "")?.[1];
    expect(file !== undefined && existsSync(file), `row for ${id} names no existing file`).toBe(true);
  });
});
