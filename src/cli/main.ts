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

/** After a command has returned, how long anything it left behind may hold the process before it exits anyway. */
const exitGraceMs = 10_000;

process.exitCode = await runCli(process.argv.slice(2), io);
// Unreferenced: it fires only when something still holds the event loop (a hung close, a stray timer),
// so a command that ended exits with its code within a bound instead of hanging on what it left.
setTimeout(() => {
  process.stderr.write(
    `mds-scaler: still running ${exitGraceMs / 1000} s after the command ended (${process.getActiveResourcesInfo().join(", ")}); exiting\n`,
  );
  process.exit();
}, exitGraceMs).unref();
