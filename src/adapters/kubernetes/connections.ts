/**
 * Kept-alive connections to the API server. `@kubernetes/client-node` 2.0
 * builds a new undici Agent for every request, so every call paid a TCP and
 * TLS handshake (most of a write's CPU in the control-loop profile).
 * `pooledConnections` gives a configuration one pool for calls, at most
 * `maxSockets` connections per API server, and one apart for watches. undici
 * speaks HTTP/2 when the API server offers it (kube-apiserver does), and then
 * one connection carries many requests at once; over HTTP/1.1 (a proxy or
 * load balancer that does not pass HTTP/2) a watch holds its connection for
 * minutes, so on the calls' pool a few watches would leave the writes waiting. The TLS material (CA, client certificate and key,
 * `insecure-skip-tls-verify`, server name) and the headers (token, basic auth,
 * impersonation) are the library's own for each request; a pool is built again
 * when the material changes (a rotated client certificate). Behind a proxy
 * the library's own per-request connections stay.
 */
import { createHash } from "node:crypto";
import type { AgentOptions, RequestOptions } from "node:https";
import { KubeConfig, type RequestContext } from "@kubernetes/client-node";
import { Agent } from "undici";

/** Twice the controller's reconciles at once (8), so a lease renewal or a review never waits behind writes. */
export const defaultMaxSockets = 16;

/**
 * Idle connections are closed after this long: longer than the default
 * 15 s sampling interval, so a steady controller keeps its connections from
 * pass to pass, and shorter than the 60 s idle timeout of common load balancers.
 */
export const idleConnectionMs = 30_000;

export interface PooledConnectionsOptions {
  /** Connections at most per API server for calls (watches have their own). */
  readonly maxSockets?: number;
  /** false: HTTP/1.1 only, one request per connection at a time (default: HTTP/2 when offered, as the library). */
  readonly http2?: boolean;
}

type PoolKind = "calls" | "watches";

interface Pool {
  readonly material: string;
  readonly agent: Agent;
}

/** The TLS part of the library's request options: what the library builds its own agent from. */
function tlsOptions(options: RequestOptions): AgentOptions {
  const picked: AgentOptions = {};
  if (options.ca !== undefined) picked.ca = options.ca;
  if (options.cert !== undefined) picked.cert = options.cert;
  if (options.key !== undefined) picked.key = options.key;
  if (options.pfx !== undefined) picked.pfx = options.pfx;
  if (options.passphrase !== undefined) picked.passphrase = options.passphrase;
  if (options.rejectUnauthorized !== undefined) picked.rejectUnauthorized = options.rejectUnauthorized;
  if (options.servername !== undefined) picked.servername = options.servername;
  return picked;
}

/** A digest of everything that decides a TLS connection's identity. */
function tlsMaterial(tls: AgentOptions): string {
  const hash = createHash("sha256");
  for (const part of [tls.ca, tls.cert, tls.key, tls.pfx]) {
    for (const piece of [part ?? []].flat())
      hash.update(typeof piece === "string" || Buffer.isBuffer(piece) ? piece : JSON.stringify(piece));
    hash.update("\0");
  }
  hash.update(`${tls.passphrase ?? ""}\0${String(tls.rejectUnauthorized)}\0${tls.servername ?? ""}`);
  return hash.digest("hex");
}

function isWatch(context: RequestContext): boolean {
  return new URL(context.getUrl()).searchParams.get("watch") === "true";
}

export class PooledKubeConfig extends KubeConfig {
  private readonly pools = new Map<PoolKind, Pool>();
  readonly maxSockets: number;
  private readonly http2: boolean;

  constructor(options: PooledConnectionsOptions = {}) {
    super();
    this.maxSockets = options.maxSockets ?? defaultMaxSockets;
    this.http2 = options.http2 ?? true;
    if (!Number.isInteger(this.maxSockets) || this.maxSockets < 1)
      throw new Error(`maxSockets: ${String(options.maxSockets)} is not a positive whole number of connections`);
  }

  override async applySecurityAuthentication(context: RequestContext): Promise<void> {
    const cluster = this.getCurrentCluster();
    if ((cluster?.proxyUrl ?? "") !== "") return super.applySecurityAuthentication(context);
    const options: RequestOptions = {};
    await this.applyToHTTPSOptions(options);
    if (typeof options.auth === "string")
      context.setHeaderParam("Authorization", `Basic ${Buffer.from(options.auth).toString("base64")}`);
    for (const [name, value] of Object.entries(options.headers ?? {}))
      if (value !== undefined) context.setHeaderParam(name, String(value));
    const tls = tlsOptions(options);
    // Throws as the library does for plain HTTP without insecure-skip-tls-verify.
    const built = this.createDispatcherOptions(cluster, tls);
    // The library's own connect options (TLS and TCP keep-alive), for the undici Agent it would build.
    const connect = (built.type === "agent" ? built.connect : {}) as NonNullable<Agent.Options["connect"]>;
    context.setDispatcher(this.pool(isWatch(context) ? "watches" : "calls", tlsMaterial(tls), connect));
  }

  private pool(kind: PoolKind, material: string, connect: NonNullable<Agent.Options["connect"]>): Agent {
    const current = this.pools.get(kind);
    if (current?.material === material) return current.agent;
    // New material: requests in flight finish on the old pool, which then closes.
    void current?.agent.close().catch(() => undefined);
    const agent = new Agent({
      connect,
      keepAliveTimeout: idleConnectionMs,
      allowH2: this.http2,
      ...(kind === "calls" ? { connections: this.maxSockets } : {}),
    });
    this.pools.set(kind, { material, agent });
    return agent;
  }

  /** Closes the kept-alive connections once their requests have finished. */
  async close(): Promise<void> {
    const agents = [...this.pools.values()].map((p) => p.agent);
    this.pools.clear();
    await Promise.all(agents.map((a) => a.close()));
  }
}

/** `config`'s clusters, users and contexts on pooled, kept-alive connections. */
export function pooledConnections(config: KubeConfig, options: PooledConnectionsOptions = {}): PooledKubeConfig {
  const pooled = new PooledKubeConfig(options);
  pooled.loadFromOptions({
    clusters: config.getClusters(),
    users: config.getUsers(),
    contexts: config.getContexts(),
    currentContext: config.getCurrentContext(),
  });
  return pooled;
}
