/**
 * The webhook's serving certificate, from one of two sources:
 *
 * - generated: a CA and a serving certificate for the webhook Service's names,
 *   kept in a `kubernetes.io/tls` Secret so every replica serves the same one
 *   (the first replica creates it; the others, and later starts, reuse it
 *   while it covers the names and is not near expiry), with the CA bundle
 *   patched into the webhook configurations;
 * - supplied: `tls.crt` and `tls.key` in a directory (cert-manager mounts its
 *   Secret there and injects the CA bundle itself), re-read when they change.
 */
import { X509Certificate, createPrivateKey, generateKeyPairSync, randomBytes } from "node:crypto";
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import {
  AdmissionregistrationV1Api,
  ApiException,
  CoreV1Api,
  type KubeConfig,
  type V1Secret,
} from "@kubernetes/client-node";
import forge from "node-forge";
import { callOptions } from "../kubernetes/call-options.js";
import type { ServingCertificate } from "./server.js";

export interface GeneratedCertificate extends ServingCertificate {
  readonly caPem: string;
}

const caValidityDays = 3650;
const servingValidityDays = 730;
/** A stored certificate this close to expiry is replaced at start. */
const renewBeforeDays = 90;
const dayMs = 24 * 60 * 60 * 1000;

function rsaKey(): { privatePem: string; publicPem: string } {
  const { privateKey, publicKey } = generateKeyPairSync("rsa", { modulusLength: 2048 });
  return {
    privatePem: privateKey.export({ type: "pkcs1", format: "pem" }).toString(),
    publicPem: publicKey.export({ type: "spki", format: "pem" }).toString(),
  };
}

/** A positive serial number (the top bit clear), 16 bytes. */
function serialNumber(): string {
  const bytes = randomBytes(16);
  bytes[0] = (bytes[0] ?? 0) & 0x7f;
  return bytes.toString("hex");
}

const ipPattern = /^(\d{1,3}\.){3}\d{1,3}$|:/;

/** Creates a CA and a serving certificate for `hosts` (DNS names or IP addresses), signed by it. */
export function generateCertificate(hosts: readonly string[], nowMs: number): GeneratedCertificate {
  if (hosts.length === 0) throw new Error("generate webhook certificate: no host names given");
  const caKey = rsaKey();
  const caPrivate = forge.pki.privateKeyFromPem(caKey.privatePem);
  const ca = forge.pki.createCertificate();
  ca.publicKey = forge.pki.publicKeyFromPem(caKey.publicPem);
  ca.serialNumber = serialNumber();
  ca.validity.notBefore = new Date(nowMs - 60 * 60 * 1000);
  ca.validity.notAfter = new Date(nowMs + caValidityDays * dayMs);
  const caSubject = [{ name: "commonName", value: "mds-scaler webhook CA" }];
  ca.setSubject(caSubject);
  ca.setIssuer(caSubject);
  ca.setExtensions([
    { name: "basicConstraints", cA: true, critical: true },
    { name: "keyUsage", keyCertSign: true, cRLSign: true, digitalSignature: true, critical: true },
    { name: "subjectKeyIdentifier" },
  ]);
  ca.sign(caPrivate, forge.md.sha256.create());

  const servingKey = rsaKey();
  const serving = forge.pki.createCertificate();
  serving.publicKey = forge.pki.publicKeyFromPem(servingKey.publicPem);
  serving.serialNumber = serialNumber();
  serving.validity.notBefore = new Date(nowMs - 60 * 60 * 1000);
  serving.validity.notAfter = new Date(nowMs + servingValidityDays * dayMs);
  serving.setSubject([{ name: "commonName", value: hosts[0] ?? "" }]);
  serving.setIssuer(caSubject);
  serving.setExtensions([
    { name: "basicConstraints", cA: false, critical: true },
    { name: "keyUsage", digitalSignature: true, keyEncipherment: true, critical: true },
    { name: "extKeyUsage", serverAuth: true },
    // The API server checks the names here, never the common name.
    {
      name: "subjectAltName",
      altNames: hosts.map((h) => (ipPattern.test(h) ? { type: 7, ip: h } : { type: 2, value: h })),
    },
  ]);
  serving.sign(caPrivate, forge.md.sha256.create());
  return {
    certPem: forge.pki.certificateToPem(serving),
    keyPem: servingKey.privatePem,
    caPem: forge.pki.certificateToPem(ca),
  };
}

/** The DNS names a Service `name.namespace.svc` is reached by, plus `extra`. */
export function serviceHosts(service: string, extra: readonly string[]): string[] {
  const hosts: string[] = [];
  if (service !== "") {
    const [name = "", namespace] = service.split(".");
    hosts.push(name);
    if (namespace !== undefined)
      hosts.push(`${name}.${namespace}`, `${name}.${namespace}.svc`, `${name}.${namespace}.svc.cluster.local`);
  }
  for (const h of extra) if (h !== "" && !hosts.includes(h)) hosts.push(h);
  return hosts;
}

/** Why a stored certificate cannot be reused, or undefined when it can. */
export function unusableReason(
  stored: GeneratedCertificate,
  hosts: readonly string[],
  nowMs: number,
): string | undefined {
  try {
    const cert = new X509Certificate(stored.certPem);
    const ca = new X509Certificate(stored.caPem);
    if (!cert.verify(ca.publicKey)) return "the certificate is not signed by the stored CA";
    if (new Date(cert.validTo).getTime() - nowMs < renewBeforeDays * dayMs) return `it expires at ${cert.validTo}`;
    const names = (cert.subjectAltName ?? "").split(",").map((s) => s.trim().replace(/^(DNS:|IP Address:)/, ""));
    const missing = hosts.filter((h) => !names.includes(h));
    if (missing.length > 0) return `it does not cover ${missing.join(", ")}`;
    if (!cert.checkPrivateKey(createPrivateKey(stored.keyPem))) return "the key does not match the certificate";
    return undefined;
  } catch (error) {
    return `it cannot be parsed (${error instanceof Error ? error.message : String(error)})`;
  }
}

function fromSecret(secret: V1Secret): GeneratedCertificate | undefined {
  const data = secret.data ?? {};
  const decode = (key: string): string | undefined =>
    data[key] === undefined ? undefined : Buffer.from(data[key], "base64").toString("utf8");
  const certPem = decode("tls.crt");
  const keyPem = decode("tls.key");
  const caPem = decode("ca.crt");
  return certPem === undefined || keyPem === undefined || caPem === undefined ? undefined : { certPem, keyPem, caPem };
}

function secretBody(namespace: string, name: string, cert: GeneratedCertificate, resourceVersion?: string): V1Secret {
  const b64 = (text: string): string => Buffer.from(text).toString("base64");
  return {
    apiVersion: "v1",
    kind: "Secret",
    type: "kubernetes.io/tls",
    metadata: {
      name,
      namespace,
      ...(resourceVersion === undefined ? {} : { resourceVersion }),
      labels: { "app.kubernetes.io/component": "webhook-certificate" },
    },
    data: { "tls.crt": b64(cert.certPem), "tls.key": b64(cert.keyPem), "ca.crt": b64(cert.caPem) },
  };
}

function code(error: unknown): number | undefined {
  return error instanceof ApiException ? error.code : undefined;
}

export interface CertificateSecretOptions {
  readonly kubeConfig: KubeConfig;
  readonly namespace: string;
  readonly secretName: string;
  readonly hosts: readonly string[];
  readonly timeoutMs: number;
  readonly nowMs: number;
}

/**
 * Returns the certificate every replica shares: the stored one while usable,
 * otherwise a new one written to the Secret. Two replicas starting together
 * race on create or replace; the loser reads and serves the winner's.
 */
export async function ensureCertificateSecret(opts: CertificateSecretOptions): Promise<GeneratedCertificate> {
  const core = opts.kubeConfig.makeApiClient(CoreV1Api);
  const what = `webhook certificate Secret ${opts.namespace}/${opts.secretName}`;
  for (let attempt = 0; attempt < 3; attempt++) {
    let existing: V1Secret | undefined;
    try {
      existing = await core.readNamespacedSecret(
        { namespace: opts.namespace, name: opts.secretName },
        callOptions(opts.timeoutMs),
      );
    } catch (error) {
      if (code(error) !== 404) throw new Error(`read ${what}`, { cause: error });
    }
    const stored = existing === undefined ? undefined : fromSecret(existing);
    if (stored !== undefined && unusableReason(stored, opts.hosts, opts.nowMs) === undefined) return stored;
    const fresh = generateCertificate(opts.hosts, opts.nowMs);
    try {
      if (existing === undefined)
        await core.createNamespacedSecret(
          { namespace: opts.namespace, body: secretBody(opts.namespace, opts.secretName, fresh) },
          callOptions(opts.timeoutMs),
        );
      else
        await core.replaceNamespacedSecret(
          {
            namespace: opts.namespace,
            name: opts.secretName,
            body: secretBody(opts.namespace, opts.secretName, fresh, existing.metadata?.resourceVersion),
          },
          callOptions(opts.timeoutMs),
        );
      return fresh;
    } catch (error) {
      // Another replica wrote first: read again and use its certificate.
      if (code(error) !== 409) throw new Error(`write ${what}`, { cause: error });
    }
  }
  throw new Error(`${what}: kept changing while this replica tried to store its certificate`);
}

export interface CaBundleTargets {
  readonly kubeConfig: KubeConfig;
  readonly validatingConfiguration: string;
  readonly mutatingConfiguration: string;
  readonly caPem: string;
  readonly timeoutMs: number;
}

/** Writes the CA bundle into every webhook of both configurations (an empty name skips one). */
export async function patchCaBundles(opts: CaBundleTargets): Promise<void> {
  const api = opts.kubeConfig.makeApiClient(AdmissionregistrationV1Api);
  const caBundle = Buffer.from(opts.caPem).toString("base64");
  const ops = (webhooks: readonly { name: string; clientConfig: { caBundle?: string } }[]): object[] =>
    webhooks.flatMap((w, i) =>
      w.clientConfig.caBundle === caBundle
        ? []
        : [
            // Fails the patch if the list changed since it was read.
            { op: "test", path: `/webhooks/${i}/name`, value: w.name },
            { op: "add", path: `/webhooks/${i}/clientConfig/caBundle`, value: caBundle },
          ],
    );
  if (opts.validatingConfiguration !== "") {
    const name = opts.validatingConfiguration;
    try {
      const current = await api.readValidatingWebhookConfiguration({ name }, callOptions(opts.timeoutMs));
      const patch = ops(current.webhooks ?? []);
      if (patch.length > 0)
        await api.patchValidatingWebhookConfiguration(
          { name, body: patch },
          callOptions(opts.timeoutMs, "application/json-patch+json"),
        );
    } catch (error) {
      throw new Error(`patch the CA bundle into ValidatingWebhookConfiguration ${name}`, { cause: error });
    }
  }
  if (opts.mutatingConfiguration !== "") {
    const name = opts.mutatingConfiguration;
    try {
      const current = await api.readMutatingWebhookConfiguration({ name }, callOptions(opts.timeoutMs));
      const patch = ops(current.webhooks ?? []);
      if (patch.length > 0)
        await api.patchMutatingWebhookConfiguration(
          { name, body: patch },
          callOptions(opts.timeoutMs, "application/json-patch+json"),
        );
    } catch (error) {
      throw new Error(`patch the CA bundle into MutatingWebhookConfiguration ${name}`, { cause: error });
    }
  }
}

/** Reads `tls.crt` and `tls.key` from a directory (cert-manager's Secret, mounted). */
export async function readCertificateDir(dirPath: string): Promise<ServingCertificate> {
  try {
    const [certPem, keyPem] = await Promise.all([
      readFile(join(dirPath, "tls.crt"), "utf8"),
      readFile(join(dirPath, "tls.key"), "utf8"),
    ]);
    return { certPem, keyPem };
  } catch (error) {
    throw new Error(`read the webhook certificate from ${dirPath}`, { cause: error });
  }
}

/**
 * Re-reads a certificate directory every `intervalMs` and hands a changed
 * certificate to `apply` (cert-manager renews before expiry). Returns a stop function.
 */
export function watchCertificateDir(
  dirPath: string,
  current: ServingCertificate,
  intervalMs: number,
  apply: (next: ServingCertificate) => void,
  onError: (error: unknown) => void,
): () => void {
  let last = current;
  const timer = setInterval(() => {
    readCertificateDir(dirPath).then((next) => {
      if (next.certPem === last.certPem && next.keyPem === last.keyPem) return;
      last = next;
      apply(next);
    }, onError);
  }, intervalMs);
  timer.unref();
  return () => clearInterval(timer);
}
