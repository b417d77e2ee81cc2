/**
 * The certificate's life, step by step: at no step does the bundle the API
 * server trusts miss the CA of the certificate being served.
 */
import { X509Certificate } from "node:crypto";
import { describe, expect, it } from "vitest";
import {
  generateCa,
  issueServing,
  nextCertificateStep,
  splitPem,
  type StoredCertificates,
} from "../../../src/adapters/webhook/certificates.js";

const hosts = ["mds.mds-system.svc", "127.0.0.1"];
const dayMs = 24 * 60 * 60 * 1000;
const now = Date.UTC(2026, 10, 30);

function written(step: ReturnType<typeof nextCertificateStep>): StoredCertificates {
  if (step.kind !== "write") throw new Error("expected a write");
  return step.next;
}

/** The bundle trusts the served certificate. */
function trusted(stored: StoredCertificates): boolean {
  const serving = new X509Certificate(stored.serving?.certPem ?? "");
  return splitPem(stored.bundlePem).some((pem) => serving.verify(new X509Certificate(pem).publicKey));
}

describe("nextCertificateStep", () => {
  it("starts with a CA, a bundle of that CA and a serving certificate it signed, then keeps them", () => {
    const first = written(nextCertificateStep(undefined, hosts, now, false));
    expect(splitPem(first.bundlePem)).toHaveLength(1);
    expect(trusted(first)).toBe(true);
    expect(nextCertificateStep(first, hosts, now + dayMs, true)).toEqual({ kind: "keep" });
  });

  it("rotates a CA near expiry in two steps, serving a trusted certificate at each", () => {
    // A CA with 200 days left: inside the 365-day renewal window.
    const oldCa = generateCa(now, 200);
    const stored: StoredCertificates = {
      ca: oldCa,
      bundlePem: oldCa.certPem.trim(),
      serving: issueServing(oldCa, hosts, now),
    };
    const phase1 = nextCertificateStep(stored, hosts, now, true);
    expect(phase1.kind === "write" && phase1.reason).toContain("a new CA joins the bundle");
    const joined = written(phase1);
    expect(splitPem(joined.bundlePem)).toHaveLength(2);
    expect(joined.serving).toEqual(stored.serving);
    expect(trusted(joined)).toBe(true);
    // Until the API server has held both CAs for a while, the old certificate stays.
    expect(nextCertificateStep(joined, hosts, now, false)).toEqual({ kind: "keep" });
    const switched = written(nextCertificateStep(joined, hosts, now, true));
    expect(switched.bundlePem).toBe(joined.bundlePem);
    expect(
      new X509Certificate(switched.serving?.certPem ?? "").verify(
        new X509Certificate(joined.ca?.certPem ?? "").publicKey,
      ),
    ).toBe(true);
    expect(trusted(switched)).toBe(true);
    expect(nextCertificateStep(switched, hosts, now, true)).toEqual({ kind: "keep" });
  });

  it("renews a serving certificate near expiry with the same CA, leaving the bundle alone", () => {
    const ca = generateCa(now);
    const stored: StoredCertificates = {
      ca,
      bundlePem: ca.certPem.trim(),
      serving: issueServing(ca, hosts, now - 700 * dayMs),
    };
    const renewed = written(nextCertificateStep(stored, hosts, now, false));
    expect(renewed.bundlePem).toBe(stored.bundlePem);
    expect(renewed.serving?.certPem).not.toBe(stored.serving?.certPem);
    expect(trusted(renewed)).toBe(true);
  });

  it("takes over a Secret without a CA key (written before rotation existed, or emptied to rotate) without an outage", () => {
    const legacyCa = generateCa(now);
    const legacy: StoredCertificates = {
      bundlePem: legacyCa.certPem.trim(),
      serving: issueServing(legacyCa, hosts, now),
    };
    const joined = written(nextCertificateStep(legacy, hosts, now, true));
    expect(splitPem(joined.bundlePem)).toContain(legacyCa.certPem.trim());
    expect(joined.serving).toEqual(legacy.serving);
    expect(joined.ca?.certPem).not.toBe(legacyCa.certPem);
  });

  it("reissues at once when nothing trusted is served", () => {
    const ca = generateCa(now);
    const other = generateCa(now);
    const stored: StoredCertificates = { ca, bundlePem: ca.certPem.trim(), serving: issueServing(other, hosts, now) };
    const step = nextCertificateStep(stored, hosts, now, false);
    expect(step.kind === "write" && step.reason).toContain("no CA of the bundle signed the certificate");
    expect(trusted(written(step))).toBe(true);
  });
});
