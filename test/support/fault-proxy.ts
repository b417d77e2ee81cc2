/**
 * An HTTPS proxy in front of the test API server that loses answers on
 * purpose. It terminates TLS with a certificate the cluster CA signed, so a
 * client trusts it as the API server, and forwards every request with the
 * admin's client certificate, streaming answers (watches included). A rule
 * picks requests by method, path and body and either forwards the request and
 * never answers (the server applied it; the client sees a timeout) or never
 * forwards it at all (nothing applied; the client sees a timeout as well).
 */
import { request as httpsRequest } from "node:https";
import type { IncomingMessage, ServerResponse } from "node:http";
import { KubeConfig } from "@kubernetes/client-node";
import type { ControlPlane } from "../../harness/kube/index.js";
import type { LocalHttpsServer } from "../../harness/kube/https-server.js";

export interface Seen {
  readonly method: string;
  readonly path: string;
  readonly body: string;
}

/** What happens to a request: forwarded and answered, forwarded and never answered, or held and never sent. */
export type Fault = "pass" | "loseAnswer" | "hold";

export class FaultProxy {
  /** Requests that met a fault, in order. */
  readonly faults: (Seen & { readonly fault: Fault })[] = [];
  /** Requests received, faulty or not. */
  received = 0;
  private rule: (seen: Seen) => Fault = () => "pass";
  private readonly held = new Set<ServerResponse>();

  private constructor(
    private readonly server: LocalHttpsServer,
    private readonly upstream: { host: string; port: number; ca: string; cert: string; key: string },
  ) {}

  static async start(controlPlane: ControlPlane): Promise<FaultProxy> {
    const holder: { proxy?: FaultProxy } = {};
    const server = await controlPlane.startHttpsServer((req, res) => holder.proxy?.handle(req, res));
    const user = controlPlane.kubeConfig.getCurrentUser();
    const cluster = controlPlane.kubeConfig.getCurrentCluster();
    const url = new URL(controlPlane.serverUrl);
    const decode = (data: string | undefined): string => Buffer.from(data ?? "", "base64").toString("utf8");
    holder.proxy = new FaultProxy(server, {
      host: url.hostname,
      port: Number(url.port),
      ca: decode(cluster?.caData),
      cert: decode(user?.certData),
      key: decode(user?.keyData),
    });
    return holder.proxy;
  }

  /** A kubeconfig whose server is this proxy (credentials are the admin's; the proxy uses its own). */
  kubeConfig(base: KubeConfig): string {
    const proxied = new KubeConfig();
    proxied.loadFromOptions({
      clusters: base.getClusters().map((c) => ({ ...c, server: this.server.url })),
      users: base.getUsers(),
      contexts: base.getContexts(),
      currentContext: base.getCurrentContext(),
    });
    return proxied.exportConfig();
  }

  /** Decides the fate of every later request. */
  setRule(rule: (seen: Seen) => Fault): void {
    this.rule = rule;
  }

  private handle(req: IncomingMessage, res: ServerResponse): void {
    this.received += 1;
    const chunks: Buffer[] = [];
    req.on("data", (chunk: Buffer) => chunks.push(chunk));
    req.on("end", () => {
      const body = Buffer.concat(chunks);
      const seen: Seen = { method: req.method ?? "GET", path: req.url ?? "/", body: body.toString("utf8") };
      const fault = this.rule(seen);
      if (fault !== "pass") this.faults.push({ ...seen, fault });
      if (fault === "hold") {
        this.held.add(res);
        return;
      }
      const upstream = httpsRequest(
        {
          host: this.upstream.host,
          port: this.upstream.port,
          method: seen.method,
          path: seen.path,
          headers: { ...req.headers, host: `${this.upstream.host}:${this.upstream.port}` },
          ca: this.upstream.ca,
          cert: this.upstream.cert,
          key: this.upstream.key,
        },
        (answer) => {
          if (fault === "loseAnswer") {
            answer.resume();
            this.held.add(res);
            return;
          }
          res.writeHead(answer.statusCode ?? 502, answer.headers);
          answer.pipe(res);
        },
      );
      upstream.on("error", () => res.destroy());
      res.on("close", () => upstream.destroy());
      upstream.end(body);
    });
  }

  async close(): Promise<void> {
    for (const res of this.held) res.destroy();
    await this.server.close();
  }
}
