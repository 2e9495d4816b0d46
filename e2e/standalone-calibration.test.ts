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
import { ENTRY, runNode, Service, startFileServer, type TestClient, until } from "./harness.js";
import {
  calibrationDocuments,
  EAGER,
  expectCalibrationReport,
  expectWithinIntervals,
  type LabelledDoc,
  labelOf,
  proposedPolicy,
} from "./policy-scenarios.js";

const CLIENT: TestClient & { policy: string } = {
  client_id: "calibrating-lender",
  client_secret: "s3cret-calibrating-0123456789",
  scopes: ["DocumentVerification:*"],
  policy: "eager",
};

let files: Awaited<ReturnType<typeof startFileServer>>;
let svc: Service;
let root: string;
let policyDir: string;
let sets: Record<"history" | "further", LabelledDoc[]>;
beforeAll(async () => {
  root = await mkdtemp(path.join(os.tmpdir(), "docverify-e2e-calibration-"));
  policyDir = path.join(root, "policies");
  await mkdir(policyDir);
  await writeFile(path.join(policyDir, "eager.json"), JSON.stringify(EAGER));
  const docs = await calibrationDocuments();
  sets = docs.sets;
  const served = Object.fromEntries(Object.entries(docs.served).map(([p, body]) => [p, { body }]));
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
  await svc?.dispose();
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
    expectCalibrationReport(report);

    // The human-readable report states the minimum and the proposal.
    const text = await runNode([ENTRY, "calibration-report", "--client", CLIENT.client_id], {
      env: { DOCVERIFY_DATA_DIR: svc.dataDir },
    });
    expect(text.stdout).toContain("5-fold cross-validated");
    expect(text.stdout).toContain("long_modification_gap");

    // The proposal in force (v2), then 40 further documents, labelled.
    await writeFile(path.join(policyDir, "eager.json"), JSON.stringify(proposedPolicy(report, 2)));
    await inForce(2);
    expectWithinIntervals("standalone", report, await submitAndLabel("further"));
  });
});
