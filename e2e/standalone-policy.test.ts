/**
 * Tenant policies on the running standalone service (issue 26, docs/tuning.md): a client whose entry names
 * a policy file's policy is scored under it from the next detection on; the policy's name and version are
 * recorded on the detection and in its reasoning; an invalid edit of the file is refused with the field
 * that is wrong and the version in force stays; a reviewer's feedback is kept with the detection.
 */
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { makeDocument } from "../fixtures/documents.js";
import { CLIENTS, Service, startFileServer, type TestClient, until } from "./harness.js";

const TUNED: TestClient & { policy: string } = {
  client_id: "tuned-lender",
  client_secret: "s3cret-tuned-0123456789",
  scopes: ["DocumentVerification:*"],
  policy: "acme-tuning",
};
const PRODUCER = "Forgery Works PDF 2.1";
const policyV1 = {
  name: "acme-tuning",
  version: 1,
  description: "Documents made with Forgery Works are never our issuers' own.",
  producers: {
    flagged: [
      { pattern: "forgery works", level: "proof", decidesAlone: true, reason: "seen in past frauds" },
    ],
  },
};

let files: Awaited<ReturnType<typeof startFileServer>>;
let svc: Service;
let root: string;
let policyDir: string;
beforeAll(async () => {
  root = await mkdtemp(path.join(os.tmpdir(), "docverify-e2e-policy-"));
  policyDir = path.join(root, "policies");
  const dataDir = path.join(root, "data");
  await import("node:fs/promises").then((fs) => fs.mkdir(policyDir));
  await writeFile(path.join(policyDir, "acme-tuning.json"), JSON.stringify(policyV1));
  const clientsFile = path.join(root, "clients.json");
  await writeFile(clientsFile, JSON.stringify({ clients: [CLIENTS.full, TUNED] }));
  files = await startFileServer({
    "/statement.pdf": {
      body: await makeDocument({ seed: 2601, docType: "bank_statement", region: "GB", producer: PRODUCER }),
    },
  });
  svc = new Service(dataDir, clientsFile, {
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

const policyResource = async () =>
  JSON.parse(
    await readFile(path.join(svc.dataDir, "resources", "detectionpolicies", "acme-tuning.json"), "utf8"),
  );
// biome-ignore lint/suspicious/noExplicitAny: a resource file as JSON
const condition = (p: any, type: string) => p.status?.conditions?.find((c: any) => c.type === type);
const detectionResource = async (id: string) =>
  JSON.parse(await readFile(path.join(svc.dataDir, "resources", "detections", `${id}.json`), "utf8"));

async function detect(client: TestClient) {
  const r = await svc.create(client, {
    source_url: files.url("/statement.pdf"),
    doc_type: "bank_statement",
    region: "GB",
  });
  expect(r.status, JSON.stringify(r.body)).toBe(202);
  const done = await svc.waitTerminal(client, r.body.id, 180_000);
  expect(done.status, JSON.stringify(done)).toBe("COMPLETED");
  return done;
}

describe("tenant policies on the standalone service", () => {
  it("a producer flagged as deciding alone changes the score, says so and names the version; an invalid edit is refused and v1 stays", async () => {
    await until(
      "policy v1 in force",
      () => policyResource().catch(() => ({})),
      (p) => condition(p, "InUse")?.status === "True",
    );
    const untuned = await detect(CLIENTS.full);
    const tuned = await detect(TUNED);
    expect(untuned.score).toBeLessThan(50);
    expect(tuned.score).toBeGreaterThanOrEqual(50);
    expect(tuned.verdict.reasoning).toContain("policy acme-tuning v1");
    expect(tuned.verdict.reasoning).toContain("deciding alone");
    expect(untuned.verdict.reasoning).not.toContain("acme-tuning");
    expect((await detectionResource(tuned.id)).status.policy).toEqual({ name: "acme-tuning", version: 1 });
    expect((await detectionResource(untuned.id)).status.policy).toEqual({ name: "default", version: 1 });

    // v2 puts a producer at "proof" without saying it decides alone: refused, naming the field.
    await writeFile(
      path.join(policyDir, "acme-tuning.json"),
      JSON.stringify({
        ...policyV1,
        version: 2,
        producers: { flagged: [{ pattern: "forgery", level: "proof" }] },
      }),
    );
    const refused = await until(
      "policy v2 refused",
      policyResource,
      (p) => condition(p, "Valid")?.status === "False",
    );
    expect(condition(refused, "Valid").message).toContain("producers.flagged");
    expect(condition(refused, "Valid").message).toContain("decidesAlone");
    expect(condition(refused, "InUse").message).toContain("Version 1 is in force");
    await until(
      "the refusal logged",
      async () => svc.log,
      (log) => log.includes("detection policy refused"),
    );
    const still = await detect(TUNED);
    expect(still.score).toBe(tuned.score);
    expect(still.verdict.reasoning).toContain("policy acme-tuning v1");

    // Reviewer feedback: kept with the detection.
    const fb = await svc.call("PUT", `/v1/detection/${tuned.id}/feedback`, {
      client: TUNED,
      json: { label: "confirmed_fraud", note: "issuer confirmed" },
    });
    expect(fb.status).toBe(204);
    const stored = JSON.parse(
      await readFile(
        path.join(svc.dataDir, "objects", "docverify", "runs", tuned.id, "feedback.json"),
        "utf8",
      ),
    );
    expect(stored).toMatchObject({ label: "confirmed_fraud", reviewer: TUNED.client_id, score: tuned.score });
    const other = await svc.call("PUT", `/v1/detection/${tuned.id}/feedback`, {
      client: CLIENTS.full,
      json: { label: "genuine" },
    });
    expect(other.status).toBe(404);
  });
});
