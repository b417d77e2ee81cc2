/** Which pod samples report a field (`podHasField`). */
import { describe, expect, it } from "vitest";
import { coversPod } from "../../../src/core/signals/coverage.js";
import { podHasField } from "../../../src/core/signals/pod-fields.js";
import { pod } from "./pods.js";

describe("podHasField", () => {
  const window = { established: true };

  it.each([
    ["runningRequests", { runningRequests: 0 }, true],
    ["runningRequests", {}, false],
    ["promptTokens", { stable: { promptTokensPerSecond: 0 } }, true],
    ["promptTokens", {}, false],
  ] as const)("%s of %j: %s", (field, options, expected) => {
    const sample = pod("a", options);
    expect(podHasField(sample, field, "Server", sample.windows.stable)).toBe(expected);
  });

  it("a histogram with a negative count or sum is not a report", () => {
    for (const [count, sum, expected] of [
      [0, 0, true],
      [-1, 0, false],
      [1, -0.5, false],
    ] as const) {
      const rates = { ...window, ttftSeconds: { buckets: [], count, sum } };
      expect(podHasField(pod("a"), "ttft", "Server", rates)).toBe(expected);
      expect(coversPod(pod("a", { stable: rates }), ["ttft"], "Server")).toBe(expected);
    }
  });
});
