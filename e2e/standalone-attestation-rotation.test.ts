/**
 * Attestation key rotation on the running standalone service (issue 26, docs/api.md "Signed attestations"):
 * a detection's attestation is fetched under the key standalone generated on first start; the operator then
 * rotates the way the docs say (a new key in DOCVERIFY_ATTESTATION_KEY_FILE, the old key file listed in
 * DOCVERIFY_ATTESTATION_PREVIOUS_KEYS) and restarts. The old attestation still verifies (`docverify verify`)
 * against the new GET /.well-known/jwks.json, a new detection is signed with the new kid, and one changed byte
 * of the document or one changed finding is refused.
 */
import { generateKeyPairSync } from "node:crypto";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { decodeProtectedHeader } from "jose";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { makeMetadataTamperedPdf } from "../fixtures/documents.js";
import { GENERATED_KEY_FILE } from "../bin/attestation-keys.js";
import { CLIENTS, ENTRY, runNode, type Service, startFileServer, startService } from "./harness.js";

let files: Awaited<ReturnType<typeof startFileServer>>;
let svc: Service;
let tmp: string;
const docs: Record<string, Uint8Array> = {};
beforeAll(async () => {
  tmp = await mkdtemp(path.join(os.tmpdir(), "docverify-e2e-rotation-"));
  docs["/before.pdf"] = await makeMetadataTamperedPdf(2611, "modified_before_created", {
    docType: "invoice",
  });
  docs["/after.pdf"] = await makeMetadataTamperedPdf(2612, "modified_before_created", { docType: "invoice" });
  files = await startFileServer(Object.fromEntries(Object.entries(docs).map(([p, body]) => [p, { body }])));
  svc = await startService({
    env: {
      DOCVERIFY_ALLOW_PRIVATE_SOURCES: "true",
      DOCVERIFY_ALLOWED_SOURCE_PORTS: String(files.port),
    },
  });
});
afterAll(async () => {
  await svc?.dispose();
  await files?.close();
  await rm(tmp, { recursive: true, force: true });
});

const docverify = (args: string[]) => runNode([ENTRY, ...args]);
const jwksUrl = () => `${svc.url}/.well-known/jwks.json`;
const kids = async () =>
  ((await (await fetch(jwksUrl())).json()) as { keys: { kid: string }[] }).keys.map((k) => k.kid);

/** A completed detection of a served document, its attestation saved as the API answers it. */
async function attested(docPath: string, name: string) {
  const r = await svc.create(CLIENTS.full, {
    source_url: files.url(docPath),
    doc_type: "invoice",
    region: "GB",
  });
  expect(r.status, JSON.stringify(r.body)).toBe(202);
  const done = await svc.waitTerminal(CLIENTS.full, r.body.id, 300_000);
  expect(done.status, JSON.stringify(done)).toBe("COMPLETED");
  const att = await svc.call("GET", `/v1/detection/${r.body.id}/attestation`, { client: CLIENTS.full });
  expect(att.status).toBe(200);
  const jws = att.body.attestation as string;
  const file = path.join(tmp, `${name}.attestation.json`);
  await writeFile(file, JSON.stringify(att.body));
  const document = path.join(tmp, `${name}.pdf`);
  await writeFile(document, docs[docPath]!);
  return { id: r.body.id as string, jws, file, document, kid: decodeProtectedHeader(jws).kid };
}

describe("attestation key rotation (standalone)", () => {
  it("an attestation signed before a rotation still verifies after it; new ones use the new key; changes are refused", async () => {
    const old = await attested("/before.pdf", "before");
    const [oldKid, ...none] = await kids();
    expect(none).toEqual([]);
    expect(old.kid).toBe(oldKid);

    // The rotation, as docs/api.md tells an operator: a new private key, the old key file as a previous key.
    const newKeyFile = path.join(tmp, "attestation-new.pem");
    await writeFile(
      newKeyFile,
      generateKeyPairSync("ed25519").privateKey.export({ format: "pem", type: "pkcs8" }) as string,
      { mode: 0o600 },
    );
    await svc.restart({
      DOCVERIFY_ATTESTATION_KEY_FILE: newKeyFile,
      DOCVERIFY_ATTESTATION_PREVIOUS_KEYS: path.join(svc.dataDir, GENERATED_KEY_FILE),
    });
    const [newKid, ...previous] = await kids();
    expect(newKid).not.toBe(oldKid);
    expect(previous).toEqual([oldKid]);
    const published = await (await fetch(jwksUrl())).text();
    expect(published).not.toMatch(/"d"\s*:/);

    // The old attestation, with the new JWKS: signature, hash and a re-run of the checks.
    const ok = await docverify(["verify", old.document, old.file, "--jwks", jwksUrl()]);
    expect(ok.code, `${ok.stdout}${ok.stderr}`).toBe(0);
    expect(ok.stdout).toContain(`signature: valid (kid ${oldKid})`);
    expect(ok.stdout).toMatch(
      /^re-run: the same [1-9]\d* finding\(s\) \(check, code, severity\) as attested$/m,
    );

    // Without the previous key in the JWKS the old attestation would not verify (what the rotation keeps).
    const currentOnly = path.join(tmp, "jwks-current-only.json");
    const jwks = JSON.parse(published) as { keys: { kid: string }[] };
    await writeFile(currentOnly, JSON.stringify({ keys: jwks.keys.filter((k) => k.kid === newKid) }));
    const dropped = await docverify(["verify", old.document, old.file, "--jwks", currentOnly, "--no-rerun"]);
    expect(dropped.code).toBe(1);
    expect(dropped.stdout).toMatch(/^signature: INVALID/m);

    // A new detection is signed with the new key, and verifies.
    const fresh = await attested("/after.pdf", "after");
    expect(fresh.kid).toBe(newKid);
    const freshOk = await docverify([
      "verify",
      fresh.document,
      fresh.file,
      "--jwks",
      jwksUrl(),
      "--no-rerun",
    ]);
    expect(freshOk.code, `${freshOk.stdout}${freshOk.stderr}`).toBe(0);

    // One changed byte of the document: the old attestation does not verify it.
    const changed = Buffer.from(docs["/before.pdf"]!);
    changed[changed.length - 20]! ^= 1;
    const changedDoc = path.join(tmp, "before-changed.pdf");
    await writeFile(changedDoc, changed);
    const badDoc = await docverify(["verify", changedDoc, old.file, "--jwks", jwksUrl(), "--no-rerun"]);
    expect(badDoc.code).toBe(1);
    expect(badDoc.stdout).toMatch(/^document: MISMATCH/m);

    // One changed finding in the signed payload: the signature no longer holds.
    const [h, p, s] = old.jws.split(".");
    const payload = JSON.parse(Buffer.from(p!, "base64url").toString("utf8"));
    expect(payload.findings.length).toBeGreaterThan(0);
    payload.findings[0].severity = payload.findings[0].severity === 0 ? 1 : 0;
    const forged = path.join(tmp, "forged.attestation.json");
    await writeFile(
      forged,
      JSON.stringify({
        attestation: `${h}.${Buffer.from(JSON.stringify(payload)).toString("base64url")}.${s}`,
      }),
    );
    const badFinding = await docverify(["verify", old.document, forged, "--jwks", jwksUrl(), "--no-rerun"]);
    expect(badFinding.code).toBe(1);
    expect(badFinding.stdout).toMatch(/^signature: INVALID/m);
  });
});
