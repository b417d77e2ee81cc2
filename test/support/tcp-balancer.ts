/**
 * A loopback TCP forwarder standing in for the webhook Service: each
 * connection goes to the first backend that accepts it, so a killed replica
 * is skipped as kube-proxy would skip a pod that left the endpoints. `down()`
 * refuses every connection, as when no replica serves.
 */
import { createConnection, createServer, type Server, type Socket } from "node:net";

export class TcpBalancer {
  private serving = true;
  private readonly sockets = new Set<Socket>();

  private constructor(
    private readonly server: Server,
    readonly port: number,
    private readonly backends: number[],
  ) {}

  static async start(backends: readonly number[]): Promise<TcpBalancer> {
    const holder: { balancer?: TcpBalancer } = {};
    const server = createServer((client) => holder.balancer?.accept(client));
    const port = await new Promise<number>((resolve, reject) => {
      server.once("error", reject);
      server.listen(0, "127.0.0.1", () => {
        const address = server.address();
        resolve(typeof address === "object" && address !== null ? address.port : 0);
      });
    });
    holder.balancer = new TcpBalancer(server, port, [...backends]);
    return holder.balancer;
  }

  setBackends(ports: readonly number[]): void {
    this.backends.splice(0, this.backends.length, ...ports);
  }

  down(): void {
    this.serving = false;
    for (const s of this.sockets) s.destroy();
  }

  up(): void {
    this.serving = true;
  }

  private accept(client: Socket): void {
    if (!this.serving) {
      client.destroy();
      return;
    }
    this.sockets.add(client);
    client.on("close", () => this.sockets.delete(client));
    client.on("error", () => client.destroy());
    client.pause();
    const tryBackend = (index: number): void => {
      const port = this.backends[index];
      if (port === undefined) {
        client.destroy();
        return;
      }
      const upstream = createConnection({ host: "127.0.0.1", port });
      upstream.once("connect", () => {
        this.sockets.add(upstream);
        upstream.on("close", () => {
          this.sockets.delete(upstream);
          client.destroy();
        });
        upstream.on("error", () => upstream.destroy());
        client.on("close", () => upstream.destroy());
        client.pipe(upstream);
        upstream.pipe(client);
        client.resume();
      });
      upstream.once("error", () => {
        upstream.destroy();
        tryBackend(index + 1);
      });
    };
    tryBackend(0);
  }

  async close(): Promise<void> {
    this.down();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}
