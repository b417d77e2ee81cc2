/** A CLI's stdio kept in memory for tests; files are read from disk unless `readFile` is given. */
import { readFileSync } from "node:fs";
import type { CliIo } from "../../src/cli/io.js";

export function memoryIo(readFile: (path: string) => string = (path) => readFileSync(path, "utf8")): CliIo & {
  out: string;
  err: string;
} {
  const io = {
    out: "",
    err: "",
    stdout: (text: string) => void (io.out += text),
    stderr: (text: string) => void (io.err += text),
    readFile,
  };
  return io;
}
