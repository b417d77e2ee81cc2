/**
 * A network namespace for tests that need pod addresses. The API server
 * refuses loopback addresses in Pods' status and EndpointSlices, and test
 * traffic may only go to loopback or into a namespace the test creates. So
 * the harness creates one (`ip netns add`, root only), puts pod addresses such
 * as 10.77.0.5/32 on its own `lo` (this kernel has no `dummy` links), and runs
 * whatever must be reached at those addresses, and whatever scrapes them,
 * inside it with `ip netns exec`.
 *
 * Between the namespace and the test process, relays carry TCP over Unix
 * sockets (the filesystem is shared, the network is not): `bridgeIn` makes a
 * root-namespace loopback port (the API server) reachable inside, and
 * `bridgeOut` makes a port inside (Prometheus) reachable from the test. A relay
 * process runs inside the namespace and listens on its side.
 *
 * `remove()` kills every process in the namespace and deletes it. If the test
 * never calls it, an exit hook does the same, and if the test process is
 * killed outright, a detached watchdog does it within a second.
 */
import { execFileSync, spawn, type ChildProcess } from "node:child_process";
import { randomBytes } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { createConnection, createServer, type Server, type Socket } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { ManagedProcess } from "./kube/processes.js";

/** Pipes every connection on one side to a new connection on the other; run inside the namespace. */
const relayScript = `
const net = require("node:net");
const [listenSpec, targetSpec] = process.argv.slice(1);
const endpoint = (spec) => spec.startsWith("unix:") ? { path: spec.slice(5) } : (() => {
  const i = spec.lastIndexOf(":");
  return { host: spec.slice(4, i), port: Number(spec.slice(i + 1)) };
})();
const server = net.createServer((inbound) => {
  const outbound = net.createConnection(endpoint(targetSpec));
  inbound.pipe(outbound).pipe(inbound);
  inbound.on("error", () => outbound.destroy());
  outbound.on("error", () => inbound.destroy());
});
server.listen(endpoint(listenSpec), () => {
  const a = server.address();
  console.log("listening " + (typeof a === "object" && a ? a.port : a));
});
process.on("SIGTERM", () => process.exit(0));
`;

const namespaces = new Set<string>();
let exitHookInstalled = false;

function ip(args: readonly string[]): string {
  try {
    return execFileSync("ip", args, { encoding: "utf8", stdio: ["ignore", "pipe", "pipe"] });
  } catch (cause) {
    const stderr = (cause as { stderr?: string }).stderr ?? "";
    throw new Error(`ip ${args.join(" ")} failed: ${stderr.trim()}`, { cause });
  }
}

/** Kills what runs in the namespace and deletes it; safe to call twice and from an exit hook. */
function removeNow(name: string): void {
  let pids: string[] = [];
  try {
    pids = ip(["netns", "pids", name]).split(/\s+/).filter(Boolean);
  } catch {
    // Already gone.
  }
  for (const pid of pids) {
    try {
      process.kill(Number(pid), "SIGKILL");
    } catch {
      // Exited meanwhile.
    }
  }
  try {
    ip(["netns", "del", name]);
  } catch {
    // Already gone.
  }
  namespaces.delete(name);
}

function startWatchdog(name: string): ChildProcess {
  const script =
    'while kill -0 "$1" 2>/dev/null; do sleep 1; done; for p in $(ip netns pids "$2"); do kill -9 "$p"; done; ip netns del "$2"';
  const watchdog = spawn("/bin/sh", ["-c", script, "mds-netns-watchdog", String(process.pid), name], {
    detached: true,
    stdio: "ignore",
  });
  watchdog.unref();
  return watchdog;
}

export interface NamespacedProcessOptions {
  readonly name: string;
  readonly command: string;
  readonly args: readonly string[];
  readonly logPath: string;
  readonly env?: Readonly<Record<string, string>>;
}

/** A loopback port in one namespace, reachable in the other through a relay. */
export interface Bridge {
  /** Port of the listening side (inside for bridgeIn, the test's loopback for bridgeOut). */
  readonly port: number;
  close(): Promise<void>;
}

export class NetworkNamespace {
  private readonly bridges = new Set<Bridge>();
  private readonly processes = new Set<ManagedProcess>();
  private removed = false;

  private constructor(
    readonly name: string,
    /** Scratch directory for relay sockets and process logs; removed with the namespace. */
    readonly dir: string,
    private readonly watchdog: ChildProcess,
  ) {}

  /** Creates a namespace with `lo` up. Needs root (CAP_NET_ADMIN and CAP_SYS_ADMIN). */
  static create(prefix = "mds"): NetworkNamespace {
    const name = `${prefix}-${process.pid}-${randomBytes(3).toString("hex")}`;
    if (!exitHookInstalled) {
      exitHookInstalled = true;
      process.on("exit", () => {
        for (const n of namespaces) removeNow(n);
      });
    }
    ip(["netns", "add", name]);
    namespaces.add(name);
    const dir = mkdtempSync(join(tmpdir(), "mds-netns-"));
    const ns = new NetworkNamespace(name, dir, startWatchdog(name));
    try {
      ns.ip(["link", "set", "lo", "up"]);
    } catch (error) {
      removeNow(name);
      throw error;
    }
    return ns;
  }

  /** Runs `ip` inside the namespace. */
  ip(args: readonly string[]): string {
    return ip(["netns", "exec", this.name, "ip", ...args]);
  }

  /** Adds a /32 address to the namespace's `lo`, e.g. a pod IP. */
  addAddress(address: string): void {
    if (!/^\d{1,3}(\.\d{1,3}){3}$/.test(address)) throw new Error(`addAddress: not an IPv4 address: ${address}`);
    this.ip(["addr", "add", `${address}/32`, "dev", "lo"]);
  }

  /** The IPv4 addresses on the namespace's `lo`. */
  addresses(): string[] {
    return [...this.ip(["-4", "-o", "addr", "show", "dev", "lo"]).matchAll(/inet (\S+)\//g)].map((m) => m[1] ?? "");
  }

  /** Starts a process inside the namespace, in its own process group with a log file. */
  async start(options: NamespacedProcessOptions): Promise<ManagedProcess> {
    const envArgs = Object.entries(options.env ?? {}).map(([k, v]) => `${k}=${v}`);
    const child = await ManagedProcess.start({
      name: options.name,
      command: "ip",
      args: ["netns", "exec", this.name, "env", ...envArgs, options.command, ...options.args],
      logPath: options.logPath,
    });
    this.processes.add(child);
    return child;
  }

  /** Makes `127.0.0.1:<port>` of the test's namespace reachable inside at `127.0.0.1:<returned port>`. */
  async bridgeIn(rootPort: number): Promise<Bridge> {
    const socketPath = join(this.dir, `in-${rootPort}-${randomBytes(3).toString("hex")}.sock`);
    const server = await listenUnix(socketPath, (inbound) => pipeTo(inbound, createConnection(rootPort, "127.0.0.1")));
    const relay = await this.relay("tcp:127.0.0.1:0", `unix:${socketPath}`);
    return this.track(relay.port, async () => {
      await relay.stop();
      await closeServer(server);
    });
  }

  /**
   * Serves connections to `<address>:<port>` inside the namespace with a
   * server of the test process (an HTTP server, say): the relay inside listens
   * at the address and hands each connection over a Unix socket.
   */
  async serveAt(address: string, port: number, server: Server): Promise<Bridge> {
    const socketPath = join(this.dir, `at-${address}-${port}.sock`);
    trackSockets(server);
    await new Promise<void>((resolve, reject) => {
      server.once("error", reject);
      server.listen(socketPath, () => resolve());
    });
    const relay = await this.relay(`tcp:${address}:${port}`, `unix:${socketPath}`);
    return this.track(port, async () => {
      await relay.stop();
      await closeServer(server);
    });
  }

  /** Makes `<address>:<port>` inside the namespace reachable from the test at `127.0.0.1:<returned port>`. */
  async bridgeOut(address: string, port: number): Promise<Bridge> {
    const socketPath = join(this.dir, `out-${port}-${randomBytes(3).toString("hex")}.sock`);
    const relay = await this.relay(`unix:${socketPath}`, `tcp:${address}:${port}`);
    const server = trackSockets(createServer((inbound) => pipeTo(inbound, createConnection(socketPath))));
    const localPort = await new Promise<number>((resolve, reject) => {
      server.once("error", reject);
      server.listen(0, "127.0.0.1", () => {
        const a = server.address();
        resolve(typeof a === "object" && a !== null ? a.port : 0);
      });
    });
    return this.track(localPort, async () => {
      await closeServer(server);
      await relay.stop();
    });
  }

  /** Kills every process inside, deletes the namespace and its scratch directory. */
  async remove(): Promise<void> {
    if (this.removed) return;
    this.removed = true;
    for (const bridge of [...this.bridges]) await bridge.close().catch(() => undefined);
    for (const child of [...this.processes]) await child.stop(2_000).catch(() => undefined);
    removeNow(this.name);
    if (this.watchdog.pid !== undefined) {
      try {
        process.kill(-this.watchdog.pid, "SIGKILL");
      } catch {
        // Already gone.
      }
    }
    rmSync(this.dir, { recursive: true, force: true });
  }

  private track(port: number, close: () => Promise<void>): Bridge {
    const bridge: Bridge = {
      port,
      close: async () => {
        this.bridges.delete(bridge);
        await close();
      },
    };
    this.bridges.add(bridge);
    return bridge;
  }

  /** A relay process inside the namespace; resolves with the port it listens on. */
  private async relay(listen: string, target: string): Promise<{ port: number; stop: () => Promise<void> }> {
    const child = spawn("ip", ["netns", "exec", this.name, process.execPath, "-e", relayScript, listen, target], {
      stdio: ["ignore", "pipe", "pipe"],
      detached: true,
    });
    let stderr = "";
    child.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
    const port = await new Promise<number>((resolve, reject) => {
      const lines = createInterface({ input: child.stdout });
      const timer = setTimeout(
        () => reject(new Error(`relay ${listen} -> ${target}: no answer in 10 s: ${stderr}`)),
        10_000,
      );
      lines.once("line", (line) => {
        clearTimeout(timer);
        const m = /^listening (\d+)/.exec(line);
        resolve(m ? Number(m[1]) : 0);
      });
      child.once("exit", (code) => {
        clearTimeout(timer);
        reject(new Error(`relay ${listen} -> ${target} exited (${code}): ${stderr}`));
      });
    });
    const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
    return {
      port,
      stop: async () => {
        if (child.exitCode === null && child.pid !== undefined) {
          try {
            process.kill(-child.pid, "SIGKILL");
          } catch {
            // Already gone.
          }
          await exited;
        }
      },
    };
  }
}

const openSockets = new WeakMap<Server, Set<Socket>>();

function pipeTo(inbound: Socket, outbound: Socket): void {
  inbound.pipe(outbound).pipe(inbound);
  inbound.on("error", () => outbound.destroy());
  outbound.on("error", () => inbound.destroy());
  inbound.on("close", () => outbound.destroy());
  outbound.on("close", () => inbound.destroy());
}

/** Remembers a server's connections, so closing it does not wait for idle keep-alive clients. */
function trackSockets(server: Server): Server {
  const sockets = new Set<Socket>();
  openSockets.set(server, sockets);
  server.on("connection", (socket: Socket) => {
    sockets.add(socket);
    socket.once("close", () => sockets.delete(socket));
  });
  return server;
}

async function listenUnix(path: string, onConnection: (socket: Socket) => void): Promise<Server> {
  const server = trackSockets(createServer(onConnection));
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(path, () => resolve());
  });
  return server;
}

async function closeServer(server: Server): Promise<void> {
  const closed = new Promise<void>((resolve) => server.close(() => resolve()));
  for (const socket of openSockets.get(server) ?? []) socket.destroy();
  await closed;
}
