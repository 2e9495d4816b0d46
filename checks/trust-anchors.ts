import { readFile } from "node:fs/promises";
import { parsePemBundle } from "./signature-pdf/certs.js";

/**
 * The PEM bundle of trust anchors for signature.pdf (DOCVERIFY_TRUST_ANCHORS), read once per check step.
 * Every certificate in it is an anchor, trusted as that exact certificate (never by its name): signers
 * and timestamp authorities must chain to one of them (docs/signatures.md). A configured file that cannot
 * be read, or holds no readable certificate, is reported (signature.pdf says so in a finding) rather than
 * failing the step: signatures then verify as intact but unverified. Unreadable certificates next to
 * readable ones are reported too, and the readable ones are used.
 */
export interface TrustAnchors {
  pem?: string;
  /** How many certificates the bundle holds that can be used. */
  count?: number;
  error?: string;
}

export async function loadTrustAnchors(file: string | undefined): Promise<TrustAnchors> {
  if (!file) return {};
  let pem: string;
  try {
    pem = await readFile(file, "utf8");
  } catch (err) {
    return {
      error: `${file} cannot be read: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`,
    };
  }
  const { certs, errors } = parsePemBundle(pem);
  if (certs.length === 0)
    return {
      error: errors
        ? `${file} holds ${errors} PEM certificate${errors > 1 ? "s" : ""}, none of which can be parsed`
        : `${file} holds no PEM certificate`,
    };
  return {
    pem,
    count: certs.length,
    ...(errors
      ? {
          error: `${errors} of the ${certs.length + errors} certificates in ${file} cannot be parsed and are ignored`,
        }
      : {}),
  };
}
