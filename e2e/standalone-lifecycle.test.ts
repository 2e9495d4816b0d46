import { readdir } from "node:fs/promises";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { makeDocument, makeMetadataTamperedPdf, makeRandomBytes } from "../fixtures/documents.js";
import { CLIENTS, type Service, startFileServer, startService } from "./harness.js";

const DETAIL_FIELDS = [
  "id",
  "status",
  "failure_code",
  "score",
  "billable",
  "created_at",
  "completed_at",
  "submitted_by",
  "batch_id",
  "filename",
  "content_type",
  "size_bytes",
  "s3_key",
  "discovered",
  "authoritative",
  "verdict",
  "agent_error",
  "agent_run_id",
  "failure_message",
];

let svc: Service;
let files: Awaited<ReturnType<typeof startFileServer>>;

beforeAll(async () => {
  files = await startFileServer({
    "/statement.pdf": {
      body: await makeDocument({ seed: 1, docType: "bank_statement", region: "GB", pages: 3 }),
    },
    "/tampered.pdf": { body: await makeMetadataTamperedPdf(7) },
    "/noise.bin": { body: makeRandomBytes(3, 4096), type: "application/octet-stream" },
    "/gone.pdf": { body: "gone", status: 410, type: "text/plain" },
  });
  svc = await startService({
    env: { DOCVERIFY_ALLOW_PRIVATE_SOURCES: "true", DOCVERIFY_ALLOWED_SOURCE_PORTS: `80,${files.port}` },
  });
});
afterAll(async () => {
  await svc?.dispose();
  await files?.close();
});

describe("a real text PDF, end to end", () => {
  let genuineScore = Number.POSITIVE_INFINITY;
  it("answers 202 QUEUED at once and reaches COMPLETED with a full DetectionDetail", async () => {
    const created = await svc.create(CLIENTS.full, {
      source_url: files.url("/statement.pdf"),
      doc_type: "bank_statement",
      region: "gb",
    });
    expect(created.status).toBe(202);
    expect(created.body).toMatchObject({ id: expect.stringMatching(/^det-[0-9a-z]{26}$/), status: "QUEUED" });

    const d = await svc.waitTerminal(CLIENTS.full, created.body.id);
    expect(d.status, JSON.stringify(d)).toBe("COMPLETED");
    for (const f of DETAIL_FIELDS) expect(d, `field ${f}`).toHaveProperty(f);
    expect(d).toMatchObject({
      failure_code: null,
      failure_message: null,
      billable: true,
      submitted_by: "acme-bank",
      batch_id: null,
      filename: "statement.pdf",
      content_type: "application/pdf",
      authoritative: null,
      agent_error: null,
    });
    expect(d.size_bytes).toBeGreaterThan(500);
    expect(d.s3_key).toContain(d.id);
    expect(Date.parse(d.completed_at)).toBeGreaterThanOrEqual(Date.parse(d.created_at));
    expect(d.agent_run_id).toMatch(/^run-/);
    expect(d.verdict.document_type_match).toBe(true);
    expect(d.verdict.actual_doc_type).toBe("bank_statement");
    expect(d.score).toBe(d.verdict.fraud_score);
    expect(d.score).toBeLessThan(50);
    genuineScore = d.score;
    const checkIds = d.verdict.per_check.map((c: { check_id: string }) => c.check_id);
    expect(checkIds).toEqual(expect.arrayContaining(["file.type", "metadata.dates"]));
    expect(typeof d.verdict.reasoning).toBe("string");
  });

  it("cites the metadata findings of a tampered PDF in the reasoning and scores it higher", async () => {
    const created = await svc.create(CLIENTS.full, {
      source_url: files.url("/tampered.pdf"),
      doc_type: "bank_statement",
      region: "US",
    });
    const d = await svc.waitTerminal(CLIENTS.full, created.body.id);
    expect(d.status).toBe("COMPLETED");
    const dates = d.verdict.per_check.find((c: { check_id: string }) => c.check_id === "metadata.dates");
    expect(dates.importance).toBeGreaterThan(0);
    expect(d.verdict.reasoning).toMatch(/metadata\.dates/);
    expect(d.verdict.reasoning).toMatch(/modif/i);
    // Dates are provenance: they raise the score above the genuine file's, never to 50 on their own.
    expect(d.score).toBeGreaterThan(genuineScore);
    expect(d.score).toBeLessThan(50);
  });
});

describe("failures are reported on the record", () => {
  it("random bytes → FAILED unsupported_content_type, not billable", async () => {
    const c = await svc.create(CLIENTS.full, {
      source_url: files.url("/noise.bin"),
      doc_type: "invoice",
      region: "DE",
    });
    const d = await svc.waitTerminal(CLIENTS.full, c.body.id);
    expect(d).toMatchObject({
      status: "FAILED",
      failure_code: "unsupported_content_type",
      billable: false,
      score: null,
      verdict: null,
    });
    expect(d.failure_message).toMatch(/PDF, JPEG, PNG or TIFF/);
  });

  it("an unreachable host → FAILED source_unreachable", async () => {
    const c = await svc.create(CLIENTS.full, {
      source_url: "http://docs.nonexistent.invalid/statement.pdf",
      doc_type: "invoice",
      region: "US",
    });
    const d = await svc.waitTerminal(CLIENTS.full, c.body.id);
    expect(d).toMatchObject({ status: "FAILED", failure_code: "source_unreachable" });
  });

  it("the source's own HTTP error → FAILED source_http_error", async () => {
    const c = await svc.create(CLIENTS.full, {
      source_url: files.url("/gone.pdf"),
      doc_type: "invoice",
      region: "US",
    });
    const d = await svc.waitTerminal(CLIENTS.full, c.body.id);
    expect(d).toMatchObject({ status: "FAILED", failure_code: "source_http_error" });
  });
});

describe("uploads", () => {
  it("reserve → PUT the bytes → create with upload_id → COMPLETED", async () => {
    const r = await svc.call("POST", "/v1/uploads", {
      client: CLIENTS.full,
      json: { filename: "payslip-march.pdf" },
    });
    expect(r.status).toBe(201);
    expect(r.body).toMatchObject({
      upload_id: expect.any(String),
      upload_url: expect.any(String),
      expires_in: expect.any(Number),
    });
    const put = await fetch(r.body.upload_url, {
      method: "PUT",
      body: await makeDocument({ seed: 5, docType: "payslip", region: "GB" }),
    });
    expect(put.status).toBe(200);
    const created = await svc.create(CLIENTS.full, {
      upload_id: r.body.upload_id,
      doc_type: "payslip",
      region: "GB",
    });
    expect(created.status).toBe(202);
    const d = await svc.waitTerminal(CLIENTS.full, created.body.id);
    expect(d.status).toBe("COMPLETED");
    expect(d.filename).toBe("payslip-march.pdf");
    expect(d.verdict.document_type_match).toBe(true);
  });

  it("another client's upload_id is a 422 on upload_id", async () => {
    const r = await svc.call("POST", "/v1/uploads", { client: CLIENTS.full, json: {} });
    await fetch(r.body.upload_url, {
      method: "PUT",
      body: await makeDocument({ seed: 6, docType: "invoice", region: "US" }),
    });
    const created = await svc.create(CLIENTS.other, {
      upload_id: r.body.upload_id,
      doc_type: "invoice",
      region: "US",
    });
    expect(created.status).toBe(422);
    expect(created.body.detail[0].loc).toEqual(["body", "upload_id"]);
  });
});

describe("list and delete", () => {
  it("lists only the caller's detections, newest first, and deleting removes the record and its files", async () => {
    const a = await svc.create(CLIENTS.other, {
      source_url: files.url("/statement.pdf"),
      doc_type: "bank_statement",
      region: "GB",
    });
    const b = await svc.create(CLIENTS.other, {
      source_url: files.url("/statement.pdf"),
      doc_type: "bank_statement",
      region: "GB",
    });
    await svc.waitTerminal(CLIENTS.other, a.body.id);
    await svc.waitTerminal(CLIENTS.other, b.body.id);

    const list = await svc.call("GET", "/v1/detection?limit=1", { client: CLIENTS.other });
    expect(list.status).toBe(200);
    expect(list.body.items).toHaveLength(1);
    expect(list.body.items[0].id).toBe(b.body.id);
    expect(list.body.next_cursor).toEqual(expect.any(String));
    const page2 = await svc.call(
      "GET",
      `/v1/detection?limit=1&cursor=${encodeURIComponent(list.body.next_cursor)}`,
      {
        client: CLIENTS.other,
      },
    );
    expect(page2.body.items[0].id).toBe(a.body.id);
    const mine = await svc.call("GET", "/v1/detection?limit=200", { client: CLIENTS.full });
    expect(mine.body.items.map((d: { id: string }) => d.id)).not.toContain(a.body.id);

    expect((await svc.call("GET", `/v1/detection/${a.body.id}`, { client: CLIENTS.full })).status).toBe(404);

    const docDir = path.join(svc.dataDir, "objects", "docverify", "documents", a.body.id);
    expect((await readdir(docDir)).length).toBeGreaterThan(0);
    const del = await svc.call("DELETE", `/v1/detection/${a.body.id}`, { client: CLIENTS.other });
    expect(del.status).toBe(200);
    expect(del.body).toEqual({ id: a.body.id, deleted: true });
    expect((await svc.call("GET", `/v1/detection/${a.body.id}`, { client: CLIENTS.other })).status).toBe(404);
    // The finalizer removes the stored files, then the record goes.
    const until = Date.now() + 20_000;
    for (;;) {
      const left = await readdir(docDir).catch(() => []);
      if (left.length === 0) break;
      if (Date.now() > until) throw new Error(`stored files not removed: ${left}`);
      await new Promise((r) => setTimeout(r, 100));
    }
  });
});

describe("sample runs", () => {
  it("is not billable, needs create_sample, and stops at the allowance with 429", async () => {
    const body = { source_url: files.url("/statement.pdf"), doc_type: "bank_statement", region: "GB" };
    const denied = await svc.create(CLIENTS.sampler, body);
    expect(denied.status).toBe(403);
    expect(denied.body.detail).toBe("Missing required scopes: DocumentVerification:detections:create");

    const first = await svc.create(CLIENTS.sampler, body, { "X-Sample-Run": "true" });
    expect(first.status).toBe(202);
    const d = await svc.waitTerminal(CLIENTS.sampler, first.body.id);
    expect(d.status).toBe("COMPLETED");
    expect(d.billable).toBe(false);

    const second = await svc.create(CLIENTS.sampler, body, { "X-Sample-Run": "1" });
    expect(second.status).toBe(429);
    expect(second.body.detail).toEqual(expect.any(String));
  });
});

describe("durability", () => {
  it("a graceful restart keeps every record as it was", async () => {
    const c = await svc.create(CLIENTS.full, {
      source_url: files.url("/statement.pdf"),
      doc_type: "bank_statement",
      region: "GB",
    });
    const before = await svc.waitTerminal(CLIENTS.full, c.body.id);
    await svc.restart();
    const after = await svc.call("GET", `/v1/detection/${c.body.id}`, { client: CLIENTS.full });
    expect(after.status).toBe(200);
    expect(after.body).toEqual(before);
  });

  it("kill -9 in the middle of work: after a restart every detection reaches a terminal state", async () => {
    const ids: string[] = [];
    for (let i = 0; i < 12; i++) {
      const c = await svc.create(CLIENTS.full, {
        source_url: files.url("/statement.pdf"),
        doc_type: "bank_statement",
        region: "GB",
      });
      expect(c.status).toBe(202);
      ids.push(c.body.id);
    }
    // Kill while work is under way: wait until at least one detection is running and some are unfinished.
    const until = Date.now() + 20_000;
    for (;;) {
      const states = await Promise.all(
        ids.map(
          async (id) =>
            (await svc.call("GET", `/v1/detection/${id}`, { client: CLIENTS.full })).body.status as string,
        ),
      );
      if (states.includes("RUNNING") && states.some((s) => s !== "COMPLETED" && s !== "FAILED")) break;
      if (Date.now() > until) throw new Error(`no detection was running to interrupt: ${states}`);
      await new Promise((r) => setTimeout(r, 20));
    }
    await svc.stop("SIGKILL");
    await svc.start();
    const results = await Promise.all(ids.map((id) => svc.waitTerminal(CLIENTS.full, id, 120_000)));
    for (const d of results) expect(d.status, JSON.stringify(d)).toBe("COMPLETED");
  });
});
