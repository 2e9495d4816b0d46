import { createHash, webcrypto } from "node:crypto";
import * as asn1js from "asn1js";
import * as pkijs from "pkijs";

/**
 * Verifies a PDF signature's CMS/PKCS#7 blob over the bytes its /ByteRange names, with pkijs and asn1js
 * (no hand-written ASN.1): the message digest in the signed attributes against the signed bytes, the
 * signer's signature over those attributes, and the signer's certificate chain to a set of trust anchors.
 * Never throws for bad input: every failure is a result with a reason a reviewer can read.
 */

pkijs.setEngine(
  "docverify-node",
  new pkijs.CryptoEngine({
    name: "node",
    crypto: webcrypto as unknown as pkijs.CryptoEngineParameters["crypto"],
  }),
);

const OID = {
  signedData: "1.2.840.113549.1.7.2",
  messageDigest: "1.2.840.113549.1.9.4",
  signingTime: "1.2.840.113549.1.9.5",
  commonName: "2.5.4.3",
  organization: "2.5.4.10",
} as const;

const HASHES: Record<string, string> = {
  "1.3.14.3.2.26": "sha1",
  "2.16.840.1.101.3.4.2.1": "sha256",
  "2.16.840.1.101.3.4.2.2": "sha384",
  "2.16.840.1.101.3.4.2.3": "sha512",
  "2.16.840.1.101.3.4.2.4": "sha224",
};

export interface CmsVerification {
  /** The blob parsed as CMS SignedData. */
  parsed: boolean;
  digestAlgorithm?: string;
  /** The signed bytes hash to the digest the signer signed. */
  digestMatches?: boolean;
  /** The signer's signature over the signed attributes checks out with the signer's certificate. */
  signatureValid?: boolean;
  signer?: { commonName: string; organization?: string; issuer: string; serial: string };
  /** signingTime from the signed attributes (claimed by the signer). */
  signingTime?: Date;
  chain?: { trusted: boolean; reason: string };
  /** Why verification failed, as a sentence fragment ("the CMS blob is not valid DER"). */
  failure?: string;
}

function nameOf(name: pkijs.RelativeDistinguishedNames, oid: string): string | undefined {
  const tv = name.typesAndValues.find((t) => t.type === oid);
  const v = tv?.value.valueBlock as { value?: unknown } | undefined;
  return typeof v?.value === "string" ? v.value : undefined;
}

export function parsePemCertificates(pem: string): { certs: pkijs.Certificate[]; errors: number } {
  const certs: pkijs.Certificate[] = [];
  let errors = 0;
  for (const m of pem.matchAll(/-----BEGIN CERTIFICATE-----([\s\S]*?)-----END CERTIFICATE-----/g)) {
    try {
      const der = Buffer.from((m[1] as string).replace(/\s+/g, ""), "base64");
      const asn = asn1js.fromBER(new Uint8Array(der));
      if (asn.offset === -1) throw new Error("bad DER");
      certs.push(new pkijs.Certificate({ schema: asn.result }));
    } catch {
      errors++;
    }
  }
  return { certs, errors };
}

const toArrayBuffer = (b: Uint8Array): ArrayBuffer =>
  b.buffer.slice(b.byteOffset, b.byteOffset + b.byteLength) as ArrayBuffer;

export async function verifyCms(
  der: Uint8Array,
  signed: Uint8Array,
  opts: { subFilter?: string; trustAnchors: pkijs.Certificate[]; now: Date },
): Promise<CmsVerification> {
  const out: CmsVerification = { parsed: false };
  let sd: pkijs.SignedData;
  try {
    const asn = asn1js.fromBER(toArrayBuffer(der));
    if (asn.offset === -1)
      return { ...out, failure: "the signature's /Contents is not valid DER-encoded CMS" };
    const ci = new pkijs.ContentInfo({ schema: asn.result });
    if (ci.contentType !== OID.signedData) {
      return {
        ...out,
        failure: `the signature's CMS blob is not SignedData (content type ${ci.contentType})`,
      };
    }
    sd = new pkijs.SignedData({ schema: ci.content });
  } catch (err) {
    return {
      ...out,
      failure: `the signature's CMS blob cannot be parsed (${err instanceof Error ? err.message : String(err)})`,
    };
  }
  out.parsed = true;
  const si = sd.signerInfos[0];
  if (!si) return { ...out, failure: "the CMS blob names no signer" };
  const hash = HASHES[si.digestAlgorithm.algorithmId];
  if (!hash)
    return {
      ...out,
      failure: `the signer used an unsupported digest algorithm (${si.digestAlgorithm.algorithmId})`,
    };
  out.digestAlgorithm = hash;

  const certs = (sd.certificates ?? []).filter((c): c is pkijs.Certificate => c instanceof pkijs.Certificate);
  const sid = si.sid;
  const signerCert =
    certs.find((c) =>
      sid instanceof pkijs.IssuerAndSerialNumber
        ? c.issuer.isEqual(sid.issuer) && c.serialNumber.isEqual(sid.serialNumber)
        : false,
    ) ?? certs[0];
  if (signerCert) {
    out.signer = {
      commonName: nameOf(signerCert.subject, OID.commonName) ?? "(no common name)",
      ...(nameOf(signerCert.subject, OID.organization)
        ? { organization: nameOf(signerCert.subject, OID.organization) }
        : {}),
      issuer: nameOf(signerCert.issuer, OID.commonName) ?? "(no common name)",
      serial: Buffer.from(signerCert.serialNumber.valueBlock.valueHexView).toString("hex"),
    };
  }
  const timeAttr = si.signedAttrs?.attributes.find((a) => a.type === OID.signingTime);
  const timeValue = timeAttr?.values[0] as { toDate?: () => Date } | undefined;
  if (timeValue?.toDate) out.signingTime = timeValue.toDate();

  // The digest check, done by us so a mismatch is a result rather than a thrown error.
  const isSha1Filter = opts.subFilter === "adbe.pkcs7.sha1";
  const actual = createHash(isSha1Filter ? "sha1" : hash)
    .update(signed)
    .digest();
  let claimed: Uint8Array | undefined;
  if (isSha1Filter) {
    const e = sd.encapContentInfo.eContent as asn1js.OctetString | undefined;
    claimed = e ? new Uint8Array(e.getValue()) : undefined;
  } else {
    const md = si.signedAttrs?.attributes.find((a) => a.type === OID.messageDigest);
    const v = md?.values[0] as asn1js.OctetString | undefined;
    claimed = v ? new Uint8Array(v.valueBlock.valueHexView) : undefined;
  }
  if (!claimed)
    return { ...out, failure: "the signature carries no message digest to check the document against" };
  out.digestMatches = Buffer.from(claimed).equals(actual);
  if (!out.digestMatches) {
    return {
      ...out,
      failure:
        "the document's signed bytes no longer match the digest the signer signed (they were altered after signing)",
    };
  }

  try {
    const res = await sd.verify({
      signer: 0,
      ...(isSha1Filter ? {} : { data: toArrayBuffer(signed) }),
      checkChain: false,
      extendedMode: true,
    });
    out.signatureValid = res.signatureVerified === true;
    if (!out.signatureValid) {
      return {
        ...out,
        failure: `the signer's signature does not verify${res.message ? ` (${res.message})` : ""}`,
      };
    }
  } catch (err) {
    const msg = (err as { message?: string })?.message ?? String(err);
    out.signatureValid = false;
    return { ...out, failure: `the signer's signature does not verify (${msg})` };
  }

  if (opts.trustAnchors.length === 0) {
    out.chain = { trusted: false, reason: "no trust anchors are configured (DOCVERIFY_TRUST_ANCHORS)" };
    return out;
  }
  if (!signerCert) {
    out.chain = { trusted: false, reason: "the signature carries no signer certificate" };
    return out;
  }
  try {
    // The chain is judged at the claimed signing time when it lies within the signer's validity, else now.
    const notBefore = signerCert.notBefore.value.getTime();
    const notAfter = signerCert.notAfter.value.getTime();
    const t = out.signingTime?.getTime();
    const checkDate =
      t !== undefined && t >= notBefore && t <= notAfter ? (out.signingTime as Date) : opts.now;
    const engine = new pkijs.CertificateChainValidationEngine({
      trustedCerts: opts.trustAnchors,
      certs: [signerCert, ...certs.filter((c) => c !== signerCert)],
      checkDate,
    });
    const r = await engine.verify();
    out.chain = r.result
      ? {
          trusted: true,
          reason: `the signer's certificate chains to a configured trust anchor (checked at ${checkDate.toISOString()})`,
        }
      : {
          trusted: false,
          reason: `the signer's certificate does not chain to a configured trust anchor (${r.resultMessage || "no path"})`,
        };
  } catch (err) {
    const msg =
      (err as { resultMessage?: string; message?: string })?.resultMessage ??
      (err as Error)?.message ??
      String(err);
    out.chain = {
      trusted: false,
      reason: `the signer's certificate does not chain to a configured trust anchor (${msg})`,
    };
  }
  return out;
}
