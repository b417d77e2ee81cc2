import { execFile } from "node:child_process";
import { readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { promisify } from "node:util";

const execFileAsync = promisify(execFile);
const opensslTimeoutMs = 15_000;
// Certificates only have to outlive one test run; a short life keeps leaked
// files harmless.
const validityDays = 2;

export interface CertificateAuthority {
  name: string;
  certPath: string;
  keyPath: string;
  certPem: string;
}

export interface IssuedCertificate {
  certPath: string;
  keyPath: string;
  certPem: string;
  keyPem: string;
}

export interface CertificateRequest {
  commonName: string;
  organizations?: readonly string[];
  dnsNames?: readonly string[];
  ipAddresses?: readonly string[];
  usage: "server" | "client";
}

export interface SigningKeyPair {
  privateKeyPath: string;
  publicKeyPath: string;
}

async function openssl(args: readonly string[], what: string): Promise<void> {
  try {
    await execFileAsync("openssl", args, { timeout: opensslTimeoutMs });
  } catch (cause) {
    const hint =
      (cause as NodeJS.ErrnoException).code === "ENOENT"
        ? " (the openssl CLI is missing: apt-get install -y openssl)"
        : "";
    throw new Error(`openssl ${what}${hint}`, { cause });
  }
}

function extensionArgs(extensions: readonly string[]): string[] {
  return extensions.flatMap((extension) => ["-addext", extension]);
}

function subjectComponent(value: string): string {
  // `-subj` uses '/' and '+' as separators; names in tests never need them.
  if (/[/+\\=]/.test(value)) throw new Error(`certificate subject part not supported: ${JSON.stringify(value)}`);
  return value;
}

/**
 * A throw-away PKI in one directory, driven through the openssl CLI. EC P-256
 * keys keep generation in the milliseconds.
 */
export class Pki {
  private readonly configPath: string;

  private constructor(private readonly dirPath: string) {
    this.configPath = join(dirPath, "openssl-min.cnf");
  }

  static async create(dirPath: string): Promise<Pki> {
    const pki = new Pki(dirPath);
    // A minimal config so the system's openssl.cnf defaults cannot add or
    // duplicate extensions.
    await writeFile(pki.configPath, "[req]\ndistinguished_name=dn\nprompt=no\n[dn]\n");
    return pki;
  }

  async createCa(name: string): Promise<CertificateAuthority> {
    const certPath = join(this.dirPath, `${name}.crt`);
    const keyPath = join(this.dirPath, `${name}.key`);
    const args = [
      ...this.newCertArgs(keyPath, certPath, `/CN=${subjectComponent(name)}`),
      ...extensionArgs([
        "basicConstraints=critical,CA:TRUE",
        "keyUsage=critical,keyCertSign,cRLSign,digitalSignature",
        "subjectKeyIdentifier=hash",
      ]),
    ];
    await openssl(["req", "-x509", ...args], `create CA ${name}`);
    return { name, certPath, keyPath, certPem: await readFile(certPath, "utf8") };
  }

  async issue(ca: CertificateAuthority, fileName: string, request: CertificateRequest): Promise<IssuedCertificate> {
    const certPath = join(this.dirPath, `${fileName}.crt`);
    const keyPath = join(this.dirPath, `${fileName}.key`);
    const subject =
      (request.organizations ?? []).map((org) => `/O=${subjectComponent(org)}`).join("") +
      `/CN=${subjectComponent(request.commonName)}`;
    const altNames = [
      ...(request.dnsNames ?? []).map((name) => `DNS:${name}`),
      ...(request.ipAddresses ?? []).map((ip) => `IP:${ip}`),
    ];
    const args = [
      ...this.newCertArgs(keyPath, certPath, subject),
      ...["-CA", ca.certPath, "-CAkey", ca.keyPath],
      ...extensionArgs([
        "basicConstraints=critical,CA:FALSE",
        "keyUsage=critical,digitalSignature",
        `extendedKeyUsage=${request.usage === "server" ? "serverAuth" : "clientAuth"}`,
        "authorityKeyIdentifier=keyid",
        ...(altNames.length > 0 ? [`subjectAltName=${altNames.join(",")}`] : []),
      ]),
    ];
    await openssl(["req", ...args], `issue ${fileName} from ${ca.name}`);
    const [certPem, keyPem] = await Promise.all([readFile(certPath, "utf8"), readFile(keyPath, "utf8")]);
    return { certPath, keyPath, certPem, keyPem };
  }

  /** A new P-256 key and a certificate for it (self-signed unless -CA follows). */
  private newCertArgs(keyPath: string, certPath: string, subject: string): string[] {
    return [
      ...["-config", this.configPath, "-new", "-nodes", "-subj", subject],
      ...["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256"],
      ...["-keyout", keyPath, "-out", certPath, "-days", String(validityDays)],
    ];
  }

  async createSigningKeyPair(name: string): Promise<SigningKeyPair> {
    const privateKeyPath = join(this.dirPath, `${name}.key`);
    const publicKeyPath = join(this.dirPath, `${name}.pub`);
    await openssl(
      ["genpkey", "-algorithm", "EC", "-pkeyopt", "ec_paramgen_curve:P-256", "-out", privateKeyPath],
      `create key ${name}`,
    );
    await openssl(["pkey", "-in", privateKeyPath, "-pubout", "-out", publicKeyPath], `public key of ${name}`);
    return { privateKeyPath, publicKeyPath };
  }
}
