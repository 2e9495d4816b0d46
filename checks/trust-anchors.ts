import { readFile } from "node:fs/promises";

/**
 * The PEM bundle of trust anchors for signature.pdf (DOCVERIFY_TRUST_ANCHORS), read once per check step.
 * A configured file that cannot be read is reported (signature.pdf says so in a finding) rather than
 * failing the step: signatures then verify as intact but unverified.
 */
export interface TrustAnchors {
  pem?: string;
  error?: string;
}

export async function loadTrustAnchors(file: string | undefined): Promise<TrustAnchors> {
  if (!file) return {};
  try {
    const pem = await readFile(file, "utf8");
    if (!pem.includes("-----BEGIN CERTIFICATE-----")) {
      return { error: `${file} holds no PEM certificate` };
    }
    return { pem };
  } catch (err) {
    return {
      error: `${file} cannot be read: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`,
    };
  }
}
