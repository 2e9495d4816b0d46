import { createHash, X509Certificate } from "node:crypto";
import * as asn1js from "asn1js";
import * as pkijs from "pkijs";

/**
 * X.509 certificates as signature.pdf handles them: parsed twice from the same DER, by pkijs (fields and
 * extensions) and by node:crypto's X509Certificate (OpenSSL: signature checks and the issuer/subject
 * match), plus the revocation data a PDF can carry (CRLs and OCSP responses from the CMS blob, its
 * adbe-revocationInfoArchival attribute and the document's DSS).
 */

export interface Cert {
  der: Buffer;
  pki: pkijs.Certificate;
  x509: X509Certificate;
  /** SHA-256 of the DER, hex: identity for de-duplication and equality. */
  id: string;
}

export interface RevocationData {
  crls: pkijs.CertificateRevocationList[];
  ocsps: pkijs.BasicOCSPResponse[];
}

export const emptyRevocation = (): RevocationData => ({ crls: [], ocsps: [] });

export const OID = {
  commonName: "2.5.4.3",
  organization: "2.5.4.10",
  subjectKeyIdentifier: "2.5.29.14",
  keyUsage: "2.5.29.15",
  basicConstraints: "2.5.29.19",
  extKeyUsage: "2.5.29.37",
  timeStamping: "1.3.6.1.5.5.7.3.8",
  ocspSigning: "1.3.6.1.5.5.7.3.9",
  ocspBasic: "1.3.6.1.5.5.7.48.1.1",
  ocspResponseRevInfo: "1.3.6.1.5.5.7.16.2",
} as const;

export function parseCert(der: Uint8Array): Cert | undefined {
  try {
    const buf = Buffer.from(der);
    const asn = asn1js.fromBER(new Uint8Array(buf));
    if (asn.offset === -1) return undefined;
    const pki = new pkijs.Certificate({ schema: asn.result });
    const x509 = new X509Certificate(buf);
    return { der: buf, pki, x509, id: createHash("sha256").update(buf).digest("hex") };
  } catch {
    return undefined;
  }
}

export function certFromPkijs(c: pkijs.Certificate): Cert | undefined {
  try {
    return parseCert(new Uint8Array(c.toSchema().toBER(false)));
  } catch {
    return undefined;
  }
}

export function parsePemBundle(pem: string): { certs: Cert[]; errors: number } {
  const certs: Cert[] = [];
  let errors = 0;
  for (const m of pem.matchAll(/-----BEGIN CERTIFICATE-----([\s\S]*?)-----END CERTIFICATE-----/g)) {
    const c = parseCert(Buffer.from((m[1] as string).replace(/\s+/g, ""), "base64"));
    if (c) certs.push(c);
    else errors++;
  }
  return { certs: uniqueCerts(certs), errors };
}

export function uniqueCerts(list: Iterable<Cert>): Cert[] {
  const seen = new Map<string, Cert>();
  for (const c of list) if (!seen.has(c.id)) seen.set(c.id, c);
  return [...seen.values()];
}

export function nameAttr(name: pkijs.RelativeDistinguishedNames, oid: string): string | undefined {
  const tv = name.typesAndValues.find((t) => t.type === oid);
  const v = tv?.value.valueBlock as { value?: unknown } | undefined;
  return typeof v?.value === "string" ? v.value : undefined;
}

export interface CertSummary {
  commonName: string;
  organization?: string;
  issuer: string;
  serial: string;
  notBefore: string;
  notAfter: string;
}

export function summarize(c: Cert): CertSummary {
  const org = nameAttr(c.pki.subject, OID.organization);
  return {
    commonName: nameAttr(c.pki.subject, OID.commonName) ?? c.x509.subject.replace(/\n/g, ", "),
    ...(org ? { organization: org } : {}),
    issuer: nameAttr(c.pki.issuer, OID.commonName) ?? c.x509.issuer.replace(/\n/g, ", "),
    serial: serialHex(c.pki.serialNumber),
    notBefore: c.pki.notBefore.value.toISOString(),
    notAfter: c.pki.notAfter.value.toISOString(),
  };
}

/** "Alice (Example Inc)". */
export function displayName(c: Cert): string {
  const s = summarize(c);
  return `${s.commonName}${s.organization && s.organization !== s.commonName ? ` (${s.organization})` : ""}`;
}

export const serialHex = (i: asn1js.Integer): string =>
  Buffer.from(i.valueBlock.valueHexView)
    .toString("hex")
    .replace(/^(00)+(?=.)/, "");

export function extension(c: Cert, oid: string): pkijs.Extension | undefined {
  return c.pki.extensions?.find((e) => e.extnID === oid);
}

export function subjectKeyId(c: Cert): Buffer | undefined {
  const e = extension(c, OID.subjectKeyIdentifier);
  const v = e?.parsedValue as asn1js.OctetString | undefined;
  return v?.valueBlock ? Buffer.from(v.valueBlock.valueHexView) : undefined;
}

/** Key usage bits by name, or undefined when the certificate does not restrict its key's use. */
export function keyUsage(c: Cert): Set<string> | undefined {
  const e = extension(c, OID.keyUsage);
  const bits = e?.parsedValue as asn1js.BitString | undefined;
  if (!bits?.valueBlock) return undefined;
  const names = [
    "digitalSignature",
    "nonRepudiation",
    "keyEncipherment",
    "dataEncipherment",
    "keyAgreement",
    "keyCertSign",
    "cRLSign",
    "encipherOnly",
    "decipherOnly",
  ];
  const bytes = bits.valueBlock.valueHexView;
  const out = new Set<string>();
  names.forEach((n, i) => {
    const byte = bytes[i >> 3] ?? 0;
    if (byte & (0x80 >> (i & 7))) out.add(n);
  });
  return out;
}

export function extKeyUsage(c: Cert): string[] | undefined {
  const e = extension(c, OID.extKeyUsage);
  const v = e?.parsedValue as pkijs.ExtKeyUsage | undefined;
  return v?.keyPurposes;
}

export function basicConstraints(c: Cert): { ca: boolean; pathLen?: number } {
  const v = extension(c, OID.basicConstraints)?.parsedValue as pkijs.BasicConstraints | undefined;
  if (!v) return { ca: false };
  const pl = v.pathLenConstraint;
  const pathLen =
    typeof pl === "number" ? pl : pl instanceof asn1js.Integer ? pl.valueBlock.valueDec : undefined;
  return { ca: v.cA === true, ...(pathLen !== undefined ? { pathLen } : {}) };
}

/** Extensions path validation understands; a critical extension outside this set rejects the path (RFC 5280 §4.2). */
export const UNDERSTOOD_EXTENSIONS = new Set([
  "2.5.29.14", // subjectKeyIdentifier
  "2.5.29.35", // authorityKeyIdentifier
  "2.5.29.15", // keyUsage
  "2.5.29.19", // basicConstraints
  "2.5.29.37", // extKeyUsage
  "2.5.29.17", // subjectAltName
  "2.5.29.18", // issuerAltName
  "2.5.29.32", // certificatePolicies (no policy is required, so none is processed)
  "2.5.29.31", // cRLDistributionPoints
  "2.5.29.46", // freshestCRL
  "2.5.29.9", // subjectDirectoryAttributes
  "1.3.6.1.5.5.7.1.1", // authorityInfoAccess
  "1.3.6.1.5.5.7.1.3", // qcStatements
  "1.3.6.1.5.5.7.48.1.5", // ocspNoCheck
]);

/** The revocation data in a CMS blob's `crls` field (CRLs and OCSP responses as other revocation info). */
export function revocationFromSignedData(sd: pkijs.SignedData): RevocationData {
  const out = emptyRevocation();
  for (const c of sd.crls ?? []) {
    if (c instanceof pkijs.CertificateRevocationList) out.crls.push(c);
    else if (
      c instanceof pkijs.OtherRevocationInfoFormat &&
      c.otherRevInfoFormat === OID.ocspResponseRevInfo
    ) {
      const basic = basicOcspFrom(c.otherRevInfo);
      if (basic) out.ocsps.push(basic);
    }
  }
  return out;
}

/**
 * adbe-revocationInfoArchival (1.2.840.113583.1.1.8), the signed attribute Acrobat writes:
 *   SEQUENCE { crl [0] EXPLICIT SEQUENCE OF CRL OPTIONAL, ocsp [1] EXPLICIT SEQUENCE OF OCSPResponse OPTIONAL, ... }
 */
export function revocationFromAdobeArchival(value: unknown): RevocationData {
  const out = emptyRevocation();
  if (!(value instanceof asn1js.Sequence)) return out;
  for (const item of value.valueBlock.value) {
    const tag = item.idBlock.tagNumber;
    const list = (item as asn1js.Constructed).valueBlock?.value?.[0];
    if (!(list instanceof asn1js.Sequence)) continue;
    for (const entry of list.valueBlock.value.slice(0, 200)) {
      try {
        if (tag === 0) out.crls.push(new pkijs.CertificateRevocationList({ schema: entry }));
        else if (tag === 1) {
          const basic = basicOcspFrom(entry);
          if (basic) out.ocsps.push(basic);
        }
      } catch {
        // An unreadable entry is ignored: revocation data only ever lowers trust.
      }
    }
  }
  return out;
}

export function parseCrl(der: Uint8Array): pkijs.CertificateRevocationList | undefined {
  try {
    const asn = asn1js.fromBER(new Uint8Array(der));
    if (asn.offset === -1) return undefined;
    return new pkijs.CertificateRevocationList({ schema: asn.result });
  } catch {
    return undefined;
  }
}

export function parseOcspResponse(der: Uint8Array): pkijs.BasicOCSPResponse | undefined {
  try {
    const asn = asn1js.fromBER(new Uint8Array(der));
    if (asn.offset === -1) return undefined;
    return basicOcspFrom(asn.result);
  } catch {
    return undefined;
  }
}

function basicOcspFrom(schema: unknown): pkijs.BasicOCSPResponse | undefined {
  try {
    const resp = new pkijs.OCSPResponse({ schema });
    const rb = resp.responseBytes;
    if (!rb || rb.responseType !== OID.ocspBasic) return undefined;
    const asn = asn1js.fromBER(rb.response.valueBlock.valueHexView);
    if (asn.offset === -1) return undefined;
    return new pkijs.BasicOCSPResponse({ schema: asn.result });
  } catch {
    return undefined;
  }
}

export function mergeRevocation(...parts: RevocationData[]): RevocationData {
  return { crls: parts.flatMap((p) => p.crls), ocsps: parts.flatMap((p) => p.ocsps) };
}
