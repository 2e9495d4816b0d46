/**
 * The feedback loop on the running standalone service (issue 26, docs/tuning.md): reviewers label 40
 * detections scored under an over-eager policy; `docverify calibration-report` proposes severity overrides
 * and predicts, by cross-validation, the false-positive rate after them with an interval; with the overrides
 * in force, 40 further labelled documents show an FPR (and a detection rate) within the stated intervals.
 *
 * The tenant's history: genuine documents, genuine documents its issuers re-saved months later (a long
 * modification gap, which the eager policy makes decide alone: false positives), and two kinds of metadata
 * tampering (backdated, and re-produced by an editor that left the old XMP: confirmed fraud).
 */
import { mkdir, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { FIXTURE_DOC_TYPES, makeDocument, makeMetadataTamperedPdf } from "../fixtures/documents.js";
import { ENTRY, runNode, Service, startFileServer, type TestClient, until } from "./harness.js";

const CLIENT: TestClient & { policy: string } = {
  client_id: "calibrating-lender",
  client_secret: "s3cret-calibrating-0123456789",
  scopes: ["DocumentVerification:*"],
  policy: "eager",
};
const EAGER = {
  name: "eager",
  version: 1,
  severity: [
    { check: "metadata.dates", code: "long_modification_gap", severity: 8, decidesAlone: true },
    { check: "metadata.dates", code: "modified_before_created", severity: 8, decidesAlone: true },
  ],
};
type Kind = "genuine" | "resaved" | "backdated" | "reproduced";
const KINDS: Kind[] = ["genuine", "resaved", "backdated", "reproduced"];
const labelOf = (k: Kind) => (k === "genuine" || k === "resaved" ? "genuine" : "confirmed_fraud");
const types = FIXTURE_DOC_TYPES.filter((t) => t !== "id_document");

async function documentOf(kind: Kind, seed: number, docType: (typeof types)[number]) {
  switch (kind) {
    case "genuine":
      return makeDocument({ seed, docType, region: "GB" });
    case "resaved":
      return makeMetadataTamperedPdf(seed, "late_modification", { docType });
    case "backdated":
      return makeMetadataTamperedPdf(seed, "modified_before_created", { docType });
    case "reproduced":
      return makeMetadataTamperedPdf(seed, "info_xmp_mismatch", { docType });
  }
}

let files: Awaited<ReturnType<typeof startFileServer>>;
let svc: Service;
let root: string;
let policyDir: string;
const sets: Record<"history" | "further", { path: string; docType: string; kind: Kind }[]> = {
  history: [],
  further: [],
};
beforeAll(async () => {
  root = await mkdtemp(path.join(os.tmpdir(), "docverify-e2e-calibration-"));
  policyDir = path.join(root, "policies");
  await mkdir(policyDir);
  await writeFile(path.join(policyDir, "eager.json"), JSON.stringify(EAGER));
  const served: Record<string, { body: Uint8Array }> = {};
  for (const [set, base] of [
    ["history", 2800],
    ["further", 2900],
  ] as const) {
    for (let i = 0; i < 40; i++) {
      const kind = KINDS[i % 4]!;
      const docType = types[Math.floor(i / 4) % types.length]!;
      const p = `/${set}-${i}.pdf`;
      served[p] = { body: await documentOf(kind, base + i, docType) };
      sets[set].push({ path: p, docType, kind });
    }
  }
  files = await startFileServer(served);
  const clientsFile = path.join(root, "clients.json");
  await writeFile(clientsFile, JSON.stringify({ clients: [CLIENT] }));
  svc = new Service(path.join(root, "data"), clientsFile, {
    DOCVERIFY_ALLOW_PRIVATE_SOURCES: "true",
    DOCVERIFY_ALLOWED_SOURCE_PORTS: String(files.port),
    DOCVERIFY_POLICIES: policyDir,
    DOCVERIFY_POLICIES_RELOAD_SECONDS: "1",
  });
  await svc.start();
});
afterAll(async () => {
  await svc?.stop();
  await files?.close();
  await rm(root, { recursive: true, force: true });
});

const inForce = (version: number) =>
  until(
    `eager v${version} in force`,
    async () =>
      JSON.parse(
        await readFile(path.join(svc.dataDir, "resources", "detectionpolicies", "eager.json"), "utf8").catch(
          () => "{}",
        ),
      ),
    (p) => p.status?.inForce?.version === version,
  );

/** Submits a set, waits for it, and labels every detection as the tenant's reviewers would. */
async function submitAndLabel(set: "history" | "further") {
  const ids: string[] = [];
  for (const d of sets[set]) {
    const r = await svc.create(CLIENT, { source_url: files.url(d.path), doc_type: d.docType, region: "GB" });
    expect(r.status, JSON.stringify(r.body)).toBe(202);
    ids.push(r.body.id);
  }
  const out: { score: number; label: string }[] = [];
  for (const [i, id] of ids.entries()) {
    const done = await svc.waitTerminal(CLIENT, id, 600_000);
    expect(done.status, JSON.stringify(done)).toBe("COMPLETED");
    const label = labelOf(sets[set][i]!.kind);
    const fb = await svc.call("PUT", `/v1/detection/${id}/feedback`, {
      client: CLIENT,
      json: { label, reviewer: "e2e-reviewer" },
    });
    expect(fb.status).toBe(204);
    out.push({ score: done.score, label });
  }
  return out;
}

describe("the calibration report", () => {
  it("predicts, with cross-validation, the FPR after its overrides, met on 40 further labelled detections", async () => {
    await inForce(1);
    await submitAndLabel("history");
    const run = await runNode([ENTRY, "calibration-report", "--client", CLIENT.client_id, "--json"], {
      env: { DOCVERIFY_DATA_DIR: svc.dataDir },
    });
    expect(run.code, run.stderr).toBe(0);
    const report = JSON.parse(run.stdout);
    const seen = JSON.stringify({
      codes: report.codes,
      current: report.current,
      proposal: report.proposal,
      expected: report.expected,
    });
    expect(report.labelled).toEqual({ genuine: 20, fraud: 20 });
    expect(report.policy).toEqual({ name: "eager", version: 1 });
    // The eager policy makes re-saved genuine documents decide alone: false positives now.
    expect(report.current.falsePositives, seen).toBeGreaterThan(0);
    const gap = report.codes.find(
      (c: { check: string; code: string }) =>
        c.check === "metadata.dates" && c.code === "long_modification_gap",
    );
    expect(gap, seen).toMatchObject({ firedGenuine: 10, eligible: true });
    const proposed = report.proposal.severity.find(
      (o: { code: string }) => o.code === "long_modification_gap",
    );
    expect(proposed?.severity, seen).toBeLessThan(8);
    expect(report.expected.fpr).toBeLessThan(report.current.falsePositives / report.current.genuine);
    const [lo, hi] = report.expected.fprInterval as [number, number];
    const [dlo, dhi] = report.expected.detectionInterval as [number, number];

    // The human-readable report states the minimum and the proposal.
    const text = await runNode([ENTRY, "calibration-report", "--client", CLIENT.client_id], {
      env: { DOCVERIFY_DATA_DIR: svc.dataDir },
    });
    expect(text.stdout).toContain("5-fold cross-validated");
    expect(text.stdout).toContain("long_modification_gap");

    // The proposal in force (v2), then 40 further documents, labelled.
    const replaced = new Set(
      report.proposal.severity.map((o: { check: string; code: string }) => `${o.check} ${o.code}`),
    );
    await writeFile(
      path.join(policyDir, "eager.json"),
      JSON.stringify({
        ...EAGER,
        version: 2,
        severity: [
          ...EAGER.severity.filter((o) => !replaced.has(`${o.check} ${o.code}`)),
          ...report.proposal.severity,
        ],
      }),
    );
    await inForce(2);
    const further = await submitAndLabel("further");
    const genuine = further.filter((f) => f.label === "genuine");
    const fraud = further.filter((f) => f.label === "confirmed_fraud");
    const fpr = genuine.filter((f) => f.score >= 50).length / genuine.length;
    const detection = fraud.filter((f) => f.score >= 50).length / fraud.length;
    process.stdout.write(
      `calibration e2e: current FPR ${report.current.falsePositives}/${report.current.genuine}; predicted FPR ${report.expected.fpr} [${lo}, ${hi}], observed ${fpr}; predicted detection ${report.expected.detection} [${dlo}, ${dhi}], observed ${detection}\n`,
    );
    expect(fpr).toBeGreaterThanOrEqual(lo);
    expect(fpr).toBeLessThanOrEqual(hi);
    expect(detection).toBeGreaterThanOrEqual(dlo);
    expect(detection).toBeLessThanOrEqual(dhi);
  });
});
