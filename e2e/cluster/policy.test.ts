/**
 * Tenant policies in the cluster runtime (issue 26, docs/tuning.md), on a real kube-apiserver with the
 * DetectionPolicy CRD and the RBAC of deploy/rbac: a client whose entry names a DetectionPolicy is scored
 * under the version in force from the next detection on (recorded on the Detection and named in the
 * reasoning); an invalid edit is refused (by the CRD schema, or by the operator: condition Valid=False naming
 * the field) and the version in force stays; the dry run (`docverify policy dry-run --cluster`) over the
 * client's last detections matches re-scoring them for real; reviewer feedback is kept.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { makeDocument, makeMetadataTamperedPdf, TAMPER_VARIANTS } from "../../fixtures/documents.js";
import { ENTRY, runNode } from "../harness.js";
import { apiRequest } from "./api-request.js";
import { missingPrerequisites, type RuntimeWorld, startRuntimeWorld, until } from "./runtime-world.js";
import { mkdtemp, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";

const NS = "docverify-e2e-policy";
const TUNED = {
  client_id: "tuned-lender",
  client_secret: "s3cret-tuned-0123456789",
  scopes: ["DocumentVerification:*"],
  policy: "acme-tuning",
};
const PLAIN = {
  client_id: "plain-lender",
  client_secret: "s3cret-plain-0123456789",
  scopes: ["DocumentVerification:*"],
};
const DRY = {
  client_id: "dry-runner",
  client_secret: "s3cret-dry-runner-0123456789",
  scopes: ["DocumentVerification:*"],
  policy: "lender-b",
};
const PRODUCER = "Forgery Works PDF 2.1";
const specV1 = {
  version: 1,
  producers: { flagged: [{ pattern: "forgery works", level: "proof", decidesAlone: true }] },
};
const LENDER_B = {
  name: "lender-b",
  version: 1,
  producers: {
    flagged: [
      { pattern: "forgery works", level: "specific" },
      { pattern: "/^Adobe PDF Library/", level: "proof", decidesAlone: true },
    ],
  },
};
/** Detections of the dry run in the cluster (fewer than standalone's 50: every step is a Pod here). */
const N = 8;
const BASE = `/apis/docverify.io/v1alpha1/namespaces/${NS}/detectionpolicies`;

const missing = missingPrerequisites();
const title = missing.length
  ? `tenant policies in the cluster runtime: SKIPPED — ${missing.join("; ")}`
  : "tenant policies in the cluster runtime";

describe.skipIf(missing.length > 0)(title, () => {
  let w: RuntimeWorld;
  beforeAll(async () => {
    const documents: Record<string, Buffer> = {
      "/forged.pdf": Buffer.from(
        await makeDocument({ seed: 2601, docType: "bank_statement", region: "GB", producer: PRODUCER }),
      ),
    };
    for (let i = 0; i < N; i++) {
      const seed = 2700 + i;
      documents[`/doc-${i}.pdf`] = Buffer.from(
        i % 3 === 0
          ? await makeDocument({ seed, docType: "invoice", region: "GB" })
          : i % 3 === 1
            ? await makeDocument({ seed, docType: "invoice", region: "GB", producer: PRODUCER })
            : await makeMetadataTamperedPdf(seed, TAMPER_VARIANTS[i % TAMPER_VARIANTS.length], {
                docType: "invoice",
              }),
      );
    }
    w = await startRuntimeWorld({ namespace: NS, documents });
    const op = await w.newOperator("operator-a");
    await op.waitForLog(/is the leader/, 30_000);
    await w.startApi([TUNED, PLAIN, DRY]);
  }, 240_000);
  afterAll(async () => {
    await w?.stop();
  }, 120_000);

  // biome-ignore lint/suspicious/noExplicitAny: a DetectionPolicy as the apiserver answers it
  const getPolicy = async (name: string): Promise<any> =>
    (await apiRequest(w.admin, "GET", `${BASE}/${name}`)).body;
  // biome-ignore lint/suspicious/noExplicitAny: a condition list
  const condition = (p: any, type: string) => p?.status?.conditions?.find((c: any) => c.type === type);
  const detect = async (client: typeof TUNED | typeof PLAIN, docPath: string, docType = "bank_statement") => {
    const r = await w.call(
      "POST",
      "/v1/detection",
      { source_url: `${w.docBase}${docPath}`, doc_type: docType, region: "GB" },
      client,
    );
    expect(r.status, JSON.stringify(r.body)).toBe(202);
    return r.body.id as string;
  };
  const finish = async (client: typeof TUNED | typeof PLAIN, id: string) => {
    const done = await until(
      `detection ${id}`,
      async () => {
        const r = await w.call("GET", `/v1/detection/${id}`, undefined, client);
        return r.body.status === "COMPLETED" || r.body.status === "FAILED" ? r.body : undefined;
      },
      300_000,
    );
    expect(done.status, `${JSON.stringify(done)}\n${w.diagnostics()}`).toBe("COMPLETED");
    return done;
  };

  it("a DetectionPolicy that marks a producer as deciding alone changes the next score, says so and names its version; invalid edits are refused and v1 stays", async () => {
    const created = await apiRequest(w.admin, "POST", BASE, {
      apiVersion: "docverify.io/v1alpha1",
      kind: "DetectionPolicy",
      metadata: { name: "acme-tuning" },
      spec: specV1,
    });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    const inForce = await until("acme-tuning in force", async () => {
      const p = await getPolicy("acme-tuning");
      return condition(p, "InUse")?.status === "True" ? p : undefined;
    });
    expect(condition(inForce, "Valid")).toMatchObject({ status: "True", observedGeneration: 1 });
    expect(inForce.status.inForce.version).toBe(1);

    const plain = await finish(PLAIN, await detect(PLAIN, "/forged.pdf"));
    const tunedId = await detect(TUNED, "/forged.pdf");
    const tuned = await finish(TUNED, tunedId);
    expect(plain.score).toBeLessThan(50);
    expect(tuned.score).toBeGreaterThanOrEqual(50);
    expect(tuned.verdict.reasoning).toContain("policy acme-tuning v1");
    expect(tuned.verdict.reasoning).toContain("deciding alone");
    const resource = await w.adminStore(NS).get(tunedId);
    expect(resource?.status?.policy).toEqual({ name: "acme-tuning", version: 1 });
    expect(resource?.spec.policy).toBe("acme-tuning");

    // The CRD's schema refuses a wrong level at once, naming the field.
    const cur = await getPolicy("acme-tuning");
    const schemaRefused = await apiRequest(w.admin, "PUT", `${BASE}/acme-tuning`, {
      ...cur,
      spec: { version: 2, producers: { flagged: [{ pattern: "forgery", level: "fatal" }] } },
    });
    expect(schemaRefused.status).toBe(422);
    expect(JSON.stringify(schemaRefused.body)).toContain("spec.producers.flagged[0].level");

    // A rule the schema cannot say (proof without decidesAlone): the operator refuses it.
    const edited = await apiRequest(w.admin, "PUT", `${BASE}/acme-tuning`, {
      ...(await getPolicy("acme-tuning")),
      spec: { version: 2, producers: { flagged: [{ pattern: "forgery", level: "proof" }] } },
    });
    expect(edited.status, JSON.stringify(edited.body)).toBe(200);
    const refused = await until("v2 refused", async () => {
      const p = await getPolicy("acme-tuning");
      return condition(p, "Valid")?.status === "False" ? p : undefined;
    });
    expect(condition(refused, "Valid").observedGeneration).toBe(2);
    expect(condition(refused, "Valid").message).toContain("producers.flagged");
    expect(condition(refused, "Valid").message).toContain("decidesAlone");
    expect(condition(refused, "InUse").message).toContain("Version 1 is in force");
    const still = await finish(TUNED, await detect(TUNED, "/forged.pdf"));
    expect(still.score).toBe(tuned.score);
    expect(still.verdict.reasoning).toContain("policy acme-tuning v1");

    const fb = await w.call("PUT", `/v1/detection/${tunedId}/feedback`, { label: "confirmed_fraud" }, TUNED);
    expect(fb.status).toBe(204);
    expect(
      (await w.call("PUT", `/v1/detection/${tunedId}/feedback`, { label: "genuine" }, PLAIN)).status,
    ).toBe(404);
  }, 600_000);

  it("the dry run over the client's last detections matches re-scoring them for real", async () => {
    const submitAll = async () => {
      const ids: string[] = [];
      for (let i = 0; i < N; i++) ids.push(await detect(DRY, `/doc-${i}.pdf`, "invoice"));
      const out = [];
      for (const id of ids) out.push({ id, score: (await finish(DRY, id)).score as number });
      return out;
    };
    const before = await submitAll();
    const dir = await mkdtemp(path.join(os.tmpdir(), "docverify-cluster-dryrun-"));
    const file = path.join(dir, "lender-b.json");
    await writeFile(file, JSON.stringify(LENDER_B));
    const run = await runNode(
      [
        ENTRY,
        "policy",
        "dry-run",
        "--cluster",
        "--policy",
        file,
        "--last",
        String(N),
        "--client",
        DRY.client_id,
        "--json",
      ],
      { env: w.operatorEnv },
    );
    expect(run.code, run.stderr).toBe(0);
    const dry = JSON.parse(run.stdout) as {
      rows: { id: string; oldScore: number; newScore: number }[];
      summary: { total: number; crossedUp: number };
    };
    expect(dry.summary.total).toBe(N);
    expect(dry.summary.crossedUp).toBeGreaterThan(0);
    const byId = new Map(dry.rows.map((r) => [r.id, r]));

    const { name: _n, ...spec } = LENDER_B;
    const created = await apiRequest(w.admin, "POST", BASE, {
      apiVersion: "docverify.io/v1alpha1",
      kind: "DetectionPolicy",
      metadata: { name: "lender-b" },
      spec,
    });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    await until("lender-b in force", async () =>
      (await getPolicy("lender-b"))?.status?.inForce?.version === 1 ? true : undefined,
    );
    const after = await submitAll();
    expect(after.map((a) => a.score)).toEqual(before.map((b) => byId.get(b.id)?.newScore));
  }, 900_000);
});
