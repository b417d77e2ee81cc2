/**
 * One table of settings: the controller's `--help`, `observe`'s `--help` and the flag table of
 * docs/controller.md all come from `src/app/settings.ts`, and stay equal to it.
 */
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { allSettings, readSettings, settings } from "../../src/app/settings.js";
import { runCli } from "../../src/cli/commands.js";
import { docPath, settingsSection, withSettingsTable } from "../../tools/generate-flag-docs.js";

function captured(): { out: string; err: string; io: Parameters<typeof runCli>[1] } {
  const result = { out: "", err: "", io: undefined as unknown as Parameters<typeof runCli>[1] };
  result.io = {
    stdout: (text) => void (result.out += text),
    stderr: (text) => void (result.err += text),
    readFile: () => "",
  };
  return result;
}

describe("the settings table", () => {
  it("docs/controller.md holds the table generated from it (npm run generate rewrites it)", async () => {
    const doc = readFileSync(docPath, "utf8");
    expect(settingsSection(doc)).toBeDefined();
    expect(await withSettingsTable(doc)).toBe(doc);
  }, 30_000);

  it("the docs table has one row per setting with its flag, variable and default", () => {
    const rows = (settingsSection(readFileSync(docPath, "utf8")) ?? "")
      .split("\n")
      .filter((line) => line.startsWith("| `--"))
      .map((line) => line.split("|").map((cell) => cell.trim()));
    expect(rows.map((cells) => cells[1])).toEqual(allSettings.map((name) => `\`${settings[name].flag}\``));
    expect(rows.map((cells) => cells[2])).toEqual(allSettings.map((name) => `\`${settings[name].env}\``));
    expect(rows.find((cells) => cells[1] === "`--prometheus-timeout-ms`")?.[3]).toBe("`5000`");
  });

  it("controller --help lists every setting with its variable", async () => {
    const run = captured();
    expect(await runCli(["controller", "--help"], run.io)).toBe(0);
    for (const name of allSettings)
      expect(run.out).toMatch(new RegExp(`${settings[name].flag}\\s+${settings[name].env}\\s`));
  });

  it("observe shares the controller's names, variables and defaults", async () => {
    const run = captured();
    expect(await runCli(["observe", "--help"], run.io)).toBe(0);
    const help = run.err;
    for (const flag of [
      "--metric-separator",
      "--label-pod",
      "--label-role",
      "--prometheus-timeout-ms",
      "--kubeconfig",
    ]) {
      const name = allSettings.find((n) => settings[n].flag === flag);
      expect(help).toMatch(new RegExp(`${flag}\\s+${settings[name ?? "prometheusUrl"].env}\\s`));
    }
    expect(help).not.toContain("--metric-name-separator");
    expect(help).toContain("(default 5000)");
  });

  it("reads a shared setting from its variable for any command that takes it", () => {
    const read = readSettings(["prometheusUrl", "podLabel"], [], {
      MDS_PROMETHEUS_URL: "http://prometheus:9090",
      MDS_LABEL_POD: "kubernetes_pod_name",
    });
    expect(read.values).toEqual({ prometheusUrl: "http://prometheus:9090", podLabel: "kubernetes_pod_name" });
  });
});
