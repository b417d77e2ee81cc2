/**
 * The webhook's serving certificate, from one of two sources:
 *
 * - generated: a CA and a serving certificate for the webhook Service's names,
 *   kept in a `kubernetes.io/tls` Secret so every replica serves the same one,
 *   renewed and rotated by `CertificateKeeper` without a moment in which the
 *   API server does not trust what a replica serves, with the CA bundle
 *   patched into the webhook configurations and the APIService;
 * - supplied: `tls.crt` and `tls.key` in a directory (cert-manager mounts its
 *   Secret there and injects the CA bundle itself), re-read when they change.
 */
import { X509Certificate, createPrivateKey, generateKeyPairSync, randomBytes } from "node:crypto";
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import {
  AdmissionregistrationV1Api,
  ApiException,
  ApiregistrationV1Api,
  CoreV1Api,
  type KubeConfig,
  type V1Secret,
} from "@kubernetes/client-node";
import forge from "node-forge";
import { patchApiServiceCaBundle } from "../external-metrics/api-service.js";
import { callOptions } from "../kubernetes/call-options.js";
import type { ServingCertificate } from "./server.js";

export interface GeneratedCertificate extends ServingCertificate {
  readonly caPem: string;
}

/** A certificate and its private key, PEM. */
export interface KeyPair {
  readonly certPem: string;
  readonly keyPem: string;
}

const caValidityDays = 3650;
const servingValidityDays = 730;
/** A serving certificate this close to expiry is replaced. */
const renewBeforeDays = 90;
/** A CA this close to expiry is replaced, in two steps (see nextCertificateStep). */
const caRenewBeforeDays = 365;
const dayMs = 24 * 60 * 60 * 1000;
const caSubject = [{ name: "commonName", value: "mds-scaler webhook CA" }];

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

/** A self-signed CA valid for `validityDays` (10 years by default). */
export function generateCa(nowMs: number, validityDays = caValidityDays): KeyPair {
  const key = rsaKey();
  const ca = forge.pki.createCertificate();
  ca.publicKey = forge.pki.publicKeyFromPem(key.publicPem);
  ca.serialNumber = serialNumber();
  ca.validity.notBefore = new Date(nowMs - 60 * 60 * 1000);
  ca.validity.notAfter = new Date(nowMs + validityDays * dayMs);
  // The serial in the name tells two generations of the CA apart in a bundle.
  const subject = [...caSubject, { name: "serialNumber", value: ca.serialNumber }];
  ca.setSubject(subject);
  ca.setIssuer(subject);
  ca.setExtensions([
    { name: "basicConstraints", cA: true, critical: true },
    { name: "keyUsage", keyCertSign: true, cRLSign: true, digitalSignature: true, critical: true },
    { name: "subjectKeyIdentifier" },
  ]);
  ca.sign(forge.pki.privateKeyFromPem(key.privatePem), forge.md.sha256.create());
  return { certPem: forge.pki.certificateToPem(ca), keyPem: key.privatePem };
}

/** A serving certificate for `hosts` (DNS names or IP addresses), signed by `ca`, never outliving it. */
export function issueServing(ca: KeyPair, hosts: readonly string[], nowMs: number): KeyPair {
  if (hosts.length === 0) throw new Error("generate webhook certificate: no host names given");
  const caCert = forge.pki.certificateFromPem(ca.certPem);
  const key = rsaKey();
  const serving = forge.pki.createCertificate();
  serving.publicKey = forge.pki.publicKeyFromPem(key.publicPem);
  serving.serialNumber = serialNumber();
  serving.validity.notBefore = new Date(nowMs - 60 * 60 * 1000);
  serving.validity.notAfter = new Date(
    Math.min(nowMs + servingValidityDays * dayMs, caCert.validity.notAfter.getTime()),
  );
  serving.setSubject([{ name: "commonName", value: hosts[0] ?? "" }]);
  serving.setIssuer(caCert.subject.attributes);
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
  serving.sign(forge.pki.privateKeyFromPem(ca.keyPem), forge.md.sha256.create());
  return { certPem: forge.pki.certificateToPem(serving), keyPem: key.privatePem };
}

/** Creates a CA and a serving certificate for `hosts`, signed by it. */
export function generateCertificate(hosts: readonly string[], nowMs: number): GeneratedCertificate {
  const ca = generateCa(nowMs);
  return { ...issueServing(ca, hosts, nowMs), caPem: ca.certPem };
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

/** What the Secret holds: the signing CA, the CAs the API server trusts, the serving certificate. */
export interface StoredCertificates {
  /** Absent in a Secret written before the CA key was kept (or when removed to rotate the CA). */
  readonly ca?: KeyPair;
  /** Every CA the API server must trust: the signing CA, and during a change the previous one. */
  readonly bundlePem: string;
  readonly serving?: KeyPair;
}

/** One bundle of PEM blocks, in a canonical form so equal bundles compare equal. */
function joinPem(blocks: readonly string[]): string {
  return blocks.map((b) => b.trim()).join("\n");
}

/** The PEM blocks of a bundle. */
export function splitPem(bundlePem: string): string[] {
  return bundlePem.match(/-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----/g) ?? [];
}

function expiresAtMs(cert: X509Certificate): number {
  return new Date(cert.validTo).getTime();
}

/** Why a CA cannot keep signing, or undefined when it can. */
function caUnusableReason(ca: KeyPair | undefined, nowMs: number): string | undefined {
  if (ca === undefined) return "no CA key is stored";
  try {
    const cert = new X509Certificate(ca.certPem);
    if (!cert.ca) return "the stored CA is not a CA certificate";
    if (!cert.checkPrivateKey(createPrivateKey(ca.keyPem))) return "the CA key does not match the CA certificate";
    if (expiresAtMs(cert) - nowMs < caRenewBeforeDays * dayMs) return `the CA expires at ${cert.validTo}`;
    return undefined;
  } catch (error) {
    return `the CA cannot be parsed (${error instanceof Error ? error.message : String(error)})`;
  }
}

/** The CA in `bundle` that signed `serving`, when there is one. */
function signerIn(serving: X509Certificate, bundle: readonly string[]): string | undefined {
  return bundle.find((pem) => {
    try {
      return serving.verify(new X509Certificate(pem).publicKey);
    } catch {
      return false;
    }
  });
}

/** Why a serving certificate cannot be served, or undefined when it can. */
export function servingUnusableReason(
  serving: KeyPair | undefined,
  bundlePem: string,
  hosts: readonly string[],
  nowMs: number,
): string | undefined {
  if (serving === undefined) return "no serving certificate is stored";
  try {
    const cert = new X509Certificate(serving.certPem);
    if (signerIn(cert, splitPem(bundlePem)) === undefined) return "no CA of the bundle signed the certificate";
    if (expiresAtMs(cert) - nowMs < renewBeforeDays * dayMs) return `it expires at ${cert.validTo}`;
    const names = (cert.subjectAltName ?? "").split(",").map((s) => s.trim().replace(/^(DNS:|IP Address:)/, ""));
    const missing = hosts.filter((h) => !names.includes(h));
    if (missing.length > 0) return `it does not cover ${missing.join(", ")}`;
    if (!cert.checkPrivateKey(createPrivateKey(serving.keyPem))) return "the key does not match the certificate";
    return undefined;
  } catch (error) {
    return `it cannot be parsed (${error instanceof Error ? error.message : String(error)})`;
  }
}

export type CertificateStep =
  { readonly kind: "keep" } | { readonly kind: "write"; readonly next: StoredCertificates; readonly reason: string };

/** The bundle's certificates that parse and have not expired. */
function unexpiredBundle(bundlePem: string, nowMs: number): string[] {
  return splitPem(bundlePem).filter((pem) => {
    try {
      return expiresAtMs(new X509Certificate(pem)) > nowMs;
    } catch {
      return false;
    }
  });
}

/** A CA that cannot sign any more is replaced: in one step when nothing trusted is served, else beside the current one. */
function newCaStep(
  stored: StoredCertificates | undefined,
  bundle: readonly string[],
  hosts: readonly string[],
  nowMs: number,
  caReason: string,
  servingReason: string | undefined,
): CertificateStep {
  const ca = generateCa(nowMs);
  if (servingReason !== undefined || stored?.serving === undefined) {
    // Nothing trusted is being served: start over in one step.
    return {
      kind: "write",
      next: { ca, bundlePem: joinPem([ca.certPem]), serving: issueServing(ca, hosts, nowMs) },
      reason: `${caReason}, and ${servingReason ?? "no serving certificate is stored"}`,
    };
  }
  const signer = signerIn(new X509Certificate(stored.serving.certPem), bundle) ?? "";
  return {
    kind: "write",
    next: { ca, bundlePem: joinPem([signer, ca.certPem]), serving: stored.serving },
    reason: `${caReason}: a new CA joins the bundle; the current certificate is served until the bundle is in place`,
  };
}

/**
 * The next step of the certificate's life, so that no step leaves a replica
 * serving a certificate the API server does not trust:
 *
 * 1. A new CA (none stored, no key, near expiry) joins the bundle beside the
 *    CA that signed the served certificate, which keeps being served.
 * 2. Once the API server has held that bundle for a while (`bundleSettled`),
 *    a serving certificate signed by the new CA replaces it.
 * 3. A serving certificate near expiry, or not covering the names, is
 *    reissued by the same CA: the bundle does not change at all.
 *
 * The previous CA leaves the bundle at the next CA change, or when it expires.
 */
export function nextCertificateStep(
  stored: StoredCertificates | undefined,
  hosts: readonly string[],
  nowMs: number,
  bundleSettled: boolean,
): CertificateStep {
  const bundle = unexpiredBundle(stored?.bundlePem ?? "", nowMs);
  const servingReason = servingUnusableReason(stored?.serving, bundle.join("\n"), hosts, nowMs);
  const caReason = caUnusableReason(stored?.ca, nowMs);
  if (caReason !== undefined) return newCaStep(stored, bundle, hosts, nowMs, caReason, servingReason);
  const ca = stored?.ca as KeyPair;
  const withCa = bundle.includes(ca.certPem.trim()) ? bundle : [...bundle, ca.certPem.trim()];
  if (servingReason !== undefined)
    return {
      kind: "write",
      next: { ca, bundlePem: joinPem(withCa), serving: issueServing(ca, hosts, nowMs) },
      reason: `the serving certificate is replaced: ${servingReason}`,
    };
  const signedByCa = new X509Certificate(stored?.serving?.certPem ?? "").verify(
    new X509Certificate(ca.certPem).publicKey,
  );
  if (!signedByCa && bundleSettled)
    return {
      kind: "write",
      next: { ca, bundlePem: joinPem(withCa), serving: issueServing(ca, hosts, nowMs) },
      reason: "the API server trusts the new CA: its serving certificate replaces the previous CA's",
    };
  if (joinPem(withCa) !== (stored?.bundlePem ?? "").trim())
    return {
      kind: "write",
      next: { ...stored, ca, bundlePem: joinPem(withCa) },
      reason: "expired CAs leave the bundle",
    };
  return { kind: "keep" };
}

const secretKeys = { cert: "tls.crt", key: "tls.key", ca: "ca.crt", caKey: "ca.key", bundle: "ca-bundle.crt" } as const;

function fromSecret(secret: V1Secret): StoredCertificates {
  const data = secret.data ?? {};
  const decode = (key: string): string | undefined =>
    data[key] === undefined ? undefined : Buffer.from(data[key], "base64").toString("utf8");
  const certPem = decode(secretKeys.cert);
  const keyPem = decode(secretKeys.key);
  const caPem = decode(secretKeys.ca);
  const caKeyPem = decode(secretKeys.caKey);
  return {
    ...(caPem === undefined || caKeyPem === undefined ? {} : { ca: { certPem: caPem, keyPem: caKeyPem } }),
    // A Secret from before the bundle was kept: its CA is the bundle.
    bundlePem: (decode(secretKeys.bundle) ?? caPem ?? "").trim(),
    ...(certPem === undefined || keyPem === undefined ? {} : { serving: { certPem, keyPem } }),
  };
}

function secretBody(namespace: string, name: string, stored: StoredCertificates, resourceVersion?: string): V1Secret {
  const b64 = (text: string): string => Buffer.from(text).toString("base64");
  const data: Record<string, string> = { [secretKeys.bundle]: b64(stored.bundlePem) };
  if (stored.serving !== undefined) {
    data[secretKeys.cert] = b64(stored.serving.certPem);
    data[secretKeys.key] = b64(stored.serving.keyPem);
  }
  if (stored.ca !== undefined) {
    data[secretKeys.ca] = b64(stored.ca.certPem);
    data[secretKeys.caKey] = b64(stored.ca.keyPem);
  }
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
    data,
  };
}

function code(error: unknown): number | undefined {
  return error instanceof ApiException ? error.code : undefined;
}

export interface CertificateKeeperOptions {
  readonly kubeConfig: KubeConfig;
  readonly namespace: string;
  readonly secretName: string;
  readonly hosts: readonly string[];
  readonly timeoutMs: number;
  /** Configurations and APIService that receive the bundle; an empty name skips one. */
  readonly validatingConfiguration: string;
  readonly mutatingConfiguration: string;
  readonly apiService: string;
  /** How long the API server must have held a bundle before a certificate from its new CA is served. */
  readonly settleMs: number;
  readonly onStep?: (reason: string) => void;
}

/**
 * Keeps the shared certificate Secret and the CA bundles in step. Every
 * replica runs one pass at start and one per interval: it reads the Secret,
 * takes the next step of `nextCertificateStep` (writes are guarded by
 * resourceVersion, so of two replicas one wins and the other reads its
 * result), writes the bundle where the API server reads it, and returns the
 * certificate to serve.
 */
export class CertificateKeeper {
  private readonly core: CoreV1Api;
  private readonly admission: AdmissionregistrationV1Api;
  private readonly registration: ApiregistrationV1Api;
  /** The bundle the API server was last seen holding everywhere, and since when. */
  private settled: { readonly bundle: string; readonly sinceMs: number } | undefined;

  constructor(private readonly opts: CertificateKeeperOptions) {
    this.core = opts.kubeConfig.makeApiClient(CoreV1Api);
    this.admission = opts.kubeConfig.makeApiClient(AdmissionregistrationV1Api);
    this.registration = opts.kubeConfig.makeApiClient(ApiregistrationV1Api);
  }

  private get what(): string {
    return `webhook certificate Secret ${this.opts.namespace}/${this.opts.secretName}`;
  }

  async pass(nowMs: number): Promise<ServingCertificate> {
    const { opts } = this;
    for (let attempt = 0; attempt < 3; attempt++) {
      let existing: V1Secret | undefined;
      try {
        existing = await this.core.readNamespacedSecret(
          { namespace: opts.namespace, name: opts.secretName },
          callOptions(opts.timeoutMs),
        );
      } catch (error) {
        if (code(error) !== 404) throw new Error(`read ${this.what}`, { cause: error });
      }
      const stored = existing === undefined ? undefined : fromSecret(existing);
      const settled = stored !== undefined && (await this.bundleSettled(stored.bundlePem, nowMs));
      const step = nextCertificateStep(stored, opts.hosts, nowMs, settled);
      let current = stored;
      if (step.kind === "write") {
        try {
          const body = secretBody(opts.namespace, opts.secretName, step.next, existing?.metadata?.resourceVersion);
          if (existing === undefined)
            await this.core.createNamespacedSecret({ namespace: opts.namespace, body }, callOptions(opts.timeoutMs));
          else
            await this.core.replaceNamespacedSecret(
              { namespace: opts.namespace, name: opts.secretName, body },
              callOptions(opts.timeoutMs),
            );
          opts.onStep?.(step.reason);
          current = step.next;
        } catch (error) {
          // Another replica wrote first: read again and follow its step.
          if (code(error) === 409) continue;
          throw new Error(`write ${this.what}`, { cause: error });
        }
      }
      if (current?.serving === undefined) throw new Error(`${this.what} holds no serving certificate`);
      await this.writeBundles(current.bundlePem);
      return current.serving;
    }
    throw new Error(`${this.what}: kept changing while this replica tried to store its certificate`);
  }

  /** True once every configuration has held `bundlePem` for `settleMs`, as this replica saw it. */
  private async bundleSettled(bundlePem: string, nowMs: number): Promise<boolean> {
    const wanted = Buffer.from(bundlePem).toString("base64");
    const held = await this.heldBundles();
    if (held.some((b) => b !== wanted)) {
      this.settled = undefined;
      return false;
    }
    if (this.settled?.bundle !== wanted) this.settled = { bundle: wanted, sinceMs: nowMs };
    return nowMs - this.settled.sinceMs >= this.opts.settleMs;
  }

  private async heldBundles(): Promise<string[]> {
    const { opts } = this;
    const held: string[] = [];
    const call = callOptions(opts.timeoutMs);
    if (opts.validatingConfiguration !== "")
      for (const w of (
        await this.admission.readValidatingWebhookConfiguration({ name: opts.validatingConfiguration }, call)
      ).webhooks ?? [])
        held.push(w.clientConfig.caBundle ?? "");
    if (opts.mutatingConfiguration !== "")
      for (const w of (
        await this.admission.readMutatingWebhookConfiguration({ name: opts.mutatingConfiguration }, call)
      ).webhooks ?? [])
        held.push(w.clientConfig.caBundle ?? "");
    if (opts.apiService !== "")
      held.push((await this.registration.readAPIService({ name: opts.apiService }, call)).spec?.caBundle ?? "");
    return held;
  }

  private async writeBundles(bundlePem: string): Promise<void> {
    const { opts } = this;
    await patchCaBundles({
      kubeConfig: opts.kubeConfig,
      validatingConfiguration: opts.validatingConfiguration,
      mutatingConfiguration: opts.mutatingConfiguration,
      caPem: bundlePem,
      timeoutMs: opts.timeoutMs,
    });
    if (opts.apiService !== "")
      await patchApiServiceCaBundle({
        kubeConfig: opts.kubeConfig,
        name: opts.apiService,
        caPem: bundlePem,
        timeoutMs: opts.timeoutMs,
      });
  }
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
  // Each configuration is read, then patched only where a webhook's bundle differs.
  const configurations = [
    {
      kind: "ValidatingWebhookConfiguration",
      name: opts.validatingConfiguration,
      read: (name: string) => api.readValidatingWebhookConfiguration({ name }, callOptions(opts.timeoutMs)),
      patch: (name: string, body: object[]) =>
        api.patchValidatingWebhookConfiguration(
          { name, body },
          callOptions(opts.timeoutMs, "application/json-patch+json"),
        ),
    },
    {
      kind: "MutatingWebhookConfiguration",
      name: opts.mutatingConfiguration,
      read: (name: string) => api.readMutatingWebhookConfiguration({ name }, callOptions(opts.timeoutMs)),
      patch: (name: string, body: object[]) =>
        api.patchMutatingWebhookConfiguration(
          { name, body },
          callOptions(opts.timeoutMs, "application/json-patch+json"),
        ),
    },
  ];
  for (const { kind, name, read, patch } of configurations) {
    if (name === "") continue;
    try {
      const body = ops((await read(name)).webhooks ?? []);
      if (body.length > 0) await patch(name, body);
    } catch (error) {
      throw new Error(`patch the CA bundle into ${kind} ${name}`, { cause: error });
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
