/**
 * Tenant policies in the cluster runtime (issue 26, docs/tuning.md), on a real kube-apiserver with the
 * DetectionPolicy CRD and the RBAC of deploy/rbac: a client whose entry names a DetectionPolicy is scored
 * under the version in force from the next detection on (recorded on the Detection and named in the
 * reasoning); an invalid edit is refused (by the CRD schema, or by the operator: condition Valid=False naming
 * the field) and the version in force stays; reviewer feedback is kept. The calibration loop and the dry run
 * as standalone runs them (e2e/policy-scenarios.ts): feedback on 40 detections feeds `docverify
 * calibration-report --cluster`, whose cross-validated FPR interval is met on 40 further labelled detections,
 * and the dry run (`docverify policy dry-run --cluster`) over the last 50 of those 80 matches re-scoring them
 * for real. Steps run on warm step workers (stepMode: workers) so 130 detections fit the suite's time.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { makeDocument } from "../../fixtures/documents.js";
import { ENTRY, runNode } from "../harness.js";
import {
  calibrationDocuments,
  type DryRunOutput,
  EAGER,
  expectCalibrationReport,
  expectDryRun,
  expectWithinIntervals,
  type LabelledDoc,
  labelOf,
  proposedPolicy,
} from "../policy-scenarios.js";
import { apiRequest } from "./api-request.js";
import { missingPrerequisites, type RuntimeWorld, startRuntimeWorld, until } from "./runtime-world.js";
import { writeFile } from "node:fs/promises";
import path from "node:path";
import { tempDirs } from "../../fixtures/temp-dirs.js";

const temp = tempDirs();
afterAll(temp.removeAll);

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
const CAL = {
  client_id: "calibrating-lender",
  client_secret: "s3cret-calibrating-0123456789",
  scopes: ["DocumentVerification:*"],
  policy: "eager",
};
const PRODUCER = "Forgery Works PDF 2.1";
const specV1 = {
  version: 1,
  producers: { flagged: [{ pattern: "forgery works", level: "proof", decidesAlone: true }] },
};
/** The dry run's policy: the calibrated one plus a rule for invoices with an anomaly (as standalone's lender-b). */
const withInvoiceRule = (policy: ReturnType<typeof proposedPolicy>) => ({
  ...policy,
  version: policy.version + 1,
  rules: [
    {
      name: "invoices with an anomaly",
      when: { all: [{ docType: ["invoice"] }, { finding: { minSeverity: 3 } }] },
      atLeast: "specific",
    },
  ],
});
/** Detections of the dry run: the last 50 of the calibration's 80. */
const N = 50;
const BASE = `/apis/docverify.io/v1alpha1/namespaces/${NS}/detectionpolicies`;

const missing = missingPrerequisites();
const title = missing.length
  ? `tenant policies in the cluster runtime: SKIPPED — ${missing.join("; ")}`
  : "tenant policies in the cluster runtime";

describe.skipIf(missing.length > 0)(title, () => {
  let w: RuntimeWorld;
  let sets: Record<"history" | "further", LabelledDoc[]>;
  beforeAll(async () => {
    const calibration = await calibrationDocuments();
    sets = calibration.sets;
    const documents: Record<string, Buffer> = {
      "/forged.pdf": Buffer.from(
        await makeDocument({ seed: 2601, docType: "bank_statement", region: "GB", producer: PRODUCER }),
      ),
    };
    for (const [p, body] of Object.entries(calibration.served)) documents[p] = Buffer.from(body);
    // deploy/rbac/operator.yaml alone, as the chart binds it in stepMode: workers.
    w = await startRuntimeWorld({ namespace: NS, documents, stepMode: "workers" });
    // Warm step workers (the chart's stepMode: workers): 130 detections in step Pods would take minutes.
    // No tenant memory: the dry run's documents are submitted again, which it would note as duplicates.
    const noMemory = { DOCVERIFY_MEMORY: "off" };
    const op = await w.newOperator("operator-a", { DOCVERIFY_STEP_MODE: "workers", ...noMemory });
    await op.waitForLog(/is the leader/, 30_000);
    for (const step of ["prepare", "check", "agent"] as const) await w.newStepWorker(step, noMemory);
    await w.startApi([TUNED, PLAIN, CAL]);
  }, 240_000);
  afterAll(async () => {
    await w?.stop();
  }, 120_000);

  // biome-ignore lint/suspicious/noExplicitAny: a DetectionPolicy as the apiserver answers it
  const getPolicy = async (name: string): Promise<any> =>
    (await apiRequest(w.admin, "GET", `${BASE}/${name}`)).body;
  // biome-ignore lint/suspicious/noExplicitAny: a condition list
  const condition = (p: any, type: string) => p?.status?.conditions?.find((c: any) => c.type === type);
  type Client = typeof TUNED | typeof PLAIN | typeof CAL;
  const detect = async (client: Client, docPath: string, docType = "bank_statement") => {
    const r = await w.call(
      "POST",
      "/v1/detection",
      { source_url: `${w.docBase}${docPath}`, doc_type: docType, region: "GB" },
      client,
    );
    expect(r.status, JSON.stringify(r.body)).toBe(202);
    return r.body.id as string;
  };
  const finish = async (client: Client, id: string) => {
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

  const inForce = (name: string, version: number) =>
    until(`${name} v${version} in force`, async () =>
      (await getPolicy(name))?.status?.inForce?.version === version ? true : undefined,
    );
  const putPolicy = async (policy: { name: string; version: number }) => {
    const { name, ...spec } = policy;
    const cur = await getPolicy(name);
    const r =
      cur?.kind === "DetectionPolicy"
        ? await apiRequest(w.admin, "PUT", `${BASE}/${name}`, { ...cur, spec })
        : await apiRequest(w.admin, "POST", BASE, {
            apiVersion: "docverify.io/v1alpha1",
            kind: "DetectionPolicy",
            metadata: { name },
            spec,
          });
    expect(r.status, JSON.stringify(r.body)).toBeLessThan(300);
    await inForce(name, policy.version);
  };
  /** Submits documents, waits for all; labels them as the tenant's reviewers would when `label`. */
  const submitAll = async (docs: LabelledDoc[], label: boolean) => {
    const ids: string[] = [];
    for (const d of docs) ids.push(await detect(CAL, d.path, d.docType));
    const out: { id: string; score: number; label: string }[] = [];
    for (const [i, id] of ids.entries()) {
      const done = await finish(CAL, id);
      const l = labelOf(docs[i]!.kind);
      if (label) {
        const fb = await w.call("PUT", `/v1/detection/${id}/feedback`, { label: l, reviewer: "e2e" }, CAL);
        expect(fb.status).toBe(204);
      }
      out.push({ id, score: done.score as number, label: l });
    }
    return out;
  };
  const cli = async (args: string[]) => {
    const run = await runNode([ENTRY, ...args, "--cluster", "--client", CAL.client_id, "--json"], {
      env: w.operatorEnv,
    });
    expect(run.code, run.stderr).toBe(0);
    return JSON.parse(run.stdout);
  };

  it("feedback on 40 detections feeds a calibration report met on 40 further; the dry run over the last 50 matches re-scoring them", async () => {
    const startedAt = Date.now();
    await putPolicy(EAGER);
    const history = await submitAll(sets.history, true);
    const report = await cli(["calibration-report"]);
    expectCalibrationReport(report);
    const calibrated = proposedPolicy(report, 2);
    await putPolicy(calibrated);
    const further = await submitAll(sets.further, true);
    expectWithinIntervals("cluster", report, further);

    // The dry run over the last 50 of those 80 detections, then the same 50 documents for real.
    const next = withInvoiceRule(calibrated);
    const dir = await temp.make("docverify-cluster-dryrun-");
    const file = path.join(dir, "eager-next.json");
    await writeFile(file, JSON.stringify(next));
    const dry = (await cli(["policy", "dry-run", "--policy", file, "--last", String(N)])) as DryRunOutput;
    // "Last" is by completion: warm workers finish in another order than submitted, so the 50 the dry run
    // chose are looked up among the 80 (each must be one of them, none twice).
    const all = [...history, ...further];
    const allDocs = [...sets.history, ...sets.further];
    const chosen = dry.rows.map((r) => all.findIndex((d) => d.id === r.id));
    expect(chosen.every((i) => i >= 0)).toBe(true);
    expect(new Set(chosen).size).toBe(N);
    const last = chosen.map((i) => all[i]!);
    const lastDocs = chosen.map((i) => allDocs[i]!);
    const predicted = expectDryRun(dry, last);
    await putPolicy(next);
    const after = await submitAll(lastDocs, false);
    expect(after.map((a) => a.score)).toEqual(predicted);
    process.stdout.write(
      `cluster calibration + dry run: ${history.length + further.length + after.length} detections in ${((Date.now() - startedAt) / 1000).toFixed(1)} s\n`,
    );
  }, 1_800_000);
});
