import { createCipheriv, createDecipheriv, createHash } from "node:crypto";
import { get, isDict, isName, isString, numberOf, type PdfDict, type PdfValue } from "./objects.js";

/**
 * The standard security handler (PDF 32000-1 §7.6.3-7.6.4, ISO 32000-2 §7.6.4 for AES-256) for the raw
 * walker: a file encrypted so that anyone may open it (an empty user password, set by producers that only
 * restrict printing or copying) is decrypted, so every raw-parser check and the budget pre-check read what
 * a viewer shows. A file that needs a password, or that uses another security handler (certificates),
 * stays closed: the check step ends it `document_encrypted`.
 *
 * Supported: RC4 40-128 bits (V1, V2, R2-R4), AES-128 (V4 AESV2), AES-256 (V5 AESV3, R5 and R6), crypt
 * filters with /Identity, /EncryptMetadata false.
 */

export type Security =
  | { kind: "none" }
  /** Opens with the empty user password; objects are decrypted with `decryptor`. */
  | { kind: "open"; decryptor: Decryptor; method: string }
  /** Needs a user password (or certificate) the service does not have. */
  | { kind: "locked"; reason: string };

export interface Decryptor {
  /** Decrypts a string of object `num gen`. */
  string(bytes: Uint8Array, num: number, gen: number): Uint8Array;
  /** Decrypts a stream's data of object `num gen` (its dictionary decides about metadata and crypt filters). */
  stream(bytes: Uint8Array, num: number, gen: number, dict: PdfDict): Uint8Array;
}

const PAD = Buffer.from("28bf4e5e4e758a4164004e56fffa01082e2e00b6d0683e802f0ca9fe6453697a", "hex");

type Method = "none" | "rc4" | "aes128" | "aes256";

/** Reads the /Encrypt dictionary and tries the empty user password. */
export function openSecurity(encrypt: PdfDict | undefined, fileId: Uint8Array | undefined): Security {
  if (!encrypt) return { kind: "none" };
  const filter = get(encrypt, "Filter");
  if (!isName(filter, "Standard"))
    return {
      kind: "locked",
      reason: `it uses the ${isName(filter) ? filter.name : "unknown"} security handler (a certificate, not a password, opens it)`,
    };
  const v = numberOf(get(encrypt, "V")) ?? 0;
  const r = numberOf(get(encrypt, "R")) ?? 0;
  const o = bytesOf(get(encrypt, "O"));
  const u = bytesOf(get(encrypt, "U"));
  const p = numberOf(get(encrypt, "P")) ?? 0;
  const encryptMetadata = get(encrypt, "EncryptMetadata") !== false;
  if (!o || !u) return { kind: "locked", reason: "its encryption dictionary lacks /O or /U" };

  // Which method strings and streams use.
  let stmMethod: Method;
  let strMethod: Method;
  if (v === 1 || v === 2) {
    stmMethod = strMethod = "rc4";
  } else if (v === 4 || v === 5) {
    const cf = get(encrypt, "CF");
    const methodOf = (name: PdfValue | undefined): Method | undefined => {
      const n = isName(name) ? name.name : "Identity";
      if (n === "Identity") return "none";
      const f = isDict(cf) ? get(cf, n) : undefined;
      const cfm = isDict(f) ? get(f, "CFM") : undefined;
      if (!isName(cfm) || cfm.name === "None") return "none";
      if (cfm.name === "V2") return "rc4";
      if (cfm.name === "AESV2") return "aes128";
      if (cfm.name === "AESV3") return "aes256";
      return undefined;
    };
    const sm = methodOf(get(encrypt, "StmF"));
    const tm = methodOf(get(encrypt, "StrF"));
    if (!sm || !tm)
      return { kind: "locked", reason: "it uses a crypt filter the service does not implement" };
    stmMethod = sm;
    strMethod = tm;
  } else {
    return {
      kind: "locked",
      reason: `it uses encryption version ${v}, which the service does not implement`,
    };
  }

  let key: Buffer | undefined;
  if (r >= 5) {
    key = aes256Key(r, u, get(encrypt, "UE"));
  } else if (r >= 2) {
    const bits = v === 1 ? 40 : (numberOf(get(encrypt, "Length")) ?? 40);
    const n = r === 2 ? 5 : Math.max(5, Math.min(16, Math.floor(bits / 8)));
    const k = legacyKey(r, n, o, p, fileId ?? new Uint8Array(0), encryptMetadata);
    if (legacyUserPasswordMatches(r, k, u, fileId ?? new Uint8Array(0))) key = k;
  } else {
    return {
      kind: "locked",
      reason: `it uses security handler revision ${r}, which the service does not implement`,
    };
  }
  if (!key) return { kind: "locked", reason: "it needs a password to open" };

  const fileKey = key;
  const objectKey = (num: number, gen: number, aes: boolean): Buffer => {
    const h = createHash("md5").update(fileKey);
    h.update(Buffer.from([num & 0xff, (num >> 8) & 0xff, (num >> 16) & 0xff, gen & 0xff, (gen >> 8) & 0xff]));
    if (aes) h.update(Buffer.from("sAlT", "latin1"));
    return h.digest().subarray(0, Math.min(fileKey.length + 5, 16));
  };
  const run = (method: Method, data: Uint8Array, num: number, gen: number): Uint8Array => {
    switch (method) {
      case "none":
        return data;
      case "rc4":
        return rc4(objectKey(num, gen, false), data);
      case "aes128":
        return aesCbcDecrypt("aes-128-cbc", objectKey(num, gen, true), data);
      case "aes256":
        return aesCbcDecrypt("aes-256-cbc", fileKey, data);
    }
  };
  const method = v === 5 ? "AES-256" : stmMethod === "aes128" ? "AES-128" : `RC4 ${fileKey.length * 8}-bit`;
  return {
    kind: "open",
    method,
    decryptor: {
      string: (bytes, num, gen) => run(strMethod, bytes, num, gen),
      stream: (bytes, num, gen, dict) => {
        const type = get(dict, "Type");
        if (isName(type, "XRef")) return bytes;
        if (!encryptMetadata && isName(type, "Metadata")) return bytes;
        // A stream's own Crypt filter naming Identity is not encrypted.
        const filter = get(dict, "Filter");
        const first = Array.isArray(filter) ? filter[0] : filter;
        if (isName(first, "Crypt")) {
          const parms = get(dict, "DecodeParms");
          const p0 = Array.isArray(parms) ? parms[0] : parms;
          const name = isDict(p0) ? get(p0, "Name") : undefined;
          if (!isName(name) || name.name === "Identity") return bytes;
        }
        return run(stmMethod, bytes, num, gen);
      },
    },
  };
}

function bytesOf(v: PdfValue | undefined): Uint8Array | undefined {
  return isString(v) ? v.bytes : undefined;
}

/** Algorithm 2: the file key from the (empty) user password, R2-R4. */
function legacyKey(
  r: number,
  n: number,
  o: Uint8Array,
  p: number,
  id: Uint8Array,
  encryptMetadata: boolean,
): Buffer {
  const h = createHash("md5");
  h.update(PAD); // the empty password, padded
  h.update(o.subarray(0, 32));
  const pb = Buffer.alloc(4);
  pb.writeInt32LE(p | 0);
  h.update(pb);
  h.update(id);
  if (r >= 4 && !encryptMetadata) h.update(Buffer.from([0xff, 0xff, 0xff, 0xff]));
  let key = h.digest();
  if (r >= 3) for (let i = 0; i < 50; i++) key = createHash("md5").update(key.subarray(0, n)).digest();
  return key.subarray(0, n);
}

/** Algorithms 4 and 5: whether `key` is the one the empty user password gives (compared with /U). */
function legacyUserPasswordMatches(r: number, key: Buffer, u: Uint8Array, id: Uint8Array): boolean {
  if (r === 2) return Buffer.from(rc4(key, PAD)).equals(Buffer.from(u.subarray(0, 32)));
  let x: Uint8Array = createHash("md5").update(PAD).update(id).digest();
  for (let i = 0; i < 20; i++) {
    const k = Buffer.from(key.map((b) => b ^ i));
    x = rc4(k, x);
  }
  return Buffer.from(x).equals(Buffer.from(u.subarray(0, 16)));
}

/** R5/R6: the file key from the empty user password, or undefined when it is not the user password. */
function aes256Key(r: number, u: Uint8Array, ue: PdfValue | undefined): Buffer | undefined {
  if (u.length < 48) return undefined;
  const password = Buffer.alloc(0);
  const hash = (salt: Uint8Array) =>
    r === 5
      ? createHash("sha256").update(password).update(salt).digest()
      : hash2B(password, salt, new Uint8Array(0));
  if (!hash(u.subarray(32, 40)).equals(Buffer.from(u.subarray(0, 32)))) return undefined;
  const ueBytes = bytesOf(ue);
  if (!ueBytes || ueBytes.length < 32) return undefined;
  const d = createDecipheriv("aes-256-cbc", hash(u.subarray(40, 48)), Buffer.alloc(16));
  d.setAutoPadding(false);
  return Buffer.concat([d.update(ueBytes.subarray(0, 32)), d.final()]);
}

/** ISO 32000-2 Algorithm 2.B: the hash of R6. */
function hash2B(password: Buffer, salt: Uint8Array, udata: Uint8Array): Buffer {
  let k = createHash("sha256").update(password).update(salt).update(udata).digest();
  // `round` counts the rounds done, including this one (1-based), as the standard and qpdf count them:
  // at least 64 rounds, then stop once E's last byte is at most round - 32. Counting from 0 here stopped
  // one round late whenever that byte was exactly round - 32 (about one R6 file in 20 with random salts).
  for (let round = 1; ; round++) {
    const k1 = Buffer.concat(Array.from({ length: 64 }, () => Buffer.concat([password, k, udata])));
    const c = createCipheriv("aes-128-cbc", k.subarray(0, 16), k.subarray(16, 32));
    c.setAutoPadding(false);
    const e = Buffer.concat([c.update(k1), c.final()]);
    let sum = 0;
    for (let j = 0; j < 16; j++) sum += e[j] as number;
    const algo = ["sha256", "sha384", "sha512"][sum % 3] as string;
    k = createHash(algo).update(e).digest();
    if (round >= 64 && (e[e.length - 1] as number) <= round - 32) break;
  }
  return k.subarray(0, 32);
}

/** AES-CBC with the IV in the first 16 bytes and PKCS#7 padding (tolerating a bad pad, as readers do). */
function aesCbcDecrypt(algo: "aes-128-cbc" | "aes-256-cbc", key: Buffer, data: Uint8Array): Uint8Array {
  if (data.length < 32 || data.length % 16 !== 0) {
    // An IV with no data decrypts to nothing; a truncated block cannot be decrypted.
    return data.length <= 16
      ? new Uint8Array(0)
      : data.subarray(16, 16 + Math.floor((data.length - 16) / 16) * 16);
  }
  const d = createDecipheriv(algo, key, data.subarray(0, 16));
  d.setAutoPadding(false);
  const out = Buffer.concat([d.update(data.subarray(16)), d.final()]);
  const pad = out[out.length - 1] as number;
  if (pad >= 1 && pad <= 16 && out.subarray(out.length - pad).every((b) => b === pad))
    return out.subarray(0, out.length - pad);
  return out;
}

/** RC4 (node's OpenSSL 3 no longer offers it by default). */
export function rc4(key: Uint8Array, data: Uint8Array): Uint8Array {
  const s = new Uint8Array(256);
  for (let i = 0; i < 256; i++) s[i] = i;
  for (let i = 0, j = 0; i < 256; i++) {
    j = (j + (s[i] as number) + (key[i % key.length] as number)) & 0xff;
    const t = s[i] as number;
    s[i] = s[j] as number;
    s[j] = t;
  }
  const out = new Uint8Array(data.length);
  for (let k = 0, i = 0, j = 0; k < data.length; k++) {
    i = (i + 1) & 0xff;
    j = (j + (s[i] as number)) & 0xff;
    const t = s[i] as number;
    s[i] = s[j] as number;
    s[j] = t;
    out[k] = (data[k] as number) ^ (s[((s[i] as number) + (s[j] as number)) & 0xff] as number);
  }
  return out;
}
