import { createCipheriv, createDecipheriv, createHmac, randomBytes } from "node:crypto";

/**
 * The keys of one tenant's memory, derived from the deployment's memory key (DOCVERIFY_MEMORY_KEY): the
 * tenant's id in storage paths, and a key per tenant for keyed hashes, MinHash and sealing. Nothing the
 * memory keeps can be computed or read without the deployment's key, and no hash of one tenant equals the
 * hash of the same value in another.
 */
export interface TenantKeys {
  /** The tenant's id in the memory's keys (never its name). */
  id: string;
  /** Keyed hash of a value of a kind: 22 base64url characters (128 bits). */
  hash(kind: string, value: string): string;
  /** HMAC bytes of one MinHash token (the signature's input). */
  token(value: string): Buffer;
  /** AES-256-GCM of a short text (base64url: iv, tag, ciphertext). */
  seal(text: string): string;
  /** The sealed text, or undefined when it does not open with this tenant's key. */
  unseal(sealed: string): string | undefined;
}

const b64 = (b: Buffer) => b.toString("base64url");

export function tenantKeys(deploymentKey: Uint8Array, tenant: string): TenantKeys {
  const mac = (key: Uint8Array, data: string) => createHmac("sha256", key).update(data).digest();
  const tenantKey = mac(deploymentKey, `docverify memory tenant\0${tenant}`);
  const sealKey = mac(tenantKey, "seal");
  const tokenKey = mac(tenantKey, "minhash");
  return {
    id: b64(mac(deploymentKey, `docverify memory tenant id\0${tenant}`)).slice(0, 22),
    hash: (kind, value) => b64(mac(tenantKey, `${kind}\0${value}`)).slice(0, 22),
    token: (value) => mac(tokenKey, value),
    seal(text) {
      const iv = randomBytes(12);
      const c = createCipheriv("aes-256-gcm", sealKey, iv);
      const body = Buffer.concat([c.update(text, "utf8"), c.final()]);
      return b64(Buffer.concat([iv, c.getAuthTag(), body]));
    },
    unseal(sealed) {
      try {
        const raw = Buffer.from(sealed, "base64url");
        const d = createDecipheriv("aes-256-gcm", sealKey, raw.subarray(0, 12));
        d.setAuthTag(raw.subarray(12, 28));
        return Buffer.concat([d.update(raw.subarray(28)), d.final()]).toString("utf8");
      } catch {
        return undefined;
      }
    },
  };
}
