/**
 * The part of node-forge the webhook certificate generator uses: building and
 * signing X.509 certificates (node:crypto can parse them but not write them).
 */
declare module "node-forge" {
  namespace forge {
    namespace pki {
      interface PublicKey {
        readonly n: unknown;
      }
      interface PrivateKey {
        readonly n: unknown;
        readonly e: unknown;
      }
      interface CertificateField {
        name?: string;
        shortName?: string;
        value: string;
      }
      interface Certificate {
        publicKey: PublicKey;
        serialNumber: string;
        validity: { notBefore: Date; notAfter: Date };
        subject: { attributes: CertificateField[] };
        setSubject(attributes: CertificateField[]): void;
        setIssuer(attributes: CertificateField[]): void;
        setExtensions(extensions: Record<string, unknown>[]): void;
        sign(key: PrivateKey, md: unknown): void;
      }
      function createCertificate(): Certificate;
      function privateKeyFromPem(pem: string): PrivateKey;
      function publicKeyFromPem(pem: string): PublicKey;
      function certificateToPem(cert: Certificate): string;
      function certificateFromPem(pem: string): Certificate;
    }
    namespace md {
      namespace sha256 {
        function create(): unknown;
      }
    }
  }
  export default forge;
}
