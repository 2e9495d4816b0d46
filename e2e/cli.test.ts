/** `docverify submit` (the built command, as a user runs it) against the running standalone service. */
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { makeDocument } from "../fixtures/documents.js";
import { CLIENTS, ENTRY, runNode, type Service, startService } from "./harness.js";

let svc: Service;
let tmp: string;
beforeAll(async () => {
  svc = await startService();
  tmp = await mkdtemp(path.join(os.tmpdir(), "docverify-cli-"));
});
afterAll(async () => {
  await svc?.dispose();
  await rm(tmp, { recursive: true, force: true });
});

const docverify = (args: string[]) =>
  runNode([ENTRY, ...args], {
    env: {
      DOCVERIFY_URL: svc.url,
      DOCVERIFY_CLIENT_ID: CLIENTS.full.client_id,
      DOCVERIFY_CLIENT_SECRET: CLIENTS.full.client_secret,
    },
  });

describe("docverify submit", () => {
  it("--version", async () => {
    for (const args of [["--version"], ["submit", "--version"]]) {
      const r = await docverify(args);
      expect(r).toMatchObject({ code: 0, stdout: "docverify 0.1.0\n" });
    }
  });

  it("uploads a file and prints the verdict (--json: the DetectionDetail)", async () => {
    const file = path.join(tmp, "statement.pdf");
    await writeFile(file, await makeDocument({ seed: 11, docType: "bank_statement", region: "GB" }));
    const json = await docverify([
      "submit",
      file,
      "--doc-type",
      "bank_statement",
      "--region",
      "GB",
      "--json",
    ]);
    expect(json.code, json.stderr).toBe(0);
    const detail = JSON.parse(json.stdout) as Record<string, unknown>;
    expect(detail).toMatchObject({
      status: "COMPLETED",
      filename: "statement.pdf",
      content_type: "application/pdf",
    });
    const summary = await docverify(["submit", file, "--doc-type", "bank_statement", "--region", "GB"]);
    expect(summary.code, summary.stderr).toBe(0);
    expect(summary.stdout).toMatch(/^Detection det-[0-9a-z]{26}: COMPLETED\n/);
    expect(summary.stdout).toMatch(/Fraud score: \d+\/100/);
    expect(summary.stderr).toMatch(/Uploading statement\.pdf \(\d+ bytes\)…/);
  });

  it("docverify verify: the attestation of a real detection verifies (the key generated standalone), a changed byte does not", async () => {
    const file = path.join(tmp, "attested.pdf");
    const bytes = await makeDocument({
      seed: 26,
      docType: "bank_statement",
      region: "GB",
      creationDate: new Date("2024-03-10T10:00:00Z"),
      modDate: new Date("2024-03-01T10:00:00Z"),
    });
    await writeFile(file, bytes);
    const submitted = await docverify([
      "submit",
      file,
      "--doc-type",
      "bank_statement",
      "--region",
      "GB",
      "--json",
    ]);
    expect(submitted.code, submitted.stderr).toBe(0);
    const id = (JSON.parse(submitted.stdout) as { id: string }).id;
    const att = await svc.call("GET", `/v1/detection/${id}/attestation`, { client: CLIENTS.full });
    expect(att.status).toBe(200);
    const attestation = path.join(tmp, "attestation.json");
    await writeFile(attestation, JSON.stringify(att.body));
    const jwks = `${svc.url}/.well-known/jwks.json`;
    const ok = await docverify(["verify", file, attestation, "--jwks", jwks]);
    expect(ok.code, `${ok.stdout}${ok.stderr}`).toBe(0);
    expect(ok.stdout).toMatch(
      /^re-run: the same [1-9]\d* finding\(s\) \(check, code, severity\) as attested$/m,
    );
    expect(ok.stdout).toMatch(/VERIFIED\n$/);
    const changed = Buffer.from(bytes);
    changed[changed.length - 20]! ^= 1;
    const other = path.join(tmp, "attested-changed.pdf");
    await writeFile(other, changed);
    const bad = await docverify(["verify", other, attestation, "--jwks", jwks]);
    expect(bad.code).toBe(1);
    expect(bad.stdout).toMatch(/^document: MISMATCH/m);
  });

  it("a bad option is refused before anything is uploaded", async () => {
    const file = path.join(tmp, "x.pdf");
    await writeFile(file, "%PDF-1.4\n%%EOF\n");
    const before = (await svc.call("GET", "/v1/detection", { client: CLIENTS.full })).body.items.length;
    const r = await docverify(["submit", file, "--doc-type", "statement"]);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(
      /^docverify submit: --doc-type "statement" is not a document type; use one of: /,
    );
    expect((await svc.call("GET", "/v1/detection", { client: CLIENTS.full })).body.items.length).toBe(before);
  });
});
