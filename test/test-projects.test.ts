/**
 * `npm run test:unit`, `test:integration` and `test:e2e` split the tests by what
 * they need (vitest.config.ts): every file is in exactly one project, no unit
 * test starts a real server or tool, and every integration test does.
 */
import { globSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { e2eTests, integrationTests } from "../vitest.config.js";

const root = join(import.meta.dirname, "..");
const files = (patterns: readonly string[]): string[] => patterns.flatMap((p) => globSync(p, { cwd: root })).sort();
const all = files(["test/**/*.test.ts"]);
const integration = files(integrationTests);
const e2e = files(e2eTests);
const unit = all.filter((f) => !integration.includes(f) && !e2e.includes(f));

/**
 * What only a real server or tool brings: a control plane, Prometheus, promtool, helm, Chromium, an image
 * build, a kernel network namespace.
 */
const realParts =
  /startControlPlane|PrometheusHarness|Testbed\.start|runHelm|runKubectl|promtool|[Cc]hromium|umoci|startControllerManager|NetworkNamespace/;
const self = "test/test-projects.test.ts";

describe("test projects", () => {
  it("puts every test file in exactly one project", () => {
    expect(integration.filter((f) => e2e.includes(f))).toEqual([]);
    expect(unit.length + integration.length + e2e.length).toBe(all.length);
    expect(e2e.length).toBeGreaterThan(0);
    // The unit run covers more than the core.
    for (const dir of ["core", "adapters", "app", "cli", "sim"])
      expect(
        unit.some((f) => f.startsWith(`test/${dir}/`)),
        dir,
      ).toBe(true);
  });

  it("keeps real servers and tools out of the unit run", () => {
    expect(unit.filter((f) => f !== self && realParts.test(readFileSync(join(root, f), "utf8")))).toEqual([]);
  });

  it("runs only tests that use a real server or tool as integration", () => {
    expect(integration.filter((f) => !realParts.test(readFileSync(join(root, f), "utf8")))).toEqual([]);
  });
});
