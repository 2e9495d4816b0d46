import type { RawPdf } from "../../document/pdf-raw/document.js";
import { get, isStream, type PdfValue } from "../../document/pdf-raw/objects.js";
import {
  type Cert,
  parseCert,
  parseCrl,
  parseOcspResponse,
  type RevocationData,
  uniqueCerts,
} from "./certs.js";

/**
 * The document security store (PDF 2.0 §12.8.4.3, PAdES-LT): certificates, CRLs and OCSP responses a
 * signing or archiving tool added to the document, as of its newest revision. They serve only as
 * candidates (intermediate certificates, a signer certificate a CMS blob omits) and as revocation
 * evidence; nothing in the DSS is trusted by being there.
 */

const MAX_ITEMS = 500;

export interface ValidationData extends RevocationData {
  certs: Cert[];
}

export function documentValidationData(raw: RawPdf): ValidationData {
  const dss = raw.dict(get(raw.catalog(), "DSS"));
  const streams = (key: string): Uint8Array[] => {
    const arr = raw.resolve(get(dss, key));
    if (!Array.isArray(arr)) return [];
    const out: Uint8Array[] = [];
    for (const v of arr.slice(0, MAX_ITEMS) as PdfValue[]) {
      const s = raw.resolve(v);
      if (!isStream(s)) continue;
      try {
        out.push(raw.decode(s));
      } catch {
        // An undecodable entry is skipped: it can only ever have added candidates.
      }
    }
    return out;
  };
  if (!dss) return { certs: [], crls: [], ocsps: [] };
  return {
    certs: uniqueCerts(streams("Certs").flatMap((d) => parseCert(d) ?? [])),
    crls: streams("CRLs").flatMap((d) => parseCrl(d) ?? []),
    ocsps: streams("OCSPs").flatMap((d) => parseOcspResponse(d) ?? []),
  };
}
