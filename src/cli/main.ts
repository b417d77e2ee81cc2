#!/usr/bin/env node
/** The `mds-scaler` binary: real stdio and files around the command table. */
import { readFileSync } from "node:fs";
import { runCli } from "./commands.js";
import type { CliIo } from "./io.js";

const io: CliIo = {
  stdout: (text) => void process.stdout.write(text),
  stderr: (text) => void process.stderr.write(text),
  readFile: (path) => readFileSync(path === "-" ? 0 : path, "utf8"),
};

process.exitCode = await runCli(process.argv.slice(2), io);
