/**
 * Whether the API server answers at all: any HTTP status (even 401 or 403)
 * means it was reached; only a failure to get an answer (refused, timed out,
 * bad URL or TLS) counts as unreachable. Reads `/version`, which every
 * caller may read.
 */
import { ApiException, VersionApi, type KubeConfig } from "@kubernetes/client-node";
import { callOptions } from "./call-options.js";

export type Reachability = { readonly reached: true } | { readonly reached: false; readonly error: unknown };

export async function probeApiServer(kubeConfig: KubeConfig, timeoutMs: number): Promise<Reachability> {
  try {
    await kubeConfig.makeApiClient(VersionApi).getCode(callOptions(timeoutMs));
    return { reached: true };
  } catch (error) {
    if (error instanceof ApiException) return { reached: true };
    return { reached: false, error };
  }
}
