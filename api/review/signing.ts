import { timingSafeEqual } from "node:crypto";

/**
 * The reviewer page's link token (docs/evidence.md): `<expires>.<client>.<sig>`, where client is the owning
 * client's id (base64url; the page finds an archived detection by its owner) and sig is the hex HMAC-SHA256
 * (the API's signing key, as for upload URLs) of the method, the detection, that client and the expiry. It
 * opens the page and its images for that detection only, and only while it lasts; checked against the
 * detection's owner, so a link minted for one client never opens another client's detection.
 */
export const reviewSigningInput = (detection: string, clientId: string, expires: number) =>
  `GET\n/review/${detection}\n${clientId}\n${expires}`;

export function reviewToken(
  detection: string,
  clientId: string,
  expires: number,
  hmac: (data: string) => string,
): string {
  const client = Buffer.from(clientId, "utf8").toString("base64url");
  return `${expires}.${client}.${hmac(reviewSigningInput(detection, clientId, expires))}`;
}

/** `${publicUrl}/review/{id}?token=...` */
export function reviewUrl(publicUrl: string, detection: string, token: string): string {
  return `${publicUrl.replace(/\/+$/, "")}/review/${encodeURIComponent(detection)}?token=${encodeURIComponent(token)}`;
}

/** The form of a link token (also documented as the `token` parameter's pattern). */
export const REVIEW_TOKEN_RE = /^(\d{1,12})\.([A-Za-z0-9_-]{1,344})\.([0-9a-f]{64})$/;

/** The client a token names (not yet checked: checkReviewToken does that), or undefined for a malformed one. */
export function reviewTokenClient(token: string | undefined): string | undefined {
  const m = token ? REVIEW_TOKEN_RE.exec(token) : null;
  return m ? Buffer.from(m[2] as string, "base64url").toString("utf8") : undefined;
}

/** True when `token` opens `detection` of `clientId` at `nowSeconds` (signature first, constant time). */
export function checkReviewToken(
  token: string | undefined,
  detection: string,
  clientId: string,
  nowSeconds: number,
  hmac: (data: string) => string,
): boolean {
  const m = token ? REVIEW_TOKEN_RE.exec(token) : null;
  if (!m) return false;
  const expires = Number(m[1]);
  if (Buffer.from(m[2] as string, "base64url").toString("utf8") !== clientId) return false;
  const expected = Buffer.from(hmac(reviewSigningInput(detection, clientId, expires)), "hex");
  const given = Buffer.from(m[3] as string, "hex");
  if (given.length !== expected.length || !timingSafeEqual(given, expected)) return false;
  return nowSeconds <= expires;
}
