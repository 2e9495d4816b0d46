/**
 * The policy dry run on the running standalone service (issue 26, docs/tuning.md): `docverify policy
 * dry-run` re-scores the client's last 50 detections under a policy file without re-running their checks;
 * putting that policy in force and submitting the same 50 documents again gives exactly the predicted scores.
 */
import { mkdir, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  FIXTURE_DOC_TYPES,
  makeDocument,
  makeMetadataTamperedPdf,
  TAMPER_VARIANTS,
} from "../fixtures/documents.js";
import { ENTRY, runNode, Service, startFileServer, type TestClient, until } from "./harness.js";
import { type DryRunOutput, expectDryRun } from "./policy-scenarios.js";

const CLIENT: TestClient & { policy: string } = {
  client_id: "dry-runner",
  client_secret: "s3cret-dry-runner-0123456789",
  scopes: ["DocumentVerification:*"],
  policy: "lender-b",
};
const POLICY = {
  name: "lender-b",
  version: 1,
  producers: {
    flagged: [
      { pattern: "forgery works", level: "specific" },
      {
        pattern: "/^Adobe PDF Library/",
        level: "proof",
        decidesAlone: true,
        reason: "our issuers never use it",
      },
    ],
  },
  rules: [
    {
      name: "invoices with an anomaly",
      when: { all: [{ docType: ["invoice"] }, { finding: { minSeverity: 3 } }] },
      atLeast: "specific",
    },
  ],
};
const N = 50;
const types = FIXTURE_DOC_TYPES.filter((t) => t !== "id_document");

let files: Awaited<ReturnType<typeof startFileServer>>;
let svc: Service;
let root: string;
let policyDir: string;
const docs: { path: string; docType: string }[] = [];
beforeAll(async () => {
  root = await mkdtemp(path.join(os.tmpdir(), "docverify-e2e-dryrun-"));
  policyDir = path.join(root, "policies");
  await mkdir(policyDir);
  const served: Record<string, { body: Uint8Array }> = {};
  for (let i = 0; i < N; i++) {
    const docType = types[i % types.length]!;
    const seed = 2650 + i;
    const body =
      i % 5 === 0
        ? await makeDocument({ seed, docType, region: "GB" })
        : i % 5 === 1
          ? await makeDocument({ seed, docType, region: "GB", producer: "Forgery Works PDF 2.1" })
          : await makeMetadataTamperedPdf(seed, TAMPER_VARIANTS[i % TAMPER_VARIANTS.length], { docType });
    served[`/doc-${i}.pdf`] = { body };
    docs.push({ path: `/doc-${i}.pdf`, docType });
  }
  files = await startFileServer(served);
  const clientsFile = path.join(root, "clients.json");
  await writeFile(clientsFile, JSON.stringify({ clients: [CLIENT] }));
  svc = new Service(path.join(root, "data"), clientsFile, {
    DOCVERIFY_ALLOW_PRIVATE_SOURCES: "true",
    DOCVERIFY_ALLOWED_SOURCE_PORTS: String(files.port),
    DOCVERIFY_POLICIES: policyDir,
    DOCVERIFY_POLICIES_RELOAD_SECONDS: "1",
    // Re-submitting the same files to score them for real would find them in the tenant memory (a
    // duplicate-submission note the first submissions, which the dry run re-scores, never had).
    DOCVERIFY_MEMORY: "off",
  });
  await svc.start();
});
afterAll(async () => {
  await svc?.dispose();
  await files?.close();
  await rm(root, { recursive: true, force: true });
});

/** Submits every document and waits for all; the detections' ids and scores, by document. */
async function submitAll(): Promise<{ id: string; score: number | null; reasoning: string }[]> {
  const ids: string[] = [];
  for (const d of docs) {
    const r = await svc.create(CLIENT, { source_url: files.url(d.path), doc_type: d.docType, region: "GB" });
    expect(r.status, JSON.stringify(r.body)).toBe(202);
    ids.push(r.body.id);
  }
  const out = [];
  for (const id of ids) {
    const done = await svc.waitTerminal(CLIENT, id, 600_000);
    expect(done.status, JSON.stringify(done)).toBe("COMPLETED");
    out.push({ id, score: done.score, reasoning: done.verdict?.reasoning ?? "" });
  }
  return out;
}

describe("the policy dry run", () => {
  it("over the last 50 detections matches re-scoring them for real", async () => {
    const before = await submitAll();
    for (const b of before) expect(b.reasoning).not.toContain("lender-b");

    const policyFile = path.join(root, "lender-b.json");
    await writeFile(policyFile, JSON.stringify(POLICY));
    const run = await runNode(
      [
        ENTRY,
        "policy",
        "dry-run",
        "--policy",
        policyFile,
        "--last",
        "50",
        "--client",
        CLIENT.client_id,
        "--json",
      ],
      { env: { DOCVERIFY_DATA_DIR: svc.dataDir } },
    );
    expect(run.code, run.stderr).toBe(0);
    const dry = JSON.parse(run.stdout) as DryRunOutput;
    const predicted = expectDryRun(dry, before);
    expect(dry.summary.crossedUp).toBeGreaterThan(0);

    // The human-readable form names the policy and the count that crosses 50.
    const text = await runNode(
      [ENTRY, "policy", "dry-run", "--policy", policyFile, "--client", CLIENT.client_id],
      { env: { DOCVERIFY_DATA_DIR: svc.dataDir } },
    );
    expect(text.stdout).toContain(`Policy lender-b v1 over the last ${N} completed detection(s)`);
    expect(text.stdout).toContain(`${dry.summary.crossedUp} would newly reach 50 or more`);

    // An invalid policy file is refused by the dry run with the field that is wrong.
    const badFile = path.join(root, "bad.json");
    await writeFile(badFile, JSON.stringify({ ...POLICY, checksOff: ["signature.pdf"] }));
    const bad = await runNode([ENTRY, "policy", "dry-run", "--policy", badFile], {
      env: { DOCVERIFY_DATA_DIR: svc.dataDir },
    });
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain("checksOff");

    // For real: the policy in force, the same documents again.
    await writeFile(path.join(policyDir, "lender-b.json"), JSON.stringify(POLICY));
    await until(
      "lender-b in force",
      async () =>
        JSON.parse(
          await readFile(
            path.join(svc.dataDir, "resources", "detectionpolicies", "lender-b.json"),
            "utf8",
          ).catch(() => "{}"),
        ),
      (p) => p.status?.inForce?.version === 1,
    );
    const after = await submitAll();
    expect(after.map((a) => a.score)).toEqual(predicted);
    for (const a of after) expect(a.reasoning).toContain("policy lender-b v1");
  });
});
