import { beforeAll, describe, expect, it } from "vitest";
import { CheckResult } from "../../core/check-result.js";
import { modelOf } from "../../document/testdata/model-kit.js";
import { makeDocument } from "../../fixtures/documents.js";
import { signPdf } from "../../fixtures/signed.js";
import { signaturePdfCheck } from "./signature-pdf.js";
import {
  buildCms,
  buildCrl,
  buildTimestampToken,
  type CmsOptions,
  generateKey,
  issue,
  type KeyType,
  keyIdOf,
  type TestIdentity,
  TIMESTAMPING_EKU,
} from "./testdata/pki-kit.js";

/**
 * signature.pdf against an attacker who has the victim's public certificate (any signed PDF of theirs
 * carries it) but not the victim's key, run with DOCVERIFY_TRUST_ANCHORS set — the deployment where a
 * `corroborated` result ends the detection. None of these may be corroborated. And the algorithms real
 * signers use, signed genuinely: corroborated with the anchor configured, unverified without it.
 * Every key and certificate is generated here (pki-kit.ts).
 */

const now = new Date("2026-01-15T12:00:00Z");

let pdf: Uint8Array;
let root: TestIdentity;
let issuing: TestIdentity;
let victim: TestIdentity;
let tsa: TestIdentity;
let anchors: string;
let attacker: ReturnType<typeof generateKey> & { keyType: KeyType };

beforeAll(async () => {
  pdf = await makeDocument({ seed: 11, docType: "bank_statement", region: "GB", pages: 1 });
  root = issue({ subject: "Docverify Forgery Test Root CA", ca: true });
  issuing = issue({ subject: "Docverify Issuing CA", ca: true, issuer: root });
  victim = issue({ subject: "Pennine Savings Bank Statements", issuer: issuing });
  tsa = issue({
    subject: "Docverify Time Stamping Authority",
    issuer: root,
    extKeyUsage: [TIMESTAMPING_EKU],
  });
  anchors = root.pem;
  attacker = { ...generateKey("rsa"), keyType: "rsa" };
}, 60_000);

async function verdict(bytes: Uint8Array, withAnchors = true) {
  return CheckResult.parse(
    await signaturePdfCheck.run(await modelOf(bytes), {
      now,
      ...(withAnchors ? { trustAnchorsPem: anchors } : {}),
    }),
  );
}
const signed = (cms: (content: Uint8Array) => Uint8Array, base = pdf) =>
  signPdf(base, { cms, signatureLength: 12_000 });
const cmsWith = (o: CmsOptions) => (content: Uint8Array) => buildCms(content, o);
const trustOf = (r: CheckResult) =>
  r.authoritative?.trust ??
  (r.findings.some((f) => f.code === "signature_unverified") ? "unverified" : r.outcome);

describe("forgeries are never corroborated", () => {
  it("attacker key, a self-signed copy of the victim's certificate (same issuer and serial) plus the victim's genuine chain, both orders", async () => {
    const copy = issue({
      subject: victim.cert.subject,
      issuerName: victim.cert.issuer,
      serial: Buffer.from(victim.cert.serialNumber.valueBlock.valueHexView).toString("hex"),
      keys: attacker,
    });
    for (const certificates of [
      [copy, victim, issuing],
      [victim, issuing, copy],
    ]) {
      const r = await verdict(await signed(cmsWith({ signer: attacker, sidOf: copy, certificates })));
      expect(trustOf(r)).toBe("unverified");
      expect(r.authoritative).toBeUndefined();
      const f = r.findings.find((x) => x.code === "signature_unverified");
      expect(f?.message).toMatch(/does not chain to a configured trust anchor/);
      expect(f?.evidence?.serial).toBe(
        Buffer.from(victim.cert.serialNumber.valueBlock.valueHexView).toString("hex"),
      );
    }
  });

  it("attacker key with the signer named by subject key identifier, copied from the victim, both orders", async () => {
    const copy = issue({
      subject: victim.cert.subject,
      subjectKeyId: keyIdOf(victim.publicKey),
      keys: attacker,
    });
    for (const certificates of [
      [copy, victim, issuing],
      [victim, issuing, copy],
    ]) {
      const r = await verdict(
        await signed(cmsWith({ signer: attacker, sidOf: victim, sid: "ski", certificates })),
      );
      expect(trustOf(r)).not.toBe("corroborated");
      expect(trustOf(r)).toBe("unverified");
    }
  });

  it("attacker key with the sid naming the victim's genuine certificate: the signature does not verify, both orders and both sid forms", async () => {
    const own = issue({ subject: "Attacker", keys: attacker });
    for (const sid of ["issuerSerial", "ski"] as const)
      for (const certificates of [
        [own, victim, issuing],
        [victim, issuing, own],
      ]) {
        const r = await verdict(
          await signed(cmsWith({ signer: attacker, sidOf: victim, sid, certificates })),
        );
        expect(r.authoritative?.trust).toBe("unattested");
        expect(r.authoritative?.directive).toMatch(
          /does not verify with the certificate its signer identifier names/,
        );
        expect(r.authoritative?.directive).toMatch(/Pennine Savings Bank Statements/);
      }
  });

  it("an expired signer certificate with a backdated claimed signing time is judged now, and is unverified", async () => {
    const expired = issue({
      subject: "Lapsed Signer Ltd",
      issuer: issuing,
      notBefore: new Date("2020-01-01T00:00:00Z"),
      notAfter: new Date("2022-01-01T00:00:00Z"),
    });
    const r = await verdict(
      await signed(
        cmsWith({
          signer: expired,
          sidOf: expired,
          certificates: [expired, issuing],
          signingTime: new Date("2021-06-01T00:00:00Z"),
        }),
      ),
    );
    expect(trustOf(r)).toBe("unverified");
    const f = r.findings.find((x) => x.code === "signature_unverified");
    expect(f?.message).toMatch(/expired on 2022-01-01/);
    expect(f?.message).toMatch(
      /claims to have signed on 2021-06-01T00:00:00Z, but a claimed time proves nothing/,
    );
    expect(f?.message).toMatch(/judged at the current time \(2026-01-15T12:00:00Z\)/);
    expect(f?.evidence?.timeBasis).toBe("current_time");
  });

  it("a self-signed certificate copying the anchor's subject and key identifier, as the signer and as a fake root", async () => {
    const fakeRoot = issue({
      subject: root.cert.subject,
      ca: true,
      subjectKeyId: keyIdOf(root.publicKey),
      keys: attacker,
    });
    const asSigner = await verdict(
      await signed(cmsWith({ signer: attacker, sidOf: fakeRoot, certificates: [fakeRoot] })),
    );
    expect(trustOf(asSigner)).toBe("unverified");
    const leafKeys = { ...generateKey("rsa"), keyType: "rsa" as const };
    const leaf = issue({ subject: victim.cert.subject, issuer: fakeRoot, keys: leafKeys });
    for (const certificates of [
      [leaf, fakeRoot, root],
      [root, fakeRoot, leaf],
    ]) {
      const r = await verdict(await signed(cmsWith({ signer: leafKeys, sidOf: leaf, certificates })));
      expect(trustOf(r)).toBe("unverified");
    }
  });

  it("a signer revoked according to a CRL the signature itself carries is unverified, not unattested", async () => {
    const revoked = issue({ subject: "Revoked Signer Ltd", issuer: issuing });
    const crl = buildCrl(issuing, [revoked], new Date("2025-01-01T00:00:00Z"));
    const r = await verdict(
      await signed(
        cmsWith({ signer: revoked, sidOf: revoked, certificates: [revoked, issuing], crls: [crl] }),
      ),
    );
    expect(trustOf(r)).toBe("unverified");
    expect(r.findings[0]?.message).toMatch(
      /was revoked on 2025-01-01 \(according to a CRL from "Docverify Issuing CA/,
    );
    // A CRL the issuer did not sign is ignored.
    const forged = buildCrl(
      issue({ subject: "Docverify Issuing CA", ca: true }),
      [victim],
      new Date("2025-01-01T00:00:00Z"),
    );
    const fine = await verdict(
      await signed(
        cmsWith({ signer: victim, sidOf: victim, certificates: [victim, issuing], crls: [forged] }),
      ),
    );
    expect(fine.authoritative?.trust).toBe("corroborated");
  });

  it("a detached signature that also encapsulates content is refused", async () => {
    const r = await verdict(
      await signPdf(pdf, {
        signatureLength: 120_000,
        cms: (content) =>
          buildCms(content, {
            signer: victim,
            sidOf: victim,
            certificates: [victim, issuing],
            encapsulate: true,
          }),
      }),
    );
    expect(r.authoritative?.trust).toBe("unattested");
    expect(r.authoritative?.directive).toMatch(/encapsulates content/);
  });
});

describe("the time basis", () => {
  let expired: TestIdentity;
  beforeAll(() => {
    expired = issue({
      subject: "Lapsed Signer Ltd",
      issuer: issuing,
      notBefore: new Date("2020-01-01T00:00:00Z"),
      notAfter: new Date("2022-01-01T00:00:00Z"),
    });
  });

  it("is a trusted signature timestamp's time when the authority chains to an anchor of the same bundle", async () => {
    const r = await verdict(
      await signed(
        cmsWith({
          signer: expired,
          sidOf: expired,
          certificates: [expired, issuing],
          timestamp: (sig) => buildTimestampToken(sig, tsa, new Date("2021-06-01T00:00:00Z")),
        }),
      ),
    );
    expect(r.authoritative?.trust).toBe("corroborated");
    expect(r.authoritative?.directive).toMatch(
      /signed by Lapsed Signer Ltd \(Docverify Test PKI\) \(judged at 2021-06-01T00:00:00Z, the time its signature timestamp \("Docverify Time Stamping Authority/,
    );
    expect(r.findings[0]?.evidence?.timeBasis).toBe("timestamp");
  });

  it("stays the current time when the timestamp authority is not anchored", async () => {
    const rogueTsa = issue({ subject: "Rogue TSA", extKeyUsage: [TIMESTAMPING_EKU] });
    const r = await verdict(
      await signed(
        cmsWith({
          signer: expired,
          sidOf: expired,
          certificates: [expired, issuing],
          timestamp: (sig) => buildTimestampToken(sig, rogueTsa, new Date("2021-06-01T00:00:00Z")),
        }),
      ),
    );
    expect(trustOf(r)).toBe("unverified");
    expect(r.findings[0]?.message).toMatch(/its signature timestamp from "Rogue TSA.*" is not trusted/);
    expect(r.findings[0]?.message).toMatch(/expired on 2022-01-01/);
  });

  it("is a later trusted document timestamp's time (PAdES-LTA), which covers the signature", async () => {
    const s = await signed(cmsWith({ signer: expired, sidOf: expired, certificates: [expired, issuing] }));
    const stamped = await signPdf(s, {
      docTimestamp: true,
      signatureLength: 12_000,
      cms: (content) => buildTimestampToken(content, tsa, new Date("2021-07-01T00:00:00Z")),
    });
    const r = await verdict(stamped);
    expect(r.authoritative?.trust).toBe("corroborated");
    expect(r.authoritative?.directive).toMatch(
      /judged at 2021-07-01T00:00:00Z, the time a trusted document timestamp/,
    );
    expect(r.findings.map((f) => f.code)).toContain("document_timestamp_valid");
    // The document timestamp is verified too: its bytes are covered.
    const tampered = Buffer.from(stamped);
    const at = tampered.lastIndexOf("/ETSI.RFC3161");
    tampered[at + 2] = tampered[at + 2] === 0x54 ? 0x55 : 0x54;
    expect((await verdict(new Uint8Array(tampered))).authoritative?.trust).toBe("unattested");
  });
});

describe("algorithms real signers use, genuinely signed", () => {
  const KEY_TYPES: KeyType[] = ["rsa", "rsa-pss", "ec-p256", "ec-p384", "ec-p521", "ed25519", "ed448"];
  for (const keyType of KEY_TYPES) {
    it(`${keyType}: corroborated with the anchor, unverified without it`, async () => {
      const ca = issue({ subject: `Docverify ${keyType} Root CA`, ca: true, keyType });
      const leaf = issue({ subject: `Signer ${keyType}`, issuer: ca, keyType });
      const bytes = await signed(cmsWith({ signer: leaf, sidOf: leaf, certificates: [leaf], essCert: leaf }));
      const withAnchor = CheckResult.parse(
        await signaturePdfCheck.run(await modelOf(bytes), { now, trustAnchorsPem: `${anchors}${ca.pem}` }),
      );
      expect(withAnchor.authoritative?.trust, withAnchor.summary).toBe("corroborated");
      expect(withAnchor.authoritative?.directive).toMatch(new RegExp(`signed by Signer ${keyType}`));
      const without = await verdict(bytes, false);
      expect(trustOf(without)).toBe("unverified");
      expect(without.findings[0]?.message).toMatch(/no trust anchors are configured/);
    });
  }

  it("CMS without signed attributes (RSA and Ed25519)", async () => {
    for (const keyType of ["rsa", "ed25519"] as const) {
      const leaf = issue({ subject: `Bare ${keyType}`, issuer: issuing, keyType });
      const r = await verdict(
        await signed(
          cmsWith({ signer: leaf, sidOf: leaf, certificates: [leaf, issuing], signedAttributes: false }),
        ),
      );
      expect(r.authoritative?.trust, r.summary).toBe("corroborated");
    }
  });

  it("a signer identified by subject key identifier is that signer, not another certificate in the blob", async () => {
    const r = await verdict(
      await signed(
        cmsWith({ signer: victim, sidOf: victim, sid: "ski", certificates: [root, issuing, victim] }),
      ),
    );
    expect(r.authoritative?.trust).toBe("corroborated");
    expect(r.authoritative?.directive).toMatch(/^Corroborated: signed by Pennine Savings Bank Statements/);
    expect(r.findings[0]?.evidence?.path).toEqual([
      "Pennine Savings Bank Statements",
      "Docverify Issuing CA",
      "Docverify Forgery Test Root CA",
    ]);
  });

  it("refuses digest and scheme combinations the scheme forbids, and does not trust SHA-1", async () => {
    const ed = issue({ subject: "Ed25519 Signer", issuer: issuing, keyType: "ed25519" });
    const bad = await verdict(
      await signed(cmsWith({ signer: ed, sidOf: ed, certificates: [ed, issuing], digest: "sha256" })),
    );
    expect(bad.authoritative?.trust).toBe("unattested");
    expect(bad.authoritative?.directive).toMatch(
      /Ed25519 requires SHA-512 as the CMS digest algorithm \(RFC 8419\)/,
    );
    const sha1 = await verdict(
      await signed(
        cmsWith({ signer: victim, sidOf: victim, certificates: [victim, issuing], digest: "sha1" }),
      ),
    );
    expect(trustOf(sha1)).toBe("unverified");
    expect(sha1.findings[0]?.message).toMatch(/relies on SHA-1/);
  });
});
