/**
 * A live page in headless Chromium, driven over the DevTools protocol: load it, wait in real time for a
 * condition the page states (with a deadline), then read its DOM and capture it. `--virtual-time-budget`
 * cannot do this for a page that refreshes itself: every refresh inside the budget is waited for, and on a
 * loaded CI machine ten seconds of a demo page refreshing every two ran past four minutes.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { chromiumFlags } from "./chromium.js";

interface Pending {
  resolve: (result: Record<string, unknown>) => void;
  reject: (error: Error) => void;
}

export class ChromiumPage {
  private nextId = 1;
  private readonly pending = new Map<number, Pending>();

  private constructor(
    private readonly browser: ChildProcess,
    private readonly profile: string,
    private readonly socket: WebSocket,
  ) {
    socket.addEventListener("message", (event) => {
      const message = JSON.parse(String(event.data)) as {
        id?: number;
        result?: Record<string, unknown>;
        error?: { message: string };
      };
      const waiting = message.id === undefined ? undefined : this.pending.get(message.id);
      if (waiting === undefined || message.id === undefined) return;
      this.pending.delete(message.id);
      if (message.error !== undefined) waiting.reject(new Error(`DevTools: ${message.error.message}`));
      else waiting.resolve(message.result ?? {});
    });
    socket.addEventListener("close", () => {
      for (const waiting of this.pending.values()) waiting.reject(new Error("DevTools: the connection closed"));
      this.pending.clear();
    });
  }

  /** Starts Chromium on `url` at the given window size and connects to its page. */
  static async open(
    chromium: string,
    url: string,
    window: { width: number; height: number },
    timeoutMs = 60_000,
  ): Promise<ChromiumPage> {
    const profile = mkdtempSync(join(tmpdir(), "mds-chromium-"));
    const browser = spawn(
      chromium,
      [
        ...chromiumFlags,
        `--user-data-dir=${profile}`,
        `--window-size=${window.width},${window.height}`,
        "--remote-debugging-port=0",
        url,
      ],
      { stdio: ["ignore", "ignore", "pipe"] },
    );
    let stderr = "";
    try {
      const endpoint = await new Promise<string>((resolve, reject) => {
        const timer = setTimeout(
          () =>
            reject(new Error(`chromium gave no DevTools address within ${timeoutMs / 1000} s: ${stderr.slice(-2000)}`)),
          timeoutMs,
        );
        browser.stderr?.on("data", (chunk: Buffer) => {
          stderr += chunk.toString();
          const found = /DevTools listening on ws:\/\/([^/\s]+)\//.exec(stderr)?.[1];
          if (found !== undefined) {
            clearTimeout(timer);
            resolve(found);
          }
        });
        browser.once("exit", (code) => {
          clearTimeout(timer);
          reject(new Error(`chromium exited ${code} before its DevTools address: ${stderr.slice(-2000)}`));
        });
      });
      const targets = (await (await fetch(`http://${endpoint}/json/list`)).json()) as {
        type: string;
        webSocketDebuggerUrl: string;
      }[];
      const page = targets.find((t) => t.type === "page");
      if (page === undefined) throw new Error(`chromium lists no page: ${JSON.stringify(targets)}`);
      const socket = new WebSocket(page.webSocketDebuggerUrl);
      await new Promise<void>((resolve, reject) => {
        socket.addEventListener("open", () => resolve(), { once: true });
        socket.addEventListener("error", () => reject(new Error(`cannot connect to ${page.webSocketDebuggerUrl}`)), {
          once: true,
        });
      });
      return new ChromiumPage(browser, profile, socket);
    } catch (error) {
      browser.kill("SIGKILL");
      rmSync(profile, { recursive: true, force: true });
      throw error;
    }
  }

  private send(method: string, params: Record<string, unknown> = {}): Promise<Record<string, unknown>> {
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      this.pending.set(id, { resolve, reject });
      this.socket.send(JSON.stringify({ id, method, params }));
    });
  }

  /** The value of a JavaScript expression in the page (a string, number or boolean); a promise is awaited. */
  async evaluate(expression: string): Promise<unknown> {
    const answer = (await this.send("Runtime.evaluate", { expression, returnByValue: true, awaitPromise: true })) as {
      result?: { value?: unknown };
      exceptionDetails?: { text?: string };
    };
    if (answer.exceptionDetails !== undefined)
      throw new Error(`${expression}: ${answer.exceptionDetails.text ?? "threw"}`);
    return answer.result?.value;
  }

  /** Waits until `expression` is true in the page, checking every half second, or throws at the deadline. */
  async waitFor(expression: string, timeoutMs: number): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      if ((await this.evaluate(expression)) === true) return;
      if (Date.now() > deadline) throw new Error(`the page did not reach ${expression} within ${timeoutMs / 1000} s`);
      await new Promise((resolve) => setTimeout(resolve, 500));
    }
  }

  /**
   * The DOM as HTML (as `--dump-dom` prints it) at the moment `expression` (a number the page counts up) next grows: for a page that
   * redraws itself, a state between two redraws rather than one half drawn.
   */
  async htmlWhenNext(expression: string, timeoutMs: number): Promise<string> {
    return String(
      await this.evaluate(`new Promise((resolve, reject) => {
        const start = ${expression};
        const deadline = Date.now() + ${timeoutMs};
        const check = () => {
          if (${expression} > start) resolve(document.documentElement.outerHTML);
          else if (Date.now() > deadline) reject(new Error(${JSON.stringify(`${expression} did not grow within ${timeoutMs / 1000} s`)}));
          else setTimeout(check, 50);
        };
        check();
      })`),
    );
  }

  /** A PNG of the window. */
  async screenshot(): Promise<Buffer> {
    const { data } = (await this.send("Page.captureScreenshot", { format: "png" })) as { data: string };
    return Buffer.from(data, "base64");
  }

  async close(): Promise<void> {
    this.socket.close();
    const exited = new Promise<void>((resolve) => {
      if (this.browser.exitCode !== null || this.browser.signalCode !== null) resolve();
      else this.browser.once("exit", () => resolve());
    });
    this.browser.kill("SIGTERM");
    const killTimer = setTimeout(() => this.browser.kill("SIGKILL"), 10_000);
    await exited;
    clearTimeout(killTimer);
    // Chromium's helper processes may still write into the profile for a moment after the browser exits.
    rmSync(this.profile, { recursive: true, force: true, maxRetries: 10, retryDelay: 200 });
  }
}
