/** Headless Chromium for pages the project writes: the DOM after the page's scripts ran. */
import { execFile } from "node:child_process";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";

const run = promisify(execFile);

export const chromiumFlags = [
  "--headless",
  "--no-sandbox",
  "--disable-gpu",
  "--disable-background-networking",
  "--disable-component-update",
  "--disable-sync",
  "--no-first-run",
];

/** The rendered DOM of a local HTML file, with five seconds of virtual time for its scripts. */
export async function renderedDom(path: string): Promise<string> {
  const { stdout } = await run(
    process.env["CHROMIUM_BIN"] ?? "chromium",
    [
      ...chromiumFlags,
      `--user-data-dir=${mkdtempSync(join(tmpdir(), "mds-chromium-"))}`,
      "--virtual-time-budget=5000",
      "--dump-dom",
      `file://${path}`,
    ],
    { timeout: 90_000, maxBuffer: 64 * 1024 * 1024 },
  );
  return stdout;
}
