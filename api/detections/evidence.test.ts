import sharp from "sharp";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { CheckResult } from "../../core/check-result.js";
import { type Detection, keys } from "../../core/detection.js";
import { EVIDENCE_LIMITS } from "../../core/evidence.js";
import { SCOPES } from "../../core/scopes.js";
import { call, createHarness, type Harness } from "../testdata/app-kit.js";
import { completeWithEvidence, createDetection, sampleChecks } from "../testdata/evidence-kit.js";

let h: Harness;
let alice: string;
let bob: string;
beforeAll(async () => {
  h = await createHarness();
  alice = await h.token("alice");
  bob = await h.token("bob");
});
afterAll(() => h.close());

const evidenceOf = (id: string, token = alice) => call(h, "GET", `/v1/detection/${id}/evidence`, { token });

describe("GET /v1/detection/{id}/evidence", () => {
  it("before completion: 200 with findings, groups and pages null, and no review link", async () => {
    const id = await createDetection(h, alice);
    const r = await evidenceOf(id);
    expect(r.status).toBe(200);
    expect(r.body).toEqual({
      id,
      status: "QUEUED",
      findings: null,
      findings_total: null,
      groups: null,
      groups_total: null,
      pages: null,
      checks: null,
      render: null,
      review_url: null,
      review_url_expires_at: null,
    });
  });

  it("a completed detection: findings with ids, page units and fractions, groups with headlines, page URLs", async () => {
    const id = await createDetection(h, alice);
    await completeWithEvidence(h, id, sampleChecks(), { firstSaved: [1] });
    const r = await evidenceOf(id);
    expect(r.status).toBe(200);
    expect(r.headers.get("cache-control")).toBe("private, no-store");
    const b = r.body;
    expect(b.status).toBe("COMPLETED");
    expect(b.findings_total).toBe(2);
    expect(b.findings).toHaveLength(2);
    const covered = b.findings.find((f: { code: string }) => f.code === "text_covered_and_replaced");
    expect(covered).toMatchObject({
      check_id: "layout.overlay",
      severity: 9,
      page: 1,
      bbox: [480, 400, 540, 412],
      before: "£4,018.52",
      after: "£5,018.52",
      group: 1,
    });
    expect(covered.id).toMatch(/^fnd-[0-9a-f]{16}$/);
    // fractions of the displayed page, origin top left: y = (792 - 412) / 792 …
    expect(covered.bbox_fraction).toEqual([0.7843, 0.4798, 0.8824, 0.4949]);
    // the two checks point at the same value: one group, both checks listed under it
    expect(b.groups_total).toBe(1);
    expect(b.groups[0]).toMatchObject({
      number: 1,
      severity: 9,
      pages: [1],
      before: "£4,018.52",
      after: "£5,018.52",
      finding_count: 2,
    });
    expect(b.groups[0].headline).toBe("£4,018.52 → £5,018.52, page 1");
    expect(b.groups[0].checks.map((c: { check_id: string }) => c.check_id).sort()).toEqual([
      "layout.overlay",
      "text.arithmetic",
    ]);
    expect(b.pages.count).toBe(3);
    expect(b.pages.items).toEqual([
      expect.objectContaining({
        number: 1,
        width: 612,
        height: 792,
        groups: [1],
        image_url: `http://127.0.0.1:8080/v1/detection/${id}/evidence/pages/1.png`,
        first_saved_url: `http://127.0.0.1:8080/v1/detection/${id}/evidence/pages/1-first-saved.png`,
        first_saved_revision: 1,
        not_rendered: null,
      }),
    ]);
    expect(b.checks.map((c: { check_id: string }) => c.check_id)).toEqual([
      "layout.overlay",
      "text.arithmetic",
      "file.type",
    ]);
    // the review link: signed, for the detection, expiring after DOCVERIFY_REVIEW_LINK_TTL_SECONDS (900)
    expect(b.review_url).toMatch(
      new RegExp(`^http://127\\.0\\.0\\.1:8080/review/${id}\\?token=\\d+\\.[A-Za-z0-9_-]+\\.[0-9a-f]{64}$`),
    );
    expect(Date.parse(b.review_url_expires_at) - h.clock.now().getTime()).toBe(900_000);
  });

  it("ids are stable: the same detection answers the same ids every time", async () => {
    const id = await createDetection(h, alice);
    await completeWithEvidence(h, id);
    const a = await evidenceOf(id);
    await completeWithEvidence(h, id);
    const b = await evidenceOf(id);
    expect(b.body.findings.map((f: { id: string }) => f.id)).toEqual(
      a.body.findings.map((f: { id: string }) => f.id),
    );
    expect(b.body.groups[0].id).toBe(a.body.groups[0].id);
  });

  it("after the retention period: nulls again (like verdict), and the page images answer 404", async () => {
    const id = await createDetection(h, alice);
    await completeWithEvidence(h, id);
    const stored = (await h.store.get(id)) as Detection;
    await h.store.updateStatus({
      ...stored,
      status: { ...stored.status, verdict: null, prunedAt: h.clock.now().toISOString() },
    });
    const r = await evidenceOf(id);
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ status: "COMPLETED", findings: null, groups: null, pages: null });
    const img = await call(h, "GET", `/v1/detection/${id}/evidence/pages/1.png`, { token: alice });
    expect(img.status).toBe(404);
  });

  it("a detection completed without stored evidence gets it built from its check results, without images", async () => {
    const id = await createDetection(h, alice);
    await completeWithEvidence(h, id);
    await h.deps.objects.delete(h.deps.bucket, keys.evidence(id));
    await h.deps.objects.put(
      h.deps.bucket,
      keys.result(id, "check"),
      JSON.stringify({ step: "check", checks: sampleChecks(), discovered: [] }),
    );
    const r = await evidenceOf(id);
    expect(r.body.findings_total).toBe(2);
    expect(r.body.groups[0].headline).toBe("£4,018.52 → £5,018.52, page 1");
    expect(r.body.pages.items).toEqual([
      expect.objectContaining({ number: 1, image_url: null, not_rendered: "unavailable" }),
    ]);
    expect(r.body.findings[0].bbox_fraction).toBeNull();
  });

  it("same 401/403/404/422 rules and client isolation as GET detection", async () => {
    const id = await createDetection(h, alice);
    await completeWithEvidence(h, id);
    expect((await call(h, "GET", `/v1/detection/${id}/evidence`)).status).toBe(401);
    const createOnly = await h.token("alice", SCOPES.create);
    const forbidden = await evidenceOf(id, createOnly);
    expect(forbidden.status).toBe(403);
    expect(forbidden.body.detail).toBe(`Missing required scopes: ${SCOPES.get}`);
    expect((await evidenceOf("DET_1")).status).toBe(422);
    const foreign = await evidenceOf(id, bob);
    expect(foreign).toMatchObject({ status: 404, body: { detail: "Detection not found" } });
    expect((await call(h, "GET", `/v1/detection/${id}/evidence/pages/1.png`, { token: bob })).status).toBe(
      404,
    );
    expect((await evidenceOf("det-01jd5x9q3m8w2v7k4c6b0n1r2t")).status).toBe(404);
    // being deleted: 404 at once
    await call(h, "DELETE", `/v1/detection/${id}`, { token: alice });
    expect((await evidenceOf(id)).status).toBe(404);
  });

  it("answers in bounded size whatever the number and size of findings", async () => {
    const long = "Ж".repeat(5000);
    const checks: CheckResult[] = Array.from({ length: 6 }, (_, c) => ({
      checkId: `check.${c}`,
      outcome: "flag",
      severity: 9,
      summary: long,
      findings: Array.from({ length: 2000 }, (_, i) => ({
        code: `code_${i % 50}`,
        message: long,
        page: 1 + (i % 300),
        bbox: [i % 500, (i * 7) % 700, (i % 500) + 40, ((i * 7) % 700) + 12],
        evidence: Object.fromEntries(Array.from({ length: 30 }, (_, k) => [`key${k}`, long])),
        severity: i % 11,
      })),
    }));
    const id = await createDetection(h, alice);
    await completeWithEvidence(h, id, checks, { imaged: [] });
    const r = await call(h, "GET", `/v1/detection/${id}/evidence`, { token: alice });
    const bytes = Buffer.byteLength(JSON.stringify(r.body));
    expect(r.body.findings_total).toBe(12_000);
    expect(r.body.findings).toHaveLength(EVIDENCE_LIMITS.maxFindings);
    expect(r.body.groups.length).toBeLessThanOrEqual(EVIDENCE_LIMITS.maxGroups);
    expect(r.body.pages.items.length).toBeLessThanOrEqual(EVIDENCE_LIMITS.maxPages);
    expect(bytes).toBeLessThan(2 * 1024 * 1024);
  });
});

describe("GET /v1/detection/{id}/evidence/pages/{file}", () => {
  it("serves the rendered page and the page as first saved as PNG; 404 for a page without an image", async () => {
    const id = await createDetection(h, alice);
    await completeWithEvidence(h, id, sampleChecks(), { firstSaved: [1] });
    for (const file of ["1.png", "1-first-saved.png"]) {
      const res = await h.app.request(`/v1/detection/${id}/evidence/pages/${file}`, {
        headers: { authorization: `Bearer ${alice}` },
      });
      expect(res.status).toBe(200);
      expect(res.headers.get("content-type")).toBe("image/png");
      const meta = await sharp(Buffer.from(await res.arrayBuffer())).metadata();
      expect(meta.format).toBe("png");
    }
    const none = await call(h, "GET", `/v1/detection/${id}/evidence/pages/2.png`, { token: alice });
    expect(none.status).toBe(404);
    expect(none.body.detail).toMatch(/^No image of this page/);
    const bad = await call(h, "GET", `/v1/detection/${id}/evidence/pages/page-1.jpg`, { token: alice });
    expect(bad.status).toBe(422);
    expect(bad.body.detail[0].loc).toEqual(["path", "file"]);
  });

  it("answers 404 while the detection is not completed", async () => {
    const id = await createDetection(h, alice);
    await h.deps.objects.put(h.deps.bucket, keys.evidencePage(id, 1), Buffer.from("png"));
    expect((await call(h, "GET", `/v1/detection/${id}/evidence/pages/1.png`, { token: alice })).status).toBe(
      404,
    );
  });
});
