import { describe, expect, it } from "vitest";
import { matchesSelector, parseLabelSelector, SelectorError } from "../../../src/adapters/external-metrics/selector.js";

const labels = { scaler: "chat", role: "server", target: "chat" };

describe("label selectors", () => {
  it.each([
    ["", true],
    ["scaler=chat", true],
    ["scaler==chat,role=server", true],
    ["scaler=other", false],
    ["scaler!=other", true],
    ["role in (prefill, server)", true],
    ["role notin (server)", false],
    ["scaler", true],
    ["!window", true],
    ["!scaler", false],
    ["scaler=chat, role in (decode)", false],
  ])("%j matches: %s", (text, expected) => {
    expect(matchesSelector(parseLabelSelector(text), labels)).toBe(expected);
  });

  it.each([
    ["scaler=chat,,role=server", /empty term/],
    ["role in (ser ver)", /"ser ver" is not a label value/],
    ["sca ler=chat", /not a label key/],
    ["scaler=chat!", /"chat!" is not a label value/],
  ])("refuses %j, naming the part", (text, message) => {
    expect(() => parseLabelSelector(text)).toThrow(SelectorError);
    expect(() => parseLabelSelector(text)).toThrow(message);
  });
});
