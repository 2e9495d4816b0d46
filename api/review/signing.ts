import { timingSafeEqual } from "node:crypto";

/**
 * The reviewer page's link token (docs/evidence.md): `<expires>.<sig>`, where sig is the hex HMAC-SHA256
 * (the API's signing key, as for upload URLs) of the method, the detection, the client that owns it and
 * the expiry. It opens the page and its images for that detection only, and only while it lasts; checked
 * against the detection's owner, so a link minted for one client never opens another client's detection.
 */
export const reviewSigningInput = (detection: string, clientId: string, expires: number) =>
  `GET\n/review/${detection}\n${clientId}\n${expires}`;

export function reviewToken(
  detection: string,
  clientId: string,
  expires: number,
  hmac: (data: string) => string,
): string {
  return `${expires}.${hmac(reviewSigningInput(detection, clientId, expires))}`;
}

/** `${publicUrl}/review/{id}?token=...` */
export function reviewUrl(publicUrl: string, detection: string, token: string): string {
  return `${publicUrl.replace(/\/+$/, "")}/review/${encodeURIComponent(detection)}?token=${encodeURIComponent(token)}`;
}

const TOKEN_RE = /^(\d{1,12})\.([0-9a-f]{64})$/;

/** True when `token` opens `detection` of `clientId` at `nowSeconds` (signature first, constant time). */
export function checkReviewToken(
  token: string | undefined,
  detection: string,
  clientId: string,
  nowSeconds: number,
  hmac: (data: string) => string,
): boolean {
  const m = token ? TOKEN_RE.exec(token) : null;
  if (!m) return false;
  const expires = Number(m[1]);
  const expected = Buffer.from(hmac(reviewSigningInput(detection, clientId, expires)), "hex");
  const given = Buffer.from(m[2] as string, "hex");
  if (given.length !== expected.length || !timingSafeEqual(given, expected)) return false;
  return nowSeconds <= expires;
}
