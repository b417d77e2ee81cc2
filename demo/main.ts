/** `npm start`: the demo, with real stdio and files. It runs from the repository and is not part of the image. */
import { readFileSync } from "node:fs";
import { runDemo } from "./run.js";

process.exitCode = await runDemo(
  process.argv.slice(2),
  {
    stdout: (text) => void process.stdout.write(text),
    stderr: (text) => void process.stderr.write(text),
    readFile: (path) => readFileSync(path === "-" ? 0 : path, "utf8"),
  },
  process.env,
);
