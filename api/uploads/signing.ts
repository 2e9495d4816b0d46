import { timingSafeEqual } from "node:crypto";

/** The bytes a standalone upload URL's signature covers. */
export const uploadSigningInput = (uploadId: string, expires: number) =>
  `PUT\n/uploads/${uploadId}\n${expires}`;

/** `${publicUrl}/uploads/{id}?expires=<unix seconds>&sig=<hex HMAC-SHA256>`. */
export function signedUploadUrl(
  publicUrl: string,
  uploadId: string,
  expires: number,
  hmac: (data: string) => string,
): string {
  const base = publicUrl.replace(/\/+$/, "");
  const sig = hmac(uploadSigningInput(uploadId, expires));
  return `${base}/uploads/${encodeURIComponent(uploadId)}?expires=${expires}&sig=${sig}`;
}

export type UploadSignatureCheck = "ok" | "invalid" | "expired";

/** Checks an upload URL's signature in constant time, then its expiry (seconds since the epoch). */
export function checkUploadSignature(
  uploadId: string,
  expires: string | undefined,
  sig: string | undefined,
  nowSeconds: number,
  hmac: (data: string) => string,
): UploadSignatureCheck {
  if (!expires || !/^\d{1,12}$/.test(expires) || !sig || !/^[0-9a-fA-F]{64}$/.test(sig)) return "invalid";
  const expected = Buffer.from(hmac(uploadSigningInput(uploadId, Number(expires))), "hex");
  const given = Buffer.from(sig, "hex");
  if (given.length !== expected.length || !timingSafeEqual(given, expected)) return "invalid";
  return nowSeconds > Number(expires) ? "expired" : "ok";
}
