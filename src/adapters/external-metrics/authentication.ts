/**
 * Front-proxy authentication, as an aggregated API server does it: the
 * caller must present a client certificate signed by the request-header CA
 * the API server publishes in `kube-system/extension-apiserver-authentication`
 * (with a common name it allows), and only then are the user, groups and
 * extras read from the request headers. Everything else is refused.
 */
import type { IncomingMessage } from "node:http";
import type { TLSSocket } from "node:tls";
import { CoreV1Api, type KubeConfig } from "@kubernetes/client-node";
import { callOptions } from "../kubernetes/call-options.js";

export const authenticationConfigMap = { namespace: "kube-system", name: "extension-apiserver-authentication" };

/** What the API server publishes about its front proxy. */
export interface FrontProxyTrust {
  readonly caPem: string;
  /** Common names the proxy's certificate may carry; empty allows any the CA signed. */
  readonly allowedNames: readonly string[];
  readonly usernameHeaders: readonly string[];
  readonly uidHeaders: readonly string[];
  readonly groupHeaders: readonly string[];
  readonly extraHeaderPrefixes: readonly string[];
}

export interface UserInfo {
  readonly username: string;
  readonly uid?: string;
  readonly groups: readonly string[];
  readonly extra: Readonly<Record<string, readonly string[]>>;
}

export type Authentication = { readonly user: UserInfo } | { readonly refused: string };

function jsonList(data: Record<string, string>, key: string): string[] {
  const text = data[key];
  if (text === undefined || text === "") return [];
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (cause) {
    throw new Error(`${authenticationConfigMap.name} key ${key} = ${JSON.stringify(text)}: not a JSON list`, { cause });
  }
  if (!Array.isArray(parsed) || !parsed.every((v) => typeof v === "string"))
    throw new Error(`${authenticationConfigMap.name} key ${key} = ${JSON.stringify(text)}: not a list of strings`);
  return parsed;
}

/** Parses the ConfigMap's data; throws naming the key when the request-header CA is absent. */
export function frontProxyTrustFrom(data: Record<string, string>): FrontProxyTrust {
  const caPem = data["requestheader-client-ca-file"] ?? "";
  if (!caPem.includes("BEGIN CERTIFICATE"))
    throw new Error(
      `${authenticationConfigMap.namespace}/${authenticationConfigMap.name} has no requestheader-client-ca-file: ` +
        "the API server was started without --requestheader-client-ca-file, so it cannot proxy to an aggregated API",
    );
  const usernameHeaders = jsonList(data, "requestheader-username-headers");
  return {
    caPem,
    allowedNames: jsonList(data, "requestheader-allowed-names"),
    usernameHeaders: usernameHeaders.length > 0 ? usernameHeaders : ["X-Remote-User"],
    uidHeaders: jsonList(data, "requestheader-uid-headers"),
    groupHeaders: jsonList(data, "requestheader-group-headers"),
    extraHeaderPrefixes: jsonList(data, "requestheader-extra-headers-prefix"),
  };
}

export async function readFrontProxyTrust(kubeConfig: KubeConfig, timeoutMs: number): Promise<FrontProxyTrust> {
  const { namespace, name } = authenticationConfigMap;
  let data: Record<string, string>;
  try {
    const configMap = await kubeConfig
      .makeApiClient(CoreV1Api)
      .readNamespacedConfigMap({ namespace, name }, callOptions(timeoutMs));
    data = configMap.data ?? {};
  } catch (error) {
    throw new Error(`read ConfigMap ${namespace}/${name} (the front-proxy trust)`, { cause: error });
  }
  return frontProxyTrustFrom(data);
}

function values(req: IncomingMessage, header: string): string[] {
  return req.headersDistinct[header.toLowerCase()] ?? [];
}

/**
 * Authenticates one request. The TLS layer already verified the chain
 * against `trust.caPem` (`socket.authorized`); this checks the name and reads
 * the identity the proxy asserts.
 */
export function authenticate(req: IncomingMessage, trust: FrontProxyTrust): Authentication {
  const socket = req.socket as TLSSocket;
  if (typeof socket.getPeerCertificate !== "function") return { refused: "not a TLS connection" };
  const peer = socket.getPeerCertificate();
  if (peer === null || Object.keys(peer).length === 0) return { refused: "no client certificate" };
  if (!socket.authorized)
    return { refused: `client certificate not signed by the request-header CA (${String(socket.authorizationError)})` };
  const commonName = typeof peer.subject?.CN === "string" ? peer.subject.CN : "";
  if (trust.allowedNames.length > 0 && !trust.allowedNames.includes(commonName))
    return { refused: `client certificate common name ${JSON.stringify(commonName)} is not an allowed front proxy` };
  const username = trust.usernameHeaders.map((h) => values(req, h)[0] ?? "").find((v) => v !== "") ?? "";
  if (username === "") return { refused: `no user in ${trust.usernameHeaders.join(", ")}` };
  const uid = trust.uidHeaders.map((h) => values(req, h)[0] ?? "").find((v) => v !== "");
  const groups = trust.groupHeaders.flatMap((h) => values(req, h));
  const extra: Record<string, string[]> = {};
  for (const [header, headerValues] of Object.entries(req.headersDistinct)) {
    const prefix = trust.extraHeaderPrefixes.find((p) => header.startsWith(p.toLowerCase()));
    if (prefix === undefined || headerValues === undefined) continue;
    const key = decodeURIComponent(header.slice(prefix.length));
    extra[key] = [...(extra[key] ?? []), ...headerValues];
  }
  return { user: { username, ...(uid === undefined ? {} : { uid }), groups, extra } };
}
