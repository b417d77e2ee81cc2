/**
 * Every command that reads its own flag table refuses an unknown flag and a bad value with exit 2, naming
 * the flag (and the value where there is one) before its usage, and prints help generated from the table.
 */
import { describe, expect, it } from "vitest";
import { runCli } from "../../src/cli/commands.js";
import { memoryIo } from "../support/memory-io.js";

/** No file is read: every case fails on its command line first. */
const noFiles = (path: string): string => {
  throw new Error(`read ${path}`);
};

const cases: readonly { command: string; badValue: readonly string[]; named: RegExp }[] = [
  { command: "validate", badValue: ["--filename="], named: /--filename needs a value/ },
  { command: "plan", badValue: ["-f", "in.yaml", "-o", "xml"], named: /-o must be json or yaml, got "xml"/ },
  {
    command: "simulate",
    badValue: ["--trace", "azure-conv", "--scaler", "s.yaml", "--copies", "1.5"],
    named: /--copies must be a positive integer, got "1.5"/,
  },
  {
    command: "calibrate",
    badValue: ["--from-simulation", "run.json", "-o", "csv"],
    named: /-o: "csv" is not one of table, json, scaler/,
  },
];

describe("usage errors and help from each command's flag table", () => {
  it.each(cases)("$command: an unknown flag exits 2 naming it, with the usage", async ({ command }) => {
    const io = memoryIo(noFiles);
    expect(await runCli([command, "--frobnicate", "x"], io)).toBe(2);
    expect(io.err).toContain("--frobnicate");
    expect(io.err).toContain(`usage: mds-scaler ${command}`);
  });

  it.each(cases)(
    "$command: a bad value exits 2 naming the flag and the value",
    async ({ command, badValue, named }) => {
      const io = memoryIo(noFiles);
      expect(await runCli([command, ...badValue], io)).toBe(2);
      expect(io.err).toMatch(named);
    },
  );

  it.each(cases)("$command: a flag without its value exits 2 naming the flag", async ({ command }) => {
    const io = memoryIo(noFiles);
    const flag = command === "calibrate" ? "--report" : command === "simulate" ? "--trace" : "-f";
    expect(await runCli([command, flag], io)).toBe(2);
    expect(io.err).toMatch(new RegExp(`Option '(-f, )?--(filename|trace|report) <value>' argument missing`));
  });

  it.each(cases)("$command: --help lists every flag of the table and exits 0", async ({ command }) => {
    const io = memoryIo(noFiles);
    expect(await runCli([command, "--help"], io)).toBe(0);
    const help = io.out + io.err;
    expect(help).toContain(`usage: mds-scaler ${command}`);
    expect(help).toMatch(/-h, --help\s+this help/);
    for (const flag of helpFlags[command] ?? []) expect(help).toContain(flag);
  });
});

/** Flags each command has always had: the generated help must still list them. */
const helpFlags: Readonly<Record<string, readonly string[]>> = {
  validate: ["-f, --filename FILE", "-t, --target FILE"],
  plan: ["-f, --filename FILE", "-o, --output json|yaml"],
  simulate: [
    "--trace NAME|FILE",
    "--scaler FILE",
    "--fleet FILE",
    "--speedup N",
    "--copies K",
    "--seed N",
    "--duration SECONDS",
    "--from SECONDS",
    "--report FILE",
    "--latency-guard-reading",
    "-o, --output table|json",
  ],
  calibrate: ["--from-simulation FILE", "-f, --filename FILE", "--prometheus-url"],
};
