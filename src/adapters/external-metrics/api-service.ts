/** Keeps the APIService's `caBundle` equal to the generated serving CA, so the aggregator trusts this server. */
import { ApiregistrationV1Api, type KubeConfig } from "@kubernetes/client-node";
import { callOptions } from "../kubernetes/call-options.js";

export async function patchApiServiceCaBundle(opts: {
  kubeConfig: KubeConfig;
  name: string;
  caPem: string;
  timeoutMs: number;
}): Promise<void> {
  const api = opts.kubeConfig.makeApiClient(ApiregistrationV1Api);
  const caBundle = Buffer.from(opts.caPem).toString("base64");
  try {
    const current = await api.readAPIService({ name: opts.name }, callOptions(opts.timeoutMs));
    if (current.spec?.caBundle === caBundle) return;
    await api.patchAPIService(
      { name: opts.name, body: { spec: { caBundle } } },
      callOptions(opts.timeoutMs, "application/merge-patch+json"),
    );
  } catch (error) {
    throw new Error(`patch the CA bundle into APIService ${opts.name}`, { cause: error });
  }
}
