import { generateKeyPairSync } from "node:crypto";
import { mkdir, mkdtemp, rm, stat, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { compactVerify, createLocalJWKSet } from "jose";
import pino from "pino";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadConfig } from "../core/config.js";
import { GENERATED_KEY_FILE, generateAttestationJwk, loadAttestationSigner } from "./attestation-keys.js";

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), "docverify-attkeys-"));
});
afterAll(() => rm(dir, { recursive: true, force: true }));

/** A logger that keeps its lines. */
function recordingLog() {
  const lines: { msg: string; file?: string }[] = [];
  const log = pino({ level: "info" }, { write: (s: string) => lines.push(JSON.parse(s)) });
  return { log, lines };
}

describe("loadAttestationSigner", () => {
  it("standalone without a key: generates one into the data directory (0600), logs it, and reuses it", async () => {
    const data = path.join(dir, "data");
    const { log, lines } = recordingLog();
    const first = await loadAttestationSigner(loadConfig({}), {
      log,
      serviceVersion: "1",
      generateInto: data,
    });
    const file = path.join(data, GENERATED_KEY_FILE);
    expect((await stat(file)).mode & 0o777).toBe(0o600);
    expect(lines.some((l) => /generated a new attestation signing key/.test(l.msg) && l.file === file)).toBe(
      true,
    );
    const again = await loadAttestationSigner(loadConfig({}), {
      log,
      serviceVersion: "1",
      generateInto: data,
    });
    expect(again?.kid).toBe(first?.kid);
    expect(lines.filter((l) => /generated/.test(l.msg))).toHaveLength(1);
  });

  it("cluster without a key: none (the route answers 503), and says so", async () => {
    const { log, lines } = recordingLog();
    expect(await loadAttestationSigner(loadConfig({}), { log, serviceVersion: "1" })).toBeNull();
    expect(lines.some((l) => /no attestation signing key/.test(l.msg))).toBe(true);
  });

  it("reads a PKCS#8 PEM key (what the chart generates) and a directory of previous public keys", async () => {
    const pem = generateKeyPairSync("ed25519").privateKey.export({ format: "pem", type: "pkcs8" }) as string;
    const keyFile = path.join(dir, "key.pem");
    await writeFile(keyFile, pem);
    const prevDir = path.join(dir, "previous");
    await mkdir(prevDir);
    const old = generateAttestationJwk();
    const { d: _d, ...oldPublic } = old;
    await writeFile(path.join(prevDir, "2025.json"), JSON.stringify(oldPublic));
    const spki = generateKeyPairSync("ed25519").publicKey.export({ format: "pem", type: "spki" }) as string;
    await writeFile(path.join(prevDir, "2024.pem"), spki);
    await writeFile(path.join(prevDir, ".hidden"), "not a key");
    const { log } = recordingLog();
    const signer = await loadAttestationSigner(
      loadConfig({ DOCVERIFY_ATTESTATION_KEY_FILE: keyFile, DOCVERIFY_ATTESTATION_PREVIOUS_KEYS: prevDir }),
      { log, serviceVersion: "1" },
    );
    const jwks = signer!.jwks();
    expect(jwks.keys).toHaveLength(3);
    for (const k of jwks.keys)
      expect(Object.keys(k).sort()).toEqual(["alg", "crv", "kid", "kty", "use", "x"]);
    const jws = await signer!.sign({ hello: "world" } as never);
    const { protectedHeader } = await compactVerify(jws, createLocalJWKSet(jwks as never));
    expect(protectedHeader.kid).toBe(signer!.kid);
  });

  it("refuses a public key as the signing key, and a key of another curve, with a sentence", async () => {
    const { log } = recordingLog();
    const pub = path.join(dir, "public.json");
    const { d: _d, ...publicJwk } = generateAttestationJwk();
    await writeFile(pub, JSON.stringify(publicJwk));
    await expect(
      loadAttestationSigner(loadConfig({ DOCVERIFY_ATTESTATION_KEY_FILE: pub }), {
        log,
        serviceVersion: "1",
      }),
    ).rejects.toThrow(/has no private part/);
    const ec = path.join(dir, "ec.pem");
    await writeFile(
      ec,
      generateKeyPairSync("ec", { namedCurve: "P-256" }).privateKey.export({
        format: "pem",
        type: "pkcs8",
      }) as string,
    );
    await expect(
      loadAttestationSigner(loadConfig({ DOCVERIFY_ATTESTATION_KEY_FILE: ec }), { log, serviceVersion: "1" }),
    ).rejects.toThrow(/is not an Ed25519 JWK/);
  });
});
