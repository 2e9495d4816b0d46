import type * as asn1js from "asn1js";
import type * as pkijs from "pkijs";
import { digestFor, verifySignature } from "./algorithms.js";
import {
  basicConstraints,
  type Cert,
  certFromPkijs,
  displayName,
  extKeyUsage,
  keyUsage,
  OID,
  type RevocationData,
  serialHex,
  UNDERSTOOD_EXTENSIONS,
} from "./certs.js";

/**
 * Certification path building and validation for one end-entity certificate (a signer or a timestamp
 * authority), against the configured trust anchors only:
 *   - the path starts with that certificate (the caller's signer, never a certificate picked from the
 *     CMS blob's list) and ends at an anchor; certificates the signature or the document carries are only
 *     candidates for the intermediates between them;
 *   - each link is checked by OpenSSL through node:crypto's X509Certificate: the issuer's name and key
 *     identifiers match (checkIssued) and the child's signature verifies with the issuer's key (verify);
 *     an anchor is trusted as the exact certificate configured, never by its name alone;
 *   - at the time given (the caller decides: now, or a trusted timestamp's time): every certificate is
 *     within its validity period, intermediates are CAs allowed to sign certificates within their path
 *     length, no certificate carries a critical extension this module does not understand, the end
 *     certificate may be used for the purpose (signing: digitalSignature or nonRepudiation when key usage
 *     is restricted; timestamping: the id-kp-timeStamping extended key usage);
 *   - revocation is judged from the revocation data the document itself carries (CRLs and OCSP responses
 *     whose signatures verify with the issuer's key, or an OCSP responder it delegated to): a certificate
 *     revoked at or before that time fails the path. Nothing is fetched from the network.
 */

export type PathPurpose = "signing" | "timestamping";

export interface PathResult {
  trusted: boolean;
  /** Starts with the end certificate; ends with the anchor when trusted. */
  path: Cert[];
  anchor?: Cert;
  /** A sentence fragment: "chains to the configured trust anchor "Root CA" (through "Intermediate CA")". */
  reason: string;
  problem?: "no_anchors" | "no_path" | "expired" | "not_yet_valid" | "revoked" | "constraints" | "usage";
}

const MAX_DEPTH = 8;
const MAX_LINK_CHECKS = 400;
const MAX_PATHS = 8;

const q = (c: Cert) => `"${displayName(c)}"`;
const day = (d: Date) =>
  d
    .toISOString()
    .replace(/T00:00:00\.000Z$/, "")
    .replace(/\.000Z$/, "Z");

function issuedBy(child: Cert, parent: Cert): boolean {
  try {
    return child.x509.checkIssued(parent.x509) && child.x509.verify(parent.x509.publicKey);
  } catch {
    return false;
  }
}

/** Paths from `leaf` to an anchor whose names and signatures link up (time and constraints not yet judged). */
function* structuralPaths(
  leaf: Cert,
  candidates: readonly Cert[],
  anchors: readonly Cert[],
): Generator<Cert[]> {
  let checks = 0;
  const anchorIds = new Set(anchors.map((a) => a.id));
  const pool = candidates.filter((c) => c.id !== leaf.id && !anchorIds.has(c.id));
  function* walk(path: Cert[]): Generator<Cert[]> {
    const node = path[path.length - 1] as Cert;
    if (anchorIds.has(node.id)) {
      yield path;
      return;
    }
    if (path.length > MAX_DEPTH) return;
    for (const a of anchors) {
      if (checks++ > MAX_LINK_CHECKS) return;
      if (issuedBy(node, a)) yield [...path, a];
    }
    for (const c of pool) {
      if (path.some((p) => p.id === c.id)) continue;
      if (checks++ > MAX_LINK_CHECKS) return;
      if (issuedBy(node, c)) yield* walk([...path, c]);
    }
  }
  yield* walk([leaf]);
}

function isSelfIssued(c: Cert): boolean {
  return c.pki.subject.isEqual(c.pki.issuer);
}

function revocationOf(
  cert: Cert,
  issuer: Cert,
  data: RevocationData,
  at: Date,
): { revoked: Date; source: string } | undefined {
  const serial = serialHex(cert.pki.serialNumber);
  for (const crl of data.crls) {
    if (!crl.issuer.isEqual(issuer.pki.subject)) continue;
    const entry = (crl.revokedCertificates ?? []).find((r) => serialHex(r.userCertificate) === serial);
    if (!entry) continue;
    const sig = verifySignature({
      sigAlg: crl.signatureAlgorithm,
      key: issuer.x509.publicKey,
      data: crl.tbsView,
      signature: crl.signatureValue.valueBlock.valueHexView,
    });
    if (!sig.ok) continue;
    if (isRemoveFromCrl(entry)) continue;
    const when = entry.revocationDate.value;
    if (when.getTime() <= at.getTime()) return { revoked: when, source: `a CRL from ${q(issuer)}` };
  }
  for (const basic of data.ocsps) {
    for (const single of basic.tbsResponseData.responses) {
      if (serialHex(single.certID.serialNumber) !== serial) continue;
      if (!certIdNamesIssuer(single.certID, issuer)) continue;
      const status = single.certStatus as asn1js.BaseBlock | undefined;
      if (status?.idBlock.tagNumber !== 1) continue;
      if (!ocspSignedFor(basic, issuer)) continue;
      const revokedInfo = (status as asn1js.Constructed).valueBlock.value[0] as
        | { toDate?: () => Date }
        | undefined;
      const when = revokedInfo?.toDate?.();
      if (when && when.getTime() <= at.getTime())
        return { revoked: when, source: `an OCSP response for ${q(issuer)}` };
    }
  }
  return undefined;
}

function isRemoveFromCrl(entry: pkijs.RevokedCertificate): boolean {
  const reason = entry.crlEntryExtensions?.extensions.find((e) => e.extnID === "2.5.29.21");
  const v = reason?.parsedValue as asn1js.Enumerated | undefined;
  return v?.valueBlock?.valueDec === 8;
}

function certIdNamesIssuer(id: pkijs.CertID, issuer: Cert): boolean {
  const d = digestFor(id.hashAlgorithm);
  if ("error" in d) return false;
  const subject = issuer.pki.subject.valueBeforeDecode;
  const nameDer = new Uint8Array(
    subject.byteLength > 0 ? subject : issuer.pki.subject.toSchema().toBER(false),
  );
  const keyBits = issuer.pki.subjectPublicKeyInfo.subjectPublicKey.valueBlock.valueHexView;
  return (
    d.hash(nameDer).equals(Buffer.from(id.issuerNameHash.valueBlock.valueHexView)) &&
    d.hash(keyBits).equals(Buffer.from(id.issuerKeyHash.valueBlock.valueHexView))
  );
}

function ocspSignedFor(basic: pkijs.BasicOCSPResponse, issuer: Cert): boolean {
  const check = (key: Cert) =>
    verifySignature({
      sigAlg: basic.signatureAlgorithm,
      key: key.x509.publicKey,
      data: basic.tbsResponseData.tbsView,
      signature: basic.signature.valueBlock.valueHexView,
    }).ok;
  if (check(issuer)) return true;
  for (const c of basic.certs ?? []) {
    // A delegated responder: issued by the same CA for OCSP signing.
    const r = certFromPkijs(c);
    if (r && issuedBy(r, issuer) && (extKeyUsage(r) ?? []).includes(OID.ocspSigning) && check(r)) return true;
  }
  return false;
}

/** The first problem a structurally linked path has at `at`, or undefined when it is valid then. */
function judgePath(
  path: Cert[],
  at: Date,
  revocation: RevocationData,
  purpose: PathPurpose,
): { problem: NonNullable<PathResult["problem"]>; reason: string } | undefined {
  const anchorIndex = path.length - 1;
  for (let i = 0; i < path.length; i++) {
    const c = path[i] as Cert;
    const role =
      i === 0
        ? purpose === "signing"
          ? "the signer's certificate"
          : "the timestamp authority's certificate"
        : `the issuing certificate ${q(c)}`;
    const nb = c.pki.notBefore.value;
    const na = c.pki.notAfter.value;
    if (at.getTime() < nb.getTime())
      return { problem: "not_yet_valid", reason: `${role} is not valid until ${day(nb)}` };
    if (at.getTime() > na.getTime()) return { problem: "expired", reason: `${role} expired on ${day(na)}` };
    if (i < anchorIndex) {
      const critical = (c.pki.extensions ?? []).find(
        (e) => e.critical && !UNDERSTOOD_EXTENSIONS.has(e.extnID),
      );
      if (critical)
        return {
          problem: "constraints",
          reason: `${role} carries a critical extension this service does not process (${critical.extnID})`,
        };
    }
    if (i > 0) {
      // c issued path[i-1]: it must be allowed to.
      const bc = basicConstraints(c);
      const hasBc = (c.pki.extensions ?? []).some((e) => e.extnID === OID.basicConstraints);
      const ku = keyUsage(c);
      if ((i < anchorIndex && !bc.ca) || (i === anchorIndex && hasBc && !bc.ca))
        return {
          problem: "constraints",
          reason: `${role} is not a certification authority, yet it issued ${q(path[i - 1] as Cert)}`,
        };
      if (ku && !ku.has("keyCertSign"))
        return { problem: "constraints", reason: `${role} may not sign certificates (key usage)` };
      if (bc.pathLen !== undefined) {
        const below = path.slice(1, i).filter((x) => !isSelfIssued(x)).length;
        if (below > bc.pathLen)
          return {
            problem: "constraints",
            reason: `${role} allows ${bc.pathLen} intermediate certificates below it, the path has ${below}`,
          };
      }
    }
  }
  const leaf = path[0] as Cert;
  if (purpose === "signing") {
    const ku = keyUsage(leaf);
    if (ku && !ku.has("digitalSignature") && !ku.has("nonRepudiation"))
      return {
        problem: "usage",
        reason: "the signer's certificate may not be used for signatures (key usage)",
      };
  } else {
    const eku = extKeyUsage(leaf) ?? [];
    if (!eku.includes(OID.timeStamping))
      return {
        problem: "usage",
        reason: "the timestamp authority's certificate is not issued for timestamping (extended key usage)",
      };
  }
  for (let i = 0; i < anchorIndex; i++) {
    const r = revocationOf(path[i] as Cert, path[i + 1] as Cert, revocation, at);
    if (r)
      return {
        problem: "revoked",
        reason: `${i === 0 ? (purpose === "signing" ? "the signer's certificate" : "the timestamp authority's certificate") : `the issuing certificate ${q(path[i] as Cert)}`} was revoked on ${day(r.revoked)} (according to ${r.source} embedded in the document)`,
      };
  }
  return undefined;
}

export function validatePath(opts: {
  leaf: Cert;
  candidates: readonly Cert[];
  anchors: readonly Cert[];
  at: Date;
  revocation: RevocationData;
  purpose: PathPurpose;
}): PathResult {
  const who =
    opts.purpose === "signing" ? "the signer's certificate" : "the timestamp authority's certificate";
  if (opts.anchors.length === 0)
    return {
      trusted: false,
      path: [opts.leaf],
      problem: "no_anchors",
      reason: "no trust anchors are configured (DOCVERIFY_TRUST_ANCHORS)",
    };
  let first: { path: Cert[]; problem: NonNullable<PathResult["problem"]>; reason: string } | undefined;
  let n = 0;
  for (const path of structuralPaths(opts.leaf, opts.candidates, opts.anchors)) {
    if (n++ >= MAX_PATHS) break;
    // The path is the leaf's own: the caller's certificate comes first, whatever the CMS listed.
    if (path[0]?.id !== opts.leaf.id) continue;
    const bad = judgePath(path, opts.at, opts.revocation, opts.purpose);
    if (!bad) {
      const anchor = path[path.length - 1] as Cert;
      const via = path.slice(1, -1);
      return {
        trusted: true,
        path,
        anchor,
        reason:
          path.length === 1
            ? `${who} is itself a configured trust anchor`
            : `${who} chains to the configured trust anchor ${q(anchor)}${via.length ? ` through ${via.map(q).join(", ")}` : ""}`,
      };
    }
    first ??= { path, ...bad };
  }
  if (first) return { trusted: false, path: first.path, problem: first.problem, reason: first.reason };
  const issuerCn = displayIssuer(opts.leaf);
  return {
    trusted: false,
    path: [opts.leaf],
    problem: "no_path",
    reason: `${who} does not chain to a configured trust anchor (no certificate that verifiably issued it, up to an anchor, was found; its issuer is ${issuerCn})`,
  };
}

function displayIssuer(c: Cert): string {
  const cn = c.pki.issuer.typesAndValues.find((t) => t.type === OID.commonName)?.value.valueBlock as
    | { value?: string }
    | undefined;
  return cn?.value ? `"${cn.value}"` : "unnamed";
}
