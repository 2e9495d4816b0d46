import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { Detection } from "../../core/detection.js";
import { DOC_TYPE_INPUTS } from "../../core/verdict.js";
import { CLEANUP_FINALIZER, LABELS, OBJECT_NAME_RE } from "../../core/resource.js";
import { call, createHarness, type Harness } from "../testdata/app-kit.js";

let h: Harness;
let alice: string;
beforeEach(async () => {
  h = await createHarness();
  alice = await h.token("alice");
});
afterEach(async () => {
  await h.close();
});

const body = {
  source_url: "https://docs.example.com/statement.pdf",
  doc_type: "bank_statement",
  region: "gb",
};
const create = (token = alice, b: unknown = body, headers: Record<string, string> = {}) =>
  call(h, "POST", "/v1/detection", { token, body: b, headers });

describe("POST /v1/detection", () => {
  it("202 with the DetectionDetail projection, a Location, and a Detection resource", async () => {
    const r = await create();
    expect(r.status).toBe(202);
    expect(r.body.id).toMatch(/^det-[0-9a-z]{26}$/);
    expect(r.body.id).toMatch(OBJECT_NAME_RE);
    expect(r.body).toMatchObject({
      status: "QUEUED",
      score: null,
      verdict: null,
      billable: true,
      submitted_by: "alice",
    });
    expect(r.body.created_at).toBe(h.clock.now().toISOString());
    expect(r.headers.get("location")).toBe(`/v1/detection/${r.body.id}`);

    const stored = (await h.store.get(r.body.id)) as Detection;
    expect(stored.metadata.labels).toEqual({ [LABELS.client]: "alice" });
    expect(stored.metadata.finalizers).toEqual([CLEANUP_FINALIZER]);
    expect(stored.spec).toEqual({
      source: { url: body.source_url },
      docType: "bank_statement",
      region: "GB",
      submittedBy: "alice",
      sample: false,
      priority: "interactive",
    });
  });

  it.each([
    ["passport", "id_document"],
    ["id_card", "id_document"],
    ["driving_licence", "id_document"],
    ["paystub", "payslip"],
    ["electricity_bill", "utility_bill"],
    ["invoice", "invoice"],
  ])("accepts the doc_type alias %s and stores the canonical %s", async (alias, canonical) => {
    const r = await create(alice, { ...body, doc_type: alias });
    expect(r.status).toBe(202);
    const stored = (await h.store.get(r.body.id)) as Detection;
    expect(stored.spec.docType).toBe(canonical);
  });

  it("lists every alias as a value of the doc_type enum in the OpenAPI document", async () => {
    const doc = (await call(h, "GET", "/openapi.json")).body;
    const values = doc.components.schemas.CreateDetectionRequest.properties.doc_type.enum as string[];
    expect(values).toEqual(
      expect.arrayContaining([
        "bank_statement",
        "id_document",
        "other",
        "passport",
        "id_card",
        "driving_licence",
      ]),
    );
    expect(values).toEqual(DOC_TYPE_INPUTS);
  });

  it("ids grow with time so listing newest-first is by id", async () => {
    const a = await create();
    h.clock.advance(1000);
    const b = await create();
    expect(b.body.id > a.body.id).toBe(true);
  });

  it("a client entry's tenant is the detection's tenant (the tenant memory); without one, none is set", async () => {
    const grouped = await createHarness({
      clients: [
        { client_id: "loans-eu", client_secret: "s", scopes: ["DocumentVerification:*"], tenant: "acme" },
        { client_id: "solo", client_secret: "s", scopes: ["DocumentVerification:*"] },
      ],
    });
    try {
      const a = await call(grouped, "POST", "/v1/detection", {
        token: await grouped.token("loans-eu"),
        body,
      });
      const b = await call(grouped, "POST", "/v1/detection", { token: await grouped.token("solo"), body });
      expect(((await grouped.store.get(a.body.id)) as Detection).spec).toMatchObject({
        submittedBy: "loans-eu",
        tenant: "acme",
      });
      expect(((await grouped.store.get(b.body.id)) as Detection).spec.tenant).toBeUndefined();
    } finally {
      await grouped.close();
    }
  });

  it("a client id that is no valid label value is labelled by its hash", async () => {
    const odd = await createHarness({
      clients: [{ client_id: "team/a@example.com", client_secret: "s", scopes: ["DocumentVerification:*"] }],
    });
    try {
      const t = await odd.token("team/a@example.com");
      const r = await call(odd, "POST", "/v1/detection", { token: t, body });
      expect(r.status).toBe(202);
      const stored = (await odd.store.get(r.body.id)) as Detection;
      expect(stored.metadata.labels?.[LABELS.client]).toMatch(/^h-[0-9a-f]{40}$/);
      expect((await call(odd, "GET", `/v1/detection/${r.body.id}`, { token: t })).status).toBe(200);
      expect((await call(odd, "GET", "/v1/detection", { token: t })).body.items).toHaveLength(1);
    } finally {
      await odd.close();
    }
  });

  it.each([
    [{ ...body, source_url: "ftp://docs.example.com/a.pdf" }, ["body", "source_url"], "url_parsing"],
    [{ ...body, source_url: "file:///etc/passwd" }, ["body", "source_url"], "url_parsing"],
    [{ ...body, source_url: "not a url" }, ["body", "source_url"], "url_parsing"],
    [{ ...body, doc_type: "novel" }, ["body", "doc_type"], "enum"],
    [{ ...body, doc_type: "Passport" }, ["body", "doc_type"], "enum"],
    [{ source_url: body.source_url, region: "GB" }, ["body", "doc_type"], "missing"],
    [{ source_url: body.source_url, doc_type: "invoice" }, ["body", "region"], "missing"],
    [{ ...body, region: "XK" }, ["body", "region"], "value_error"],
    [{ ...body, region: "GBR" }, ["body", "region"], "value_error"],
    [{ ...body, region: 44 }, ["body", "region"], "string_type"],
    [{ ...body, callback: "https://x" }, ["body", "callback"], "extra_forbidden"],
    [{ doc_type: "invoice", region: "US" }, ["body"], "value_error"],
    [{ ...body, upload_id: "upl-01jd5x9q3m8w2v7k4c6b0n1r2t" }, ["body"], "value_error"],
    [
      { doc_type: "invoice", region: "US", upload_id: "../etc" },
      ["body", "upload_id"],
      "string_pattern_mismatch",
    ],
    [[body], ["body"], "object_type"],
  ])("422 for %j at %j", async (b, loc, type) => {
    const r = await create(alice, b);
    expect(r.status).toBe(422);
    expect(r.body.detail).toEqual(expect.arrayContaining([expect.objectContaining({ loc, type })]));
    for (const d of r.body.detail) expect(typeof d.msg).toBe("string");
    expect((await h.store.list()).items).toHaveLength(0);
  });

  it("422 json_invalid for malformed JSON and for an empty body", async () => {
    for (const raw of ['{"doc_type": ', ""]) {
      const r = await call(h, "POST", "/v1/detection", {
        token: alice,
        raw,
        headers: { "content-type": "application/json" },
      });
      expect(r.status).toBe(422);
      expect(r.body.detail[0]).toMatchObject({ loc: ["body"], type: "json_invalid" });
    }
  });

  it("422 for a body that is not JSON (form or missing content type)", async () => {
    for (const headers of [
      { "content-type": "application/x-www-form-urlencoded" },
      {} as Record<string, string>,
    ]) {
      const r = await call(h, "POST", "/v1/detection", { token: alice, raw: "doc_type=invoice", headers });
      expect(r.status).toBe(422);
      expect(r.body.detail[0].loc).toEqual(["body"]);
      expect(r.body.detail[0].msg).toMatch(/application\/json/);
    }
  });

  it("413 for a JSON body over 64 KiB", async () => {
    const r = await create(alice, { ...body, padding: "x".repeat(70 * 1024) });
    expect(r.status).toBe(413);
    expect(r.body.detail).toMatch(/65536 bytes/);
  });

  it("accepts the region in any case and stores it upper-case", async () => {
    const r = await create(alice, { ...body, region: "De" });
    expect(((await h.store.get(r.body.id)) as Detection).spec.region).toBe("DE");
  });

  it.each(["false", "0", "FALSE"])("X-Sample-Run: %s is a normal run", async (v) => {
    const r = await create(alice, body, { "X-Sample-Run": v });
    expect(r.status).toBe(202);
    expect(r.body.billable).toBe(true);
    expect(((await h.store.get(r.body.id)) as Detection).spec.sample).toBe(false);
  });

  it.each(["yes", "2", ""])("422 at header x-sample-run for X-Sample-Run: %j", async (v) => {
    const r = await create(alice, body, { "X-Sample-Run": v });
    expect(r.status).toBe(422);
    expect(r.body.detail[0].loc).toEqual(["header", "x-sample-run"]);
  });
});

describe("GET /v1/detection/{id}", () => {
  it("200 with the projection of the current status", async () => {
    const { body: created } = await create();
    const stored = (await h.store.get(created.id)) as Detection;
    await h.store.updateStatus({
      ...stored,
      status: {
        phase: "Completed",
        score: 12,
        completedAt: "2030-01-02T03:05:00.000Z",
        document: {
          filename: "s.pdf",
          contentType: "application/pdf",
          sizeBytes: 10,
          key: "documents/x/s.pdf",
          sha256: "0",
        },
        verdict: {
          fraudScore: 12,
          documentTypeMatch: true,
          actualDocType: "bank_statement",
          reasoning: "Nothing stands out.",
          perCheck: [],
        },
      },
    });
    const r = await call(h, "GET", `/v1/detection/${created.id}`, { token: alice });
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({
      id: created.id,
      status: "COMPLETED",
      score: 12,
      filename: "s.pdf",
      s3_key: "documents/x/s.pdf",
      verdict: {
        fraud_score: 12,
        document_type_match: true,
        actual_doc_type: "bank_statement",
        per_check: [],
      },
    });
  });

  it("404 for a well-formed unknown id", async () => {
    const r = await call(h, "GET", "/v1/detection/det-01jd5x9q3m8w2v7k4c6b0n1r2t", { token: alice });
    expect(r.status).toBe(404);
    expect(r.body).toEqual({ detail: "Detection not found" });
  });

  it.each(["DET-UPPER", "has_underscore", "-leading", "x".repeat(64)])(
    "422 at path.detection_id for %s",
    async (id) => {
      const r = await call(h, "GET", `/v1/detection/${id}`, { token: alice });
      expect(r.status).toBe(422);
      expect(r.body.detail[0]).toMatchObject({ loc: ["path", "detection_id"], input: id });
    },
  );
});

describe("GET /v1/detection (list)", () => {
  async function seed(n: number): Promise<string[]> {
    const ids: string[] = [];
    for (let i = 0; i < n; i++) {
      ids.push((await create()).body.id);
      h.clock.advance(1000);
    }
    return ids;
  }

  it("lists the caller's detections newest first with every field", async () => {
    const ids = await seed(3);
    const r = await call(h, "GET", "/v1/detection", { token: alice });
    expect(r.status).toBe(200);
    expect(r.body.items.map((d: { id: string }) => d.id)).toEqual([...ids].reverse());
    expect(r.body.next_cursor).toBeNull();
    expect(Object.keys(r.body.items[0])).toContain("agent_run_id");
  });

  it("pages with limit and an opaque cursor until next_cursor is null", async () => {
    const ids = (await seed(5)).reverse();
    const seen: string[] = [];
    let cursor: string | null = null;
    let pages = 0;
    do {
      const url: string = `/v1/detection?limit=2${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ""}`;
      const r = await call(h, "GET", url, { token: alice });
      expect(r.status).toBe(200);
      expect(r.body.items.length).toBeLessThanOrEqual(2);
      seen.push(...r.body.items.map((d: { id: string }) => d.id));
      cursor = r.body.next_cursor;
      pages++;
    } while (cursor);
    expect(pages).toBe(3);
    expect(seen).toEqual(ids);
  });

  it("filters by status and batch_id", async () => {
    const [a, b] = await seed(2);
    const stored = (await h.store.get(a!)) as Detection;
    await h.store.updateStatus({
      ...stored,
      status: { phase: "Failed", failure: { code: "source_unreachable", message: "x" } },
    });
    const failed = await call(h, "GET", "/v1/detection?status=FAILED", { token: alice });
    expect(failed.body.items.map((d: { id: string }) => d.id)).toEqual([a]);
    const queued = await call(h, "GET", "/v1/detection?status=QUEUED", { token: alice });
    expect(queued.body.items.map((d: { id: string }) => d.id)).toEqual([b]);

    const batched = (await h.store.get(b!)) as Detection;
    await h.store.update({
      ...batched,
      metadata: { ...batched.metadata, labels: { ...batched.metadata.labels, [LABELS.batch]: "job-7" } },
      spec: { ...batched.spec, batchId: "job-7" },
    });
    const byBatch = await call(h, "GET", "/v1/detection?batch_id=job-7", { token: alice });
    expect(byBatch.body.items.map((d: { id: string; batch_id: string }) => [d.id, d.batch_id])).toEqual([
      [b, "job-7"],
    ]);
    expect((await call(h, "GET", "/v1/detection?batch_id=job-8", { token: alice })).body.items).toEqual([]);
  });

  it.each([
    ["limit=0", "limit"],
    ["limit=201", "limit"],
    ["limit=ten", "limit"],
    ["status=DONE", "status"],
    ["cursor=not-a-cursor", "cursor"],
    [`cursor=${Buffer.from(JSON.stringify({ after: "../x" })).toString("base64url")}`, "cursor"],
  ])("422 at query for %s", async (qs, field) => {
    const r = await call(h, "GET", `/v1/detection?${qs}`, { token: alice });
    expect(r.status).toBe(422);
    expect(r.body.detail[0].loc).toEqual(["query", field]);
  });

  it("limit defaults to 50 and allows 200", async () => {
    await seed(51);
    const r = await call(h, "GET", "/v1/detection", { token: alice });
    expect(r.body.items).toHaveLength(50);
    expect(r.body.next_cursor).not.toBeNull();
    const all = await call(h, "GET", "/v1/detection?limit=200", { token: alice });
    expect(all.body.items).toHaveLength(51);
  });
});

describe("DELETE /v1/detection/{id}", () => {
  it("200 {id, deleted: true}; the resource keeps its finalizer with a deletionTimestamp; then 404", async () => {
    const { body: created } = await create();
    const r = await call(h, "DELETE", `/v1/detection/${created.id}`, { token: alice });
    expect(r.status).toBe(200);
    expect(r.body).toEqual({ id: created.id, deleted: true });
    const stored = (await h.store.get(created.id)) as Detection;
    expect(stored.metadata.deletionTimestamp).toBeDefined();
    expect(stored.metadata.finalizers).toEqual([CLEANUP_FINALIZER]);
    expect((await call(h, "GET", `/v1/detection/${created.id}`, { token: alice })).status).toBe(404);
    expect((await call(h, "GET", "/v1/detection", { token: alice })).body.items).toEqual([]);
    expect((await call(h, "DELETE", `/v1/detection/${created.id}`, { token: alice })).status).toBe(404);
  });

  it("404 for an unknown id, 422 for a malformed one", async () => {
    expect(
      (await call(h, "DELETE", "/v1/detection/det-01jd5x9q3m8w2v7k4c6b0n1r2t", { token: alice })).status,
    ).toBe(404);
    expect((await call(h, "DELETE", "/v1/detection/Not_An_Id", { token: alice })).status).toBe(422);
  });
});
