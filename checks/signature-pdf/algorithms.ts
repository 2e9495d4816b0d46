import { constants, createHash, type KeyObject, verify } from "node:crypto";
import * as asn1js from "asn1js";
import type * as pkijs from "pkijs";

/**
 * The digest and signature algorithms PDF signers use, mapped to node:crypto (OpenSSL) primitives: RSA
 * PKCS#1 v1.5 and RSASSA-PSS, ECDSA (P-256/384/521), Ed25519, Ed448 and DSA, over SHA-1, SHA-2, SHA-3
 * and SHAKE256. Nothing here computes a signature by hand: this module only decides which primitive a
 * CMS/X.509 algorithm identifier names, with which parameters, and whether the combination is one the
 * scheme allows (RFC 5754, RFC 8419, RFC 4056).
 */

export interface Digest {
  /** The algorithm as a reviewer reads it ("SHA-256"). */
  label: string;
  hash(data: Uint8Array): Buffer;
  /** MD5 and SHA-1: collisions can be made, so a signature over one proves little. */
  weak: boolean;
  /** node:crypto's name for it, when node can use it inside a signature primitive. */
  node?: string;
}

const OID_SHAKE256 = "2.16.840.1.101.3.4.2.12";
const OID_SHAKE256_LEN = "2.16.840.1.101.3.4.2.18";

const NODE_HASHES: Record<string, [string, string, boolean]> = {
  "1.2.840.113549.2.5": ["md5", "MD5", true],
  "1.3.14.3.2.26": ["sha1", "SHA-1", true],
  "2.16.840.1.101.3.4.2.4": ["sha224", "SHA-224", false],
  "2.16.840.1.101.3.4.2.1": ["sha256", "SHA-256", false],
  "2.16.840.1.101.3.4.2.2": ["sha384", "SHA-384", false],
  "2.16.840.1.101.3.4.2.3": ["sha512", "SHA-512", false],
  "2.16.840.1.101.3.4.2.5": ["sha512-224", "SHA-512/224", false],
  "2.16.840.1.101.3.4.2.6": ["sha512-256", "SHA-512/256", false],
  "2.16.840.1.101.3.4.2.7": ["sha3-224", "SHA3-224", false],
  "2.16.840.1.101.3.4.2.8": ["sha3-256", "SHA3-256", false],
  "2.16.840.1.101.3.4.2.9": ["sha3-384", "SHA3-384", false],
  "2.16.840.1.101.3.4.2.10": ["sha3-512", "SHA3-512", false],
};

/** The digest an AlgorithmIdentifier names, or why it cannot be used. */
export function digestFor(alg: pkijs.AlgorithmIdentifier): Digest | { error: string } {
  const oid = hashOidOf(alg.algorithmId);
  const known = NODE_HASHES[oid];
  if (known) {
    const [node, label, weak] = known;
    return { label, weak, node, hash: (d) => createHash(node).update(d).digest() };
  }
  if (oid === OID_SHAKE256 || oid === OID_SHAKE256_LEN) {
    // id-shake256 in CMS means a 512-bit output (RFC 8419 §2.3); id-shake256-len states its length.
    let bits = 512;
    if (oid === OID_SHAKE256_LEN) {
      const p = alg.algorithmParams;
      const n = p instanceof asn1js.Integer ? p.valueBlock.valueDec : undefined;
      if (n === undefined || n <= 0 || n > 8192)
        return { error: "SHAKE256 with an unreadable output length" };
      bits = n;
    }
    const bytes = bits / 8;
    return {
      label: bits === 512 ? "SHAKE256" : `SHAKE256/${bits}`,
      weak: false,
      hash: (d) => createHash("shake256", { outputLength: bytes }).update(d).digest(),
    };
  }
  return { error: `an unsupported digest algorithm (${alg.algorithmId})` };
}

type Scheme = "rsa" | "rsa-pss" | "ecdsa" | "ed25519" | "ed448" | "dsa";

interface SchemeInfo {
  scheme: Scheme;
  /** The digest the algorithm identifier itself fixes (sha256WithRSAEncryption → SHA-256). */
  hashOid?: string;
}

const SHA1 = "1.3.14.3.2.26";
const SHA224 = "2.16.840.1.101.3.4.2.4";
const SHA256 = "2.16.840.1.101.3.4.2.1";
const SHA384 = "2.16.840.1.101.3.4.2.2";
const SHA512 = "2.16.840.1.101.3.4.2.3";
const SHA3 = (bits: 224 | 256 | 384 | 512) =>
  `2.16.840.1.101.3.4.2.${{ 224: 7, 256: 8, 384: 9, 512: 10 }[bits]}`;

const SIGNATURE_ALGS: Record<string, SchemeInfo> = {
  "1.2.840.113549.1.1.1": { scheme: "rsa" },
  "1.2.840.113549.1.1.4": { scheme: "rsa", hashOid: "1.2.840.113549.2.5" },
  "1.2.840.113549.1.1.5": { scheme: "rsa", hashOid: SHA1 },
  "1.2.840.113549.1.1.14": { scheme: "rsa", hashOid: SHA224 },
  "1.2.840.113549.1.1.11": { scheme: "rsa", hashOid: SHA256 },
  "1.2.840.113549.1.1.12": { scheme: "rsa", hashOid: SHA384 },
  "1.2.840.113549.1.1.13": { scheme: "rsa", hashOid: SHA512 },
  "2.16.840.1.101.3.4.3.13": { scheme: "rsa", hashOid: SHA3(224) },
  "2.16.840.1.101.3.4.3.14": { scheme: "rsa", hashOid: SHA3(256) },
  "2.16.840.1.101.3.4.3.15": { scheme: "rsa", hashOid: SHA3(384) },
  "2.16.840.1.101.3.4.3.16": { scheme: "rsa", hashOid: SHA3(512) },
  "1.2.840.113549.1.1.10": { scheme: "rsa-pss" },
  // id-ecPublicKey as a signature algorithm: ECDSA with the SignerInfo's digest (seen in real files).
  "1.2.840.10045.2.1": { scheme: "ecdsa" },
  "1.2.840.10045.4.1": { scheme: "ecdsa", hashOid: SHA1 },
  "1.2.840.10045.4.3.1": { scheme: "ecdsa", hashOid: SHA224 },
  "1.2.840.10045.4.3.2": { scheme: "ecdsa", hashOid: SHA256 },
  "1.2.840.10045.4.3.3": { scheme: "ecdsa", hashOid: SHA384 },
  "1.2.840.10045.4.3.4": { scheme: "ecdsa", hashOid: SHA512 },
  "2.16.840.1.101.3.4.3.9": { scheme: "ecdsa", hashOid: SHA3(224) },
  "2.16.840.1.101.3.4.3.10": { scheme: "ecdsa", hashOid: SHA3(256) },
  "2.16.840.1.101.3.4.3.11": { scheme: "ecdsa", hashOid: SHA3(384) },
  "2.16.840.1.101.3.4.3.12": { scheme: "ecdsa", hashOid: SHA3(512) },
  "1.3.101.112": { scheme: "ed25519" },
  "1.3.101.113": { scheme: "ed448" },
  "1.2.840.10040.4.1": { scheme: "dsa" },
  "1.2.840.10040.4.3": { scheme: "dsa", hashOid: SHA1 },
  "2.16.840.1.101.3.4.3.1": { scheme: "dsa", hashOid: SHA224 },
  "2.16.840.1.101.3.4.3.2": { scheme: "dsa", hashOid: SHA256 },
};

/**
 * Signature algorithm identifiers that some signers put in the digestAlgorithm field instead of the
 * digest's own identifier (seen in real files) mean the hash they fix.
 */
const hashOidOf = (oid: string): string => SIGNATURE_ALGS[oid]?.hashOid ?? oid;

const KEY_TYPES: Record<Scheme, string[]> = {
  rsa: ["rsa"],
  "rsa-pss": ["rsa", "rsa-pss"],
  ecdsa: ["ec"],
  ed25519: ["ed25519"],
  ed448: ["ed448"],
  dsa: ["dsa"],
};

const SCHEME_LABEL: Record<Scheme, string> = {
  rsa: "RSA",
  "rsa-pss": "RSA-PSS",
  ecdsa: "ECDSA",
  ed25519: "Ed25519",
  ed448: "Ed448",
  dsa: "DSA",
};

export interface SignatureCheck {
  ok: boolean;
  /** "RSA with SHA-256", "Ed448", ... */
  label: string;
  /** Why it does not verify (or cannot be checked), as a sentence fragment. */
  reason?: string;
  /** The algorithms are ones the signature cannot be trusted with (MD5, SHA-1). */
  weak?: string;
  /** The scheme or its parameters are not supported (not the same as a wrong signature). */
  unsupported?: boolean;
}

function pssParams(
  alg: pkijs.AlgorithmIdentifier,
): { hashOid: string; saltLength: number } | { error: string } {
  // RSASSA-PSS-params (RFC 4055): hashAlgorithm [0] default SHA-1, maskGenAlgorithm [1] default MGF1(SHA-1),
  // saltLength [2] default 20, trailerField [3] default 1.
  let hashOid = SHA1;
  let mgfHash = SHA1;
  let saltLength = 20;
  const seq = alg.algorithmParams;
  if (seq instanceof asn1js.Sequence) {
    for (const item of seq.valueBlock.value) {
      const tag = item.idBlock.tagNumber;
      const inner = (item as asn1js.Constructed).valueBlock?.value?.[0];
      if (tag === 0 && inner instanceof asn1js.Sequence) {
        const id = inner.valueBlock.value[0];
        if (id instanceof asn1js.ObjectIdentifier) hashOid = id.valueBlock.toString();
      } else if (tag === 1 && inner instanceof asn1js.Sequence) {
        const [mgf, mgfAlg] = inner.valueBlock.value;
        if (!(mgf instanceof asn1js.ObjectIdentifier) || mgf.valueBlock.toString() !== "1.2.840.113549.1.1.8")
          return { error: "RSA-PSS with a mask generation function other than MGF1" };
        const id = mgfAlg instanceof asn1js.Sequence ? mgfAlg.valueBlock.value[0] : undefined;
        if (id instanceof asn1js.ObjectIdentifier) mgfHash = id.valueBlock.toString();
      } else if (tag === 2 && inner instanceof asn1js.Integer) {
        saltLength = inner.valueBlock.valueDec;
      } else if (tag === 3 && inner instanceof asn1js.Integer && inner.valueBlock.valueDec !== 1) {
        return { error: "RSA-PSS with a trailer field other than 1" };
      }
    }
  } else if (seq !== undefined && !(seq instanceof asn1js.Null)) {
    return { error: "RSA-PSS with unreadable parameters" };
  }
  // node:crypto (OpenSSL's EVP_PKEY_verify with PSS padding) uses the signature hash for MGF1 as well.
  if (mgfHash !== hashOid) return { error: "RSA-PSS whose MGF1 hash differs from its message hash" };
  if (!Number.isSafeInteger(saltLength) || saltLength < 0 || saltLength > 1024)
    return { error: "RSA-PSS with an impossible salt length" };
  return { hashOid, saltLength };
}

/**
 * Verifies `signature` over `data` with `key`, for the algorithm `sigAlg` names. `digestAlg` is the CMS
 * SignerInfo's digestAlgorithm when there is one (the hash the signer applied, RFC 5652 §5.4); for
 * certificates, CRLs and OCSP responses the signature algorithm alone fixes it.
 *
 * Combinations the schemes forbid fail here: Ed25519 with anything but SHA-512 and Ed448 with anything
 * but SHAKE256 as the CMS digest (RFC 8419 §3), an identifier that fixes one hash used with another
 * digest, a key of another type than the algorithm names.
 */
export function verifySignature(opts: {
  sigAlg: pkijs.AlgorithmIdentifier;
  digestAlg?: pkijs.AlgorithmIdentifier;
  key: KeyObject;
  data: Uint8Array;
  signature: Uint8Array;
}): SignatureCheck {
  const info = SIGNATURE_ALGS[opts.sigAlg.algorithmId];
  if (!info)
    return {
      ok: false,
      unsupported: true,
      label: opts.sigAlg.algorithmId,
      reason: `it uses a signature algorithm this service does not support (${opts.sigAlg.algorithmId})`,
    };
  const keyType = opts.key.asymmetricKeyType ?? "unknown";
  let label = SCHEME_LABEL[info.scheme];
  if (!KEY_TYPES[info.scheme].includes(keyType))
    return {
      ok: false,
      label,
      reason: `it claims ${label} but the signer's certificate holds a ${keyType.toUpperCase()} key`,
    };

  if (info.scheme === "ed25519" || info.scheme === "ed448") {
    if (opts.digestAlg) {
      const d = digestFor(opts.digestAlg);
      const oid = opts.digestAlg.algorithmId;
      const allowed =
        info.scheme === "ed25519"
          ? oid === SHA512
          : oid === OID_SHAKE256 || (oid === OID_SHAKE256_LEN && "label" in d && d.label === "SHAKE256");
      if (!allowed)
        return {
          ok: false,
          label,
          reason: `${label} requires ${info.scheme === "ed25519" ? "SHA-512" : "SHAKE256 (512-bit output)"} as the CMS digest algorithm (RFC 8419), but this signature uses ${"label" in d ? d.label : opts.digestAlg.algorithmId}`,
        };
    }
    const ok = safeVerify(null, opts.data, opts.key, opts.signature);
    return ok === "error"
      ? { ok: false, label, reason: "the signature value is malformed" }
      : { ok, label, ...(ok ? {} : { reason: "the signature value does not match the signed data" }) };
  }

  let hashOid = info.hashOid;
  let saltLength: number | undefined;
  if (info.scheme === "rsa-pss") {
    const p = pssParams(opts.sigAlg);
    if ("error" in p) return { ok: false, unsupported: true, label, reason: `it uses ${p.error}` };
    hashOid = p.hashOid;
    saltLength = p.saltLength;
  }
  const digestOid = opts.digestAlg ? hashOidOf(opts.digestAlg.algorithmId) : undefined;
  if (hashOid && digestOid && hashOid !== digestOid) {
    const a = NODE_HASHES[hashOid]?.[1] ?? hashOid;
    const b = NODE_HASHES[digestOid]?.[1] ?? digestOid;
    return {
      ok: false,
      label,
      reason: `its signature algorithm fixes ${a} but its digest algorithm is ${b}`,
    };
  }
  hashOid ??= digestOid;
  const hash = hashOid ? NODE_HASHES[hashOid] : undefined;
  if (!hash)
    return {
      ok: false,
      unsupported: true,
      label,
      reason: `it uses ${label} with a digest this service cannot use there (${hashOid ?? "none named"})`,
    };
  const [nodeHash, hashLabel, weak] = hash;
  label = `${label} with ${hashLabel}`;
  const key =
    info.scheme === "rsa-pss"
      ? { key: opts.key, padding: constants.RSA_PKCS1_PSS_PADDING, saltLength }
      : info.scheme === "rsa"
        ? { key: opts.key, padding: constants.RSA_PKCS1_PADDING }
        : { key: opts.key, dsaEncoding: "der" as const };
  const ok = safeVerify(nodeHash, opts.data, key, opts.signature);
  const out: SignatureCheck =
    ok === "error"
      ? { ok: false, label, reason: "the signature value is malformed" }
      : { ok, label, ...(ok ? {} : { reason: "the signature value does not match the signed data" }) };
  if (weak) out.weak = hashLabel;
  return out;
}

function safeVerify(
  hash: string | null,
  data: Uint8Array,
  key: Parameters<typeof verify>[2],
  sig: Uint8Array,
): boolean | "error" {
  try {
    return verify(hash, data, key, sig);
  } catch {
    return "error";
  }
}
