import { CompactSign, calculateJwkThumbprint, importJWK, type JWK } from "jose";
import {
  ATTESTATION_ALG,
  ATTESTATION_TYP,
  type AttestationPayload,
  publicJwkOf,
} from "../../core/attestation.js";

/**
 * Signs attestations (core/attestation.ts) with the deployment's current Ed25519 key and publishes the
 * public halves of it and of every previous key (GET /.well-known/jwks.json), so attestations signed before
 * a rotation still verify. bin/attestation-keys.ts reads the keys; tests build one from generated keys.
 */
export interface AttestationSigner {
  /** The current key's id: its RFC 7638 thumbprint, unless the JWK names its own `kid`. */
  kid: string;
  /** The service version written into every payload. */
  serviceVersion: string;
  /** The compact JWS of a payload (protected header: alg EdDSA, kid, typ). */
  sign(payload: AttestationPayload): Promise<string>;
  /** The public keys: the current one first, then the previous ones; no private member ever. */
  jwks(): { keys: Record<string, unknown>[] };
}

export class AttestationKeyError extends Error {
  override name = "AttestationKeyError";
}

/** The kid of a JWK: its own, else its RFC 7638 SHA-256 thumbprint. */
export async function kidOf(jwk: JWK): Promise<string> {
  return typeof jwk.kid === "string" && jwk.kid !== "" ? jwk.kid : calculateJwkThumbprint(jwk, "sha256");
}

function requireEd25519(jwk: JWK, what: string): void {
  if (jwk.kty !== "OKP" || jwk.crv !== "Ed25519" || typeof jwk.x !== "string") {
    throw new AttestationKeyError(
      `${what} is not an Ed25519 JWK (expected "kty": "OKP", "crv": "Ed25519" and "x"; attestations are signed with EdDSA).`,
    );
  }
}

/** The published form of a public key: kty, crv, x, kid, alg, use — nothing else. */
function published(jwk: JWK, kid: string): Record<string, unknown> {
  const pub = publicJwkOf(jwk as Record<string, unknown>);
  return { kty: pub.kty, crv: pub.crv, x: pub.x, kid, alg: ATTESTATION_ALG, use: "sig" };
}

export async function createAttestationSigner(opts: {
  /** The current private key (an Ed25519 JWK with `d`). */
  privateJwk: JWK;
  /** Public (or private: only the public members are used) JWKs of keys used before a rotation. */
  previous?: readonly JWK[];
  serviceVersion: string;
}): Promise<AttestationSigner> {
  const { privateJwk } = opts;
  requireEd25519(privateJwk, "The attestation signing key");
  if (typeof privateJwk.d !== "string") {
    throw new AttestationKeyError(
      'The attestation signing key has no private part ("d"): give the private JWK, not its public half.',
    );
  }
  const kid = await kidOf(privateJwk);
  const key = await importJWK({ ...privateJwk, alg: ATTESTATION_ALG }, ATTESTATION_ALG);
  const keys = [published(privateJwk, kid)];
  for (const [i, prev] of (opts.previous ?? []).entries()) {
    requireEd25519(prev, `Previous attestation key ${i + 1}`);
    const prevKid = await kidOf(publicJwkOf(prev as Record<string, unknown>) as JWK);
    if (!keys.some((k) => k.kid === prevKid)) keys.push(published(prev, prevKid));
  }
  const encoder = new TextEncoder();
  return {
    kid,
    serviceVersion: opts.serviceVersion,
    sign: (payload) =>
      new CompactSign(encoder.encode(JSON.stringify(payload)))
        .setProtectedHeader({ alg: ATTESTATION_ALG, kid, typ: ATTESTATION_TYP })
        .sign(key),
    jwks: () => ({ keys: keys.map((k) => ({ ...k })) }),
  };
}
