import { createHash } from "node:crypto";
import { compactVerify, createLocalJWKSet, decodeProtectedHeader, type JSONWebKeySet } from "jose";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { CheckResult } from "../../core/check-result.js";
import type { Detection } from "../../core/detection.js";
import { createAttestationSigner } from "../attestation/signer.js";
import { call, createHarness, type Harness, testAttestationJwk } from "../testdata/app-kit.js";
import { completeForAttestation } from "../testdata/attestation-kit.js";
import { createDetection, sampleChecks } from "../testdata/evidence-kit.js";

const BYTES = new TextEncoder().encode(
  "%PDF-1.7\n% a statement\n1 0 obj << >> endobj\ntrailer << >>\n%%EOF\n",
);
const versioned = (checks: CheckResult[]) => checks.map((c, i) => ({ ...c, version: `1.00000000000${i}` }));

let h: Harness;
let alice: string;
let bob: string;
beforeAll(async () => {
  h = await createHarness();
  alice = await h.token("alice");
  bob = await h.token("bob");
});
afterAll(() => h.close());

const jwksOf = async (harness: Harness) => {
  const r = await call(harness, "GET", "/.well-known/jwks.json");
  expect(r.status).toBe(200);
  return r.body as JSONWebKeySet;
};
const attestationOf = (id: string, token = alice, harness = h) =>
  call(harness, "GET", `/v1/detection/${id}/attestation`, { token });
const verify = async (jws: string, jwks: JSONWebKeySet) => {
  const { payload, protectedHeader } = await compactVerify(jws, createLocalJWKSet(jwks));
  return { payload: JSON.parse(new TextDecoder().decode(payload)), header: protectedHeader };
};

describe("GET /.well-known/jwks.json", () => {
  it("is public and lists only the public members of the Ed25519 key", async () => {
    const jwks = await jwksOf(h);
    expect(jwks.keys).toHaveLength(1);
    const [key] = jwks.keys;
    expect(Object.keys(key ?? {}).sort()).toEqual(["alg", "crv", "kid", "kty", "use", "x"]);
    expect(key).toMatchObject({ kty: "OKP", crv: "Ed25519", alg: "EdDSA", use: "sig" });
    expect(JSON.stringify(jwks)).not.toMatch(/"d"\s*:/);
  });
});

describe("GET /v1/detection/{id}/attestation", () => {
  it("a completed detection: a JWS that verifies with the JWKS, over the document's sha256, findings and verdict", async () => {
    const id = await createDetection(h, alice);
    const checks = versioned(sampleChecks());
    await completeForAttestation(h, id, BYTES, checks);
    const r = await attestationOf(id);
    expect(r.status).toBe(200);
    expect(Object.keys(r.body)).toEqual(["attestation"]);
    const { payload, header } = await verify(r.body.attestation, await jwksOf(h));
    expect(header).toMatchObject({
      alg: "EdDSA",
      kid: h.deps.attestation?.kid,
      typ: "docverify-attestation+jwt",
    });
    expect(payload.document_sha256).toBe(createHash("sha256").update(BYTES).digest("hex"));
    expect(payload.detection_id).toBe(id);
    expect(payload.client_id).toBe("alice");
    expect(payload.service).toEqual({ name: "docverify", version: "0.0.0-test" });
    expect(payload.checks).toEqual([
      { id: "layout.overlay", version: "1.000000000000", outcome: "flag", severity: 9 },
      { id: "text.arithmetic", version: "1.000000000001", outcome: "flag", severity: 9 },
      { id: "file.type", version: "1.000000000002", outcome: "pass", severity: 0 },
    ]);
    expect(payload.findings).toEqual([
      {
        check_id: "layout.overlay",
        code: "text_covered_and_replaced",
        severity: 9,
        page: 1,
        bbox: [480, 400, 540, 412],
      },
      {
        check_id: "text.arithmetic",
        code: "closing_balance_mismatch",
        severity: 9,
        page: 1,
        bbox: [482, 401, 539, 411],
      },
    ]);
    expect(payload.policy).toEqual({ name: "default", version: 3 });
    expect(payload.verdict).toEqual({
      fraud_score: 88,
      risk_level: "high",
      document_type_match: true,
      actual_doc_type: "bank_statement",
    });
    expect(payload.completed_at).toBe(h.clock.now().toISOString());
  });

  it("is stable: asked twice (later), the same JWS", async () => {
    const id = await createDetection(h, alice);
    await completeForAttestation(h, id, BYTES, sampleChecks());
    const first = await attestationOf(id);
    h.clock.advance(60_000);
    const second = await attestationOf(id);
    expect(second.body.attestation).toBe(first.body.attestation);
  });

  it("one changed byte of the payload (a finding, the document's hash) fails verification", async () => {
    const id = await createDetection(h, alice);
    await completeForAttestation(h, id, BYTES, sampleChecks());
    const jws: string = (await attestationOf(id)).body.attestation;
    const [head, body, sig] = jws.split(".");
    const payload = JSON.parse(Buffer.from(body ?? "", "base64url").toString("utf8"));
    payload.findings[0].severity = 2;
    const forged = `${head}.${Buffer.from(JSON.stringify(payload)).toString("base64url")}.${sig}`;
    await expect(verify(forged, await jwksOf(h))).rejects.toThrow(/signature verification failed/);
  });

  it("another client's detection is 404, as GET detection; an unknown one too", async () => {
    const id = await createDetection(h, alice);
    await completeForAttestation(h, id, BYTES, sampleChecks());
    const other = await attestationOf(id, bob);
    expect(other.status).toBe(404);
    expect(other.body).toEqual({ detail: "Detection not found" });
    expect((await call(h, "GET", `/v1/detection/${id}`, { token: bob })).status).toBe(404);
    expect((await attestationOf("det-01jd5x9q3m8w2v7k4c6b0n1r2t")).status).toBe(404);
  });

  it("not COMPLETED: 409 that says when it will be available; FAILED: 409; pruned: 410", async () => {
    const id = await createDetection(h, alice);
    const queued = await attestationOf(id);
    expect(queued.status).toBe(409);
    expect(queued.body.detail).toBe(
      `Detection ${id} is QUEUED: an attestation is available once it is COMPLETED.`,
    );
    const stored = (await h.store.get(id)) as Detection;
    await h.store.updateStatus({ ...stored, status: { ...stored.status, phase: "Failed" } });
    const failed = await attestationOf(id);
    expect(failed.status).toBe(409);
    expect(failed.body.detail).toBe(`Detection ${id} is FAILED: it has no result to attest.`);

    const done = await createDetection(h, alice);
    await completeForAttestation(h, done, BYTES, sampleChecks());
    const c = (await h.store.get(done)) as Detection;
    await h.store.updateStatus({
      ...c,
      status: { ...c.status, verdict: null, prunedAt: h.clock.now().toISOString() },
    });
    const pruned = await attestationOf(done);
    expect(pruned.status).toBe(410);
    expect(pruned.body.detail).toMatch(/can no longer be attested: its verdict was removed/);
  });

  it("needs the detections:get scope", async () => {
    const id = await createDetection(h, alice);
    await completeForAttestation(h, id, BYTES, sampleChecks());
    const token = await h.token("alice", "DocumentVerification:detections:create");
    const r = await attestationOf(id, token);
    expect(r.status).toBe(403);
    expect(r.body.detail).toBe("Missing required scopes: DocumentVerification:detections:get");
  });

  it("after a key rotation an attestation signed with the old key still verifies with the JWKS that lists it", async () => {
    const oldJwk = testAttestationJwk();
    const before = await createHarness({
      attestation: await createAttestationSigner({ privateJwk: oldJwk, serviceVersion: "1" }),
    });
    const newJwk = testAttestationJwk();
    const { d: _private, ...oldPublic } = oldJwk;
    const after = await createHarness({
      objects: before.deps.objects,
      attestation: await createAttestationSigner({
        privateJwk: newJwk,
        previous: [oldPublic],
        serviceVersion: "2",
      }),
    });
    try {
      const t = await before.token("alice");
      const id = await createDetection(before, t);
      await completeForAttestation(before, id, BYTES, sampleChecks());
      const old: string = (await attestationOf(id, t, before)).body.attestation;
      const rotated = await jwksOf(after);
      expect(rotated.keys.map((k) => k.kid)).toEqual([
        after.deps.attestation?.kid,
        before.deps.attestation?.kid,
      ]);
      expect(JSON.stringify(rotated)).not.toMatch(/"d"\s*:/);
      const { header } = await verify(old, rotated);
      expect(header.kid).toBe(before.deps.attestation?.kid);
      // The new key signs from now on, and a JWKS without the old key refuses the old attestation.
      expect(decodeProtectedHeader(old).kid).not.toBe(after.deps.attestation?.kid);
      const withoutOld = { keys: rotated.keys.slice(0, 1) };
      await expect(verify(old, withoutOld)).rejects.toThrow();
    } finally {
      await before.close();
      await after.close();
    }
  });
});
