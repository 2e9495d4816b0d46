import { readFile } from "node:fs/promises";
import path from "node:path";
import { parse as load } from "yaml";
import { describe, expect, it } from "vitest";
import { type ZodType, z } from "zod";
import { Detection } from "../../core/detection.js";
import { DetectionJob } from "../../core/detection-job.js";
import { allCrds, type CustomResourceDefinition, renderCrdFile } from "./crd-manifests.js";
import type { StructuralSchema } from "./structural-schema.js";
import { validateStructural } from "./structural-validator.js";

const crdDir = path.resolve(import.meta.dirname, "../../crds");

async function crdFromFile(file: string): Promise<CustomResourceDefinition> {
  const text = await readFile(path.join(crdDir, file), "utf8");
  return load(text.split("\n---\n")[1]!) as CustomResourceDefinition;
}
const schemaOf = (crd: CustomResourceDefinition): StructuralSchema =>
  crd.spec.versions[0]!.schema.openAPIV3Schema;

/** Every field path of a JSON schema (`spec.source.url`, `status.checks[].findingCount`, ...). */
function fieldPaths(node: Record<string, unknown>, prefix: string, out: Set<string>): Set<string> {
  const branches = [node, ...((node.anyOf as Record<string, unknown>[] | undefined) ?? [])];
  for (const b of branches) {
    for (const [k, sub] of Object.entries((b.properties as Record<string, Record<string, unknown>>) ?? {})) {
      const p = prefix ? `${prefix}.${k}` : k;
      out.add(p);
      fieldPaths(sub, p, out);
    }
    if (b.items) fieldPaths(b.items as Record<string, unknown>, `${prefix}[]`, out);
  }
  return out;
}

function zodPaths(schema: ZodType): Set<string> {
  const json = z.toJSONSchema(schema, { io: "input" }) as Record<string, unknown>;
  const all = fieldPaths(json, "", new Set());
  // apiVersion, kind and metadata belong to the apiserver; the CRD lists them without detail.
  return new Set([...all].filter((p) => !p.startsWith("metadata.")));
}

const CASES: { file: string; zod: ZodType }[] = [
  { file: "docverify.io_detections.yaml", zod: Detection },
  { file: "docverify.io_detectionjobs.yaml", zod: DetectionJob },
];

describe("CRD files", () => {
  it.each(CASES)("$file is what scripts/gen-crds.ts generates (run `npm run gen:crds` if not)", async (c) => {
    const text = await readFile(path.join(crdDir, c.file), "utf8");
    expect(text).toBe(renderCrdFile(allCrds()[c.file]!));
  });

  it.each(CASES)("$file has every field of core's zod schema, and no other", async (c) => {
    const crd = await crdFromFile(c.file);
    const crdPaths = fieldPaths(schemaOf(crd) as Record<string, unknown>, "", new Set());
    expect([...crdPaths].sort()).toEqual([...zodPaths(c.zod)].sort());
  });

  it("declares the names, subresource, printer columns and CEL rule the cluster relies on", async () => {
    const det = await crdFromFile("docverify.io_detections.yaml");
    expect(det.metadata.name).toBe("detections.docverify.io");
    expect(det.spec.names).toMatchObject({
      kind: "Detection",
      shortNames: ["det"],
      categories: ["docverify"],
    });
    const v = det.spec.versions[0]!;
    expect(v.name).toBe("v1alpha1");
    expect(v.subresources).toEqual({ status: {} });
    expect(v.additionalPrinterColumns.map((c) => c.name)).toEqual([
      "Phase",
      "Score",
      "Trust",
      "DocType",
      "Submitter",
      "Age",
      "Message",
    ]);
    expect(v.additionalPrinterColumns.find((c) => c.name === "Message")?.priority).toBe(1);
    const source = schemaOf(det).properties?.spec?.properties?.source;
    expect(source?.["x-kubernetes-validations"]?.[0]?.rule).toContain("has(self.uploadId)");
    const job = await crdFromFile("docverify.io_detectionjobs.yaml");
    expect(job.spec.names).toMatchObject({ kind: "DetectionJob", shortNames: ["djob"] });
    expect(job.spec.versions[0]!.subresources).toEqual({ status: {} });
  });
});

const validDetection = {
  apiVersion: "docverify.io/v1alpha1",
  kind: "Detection",
  metadata: { name: "det-01" },
  spec: {
    source: { url: "https://example.com/a.pdf" },
    docType: "invoice",
    region: "DE",
    submittedBy: "acme",
    sample: false,
    priority: "interactive",
  },
  status: {
    phase: "Completed",
    observedGeneration: 1,
    conditions: [
      {
        type: "Ready",
        status: "True",
        reason: "Completed",
        message: "Done.",
        lastTransitionTime: "2026-01-01T00:00:00Z",
      },
    ],
    document: {
      filename: null,
      contentType: "application/pdf",
      sizeBytes: 10,
      key: "documents/x",
      sha256: "ab",
    },
    steps: [{ name: "prepare", workload: "det-01-prepare-1", attempt: 1, state: "Succeeded" }],
    checks: [{ checkId: "metadata.dates", outcome: "flag", severity: 6, findingCount: 1 }],
    authoritative: { checkId: "signature.pdf", trust: null, directive: null },
    score: null,
    verdict: {
      fraudScore: 40,
      documentTypeMatch: true,
      actualDocType: "invoice",
      reasoning: null,
      perCheck: [{ checkId: "metadata.dates", importance: null, reasoning: "r" }],
    },
    failure: { code: "forced_error", message: "m" },
    agent: { runId: "r1" },
    billable: true,
  },
};

type Mutation = { name: string; apply: (d: typeof validDetection) => void };
// biome-ignore lint/suspicious/noExplicitAny: a mutation pokes at any path of the sample
const at = (f: (d: any) => void) => (d: typeof validDetection) => f(d);
const MUTATIONS: Mutation[] = [
  { name: "unknown docType", apply: at((d) => (d.spec.docType = "passport")) },
  { name: "lower-case region", apply: at((d) => (d.spec.region = "de")) },
  { name: "missing submittedBy", apply: at((d) => delete d.spec.submittedBy) },
  { name: "score as a string", apply: at((d) => (d.status.score = "40")) },
  { name: "fraudScore above 100", apply: at((d) => (d.status.verdict.fraudScore = 101)) },
  { name: "fractional severity", apply: at((d) => (d.status.checks[0].severity = 1.5)) },
  { name: "negative findingCount", apply: at((d) => (d.status.checks[0].findingCount = -1)) },
  { name: "fractional findingCount", apply: at((d) => (d.status.checks[0].findingCount = 0.5)) },
  { name: "a check without findingCount", apply: at((d) => delete d.status.checks[0].findingCount) },
  { name: "condition status Maybe", apply: at((d) => (d.status.conditions[0].status = "Maybe")) },
  { name: "unknown failure code", apply: at((d) => (d.status.failure.code = "oops")) },
  { name: "unknown phase", apply: at((d) => (d.status.phase = "Done")) },
  { name: "null contentType", apply: at((d) => (d.status.document.contentType = null)) },
  { name: "attempt 0", apply: at((d) => (d.status.steps[0].attempt = 0)) },
  { name: "negative sizeBytes", apply: at((d) => (d.status.document.sizeBytes = -1)) },
  { name: "verdict null", apply: at((d) => (d.status.verdict = null)) },
  { name: "trust corroborated", apply: at((d) => (d.status.authoritative.trust = "corroborated")) },
  { name: "unknown trust", apply: at((d) => (d.status.authoritative.trust = "maybe")) },
  { name: "no status", apply: at((d) => delete d.status) },
  { name: "sample default", apply: at((d) => delete d.spec.sample) },
];

describe("CRD schema and zod judge objects alike", () => {
  it("the valid sample is valid to both, with no field the apiserver would prune", async () => {
    const schema = schemaOf(await crdFromFile("docverify.io_detections.yaml"));
    expect(Detection.safeParse(validDetection).success).toBe(true);
    expect(validateStructural(schema, validDetection)).toEqual({ errors: [], unknownFields: [] });
  });

  it.each(MUTATIONS)("$name", async (m) => {
    const schema = schemaOf(await crdFromFile("docverify.io_detections.yaml"));
    const d = structuredClone(validDetection);
    m.apply(d);
    const zodOk = Detection.safeParse(d).success;
    const report = validateStructural(schema, d);
    expect(report.unknownFields).toEqual([]);
    expect(report.errors.length === 0).toBe(zodOk);
  });

  it("the mutations include both accepted and rejected objects", () => {
    const verdicts = MUTATIONS.map((m) => {
      const d = structuredClone(validDetection);
      m.apply(d);
      return Detection.safeParse(d).success;
    });
    expect(verdicts.filter(Boolean).length).toBeGreaterThanOrEqual(3);
    expect(verdicts.filter((v) => !v).length).toBeGreaterThanOrEqual(10);
  });

  it("a DetectionJob sample is judged alike", async () => {
    const schema = schemaOf(await crdFromFile("docverify.io_detectionjobs.yaml"));
    const job = {
      apiVersion: "docverify.io/v1alpha1",
      kind: "DetectionJob",
      metadata: { name: "1b4e28ba-2fa1-11d2-883f-0016d3cca427" },
      spec: {
        connector: { type: "s3", bucketName: "inbox", prefixes: ["a/"] },
        output: { type: "s3", bucketName: "out", prefix: "reports/" },
        forceError: false,
        docType: "other",
        region: "US",
        submittedBy: "acme",
      },
      status: { phase: "Running", counts: { total: 2, queued: 1, running: 1, completed: 0, failed: 0 } },
    };
    expect(DetectionJob.safeParse(job).success).toBe(true);
    expect(validateStructural(schema, job)).toEqual({ errors: [], unknownFields: [] });
    const bad = structuredClone(job);
    (bad.spec.connector as { prefixes: string[] }).prefixes = [];
    expect(DetectionJob.safeParse(bad).success).toBe(false);
    expect(validateStructural(schema, bad).errors.length).toBeGreaterThan(0);
  });
});
