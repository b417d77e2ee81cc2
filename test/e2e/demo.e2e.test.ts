/**
 * `npm start`, as a newcomer runs it: the demo scales its target up and down
 * while replaying the Azure code trace, its live page loads in Debian's
 * headless Chromium with every chart drawn (a screenshot is kept), and on
 * Ctrl-C no process it started is left. `--duration` ends it by itself, with
 * the same summary and nothing left behind.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { randomUUID } from "node:crypto";
import { existsSync, readdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { ChromiumPage } from "../support/chromium-page.js";

const root = join(import.meta.dirname, "..", "..");
const chromium = process.env["CHROMIUM_BIN"] ?? "/usr/bin/chromium";
/** Where the screenshot is kept for people to look at. */
const screenshotPath = process.env["MDS_DEMO_SCREENSHOT"] ?? join(tmpdir(), "mds-scaler-demo.png");

/** Processes whose environment carries `marker`: everything the demo started inherits it. */
function processesMarked(marker: string): number[] {
  const pids: number[] = [];
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry) || Number(entry) === process.pid) continue;
    try {
      if (readFileSync(`/proc/${entry}/environ`, "latin1").includes(marker)) pids.push(Number(entry));
    } catch {
      // gone, or not ours to read
    }
  }
  return pids;
}

/** Marked processes still alive after a grace period, with their command lines. */
async function leftBehind(marker: string): Promise<string[]> {
  let left = processesMarked(marker);
  const until = Date.now() + 15_000;
  while (left.length > 0 && Date.now() < until) {
    await new Promise((resolve) => setTimeout(resolve, 250));
    left = processesMarked(marker);
  }
  return left.map((pid) => {
    try {
      return `${pid}: ${readFileSync(`/proc/${pid}/cmdline`, "latin1").replace(/\0/g, " ")}`;
    } catch {
      return String(pid);
    }
  });
}

interface Chart {
  title: string;
  state: string;
  series: number | undefined;
  pixels: number | undefined;
}

function chartsIn(dom: string): Chart[] {
  return [...dom.matchAll(/<div class="chart"([^>]*)>/g)].map((m) => {
    const attr = (name: string): string | undefined => new RegExp(`data-${name}="([^"]*)"`).exec(m[1] ?? "")?.[1];
    const number = (name: string): number | undefined => (attr(name) === undefined ? undefined : Number(attr(name)));
    return {
      title: attr("title") ?? "",
      state: attr("state") ?? "",
      series: number("series"),
      pixels: number("pixels"),
    };
  });
}

describe("npm start (the demo)", () => {
  const marker = `MDS_DEMO_TEST_${randomUUID().replace(/-/g, "")}`;
  let child: ChildProcess | undefined;

  afterAll(() => {
    // Only when an assertion failed before the demo ended: stop its whole group.
    if (child?.pid === undefined || child.exitCode !== null || child.signalCode !== null) return;
    try {
      process.kill(-child.pid, "SIGINT");
    } catch {
      // the group is already gone
    }
  });

  /** The `from→to` pairs of the commit rows the demo printed. */
  function commitChanges(stdout: string): { up: number; down: number } {
    const pairs = [...stdout.matchAll(/ (\d+)→(\d+) /g)].map((m) => [Number(m[1]), Number(m[2])] as const);
    return { up: pairs.filter(([a, b]) => b > a).length, down: pairs.filter(([a, b]) => b < a).length };
  }

  /**
   * `npm start -- ARGS` in its own process group, every process it starts carrying `marker` in its
   * environment; its output as it arrives, and a wait on a condition that gives up when the demo ends.
   */
  function startDemo(args: readonly string[], marker: string) {
    const out = { stdout: "", stderr: "" };
    const demo = spawn("npm", ["start", ...(args.length > 0 ? ["--", ...args] : [])], {
      cwd: root,
      env: {
        ...process.env,
        PATH: `${join(root, "node_modules", ".bin")}:${process.env["PATH"] ?? ""}`,
        [marker]: "1",
      },
      detached: true,
      stdio: ["ignore", "pipe", "pipe"],
    });
    child = demo;
    demo.stdout?.on("data", (c: Buffer) => (out.stdout += c.toString()));
    demo.stderr?.on("data", (c: Buffer) => (out.stderr += c.toString()));
    // "close", not "exit": npm may end before the demo's own process has written its last line.
    const exited = new Promise<number | null>((resolve) => demo.once("close", (code) => resolve(code)));
    const running = (): boolean => demo.exitCode === null && demo.signalCode === null;
    const waitFor = async (what: () => boolean, seconds: number): Promise<void> => {
      const deadline = Date.now() + seconds * 1000;
      while (!what() && running() && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 500));
    };
    return { demo, out, exited, running, waitFor };
  }

  it("scales a replayed trace up and down, shows every chart, and stops every process it started on Ctrl-C", async () => {
    expect(existsSync(chromium), `${chromium} is missing: run bash tools/setup.sh`).toBe(true);
    // Until Ctrl-C, as the README's `npm start`: the page must still be served when Chromium loads it, and a
    // replay of fixed length ended before the screenshot on a loaded CI machine (a Chromium whose page is gone
    // exits 0 without the file). The test interrupts the demo once it has seen what it checks.
    const { demo, out, exited, running, waitFor } = startDemo([], marker);

    // The page is worth loading once the scaler has committed: the first commit is a scale-down about 10 s into
    // the replay (the target starts as the static fleet it replaces).
    const committed = (): boolean => / \d+→\d+ /.test(out.stdout) && out.stdout.includes("live page:");
    await waitFor(committed, 180);
    expect(committed(), `no commit before the deadline:\n${out.stdout}\n${out.stderr}`).toBe(true);
    const url = /live page: (http:\/\/127\.0\.0\.1:\d+\/)/.exec(out.stdout)?.[1] ?? "";
    // The marker reaches what the demo started (a shell drops names it cannot hold), so the final check means something.
    expect(processesMarked(marker).length).toBeGreaterThanOrEqual(7);

    // One Chromium session, waited on in real time: the DOM as a refresh ends, from the second on (a chart
    // rebuilt for a new lane reads as empty until the next one), then a picture of it.
    const page = await ChromiumPage.open(chromium, url, { width: 1400, height: 7000 });
    // `document.body` is null until the page's body is parsed: on a loaded machine the first check can come before it.
    const refreshes = "Number(document.body?.dataset.refreshes ?? 0)";
    let dom: string;
    let png: Buffer;
    try {
      await page.waitFor(`${refreshes} >= 1`, 240_000);
      dom = await page.htmlWhenNext(refreshes, 240_000);
      png = await page.screenshot();
    } finally {
      await page.close();
    }
    expect(running(), `the demo ended while its page was read:\n${out.stdout}\n${out.stderr}`).toBe(true);
    const charts = chartsIn(dom);
    console.log(`one refresh of the page: ${/data-refresh-ms="(\d+)"/.exec(dom)?.[1] ?? "?"} ms`);
    console.log(`charts on the page:\n${charts.map((c) => `  ${c.state.padEnd(7)} ${c.title}`).join("\n")}`);
    expect(charts.length).toBeGreaterThanOrEqual(8);
    // A chart whose queries returned series shows them; "empty" only where nothing matches (Predictive's panel under TokenThroughput).
    for (const c of charts) {
      expect(c.state, c.title).not.toBe("error");
      expect(c.state, c.title).not.toBe("pending");
      if (c.series !== undefined && c.series > 0) expect(c.state, c.title).toBe("drawn");
    }
    // What a user opens Grafana for: replicas, demand and capacity, latency against the targets, reasons, conditions.
    for (const title of [
      "Replicas:",
      "Token demand and ready capacity",
      "p95 latency against targets",
      "Reason per role",
      "Conditions",
    ])
      expect(
        charts.filter((c) => c.title.startsWith(title)).map((c) => c.state),
        title,
      ).toContain("drawn");
    // A commit row of the list on top; a commit may change decode before prefill.
    expect(dom).toMatch(/<td>[\d.]+ s<\/td><td>(?:[^<]*, )?prefill \d+ → \d+/);

    writeFileSync(screenshotPath, png);
    expect(readFileSync(screenshotPath).subarray(1, 4).toString()).toBe("PNG");
    expect(statSync(screenshotPath).size).toBeGreaterThan(50_000);
    console.log(`screenshot: ${screenshotPath}`);

    // The first scale-up comes with the first burst about 26 s into the replay.
    const upAndDown = (): boolean => {
      const { up, down } = commitChanges(out.stdout);
      return up >= 1 && down >= 1;
    };
    await waitFor(upAndDown, 180);
    expect(upAndDown(), `no scale-up and scale-down before the deadline:\n${out.stdout}\n${out.stderr}`).toBe(true);

    // A terminal's Ctrl-C: SIGINT to the whole foreground process group.
    process.kill(-(demo.pid ?? 0), "SIGINT");
    await exited;
    console.log(out.stdout);
    // npm itself dies of the SIGINT (no exit code); the demo's summary and "stopped." below are what it printed.
    expect(demo.signalCode ?? demo.exitCode, out.stderr).toBe("SIGINT");
    const commits = /commits +(\d+) \((\d+) scaling a role up, (\d+) scaling a role down\)/.exec(out.stdout);
    expect(commits, out.stdout).not.toBeNull();
    expect(Number(commits?.[2])).toBeGreaterThanOrEqual(1);
    expect(Number(commits?.[3])).toBeGreaterThanOrEqual(1);
    expect(Number(/requests +\d+ offered, (\d+) served/.exec(out.stdout)?.[1])).toBeGreaterThan(100);
    expect(out.stdout).toMatch(/TTFT attainment +\d+\.\d %/);
    expect(out.stdout).toMatch(/replica-seconds +prefill \d+, decode \d+/);
    expect(out.stdout).toContain("settings that differ from the defaults, and why:");
    expect(out.stdout, out.stderr).toContain("stopped.");

    // Nothing the demo started outlives it: etcd, kube-apiserver, Prometheus, their watchdogs, node.
    expect(await leftBehind(marker)).toEqual([]);
  }, 600_000);

  it("ends by itself after --duration, with a summary, and stops every process it started", async () => {
    const ended = `MDS_DEMO_TEST_${randomUUID().replace(/-/g, "")}`;
    const { out, exited, waitFor } = startDemo(["--duration", "15"], ended);
    await waitFor(() => out.stdout.includes("replaying;"), 180);
    expect(out.stdout, out.stderr).toContain("replaying;");
    // etcd, kube-apiserver and Prometheus with their watchdogs, besides npm, sh and node.
    expect(processesMarked(ended).length).toBeGreaterThanOrEqual(7);
    const code = await exited;
    expect(code, `${out.stdout}\n${out.stderr}`).toBe(0);
    expect(out.stdout).toMatch(/commits +\d+ \(\d+ scaling a role up, \d+ scaling a role down\)/);
    expect(out.stdout, out.stderr).toContain("stopped.");
    expect(await leftBehind(ended)).toEqual([]);
  }, 300_000);
});
