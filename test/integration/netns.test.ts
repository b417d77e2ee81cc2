/**
 * The network namespace harness for real: addresses on the namespace's `lo`,
 * processes inside it, relays both ways, and removal, including when the test
 * process dies without cleaning up.
 */
import { execFile, execFileSync, spawn } from "node:child_process";
import { promisify } from "node:util";
import { createServer as createHttpServer } from "node:http";
import { createServer as createTcpServer } from "node:net";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { NetworkNamespace } from "../../harness/netns.js";
import { eventually } from "../support/testbed.js";

const listNamespaces = (): string =>
  execFileSync("ip", ["netns", "list"], { encoding: "utf8" })
    .split("\n")
    .map((l) => l.split(" ")[0])
    .join("\n");

/** Fetches a URL from inside the namespace with the same Node, printing status and body. */
async function fetchInside(ns: NetworkNamespace, url: string): Promise<string> {
  const script = `fetch(process.argv[1]).then(async r => console.log(r.status + " " + await r.text()), e => { console.log("error " + e.cause?.code); })`;
  // Asynchronous: the server answering may live in this very process.
  const { stdout } = await promisify(execFile)("ip", ["netns", "exec", ns.name, process.execPath, "-e", script, url], {
    encoding: "utf8",
  });
  return stdout.trim();
}

describe("network namespace harness", () => {
  let ns: NetworkNamespace;

  beforeAll(() => {
    ns = NetworkNamespace.create("mds-t");
  });

  afterAll(async () => {
    await ns?.remove();
  });

  it("serves a test-process HTTP server at a pod address inside the namespace", async () => {
    ns.addAddress("10.77.0.5");
    expect(ns.addresses()).toEqual(["127.0.0.1", "10.77.0.5"]);
    const server = createHttpServer((req, res) => res.end(`hello ${req.url}`));
    const bridge = await ns.serveAt("10.77.0.5", 8000, server);
    expect(await fetchInside(ns, "http://10.77.0.5:8000/metrics")).toBe("200 hello /metrics");
    // No request goes to the pod address from the test's own namespace: there it is not ours.
    await bridge.close();
    expect(await fetchInside(ns, "http://10.77.0.5:8000/metrics")).toBe("error ECONNREFUSED");
  });

  it("reaches a root-namespace loopback port from inside, and a port inside from the test", async () => {
    const outside = createHttpServer((_req, res) => res.end("from the test"));
    const outsidePort = await new Promise<number>((resolve) =>
      outside.listen(0, "127.0.0.1", () => {
        const a = outside.address();
        resolve(typeof a === "object" && a !== null ? a.port : 0);
      }),
    );
    const inbound = await ns.bridgeIn(outsidePort);
    expect(await fetchInside(ns, `http://127.0.0.1:${inbound.port}/`)).toBe("200 from the test");

    const inside = await ns.start({
      name: "http-inside",
      command: process.execPath,
      args: ["-e", `require("node:http").createServer((q, s) => s.end("from inside")).listen(9100, "10.77.0.5")`],
      logPath: join(ns.dir, "http-inside.log"),
    });
    const outbound = await ns.bridgeOut("10.77.0.5", 9100);
    const body = await eventually(
      "the server inside to answer",
      async () => {
        const r = await fetch(`http://127.0.0.1:${outbound.port}/`).catch(() => undefined);
        return r?.ok === true ? await r.text() : undefined;
      },
      10_000,
      100,
    );
    expect(body).toBe("from inside");
    await inside.stop();
    await inbound.close();
    await outbound.close();
    outside.close();
  });

  it("removes the namespace and what runs in it", async () => {
    const other = NetworkNamespace.create("mds-t");
    const sleeper = await other.start({
      name: "sleeper",
      command: "sleep",
      args: ["600"],
      logPath: join(other.dir, "sleeper.log"),
    });
    expect(listNamespaces()).toContain(other.name);
    await other.remove();
    expect(listNamespaces()).not.toContain(other.name);
    expect(sleeper.hasExited()).toBe(true);
    // The port it held is free to anyone again: nothing leaks into the test's namespace.
    const probe = createTcpServer();
    await new Promise<void>((resolve) => probe.listen(0, "127.0.0.1", () => resolve()));
    probe.close();
  });

  it("removes the namespace when the test process dies without removing it", async () => {
    const script = `
      const { NetworkNamespace } = await import(${JSON.stringify(new URL("../../harness/netns.ts", import.meta.url).href)});
      const ns = NetworkNamespace.create("mds-t");
      console.log(ns.name);
      setTimeout(() => process.kill(process.pid, "SIGKILL"), 200);
    `;
    const child = spawn(process.execPath, ["--import", "tsx", "--input-type=module", "-e", script], {
      stdio: ["ignore", "pipe", "inherit"],
    });
    let name = "";
    child.stdout.on("data", (chunk: Buffer) => (name += chunk.toString()));
    await new Promise<void>((resolve) => child.once("exit", () => resolve()));
    name = name.trim();
    expect(name).toMatch(/^mds-t-\d+-[0-9a-f]{6}$/);
    // SIGKILL skips exit hooks: the watchdog removes it within about a second.
    await eventually("the orphaned namespace to go", async () => !listNamespaces().includes(name) || undefined, 10_000);
  }, 30_000);
});
