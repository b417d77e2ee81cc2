/** `--prometheus-headers-file`: the headers sent with every PromQL query; problems never show a value. */
import { describe, expect, it } from "vitest";
import { runController } from "../../src/app/main.js";
import { parseHeaders, prometheusHeadersFrom } from "../../src/app/prometheus-headers.js";
import { ConfigError } from "../../src/app/settings.js";

const secret = "s3cr3t-token-value";

function problemsOf(run: () => unknown): readonly string[] {
  try {
    run();
  } catch (error) {
    if (error instanceof ConfigError) return error.problems;
    throw error;
  }
  return [];
}

describe("the headers file", () => {
  it("reads one 'Name: value' per line, skipping blank lines and comments", () => {
    const text = `# the tenant of a multi-tenant store\nX-Scope-OrgID: team-a\n\nAuthorization: Bearer ${secret}\n`;
    expect(parseHeaders(text, "headers")).toEqual({ "X-Scope-OrgID": "team-a", Authorization: `Bearer ${secret}` });
  });

  it("names the file, the line and the header for each problem, and never a value", () => {
    const text = [
      `not a header ${secret}`,
      `Bad Name: ${secret}`,
      `Content-Type: ${secret}`,
      `X-Token: ${secret}`,
      `x-token: ${secret}`,
      "X-Empty:",
    ].join("\n");
    const problems = problemsOf(() => parseHeaders(text, "--prometheus-headers-file h"));
    expect(problems).toEqual([
      '--prometheus-headers-file h:1: expected "Name: value" (the line is not shown: it may hold a credential)',
      expect.stringMatching(/^--prometheus-headers-file h:2: "Bad Name" is not a header name/),
      "--prometheus-headers-file h:3: Content-Type is set by the client and cannot be overridden",
      "--prometheus-headers-file h:5: x-token is already set on line 4",
      "--prometheus-headers-file h:6: X-Empty has an empty or invalid value",
    ]);
    expect(problems.join("\n")).not.toContain(secret);
  });

  it("sends none without a file, and names the flag and path of a file it cannot read", () => {
    expect(prometheusHeadersFrom("")).toEqual({});
    expect(problemsOf(() => prometheusHeadersFrom("/nonexistent/headers"))).toEqual([
      '--prometheus-headers-file = "/nonexistent/headers": cannot be read (ENOENT)',
    ]);
  });

  it("stops the controller before any network call, with the configuration's exit code", async () => {
    let stderr = "";
    const code = await runController(
      ["--prometheus-url=http://127.0.0.1:1", "--prometheus-headers-file=/nonexistent/headers"],
      {},
      { stderr: (text) => (stderr += text) },
    );
    expect(code).toBe(2);
    expect(stderr).toContain("--prometheus-headers-file");
  });
});
