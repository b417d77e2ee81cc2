/**
 * An answer parsed from its chunks reads as the plain parse of its whole text,
 * however it was cut, and whatever it holds.
 */
import { describe, expect, it } from "vitest";
import { AnswerBody } from "../../../src/adapters/prometheus/body.js";

function parsedInChunks(text: string, chunkBytes: number): unknown {
  const bytes = Buffer.from(text);
  const body = new AnswerBody();
  for (let i = 0; i < bytes.length; i += chunkBytes) body.push(bytes.subarray(i, i + chunkBytes));
  return body.end();
}

function plainParse(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return text;
  }
}

/** A vector of `n` series, each with a pod, a bucket and a non-ASCII label value, and the answer's warnings after it. */
function vectorText(n: number, extra = ""): string {
  const series = Array.from(
    { length: n },
    (_, i) =>
      `{"metric":{"namespace":"team-${i % 10}","pod":"model-${i}-decode-0","le":"${i % 17}","note":"naïve ${i}"},"value":[1764672000.123,"${i * 0.5}"]}`,
  );
  return `{"status":"success","data":{"resultType":"vector","result":[${series.join(",")}]}${extra}}`;
}

describe("AnswerBody", () => {
  it.each([
    ["a large vector", vectorText(5_000)],
    ["a large vector with warnings and infos after it", vectorText(5_000, ',"warnings":["w1"],"infos":["i1"]')],
    ["a small vector", vectorText(3)],
    ["an empty vector", vectorText(0)],
    // A label named `metric`, and a value holding the series start's text: neither is a series start.
    [
      "labels that look like a series start",
      `{"status":"success","data":{"resultType":"vector","result":[${Array.from({ length: 3_000 }, (_, i) => `{"metric":{"metric":"m${i}","v":"{\\"metric\\":{"},"value":[1,"${i}"]}`).join(",")}]}}`,
    ],
    [
      "a matrix",
      `{"status":"success","data":{"resultType":"matrix","result":[{"metric":{"a":"1"},"values":[[1,"2"]]}]}}`,
    ],
    ["an error", '{"status":"error","errorType":"bad_data","error":"parse error at char 3"}'],
    ["a body that is not JSON", "<html>bad gateway</html>"],
    ["a vector cut short", vectorText(5_000).slice(0, 200_000)],
    ["an empty body", ""],
  ])("reads %s as the plain parse of its text, in chunks of any size", (_what, text) => {
    for (const chunkBytes of [1, 1_000, 16_384, 65_536, 1 << 22])
      expect(parsedInChunks(text, chunkBytes)).toEqual(plainParse(text));
  });

  // Past about a megabyte without the compact layout's series starts the answer is parsed whole, once:
  // an indented answer (no `{"metric":{` anywhere), and one series larger than that bound.
  it.each([
    ["an indented vector of megabytes", JSON.stringify(JSON.parse(vectorText(20_000)) as unknown, null, 1)],
    [
      "a series of megabytes after a small one",
      vectorText(1).replace('"value":', `"big":"${"x".repeat(3 << 20)}"},{"metric":{"a":"b"},"value":`),
    ],
  ])("reads %s as the plain parse of its text", (_what, text) => {
    for (const chunkBytes of [16_384, 65_536, 1 << 22])
      expect(parsedInChunks(text, chunkBytes)).toEqual(plainParse(text));
  });

  it("parses a chunk of 256 kB (the client's inflated pieces) in runs of about 64 kB, each a text V8 keeps young", () => {
    const text = vectorText(20_000);
    const bytes = Buffer.from(text);
    const body = new AnswerBody();
    for (let i = 0; i < bytes.length; i += 256 * 1024) body.push(bytes.subarray(i, i + 256 * 1024));
    expect(body.end()).toEqual(JSON.parse(text));
    // 64 kB and at most one series (about 150 bytes here) past it.
    expect(body.largestRunBytes).toBeGreaterThan(64 * 1024);
    expect(body.largestRunBytes).toBeLessThan(64 * 1024 + 200);
  });

  it("reads a series cut inside a multi-byte character", () => {
    const text = vectorText(2_000);
    const at = Buffer.from(text).indexOf(Buffer.from("ï")) + 1;
    const bytes = Buffer.from(text);
    const body = new AnswerBody();
    body.push(bytes.subarray(0, at));
    body.push(bytes.subarray(at));
    expect(body.end()).toEqual(JSON.parse(text));
  });
});
