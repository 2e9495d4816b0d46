import { mkdtemp, rm, writeFile } from "node:fs/promises";
import type { AddressInfo } from "node:net";
import os from "node:os";
import path from "node:path";
import { serve } from "@hono/node-server";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { call, createHarness, type Harness } from "../api/testdata/app-kit.js";
import { completeForAttestation } from "../api/testdata/attestation-kit.js";
import { createDetection } from "../api/testdata/evidence-kit.js";
import { buildAttestationPayload } from "../core/attestation.js";
import type { CheckResult } from "../core/check-result.js";
import type { Detection } from "../core/detection.js";
import { makeDocument } from "../fixtures/documents.js";
import { rerunChecks, runVerify, type VerifyIo } from "./verify.js";

/**
 * `docverify verify` on a real generated statement whose Info says it was modified before it was created:
 * the checks run in this process exactly as the CLI re-runs them, the results are stored as the check step
 * stores them, the service signs the attestation, and the CLI verifies it against the JWKS served over HTTP.
 */
let dir: string;
let h: Harness;
let server: ReturnType<typeof serve>;
let url: string;
let pdfPath: string;
let bytes: Uint8Array;
let attestationPath: string;
let checks: CheckResult[];
let id: string;

beforeAll(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), "docverify-verify-"));
  bytes = await makeDocument({
    seed: 26,
    docType: "bank_statement",
    region: "GB",
    creationDate: new Date("2024-03-10T10:00:00Z"),
    modDate: new Date("2024-03-01T10:00:00Z"),
  });
  pdfPath = path.join(dir, "statement.pdf");
  await writeFile(pdfPath, bytes);
  h = await createHarness();
  const alice = await h.token("alice");
  id = await createDetection(h, alice);
  // The check step's results for this file, as the service stores them (the clock: the attested completion).
  const completedAt = h.clock.now().toISOString();
  const run = await rerunChecks(
    Buffer.from(bytes),
    "statement.pdf",
    { completed_at: completedAt, doc_type: "bank_statement", region: "GB" } as never,
    undefined,
  );
  if ("failure" in run) throw new Error(run.failure);
  checks = run.checks;
  await completeForAttestation(h, id, bytes, checks, { score: 45 });
  const r = await call(h, "GET", `/v1/detection/${id}/attestation`, { token: alice });
  expect(r.status).toBe(200);
  attestationPath = path.join(dir, "attestation.json");
  await writeFile(attestationPath, JSON.stringify(r.body));
  server = serve({ fetch: h.app.fetch, port: 0, hostname: "127.0.0.1" });
  await new Promise((res) => server.once("listening", res));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}, 180_000);

afterAll(async () => {
  await new Promise<void>((r) => server.close(() => r()));
  await h.close();
  await rm(dir, { recursive: true, force: true });
});

async function verify(args: string[]) {
  let out = "";
  let err = "";
  const io: VerifyIo = {
    out: (t) => {
      out += t;
    },
    err: (t) => {
      err += t;
    },
    env: {},
  };
  const code = await runVerify(args, io);
  return { code, out, err };
}

describe("docverify verify", () => {
  it("the fixture has findings to compare (a modification date before the creation)", () => {
    const codes = checks.flatMap((c) => c.findings.map((f) => f.code));
    expect(codes).toContain("modified_before_created");
    expect(checks.every((c) => typeof c.version === "string")).toBe(true);
  });

  it("passes for the attested file: signature (JWKS over HTTP), sha256 and the re-run's findings", async () => {
    const r = await verify([pdfPath, attestationPath, "--jwks", `${url}/.well-known/jwks.json`]);
    expect(r.err).toBe("");
    expect(r.out).toMatch(/^signature: valid \(kid .+\), detection det-/m);
    expect(r.out).toMatch(/^document: sha256 [0-9a-f]{64} matches$/m);
    expect(r.out).toMatch(/^re-run: the same \d+ finding\(s\) \(check, code, severity\) as attested$/m);
    expect(r.out.trim().split("\n").at(-1)).toBe("VERIFIED");
    expect(r.code).toBe(0);
  }, 120_000);

  it("fails for a modified file (one byte changed), before re-running anything", async () => {
    const changed = Buffer.from(bytes);
    const at = changed.indexOf("Statement");
    changed[at > 0 ? at : 100]! ^= 1;
    const p = path.join(dir, "changed.pdf");
    await writeFile(p, changed);
    const jwks = path.join(dir, "jwks.json");
    await writeFile(jwks, JSON.stringify((await call(h, "GET", "/.well-known/jwks.json")).body));
    const r = await verify([p, attestationPath, "--jwks", jwks]);
    expect(r.out).toMatch(
      /^document: MISMATCH: the file's sha256 is [0-9a-f]{64}, the attestation's [0-9a-f]{64}$/m,
    );
    expect(r.out.trim().split("\n").at(-1)).toBe("NOT VERIFIED");
    expect(r.code).toBe(1);
  });

  it("fails for an attestation whose findings differ from what the checks find (signed, so the re-run tells)", async () => {
    const d = (await h.store.get(id)) as Detection;
    const built = buildAttestationPayload(d, checks, "0.0.0-test");
    if (!("ok" in built)) throw new Error("not attestable");
    const dropped = {
      ...built.ok,
      findings: built.ok.findings.filter((f) => f.code !== "modified_before_created"),
    };
    const jws = await h.deps.attestation!.sign(dropped);
    const r = await verify([pdfPath, jws, "--jwks", `${url}/.well-known/jwks.json`]);
    const n = built.ok.findings.length - dropped.findings.length;
    expect(n).toBeGreaterThan(0);
    expect(
      r.out,
    ).toContain(`re-run: DIFFERENT findings: 0 attested but not found here, ${n} found here but not attested
`);
    expect(r.out).toMatch(/\+ found, not attested: metadata\.dates modified_before_created severity \d+/);
    expect(r.code).toBe(1);
  }, 120_000);

  it("fails for a forged payload and for an attestation signed by a key the JWKS does not list", async () => {
    const [head, , sig] = (
      JSON.parse(await import("node:fs").then((fs) => fs.readFileSync(attestationPath, "utf8"))) as {
        attestation: string;
      }
    ).attestation.split(".");
    const forgedPayload = Buffer.from(JSON.stringify({ format: 1 })).toString("base64url");
    const forged = await verify([
      pdfPath,
      `${head}.${forgedPayload}.${sig}`,
      "--jwks",
      `${url}/.well-known/jwks.json`,
      "--no-rerun",
    ]);
    expect(forged.out).toMatch(/^signature: INVALID/m);
    expect(forged.code).toBe(1);
    const stranger = await createHarness();
    try {
      const d = (await h.store.get(id)) as Detection;
      const built = buildAttestationPayload(d, checks, "0.0.0-test");
      if (!("ok" in built)) throw new Error("not attestable");
      const jws = await stranger.deps.attestation!.sign(built.ok);
      const r = await verify([pdfPath, jws, "--jwks", `${url}/.well-known/jwks.json`, "--no-rerun"]);
      expect(r.out).toMatch(/^signature: INVALID/m);
      expect(r.code).toBe(1);
    } finally {
      await stranger.close();
    }
  });

  it("usage errors exit 2; --help says what is compared", async () => {
    expect((await verify([pdfPath])).code).toBe(2);
    expect((await verify([pdfPath, attestationPath])).err).toMatch(/--jwks <url-or-file> is required/);
    const help = await verify(["--help"]);
    expect(help.code).toBe(0);
    expect(help.out).toMatch(/run again here/);
  });
});
