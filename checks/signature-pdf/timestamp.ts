import * as asn1js from "asn1js";
import * as pkijs from "pkijs";
import { digestFor } from "./algorithms.js";
import type { Cert } from "./certs.js";
import { type CmsVerification, verifyCms } from "./cms-verify.js";

/**
 * RFC 3161 timestamp tokens: a signature-time-stamp (an unsigned attribute of a signer, imprinting its
 * signature value) or a document timestamp (a /DocTimeStamp signature, imprinting the bytes its
 * /ByteRange covers). The token is CMS SignedData over a TSTInfo: its authority's signature is checked
 * like any CMS signature (cms-verify.ts), then the TSTInfo's message imprint against the data it claims to
 * timestamp. Whether the authority is trusted, and so whether its time counts, is decided by the caller
 * with cert-path.ts (purpose "timestamping").
 */

export interface TimestampCheck {
  /** valid: the token is intact and imprints the data. failed: it does not. unverifiable: cannot be checked. */
  status: "valid" | "failed" | "unverifiable";
  reason?: string;
  /** The time the authority attests (TSTInfo genTime). */
  genTime?: Date;
  /** The authority's certificate (the token's signer). */
  authority?: Cert;
  cms: CmsVerification;
}

export function verifyTimestampToken(
  der: Uint8Array,
  imprinted: Uint8Array,
  extraCerts: readonly Cert[] = [],
): TimestampCheck {
  const cms = verifyCms(der, { kind: "timestamp" }, extraCerts);
  const base = { cms, ...(cms.signer ? { authority: cms.signer } : {}) };
  if (cms.status !== "valid" || !cms.content)
    return {
      ...base,
      status: cms.status === "valid" ? "failed" : cms.status,
      reason: cms.reason ?? "it carries no TSTInfo",
    };
  let info: pkijs.TSTInfo;
  try {
    const asn = asn1js.fromBER(cms.content.slice().buffer as ArrayBuffer);
    if (asn.offset === -1) throw new Error("bad DER");
    info = new pkijs.TSTInfo({ schema: asn.result });
  } catch {
    return { ...base, status: "failed", reason: "its TSTInfo cannot be parsed" };
  }
  const digest = digestFor(info.messageImprint.hashAlgorithm);
  if ("error" in digest)
    return { ...base, status: "unverifiable", reason: `its message imprint uses ${digest.error}` };
  const expected = Buffer.from(info.messageImprint.hashedMessage.valueBlock.valueHexView);
  if (!digest.hash(imprinted).equals(expected))
    return {
      ...base,
      status: "failed",
      reason: "the data it timestamps no longer matches its message imprint",
    };
  const genTime = info.genTime;
  if (!(genTime instanceof Date) || Number.isNaN(genTime.getTime()))
    return { ...base, status: "failed", reason: "its TSTInfo has no readable time" };
  return { ...base, status: "valid", genTime };
}
