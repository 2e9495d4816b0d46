import { createPrivateKey, createPublicKey, generateKeyPairSync } from "node:crypto";
import { existsSync } from "node:fs";
import { mkdir, readdir, readFile, writeFile } from "node:fs/promises";
import path from "node:path";
import type { JWK } from "jose";
import { type AttestationSigner, createAttestationSigner } from "../api/attestation/signer.js";
import type { Config } from "../core/config.js";
import type { Logger } from "../core/step-context.js";

/** The file standalone generates its attestation key into, in the data directory. */
export const GENERATED_KEY_FILE = "attestation-key.jwk.json";

/** A new Ed25519 key pair as a private JWK (with `d`). */
export function generateAttestationJwk(): JWK {
  const { privateKey } = generateKeyPairSync("ed25519");
  return privateKey.export({ format: "jwk" }) as JWK;
}

/** One key file's JWKs: a JWK, a JWK Set (`{"keys": [...]}`) or a PEM key (private PKCS#8 or public SPKI). */
export function parseKeyFile(text: string, file: string, want: "private" | "public"): JWK[] {
  const trimmed = text.trim();
  if (trimmed.startsWith("{")) {
    let parsed: unknown;
    try {
      parsed = JSON.parse(trimmed);
    } catch (err) {
      throw new Error(`${file} is not valid JSON (${(err as Error).message}); expected a JWK or a JWK Set.`);
    }
    const keys = (parsed as { keys?: unknown }).keys;
    return Array.isArray(keys) ? (keys as JWK[]) : [parsed as JWK];
  }
  if (trimmed.includes("-----BEGIN")) {
    try {
      const key =
        want === "private" || trimmed.includes("PRIVATE KEY")
          ? createPrivateKey(trimmed)
          : createPublicKey(trimmed);
      return [key.export({ format: "jwk" }) as JWK];
    } catch (err) {
      throw new Error(`${file} holds no key that can be read (${(err as Error).message}).`);
    }
  }
  throw new Error(`${file} is neither a JWK (JSON) nor a PEM key.`);
}

async function readPrevious(dirOrFiles: string): Promise<JWK[]> {
  const out: JWK[] = [];
  for (const entry of dirOrFiles
    .split(",")
    .map((s) => s.trim())
    .filter(Boolean)) {
    const files = existsSync(entry) && (await readdir(entry, { withFileTypes: true }).catch(() => null));
    const paths = files
      ? files
          .filter((f) => !f.name.startsWith(".") && (f.isFile() || f.isSymbolicLink()))
          .map((f) => path.join(entry, f.name))
          .sort()
      : [entry];
    for (const p of paths) out.push(...parseKeyFile(await readFile(p, "utf8"), p, "public"));
  }
  return out;
}

/**
 * The attestation signer of this process: the private key of DOCVERIFY_ATTESTATION_KEY_FILE (in a cluster
 * mounted from a Secret, charts/docverify values `attestation.keySecret`), or — standalone, with none
 * configured — one generated on first start into `generateInto` (0600) and logged; plus the public keys of
 * DOCVERIFY_ATTESTATION_PREVIOUS_KEYS (a directory or comma-separated files) in the JWKS. Null when no key is
 * configured and none may be generated (cluster): the attestation route then answers 503.
 */
export async function loadAttestationSigner(
  config: Config,
  opts: { log: Logger; serviceVersion: string; generateInto?: string },
): Promise<AttestationSigner | null> {
  let file = config.attestationKeyFile;
  if (!file && opts.generateInto) {
    file = path.join(opts.generateInto, GENERATED_KEY_FILE);
    if (!existsSync(file)) {
      await mkdir(opts.generateInto, { recursive: true });
      const written = await writeFile(file, `${JSON.stringify(generateAttestationJwk())}\n`, {
        mode: 0o600,
        flag: "wx",
      }).then(
        () => true,
        (e: NodeJS.ErrnoException) => {
          if (e.code !== "EEXIST") throw e;
          return false;
        },
      );
      if (written) {
        opts.log.warn(
          { file },
          "generated a new attestation signing key (no DOCVERIFY_ATTESTATION_KEY_FILE is set); keep this file: attestations verify only with its public half",
        );
      }
    }
  }
  if (!file) {
    opts.log.warn(
      "no attestation signing key (DOCVERIFY_ATTESTATION_KEY_FILE): GET /v1/detection/{id}/attestation answers 503",
    );
    return null;
  }
  const [privateJwk, ...extra] = parseKeyFile(await readFile(file, "utf8"), file, "private");
  if (!privateJwk || extra.length > 0) {
    throw new Error(`${file} must hold exactly one private key (the current attestation key).`);
  }
  const previous = config.attestationPreviousKeys ? await readPrevious(config.attestationPreviousKeys) : [];
  const signer = await createAttestationSigner({ privateJwk, previous, serviceVersion: opts.serviceVersion });
  opts.log.info(
    { kid: signer.kid, previousKeys: signer.jwks().keys.length - 1 },
    "attestation signing key loaded",
  );
  return signer;
}
