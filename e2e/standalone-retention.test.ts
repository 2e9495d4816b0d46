/**
 * "Nothing kept past its time" against the running standalone service (`npm start`'s process, its data
 * directory read from outside): an uploaded document leaves no file behind after DELETE, after the retention
 * period, and after its upload expired unused. Short lifetimes are configured so every wait is for the
 * event (files gone), bounded by a generous guard.
 */
import { readdir } from "node:fs/promises";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { makeTextTamperedPdf } from "../fixtures/tampered-text.js";
import { CLIENTS, type Service, startService, until } from "./harness.js";

let svc: Service;
let pdf: Uint8Array;
beforeAll(async () => {
  svc = await startService({
    env: {
      DOCVERIFY_UPLOAD_TTL_SECONDS: "8",
      DOCVERIFY_UPLOAD_SWEEP_SECONDS: "1",
      DOCVERIFY_RETENTION_SECONDS: "4",
    },
  });
  // A payslip with a white box over its net pay: it has findings, so its evidence has a page image.
  pdf = (await makeTextTamperedPdf(7, "white_box_overlay", { docType: "payslip", region: "GB" })).bytes;
});
afterAll(async () => {
  await svc?.dispose();
});

/** Every file under the service's object store (its data directory's objects/ folder). */
async function storedFiles(): Promise<string[]> {
  const root = path.join(svc.dataDir, "objects");
  const entries = await readdir(root, { recursive: true, withFileTypes: true }).catch(() => []);
  return entries.filter((e) => e.isFile()).map((e) => path.relative(root, path.join(e.parentPath, e.name)));
}
const tracesOf = async (...ids: string[]) =>
  (await storedFiles()).filter((f) => ids.some((id) => f.includes(id)));

async function upload(): Promise<string> {
  const up = await svc.call("POST", "/v1/uploads", {
    client: CLIENTS.full,
    json: { filename: "payslip.pdf", content_type: "application/pdf", size_bytes: pdf.length },
  });
  expect(up.status).toBe(201);
  const put = await fetch(up.body.upload_url, { method: "PUT", body: pdf });
  expect(put.status).toBe(200);
  return up.body.upload_id;
}

describe("nothing kept past its time (standalone process)", () => {
  it("an upload that starts no detection is deleted once it expires", async () => {
    const id = await upload();
    expect((await tracesOf(id)).length).toBeGreaterThan(0);
    await until(
      "the expired upload's files",
      () => tracesOf(id),
      (t) => t.length === 0,
    );
  });

  it("DELETE removes the document, its results and its upload; the upload cannot start another", async () => {
    const uploadId = await upload();
    const created = await svc.create(CLIENTS.full, {
      upload_id: uploadId,
      doc_type: "payslip",
      region: "GB",
    });
    expect(created.status).toBe(202);
    const id = created.body.id as string;
    await svc.waitTerminal(CLIENTS.full, id);
    // The evidence (manifest and rendered page) is among its files, and goes with them.
    expect(await tracesOf(id)).toEqual(
      expect.arrayContaining([
        `docverify/evidence/${id}/evidence.json`,
        `docverify/evidence/${id}/pages/1.png`,
      ]),
    );
    expect((await svc.call("DELETE", `/v1/detection/${id}`, { client: CLIENTS.full })).status).toBe(200);
    await until(
      "the deleted detection's files",
      () => tracesOf(id, uploadId),
      (t) => t.length === 0,
    );
    const again = await svc.create(CLIENTS.full, { upload_id: uploadId, doc_type: "payslip", region: "GB" });
    expect(again.status).toBe(422);
    expect(again.body.detail[0].loc).toEqual(["body", "upload_id"]);
  });

  it("the retention period removes every file; the detection stays COMPLETED with verdict null", async () => {
    const uploadId = await upload();
    const created = await svc.create(CLIENTS.full, {
      upload_id: uploadId,
      doc_type: "payslip",
      region: "GB",
    });
    const id = created.body.id as string;
    const done = await svc.waitTerminal(CLIENTS.full, id);
    expect(done.status).toBe("COMPLETED");
    await until(
      "the retained detection's files",
      () => tracesOf(id, uploadId),
      (t) => t.length === 0,
    );
    const after = await until(
      "the verdict after retention",
      async () => (await svc.call("GET", `/v1/detection/${id}`, { client: CLIENTS.full })).body,
      (b) => b.verdict === null,
    );
    expect(after).toMatchObject({ status: "COMPLETED", verdict: null, score: done.score });
    // The evidence reads null like the verdict, and its page images are gone.
    const evidence = await svc.call("GET", `/v1/detection/${id}/evidence`, { client: CLIENTS.full });
    expect(evidence.body).toMatchObject({ status: "COMPLETED", findings: null, groups: null, pages: null });
    const image = await svc.call("GET", `/v1/detection/${id}/evidence/pages/1.png`, { client: CLIENTS.full });
    expect(image.status).toBe(404);
  });
});
