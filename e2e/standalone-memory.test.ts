/**
 * The tenant memory (issue 23) against the running standalone service: the same PDF twice names the first
 * detection (duplicate_submission); a genuine statement re-rendered by its producer with another holder name
 * is matched to the first with the changed value side by side (seen_with_other_values), below 50 without a
 * corroborating finding; another tenant's identical document matches nothing; DELETE removes the entry and
 * its index keys from the object store (read from outside, in the service's data directory).
 */

import { mkdtemp, readdir, readFile, rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { buildDocument } from "../fixtures/real-producer/content.js";
import type { RpDoc } from "../fixtures/real-producer/model.js";
import { produce } from "../fixtures/real-producer/produce.js";
import { sameTemplateStatement } from "../fixtures/same-template.js";
import { CLIENTS, type Service, startService, type TestClient, until } from "./harness.js";

let svc: Service;
let work: string;
let original: Uint8Array;
let renamed: Uint8Array;

beforeAll(async () => {
  work = await mkdtemp(path.join(os.tmpdir(), "memory-e2e-"));
  // A genuine GB statement from the "in-house print system" (Ghostscript), and the same statement rendered
  // again by the same producer with only the holder's name changed.
  const doc = buildDocument(7, "bank_statement", "GB");
  const opts = { family: "ghostscript" as const, tz: "UTC", at: doc.issuedOn };
  await produce(doc, path.join(work, "a"), path.join(work, "a.pdf"), opts);
  await produce(
    { ...doc, recipient: { ...doc.recipient, name: "Jane Other" } },
    path.join(work, "b"),
    path.join(work, "b.pdf"),
    opts,
  );
  original = new Uint8Array(await readFile(path.join(work, "a.pdf")));
  renamed = new Uint8Array(await readFile(path.join(work, "b.pdf")));
  svc = await startService();
}, 120_000);
afterAll(async () => {
  await svc?.dispose();
  if (work) await rm(work, { recursive: true, force: true });
});

async function storedFiles(): Promise<string[]> {
  const root = path.join(svc.dataDir, "objects");
  const entries = await readdir(root, { recursive: true, withFileTypes: true }).catch(() => []);
  return entries.filter((e) => e.isFile()).map((e) => path.relative(root, path.join(e.parentPath, e.name)));
}
/** The tenant memory's objects of one detection: its entry, its index markers, its owner record. */
const memoryOf = async (id: string) =>
  (await storedFiles()).filter((f) => f.startsWith("docverify/memory/") && f.includes(id));

async function submit(client: TestClient, pdf: Uint8Array, expectDone = true): Promise<string> {
  const up = await svc.call("POST", "/v1/uploads", {
    client,
    json: { filename: "statement.pdf", content_type: "application/pdf", size_bytes: pdf.length },
  });
  expect(up.status).toBe(201);
  expect((await fetch(up.body.upload_url, { method: "PUT", body: pdf })).status).toBe(200);
  const created = await svc.create(client, {
    upload_id: up.body.upload_id,
    doc_type: "bank_statement",
    region: "GB",
  });
  expect(created.status).toBe(202);
  const id = created.body.id as string;
  const done = await svc.waitTerminal(client, id);
  if (expectDone) expect(done.status).toBe("COMPLETED");
  // Remembered once terminal (the operator's lifecycle pass): wait for the entry to appear.
  await until(
    `the memory entry of ${id}`,
    () => memoryOf(id),
    (f) => f.some((k) => k.endsWith(`/e/${id}.json`)),
  );
  return id;
}

async function historyOf(client: TestClient, id: string) {
  const ev = await svc.call("GET", `/v1/detection/${id}/evidence`, { client });
  expect(ev.status).toBe(200);
  const detail = await svc.call("GET", `/v1/detection/${id}`, { client });
  return {
    findings: (ev.body.findings as any[]).filter((f) => f.check_id === "history.matches"),
    discovered: (detail.body.discovered ?? []) as string[],
    score: detail.body.score as number,
  };
}

describe("the tenant memory (standalone process)", () => {
  let first: string;

  it("the same PDF twice: the second names the first (duplicate_submission)", async () => {
    first = await submit(CLIENTS.full, original);
    const none = await historyOf(CLIENTS.full, first);
    expect(none.findings).toEqual([]);
    expect(none.discovered).not.toContain("duplicate_submission");

    const second = await submit(CLIENTS.full, original);
    const h = await historyOf(CLIENTS.full, second);
    expect(h.discovered).toContain("duplicate_submission");
    const dup = h.findings.find((f) => f.code === "duplicate_submission");
    expect(dup?.evidence.earlier).toContain(first);
    expect(dup?.severity).toBeLessThanOrEqual(2);
  }, 240_000);

  it("the statement re-rendered with another holder: matched, the names side by side, below 50", async () => {
    const id = await submit(CLIENTS.full, renamed);
    const h = await historyOf(CLIENTS.full, id);
    expect(h.discovered).toContain("seen_with_other_values");
    expect(h.discovered).not.toContain("duplicate_submission");
    const changed = h.findings.filter((f) => f.code === "same_document_other_values");
    expect(changed.map((f) => [f.before, f.after])).toContainEqual(["Amelia Thomas", "Jane Other"]);
    expect(changed[0].evidence.earlier).toContain(first);
    expect(changed[0].page).toBe(1);
    // Nothing else about the name: the memory alone is an anomaly, never a decision.
    expect(h.score).toBeLessThan(50);
  }, 240_000);

  it("another tenant's identical document matches nothing", async () => {
    const id = await submit(CLIENTS.other, original);
    const h = await historyOf(CLIENTS.other, id);
    expect(h.findings).toEqual([]);
    expect(h.discovered).not.toContain("duplicate_submission");
    expect(h.discovered).not.toContain("seen_with_other_values");
  }, 240_000);

  it("DELETE removes the detection's memory entry and index keys", async () => {
    expect((await memoryOf(first)).length).toBeGreaterThan(3);
    expect((await svc.call("DELETE", `/v1/detection/${first}`, { client: CLIENTS.full })).status).toBe(200);
    await until(
      "the deleted detection's memory",
      () => memoryOf(first),
      (f) => f.length === 0,
    );
  }, 120_000);
});

/**
 * One bank's template shared by 30 holders (the check-level test's generator: another holder's statement
 * with the bank's issuer, typography, contact, legal lines and date kept; seeded, so other names, amounts,
 * accounts and IBANs), submitted through the API three at a time under one tenant: the memory sees the same
 * template and issuer 30 times, which is ordinary, so no history.* finding goes above a note and no score
 * reaches 50.
 */
describe("the tenant memory: 30 holders of one issuer template (standalone process)", () => {
  const HOLDERS = Array.from({ length: 30 }, (_, i) => 101 + i);
  const statements: Uint8Array[] = [];

  beforeAll(async () => {
    const base = buildDocument(7, "bank_statement", "GB");
    const sameTemplate = (seed: number): RpDoc => sameTemplateStatement(base, seed);
    // Two producer runs at a time (the machine is shared).
    for (let i = 0; i < HOLDERS.length; i += 2)
      await Promise.all(
        HOLDERS.slice(i, i + 2).map(async (seed, j) => {
          const doc = sameTemplate(seed);
          const out = path.join(work, `holder-${seed}.pdf`);
          await produce(doc, path.join(work, `holder-${seed}`), out, {
            family: "ghostscript",
            tz: "UTC",
            at: doc.issuedOn,
          });
          statements[i + j] = new Uint8Array(await readFile(out));
        }),
      );
  }, 300_000);

  it("30 genuine statements from different holders: no history.* finding above a note, no score of 50", async () => {
    const client = CLIENTS.batch;
    const ids: string[] = [];
    for (let i = 0; i < statements.length; i += 3)
      ids.push(...(await Promise.all(statements.slice(i, i + 3).map((pdf) => submit(client, pdf, false)))));
    const seen = await Promise.all(
      ids.map(async (id) => {
        const h = await historyOf(client, id);
        const status = (await svc.call("GET", `/v1/detection/${id}`, { client })).body.status as string;
        return { id, status, ...h };
      }),
    );
    expect(seen.map((s) => s.status)).toEqual(ids.map(() => "COMPLETED"));
    const findings = seen.flatMap((s) => s.findings);
    // The memory did see the documents: the template and the issuer recur, but that is ordinary.
    const above = findings.filter((f) => f.severity > 2);
    expect(above, JSON.stringify(above.slice(0, 3))).toEqual([]);
    expect(seen.flatMap((s) => s.discovered)).not.toContain("seen_with_other_values");
    const high = seen.filter((s) => s.score >= 50);
    expect(high.map((s) => [s.id, s.score, s.findings.map((f) => f.code)])).toEqual([]);
  }, 600_000);
});
