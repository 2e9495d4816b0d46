/**
 * Test oracle: checks an AWS Signature V4 presigned URL the way S3 does (query-string auth, host as the
 * only signed header, UNSIGNED-PAYLOAD), written from the AWS documentation independently of minio.
 * s3rver, the loopback S3 server of the tests, does not verify V4 signatures, so the tests ask this.
 */
import { createHash, createHmac } from "node:crypto";

const hmac = (key: Buffer | string, data: string) => createHmac("sha256", key).update(data).digest();
const rfc3986 = (s: string) =>
  encodeURIComponent(s).replace(/[!'()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);

/**
 * True when `url`'s X-Amz-Signature is the one S3 would compute for a `method` request sent to `host`
 * (default: the URL's own host) with `secretKey`, and the URL has not expired at `now`.
 */
export function presignedUrlValid(
  url: string,
  opts: { method: string; secretKey: string; host?: string; now?: Date },
): boolean {
  const u = new URL(url);
  const q = u.searchParams;
  const signature = q.get("X-Amz-Signature");
  const credential = q.get("X-Amz-Credential");
  const date = q.get("X-Amz-Date");
  const expires = Number(q.get("X-Amz-Expires"));
  if (!signature || !credential || !date || !Number.isFinite(expires)) return false;
  if (q.get("X-Amz-Algorithm") !== "AWS4-HMAC-SHA256" || q.get("X-Amz-SignedHeaders") !== "host")
    return false;
  const signedAt = Date.parse(
    `${date.slice(0, 4)}-${date.slice(4, 6)}-${date.slice(6, 8)}T${date.slice(9, 11)}:${date.slice(11, 13)}:${date.slice(13, 15)}Z`,
  );
  if ((opts.now ?? new Date()).getTime() > signedAt + expires * 1000) return false;
  const [, day, region, service] = credential.split("/");
  if (!day || !region || !service) return false;

  const query = [...q.entries()]
    .filter(([k]) => k !== "X-Amz-Signature")
    .map(([k, v]) => [rfc3986(k), rfc3986(v)] as const)
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    .map(([k, v]) => `${k}=${v}`)
    .join("&");
  const canonicalRequest = [
    opts.method,
    u.pathname,
    query,
    `host:${opts.host ?? u.host}\n`,
    "host",
    "UNSIGNED-PAYLOAD",
  ].join("\n");
  const scope = `${day}/${region}/${service}/aws4_request`;
  const stringToSign = [
    "AWS4-HMAC-SHA256",
    date,
    scope,
    createHash("sha256").update(canonicalRequest).digest("hex"),
  ].join("\n");
  const key = hmac(hmac(hmac(hmac(`AWS4${opts.secretKey}`, day), region), service), "aws4_request");
  return hmac(key, stringToSign).toString("hex") === signature;
}
