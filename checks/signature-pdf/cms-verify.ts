import { createHash } from "node:crypto";
import * as asn1js from "asn1js";
import * as pkijs from "pkijs";
import { digestFor, verifySignature } from "./algorithms.js";
import {
  type Cert,
  certFromPkijs,
  emptyRevocation,
  mergeRevocation,
  type RevocationData,
  revocationFromAdobeArchival,
  revocationFromSignedData,
  serialHex,
  subjectKeyId,
  uniqueCerts,
} from "./certs.js";

/**
 * The integrity half of a PDF signature: parses its CMS SignedData with pkijs/asn1js and checks, with
 * node:crypto primitives (algorithms.ts), that it really signs the bytes its /ByteRange names.
 *   - exactly one SignerInfo; the signer's certificate is the one its `sid` names (issuer + serial number,
 *     or subject key identifier), taken from the CMS certificates (or the document's DSS); when several
 *     certificates carry that identifier, the one whose key verifies the signature is the signer;
 *   - detached PDF signatures must not encapsulate content (adbe.pkcs7.sha1 must, as a SHA-1 digest);
 *   - with signed attributes: content-type and message-digest present once, the digest matches, an ESS
 *     signing-certificate(-v2) attribute, when present, names the signer's certificate; without them the
 *     signature is over the content itself (RFC 5652 §5.4);
 *   - the signature verifies with the signer's public key for the algorithms named (RFC 8419 for EdDSA).
 * Trust (whose certificate, valid when, revoked or not) is cert-path.ts's business, not this module's.
 * Never throws for bad input: every outcome is a result with a reason a reviewer can read.
 */

const OIDS = {
  signedData: "1.2.840.113549.1.7.2",
  data: "1.2.840.113549.1.7.1",
  tstInfo: "1.2.840.113549.1.9.16.1.4",
  contentType: "1.2.840.113549.1.9.3",
  messageDigest: "1.2.840.113549.1.9.4",
  signingTime: "1.2.840.113549.1.9.5",
  signingCertificate: "1.2.840.113549.1.9.16.2.12",
  signingCertificateV2: "1.2.840.113549.1.9.16.2.47",
  signatureTimeStampToken: "1.2.840.113549.1.9.16.2.14",
  adbeRevocationInfoArchival: "1.2.840.113583.1.1.8",
} as const;

export type CmsMode =
  /** adbe.pkcs7.detached, ETSI.CAdES.detached: the content is the signed bytes, not encapsulated. */
  | { kind: "detached"; signed: Uint8Array }
  /** adbe.pkcs7.sha1: the encapsulated content is the SHA-1 digest of the signed bytes. */
  | { kind: "sha1"; signed: Uint8Array }
  /** An RFC 3161 timestamp token: the encapsulated content is a TSTInfo. */
  | { kind: "timestamp" };

export interface CmsVerification {
  /**
   * valid: the signature verifies over the content. failed: it does not (or it is not an acceptable PDF
   * signature): the document cannot be what was signed. unverifiable: it cannot be checked here (missing
   * signer certificate, unsupported algorithm), which says nothing either way.
   */
  status: "valid" | "failed" | "unverifiable";
  /** Why it failed or cannot be checked, as a sentence fragment. */
  reason?: string;
  /** "SHA-256". */
  digest?: string;
  /** "RSA with SHA-256", "Ed25519". */
  algorithm?: string;
  /** Set when a digest the signature relies on is weak (MD5, SHA-1). */
  weak?: string;
  signer?: Cert;
  /** Every certificate the CMS carries (only ever candidates for intermediates). */
  certificates: Cert[];
  /** The signingTime signed attribute: what the signer claims, proof of nothing. */
  claimedSigningTime?: Date;
  /** CRLs and OCSP responses embedded in the CMS (crls field, adbe-revocationInfoArchival). */
  revocation: RevocationData;
  /** The RFC 3161 signature-time-stamp token (unsigned attribute), DER. */
  signatureTimestamp?: Uint8Array;
  /** The SignerInfo's signature value (what a signature timestamp imprints). */
  signatureValue?: Uint8Array;
  /** The encapsulated content (a timestamp token's TSTInfo). */
  content?: Uint8Array;
}

const toArrayBuffer = (b: Uint8Array): ArrayBuffer =>
  b.buffer.slice(b.byteOffset, b.byteOffset + b.byteLength) as ArrayBuffer;

function attr(
  attrs: pkijs.SignedAndUnsignedAttributes | undefined,
  oid: string,
): { values: unknown[]; count: number } {
  const found = attrs?.attributes.filter((a) => a.type === oid) ?? [];
  return { values: found[0]?.values ?? [], count: found.length };
}

function sidMatches(sid: pkijs.SignerInfo["sid"], c: Cert): boolean {
  if (sid instanceof pkijs.IssuerAndSerialNumber) {
    return c.pki.issuer.isEqual(sid.issuer) && serialHex(c.pki.serialNumber) === serialHex(sid.serialNumber);
  }
  const ski = subjectKeyId(c);
  const want = skiOf(sid);
  return ski !== undefined && want !== undefined && ski.equals(Buffer.from(want));
}

/** The key identifier of a [0] SubjectKeyIdentifier sid (primitive, or constructed around an OCTET STRING). */
function skiOf(sid: pkijs.SignerInfo["sid"]): Uint8Array | undefined {
  const b = sid as asn1js.BaseBlock & {
    valueBlock?: { value?: asn1js.BaseBlock[]; valueHexView?: Uint8Array };
  };
  if (b?.idBlock?.isConstructed) {
    const inner = b.valueBlock?.value?.[0] as asn1js.OctetString | undefined;
    return inner?.valueBlock?.valueHexView;
  }
  return b?.valueBlock?.valueHexView;
}

function describeSid(sid: pkijs.SignerInfo["sid"]): string {
  if (sid instanceof pkijs.IssuerAndSerialNumber) {
    const cn = sid.issuer.typesAndValues.find((t) => t.type === "2.5.4.3")?.value.valueBlock as
      | { value?: string }
      | undefined;
    return `issuer "${cn?.value ?? "?"}", serial ${serialHex(sid.serialNumber)}`;
  }
  const want = skiOf(sid);
  return `subject key identifier ${want ? Buffer.from(want).toString("hex") : "?"}`;
}

/** The ESS signing-certificate(-v2) attribute's first certificate hash, with its digest. */
function essCertHash(
  si: pkijs.SignerInfo,
): { label: string; hash: (d: Uint8Array) => Buffer; certHash: Buffer } | undefined | "unreadable" {
  const v2 = attr(si.signedAttrs, OIDS.signingCertificateV2).values[0];
  const v1 = attr(si.signedAttrs, OIDS.signingCertificate).values[0];
  const value = v2 ?? v1;
  if (value === undefined) return undefined;
  try {
    // SigningCertificate(V2) ::= SEQUENCE { certs SEQUENCE OF ESSCertID(v2), policies ... }
    const certs = (value as asn1js.Sequence).valueBlock.value[0] as asn1js.Sequence;
    const first = certs.valueBlock.value[0] as asn1js.Sequence;
    const parts = first.valueBlock.value;
    if (v2 !== undefined) {
      // ESSCertIDv2 ::= SEQUENCE { hashAlgorithm AlgorithmIdentifier DEFAULT sha256, certHash OCTET STRING, ... }
      let alg: pkijs.AlgorithmIdentifier = new pkijs.AlgorithmIdentifier({
        algorithmId: "2.16.840.1.101.3.4.2.1",
      });
      let i = 0;
      if (parts[0] instanceof asn1js.Sequence) {
        alg = new pkijs.AlgorithmIdentifier({ schema: parts[0] });
        i = 1;
      }
      const h = parts[i] as asn1js.OctetString;
      const d = digestFor(alg);
      if ("error" in d) return "unreadable";
      return { label: d.label, hash: d.hash, certHash: Buffer.from(h.valueBlock.valueHexView) };
    }
    const h = parts[0] as asn1js.OctetString;
    return {
      label: "SHA-1",
      hash: (d) => createHash("sha1").update(d).digest(),
      certHash: Buffer.from(h.valueBlock.valueHexView),
    };
  } catch {
    return "unreadable";
  }
}

export function parseSignedData(der: Uint8Array): pkijs.SignedData | string {
  try {
    const asn = asn1js.fromBER(toArrayBuffer(der));
    if (asn.offset === -1) return "its /Contents is not valid DER-encoded CMS";
    const ci = new pkijs.ContentInfo({ schema: asn.result });
    if (ci.contentType !== OIDS.signedData)
      return `its CMS blob is not SignedData (content type ${ci.contentType})`;
    return new pkijs.SignedData({ schema: ci.content });
  } catch (err) {
    return `its CMS blob cannot be parsed (${err instanceof Error ? err.message : String(err)})`;
  }
}

export function verifyCms(der: Uint8Array, mode: CmsMode, extraCerts: readonly Cert[] = []): CmsVerification {
  const out: CmsVerification = { status: "failed", certificates: [], revocation: emptyRevocation() };
  const fail = (reason: string): CmsVerification => ({ ...out, status: "failed", reason });
  const cannot = (reason: string): CmsVerification => ({ ...out, status: "unverifiable", reason });

  const sd = parseSignedData(der);
  if (typeof sd === "string") return fail(sd);
  out.certificates = uniqueCerts(
    (sd.certificates ?? []).flatMap((c) => (c instanceof pkijs.Certificate ? (certFromPkijs(c) ?? []) : [])),
  );
  out.revocation = revocationFromSignedData(sd);
  if (sd.signerInfos.length !== 1) {
    return cannot(`its CMS blob has ${sd.signerInfos.length} signers, where a PDF signature has exactly one`);
  }
  const si = sd.signerInfos[0] as pkijs.SignerInfo;
  out.signatureValue = new Uint8Array(si.signature.valueBlock.valueHexView);
  // The certificate(s) its identifier names; named now so failures can say whose signature failed.
  const candidates = uniqueCerts([...out.certificates, ...extraCerts]).filter((c) => sidMatches(si.sid, c));
  if (candidates[0]) out.signer = candidates[0];
  const tst = attr(si.unsignedAttrs, OIDS.signatureTimeStampToken).values[0];
  if (tst instanceof asn1js.Sequence) out.signatureTimestamp = new Uint8Array(tst.toBER(false));

  // What the signature is over: the content (detached or encapsulated), then the signed attributes.
  const eContent = sd.encapContentInfo.eContent;
  const encapsulated = eContent ? new Uint8Array(eContent.getValue()) : undefined;
  let content: Uint8Array;
  switch (mode.kind) {
    case "detached":
      if (encapsulated)
        return fail(
          "it is a detached PDF signature but its CMS blob also encapsulates content of its own, which a PDF signature must not",
        );
      content = mode.signed;
      break;
    case "sha1": {
      if (!encapsulated)
        return fail("it is an adbe.pkcs7.sha1 signature without the SHA-1 digest it must encapsulate");
      const actual = createHash("sha1").update(mode.signed).digest();
      if (!actual.equals(Buffer.from(encapsulated)))
        return fail(
          "the document's signed bytes no longer match the digest the signer signed (they were altered after signing)",
        );
      content = encapsulated;
      out.weak = "SHA-1";
      break;
    }
    case "timestamp":
      if (sd.encapContentInfo.eContentType !== OIDS.tstInfo || !encapsulated)
        return fail("it is not an RFC 3161 timestamp token (no TSTInfo content)");
      content = encapsulated;
      out.content = encapsulated;
      break;
  }

  const digest = digestFor(si.digestAlgorithm);
  if ("error" in digest) return cannot(`its signer used ${digest.error}`);
  out.digest = digest.label;
  if (digest.weak) out.weak = digest.label;

  let signedData: Uint8Array;
  if (si.signedAttrs) {
    const ct = attr(si.signedAttrs, OIDS.contentType);
    const md = attr(si.signedAttrs, OIDS.messageDigest);
    if (ct.count !== 1 || md.count !== 1 || ct.values.length !== 1 || md.values.length !== 1)
      return fail(
        "its signed attributes do not carry exactly one content type and one message digest (RFC 5652 §5.3)",
      );
    const ctValue = ct.values[0];
    const ctOid = ctValue instanceof asn1js.ObjectIdentifier ? ctValue.valueBlock.toString() : undefined;
    if (ctOid !== sd.encapContentInfo.eContentType)
      return fail("its signed content-type attribute does not match the content it signs");
    const mdValue = md.values[0];
    const claimed =
      mdValue instanceof asn1js.OctetString ? Buffer.from(mdValue.valueBlock.valueHexView) : undefined;
    if (!claimed?.equals(digest.hash(content)))
      return fail(
        mode.kind === "timestamp"
          ? "its timestamp content does not match the digest its authority signed"
          : "the document's signed bytes no longer match the digest the signer signed (they were altered after signing)",
      );
    // The signature is over the DER of the signed attributes as a SET (RFC 5652 §5.4), kept as received.
    const encoded = new Uint8Array(si.signedAttrs.encodedValue.slice(0));
    if (encoded.length === 0) return fail("its signed attributes cannot be re-read");
    encoded[0] = 0x31;
    signedData = encoded;
    const time = attr(si.signedAttrs, OIDS.signingTime).values[0] as { toDate?: () => Date } | undefined;
    if (time?.toDate) {
      const d = time.toDate();
      if (!Number.isNaN(d.getTime())) out.claimedSigningTime = d;
    }
    const archival = attr(si.signedAttrs, OIDS.adbeRevocationInfoArchival).values[0];
    if (archival) out.revocation = mergeRevocation(out.revocation, revocationFromAdobeArchival(archival));
  } else {
    if (mode.kind === "timestamp")
      return fail("its timestamp token has no signed attributes (RFC 3161 requires them)");
    signedData = content;
  }

  // The signer: when several certificates carry its identifier, the one whose key verifies.
  if (candidates.length === 0)
    return cannot(
      `its signer (${describeSid(si.sid)}) is not among the certificates the signature or the document carries`,
    );
  let firstFailure: ReturnType<typeof verifySignature> | undefined;
  out.signer = undefined;
  for (const cand of candidates) {
    const r = verifySignature({
      sigAlg: si.signatureAlgorithm,
      digestAlg: si.digestAlgorithm,
      key: cand.x509.publicKey,
      data: signedData,
      signature: out.signatureValue,
    });
    out.algorithm = r.label;
    if (r.ok) {
      out.signer = cand;
      if (r.weak) out.weak = r.weak;
      break;
    }
    firstFailure ??= r;
  }
  if (!out.signer) {
    out.signer = candidates[0];
    const r = firstFailure as ReturnType<typeof verifySignature>;
    if (r.unsupported) return cannot(r.reason ?? "its signature algorithm is not supported");
    return fail(
      `the signer's signature does not verify with the certificate its signer identifier names: ${r.reason ?? "no reason given"}`,
    );
  }

  const ess = si.signedAttrs ? essCertHash(si) : undefined;
  if (ess === "unreadable") return fail("its signing-certificate attribute cannot be read");
  if (ess && !ess.hash(out.signer.der).equals(ess.certHash))
    return fail(
      "its signed signing-certificate attribute names a different certificate than the one whose key made the signature",
    );

  return { ...out, status: "valid" };
}
