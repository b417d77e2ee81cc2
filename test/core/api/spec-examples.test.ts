/** Every ModelDeploymentScaler example of the specification validates, with and without its target. */
import { readdirSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { formatProblem } from "../../../src/core/api/problem.js";
import { validateScaler } from "../../../src/core/api/validation.js";
import { readYaml, target } from "./helpers.js";

const dir = "test/fixtures/spec-examples";
/** The target each example is written for. */
const targets: Readonly<Record<string, string>> = {
  "resource.yaml": "server",
  "resource-token-throughput.yaml": "server",
  "resource-predictive.yaml": "server",
  "token-throughput.yaml": "encode-prefill-decode",
  "token-throughput-priority.yaml": "encode-prefill-decode",
  "predictive.yaml": "prefill-decode",
};

describe("specification examples", () => {
  const files = readdirSync(dir).filter((f) => f.endsWith(".yaml"));

  it("all have a target", () => {
    expect(files.sort()).toEqual(Object.keys(targets).sort());
  });

  it.each(files)("%s validates", (file) => {
    const input = readYaml(`${dir}/${file}`);
    for (const opts of [{}, { target: target(targets[file] as string) }]) {
      const result = validateScaler(input, opts);
      expect(result.ok ? [] : result.problems.map(formatProblem)).toEqual([]);
      expect(result.warnings).toEqual([]);
    }
  });
});
