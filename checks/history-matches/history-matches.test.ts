import { createHash } from "node:crypto";
import { mkdtemp, readFile, rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { CheckResult } from "../../core/check-result.js";
import { tenantOf } from "../../core/tenant-memory.js";
import { buildDocumentModel } from "../../document/pdf-model.js";
import { buildDocument } from "../../fixtures/real-producer/content.js";
import type { RpDoc } from "../../fixtures/real-producer/model.js";
import { type Family, produce } from "../../fixtures/real-producer/produce.js";
import { sameTemplateStatement } from "../../fixtures/same-template.js";
import { createLocalObjectStore } from "../../platform/local/object-store.js";
import { createObjectStoreMemory } from "../../platform/memory/object-store-memory.js";
import { gatherHistory } from "./gather.js";
import { historyMatchesCheck, ISSUER_TEMPLATE_MIN } from "./history-matches.js";
import { tenantKeys } from "./keys.js";

/**
 * history.matches on genuine statements rendered by a real producer (Ghostscript, the "in-house print
 * system" of fixtures/real-producer), through the real gather (fingerprint, bounded lookups) on the real
 * local object store: one issuer's template shared by 30 holders is ordinary; the same statement with
 * another holder, the same template under another issuer, and the issuer's statement from another template
 * are found; another tenant's memory is never read.
 */
const KEY = new TextEncoder().encode("memory-key-of-this-test-0123456789abcdef");
let dir: string;
let memory: ReturnType<typeof createObjectStoreMemory>;
const pdfs = new Map<string, Uint8Array>();
let counter = 0;

const base = buildDocument(7, "bank_statement", "GB");
/** Another holder's statement of the same bank: the bank's template (typography, header, footer) kept. */
const sameTemplate = (seed: number): RpDoc => sameTemplateStatement(base, seed);
const HOLDERS = Array.from({ length: 30 }, (_, i) => 101 + i);

async function render(name: string, doc: RpDoc, family: Family = "ghostscript"): Promise<void> {
  const out = path.join(dir, `${name}.pdf`);
  await produce(doc, path.join(dir, name), out, { family, tz: "UTC", at: doc.issuedOn });
  pdfs.set(name, new Uint8Array(await readFile(out)));
}

beforeAll(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), "history-matches-"));
  const objects = createLocalObjectStore(path.join(dir, "objects"));
  await objects.ensureBucket("b");
  memory = createObjectStoreMemory(objects, "b");
  const jobs: [string, RpDoc, Family?][] = [
    ["original", base],
    ["renamed", { ...base, recipient: { ...base.recipient, name: "Jane Other" } }],
    ["other-issuer", { ...base, issuer: { ...base.issuer, name: "Harbour Savings Bank" } }],
    ["chromium", base, "chromium"],
    ...HOLDERS.map((s): [string, RpDoc] => [`holder-${s}`, sameTemplate(s)]),
  ];
  // Two producer runs at a time (the machine is shared).
  for (let i = 0; i < jobs.length; i += 2)
    await Promise.all(jobs.slice(i, i + 2).map(([n, d, f]) => render(n, d, f)));
}, 300_000);
afterAll(async () => {
  if (dir) await rm(dir, { recursive: true, force: true });
});

/** Checks `name` as tenant `tenant` would, then remembers it (as the lifecycle does once it is terminal). */
async function check(name: string, tenant = "acme"): Promise<CheckResult & { id: string }> {
  const bytes = pdfs.get(name) as Uint8Array;
  const doc = await buildDocumentModel({
    bytes,
    contentType: "application/pdf",
    filename: `${name}.pdf`,
    declaredContentType: null,
    declaredDocType: "bank_statement",
    region: "GB",
  });
  const id = `det-${++counter}-${name}`;
  const keys = tenantKeys(KEY, tenant);
  const sha256 = createHash("sha256").update(bytes).digest("hex");
  const history = await gatherHistory(
    doc,
    { detection: id, sha256, docType: "bank_statement", at: "t" },
    keys,
    memory,
  );
  const result = await historyMatchesCheck.run(doc, { now: new Date(), history });
  await memory.remember(keys.id, history.fingerprint.entry);
  return { ...result, id };
}
const top = (r: CheckResult) => Math.max(0, ...r.findings.map((f) => f.severity ?? 0));

describe("history.matches", () => {
  it("skips when the memory is off", async () => {
    const doc = await buildDocumentModel({
      bytes: pdfs.get("original") as Uint8Array,
      contentType: "application/pdf",
      filename: "a.pdf",
      declaredContentType: null,
      declaredDocType: "bank_statement",
      region: "GB",
    });
    expect((await historyMatchesCheck.run(doc, { now: new Date() })).outcome).toBe("skip");
  });

  it("30 holders' statements of one bank's template: nothing above a note", async () => {
    const results: CheckResult[] = [];
    for (const s of HOLDERS) results.push(await check(`holder-${s}`, "bank-customer"));
    const tops = results.map(top);
    expect(
      Math.max(...tops),
      JSON.stringify(results.flatMap((r) => r.findings).slice(0, 3)),
    ).toBeLessThanOrEqual(2);
    expect(results.flatMap((r) => r.discovered ?? [])).not.toContain("seen_with_other_values");
  }, 120_000);

  it("a statement of that bank from another template: an anomaly saying how the template differs", async () => {
    const r = await check("chromium", "bank-customer");
    const f = r.findings.find((x) => x.code === "issuer_template_differs");
    expect(f?.severity).toBe(3);
    expect(f?.evidence?.earlierDocuments).toBeGreaterThanOrEqual(ISSUER_TEMPLATE_MIN);
    expect(f?.evidence?.producer).toMatchObject({ after: expect.stringMatching(/Skia|Chrom/) });
    expect(r.discovered).toContain("template_reuse");
  });

  it("the same statement with another holder: the names side by side, placed on the name, at most an anomaly", async () => {
    const first = await check("original");
    expect(first.findings).toEqual([]);
    const r = await check("renamed");
    expect(r.discovered).toContain("seen_with_other_values");
    const changed = r.findings.filter((f) => f.code === "same_document_other_values");
    expect(changed).toHaveLength(1);
    expect(changed[0]).toMatchObject({
      page: 1,
      kind: "history",
      evidence: { earlier: [first.id], before: "Amelia Thomas", after: "Jane Other" },
    });
    expect(changed[0]?.bbox).toHaveLength(4);
    expect(top(r)).toBeLessThanOrEqual(4);
    // The account and IBAN of the first holder, now with another.
    expect(
      r.findings.filter((f) => f.code === "identifier_other_holder").map((f) => f.evidence?.identifier),
    ).toEqual(expect.arrayContaining(["iban", "account"]));
  });

  it("the same file again: a duplicate naming both earlier submissions of it", async () => {
    const r = await check("original");
    const dup = r.findings.find((f) => f.code === "duplicate_submission");
    expect(dup?.severity).toBe(2);
    expect(((dup?.evidence?.earlier ?? []) as string[]).some((id) => id.endsWith("-original"))).toBe(true);
    expect(r.discovered).toContain("duplicate_submission");
  });

  it("the same template under another issuer's name: template reuse", async () => {
    const r = await check("other-issuer");
    const f = r.findings.find((x) => x.code === "template_reuse_other_issuer");
    expect(f?.evidence?.otherIssuers).toContain("Wessex Mutual Bank");
    expect(r.discovered).toContain("template_reuse");
  });

  it("another tenant's identical documents match nothing", async () => {
    for (const name of ["original", "renamed"]) {
      const r = await check(name, "other-tenant-" + name);
      expect(r.findings).toEqual([]);
      expect(r.discovered ?? []).toEqual([]);
    }
  });

  it("a client's tenant is the entry's tenant, else the client", () => {
    expect(tenantOf({ submittedBy: "a" })).toBe("a");
    expect(tenantOf({ submittedBy: "a", tenant: "bank" })).toBe("bank");
    expect(tenantKeys(KEY, "a").id).not.toBe(tenantKeys(KEY, "b").id);
    expect(tenantKeys(KEY, "a").hash("x", "v")).not.toBe(tenantKeys(KEY, "b").hash("x", "v"));
    expect(tenantKeys(KEY, "b").unseal(tenantKeys(KEY, "a").seal("secret"))).toBeUndefined();
  });
});
