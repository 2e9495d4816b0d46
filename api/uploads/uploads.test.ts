import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { type Detection, keys } from "../../core/detection.js";
import type { ObjectStore } from "../../core/ports.js";
import { call, createHarness, type Harness } from "../testdata/app-kit.js";
import { dispositionFilename } from "./put.js";
import { checkUploadSignature, signedUploadUrl } from "./signing.js";

let h: Harness;
let alice: string;
beforeEach(async () => {
  h = await createHarness({ config: { maxDocumentBytes: 1024, uploadTtlSeconds: 600 } });
  alice = await h.token("alice");
});
afterEach(async () => {
  await h.close();
});

const PDF = Buffer.from("%PDF-1.7\n1 0 obj << >> endobj\ntrailer << >>\n%%EOF\n");

async function reserve(token = alice, body?: unknown) {
  const r = await call(h, "POST", "/v1/uploads", { token, body });
  expect(r.status).toBe(201);
  return r.body as { upload_id: string; upload_url: string; expires_in: number };
}

/** PUTs to a URL the app returned (the path and query are what matter in-process). */
async function put(url: string, bytes: Buffer | string, headers: Record<string, string> = {}) {
  const u = new URL(url);
  const res = await h.app.request(`${u.pathname}${u.search}`, { method: "PUT", body: bytes, headers });
  return { status: res.status, body: (await res.json()) as Record<string, unknown> };
}

async function meta(id: string) {
  return JSON.parse((await h.deps.objects.get(h.deps.bucket, keys.uploadMeta(id))).toString("utf8"));
}

const createWith = (uploadId: string, token = alice) =>
  call(h, "POST", "/v1/detection", {
    token,
    body: { upload_id: uploadId, doc_type: "invoice", region: "us" },
  });

describe("uploads: happy path", () => {
  it("reserve (filename, content_type, size_bytes) → PUT → create with upload_id", async () => {
    const up = await reserve(alice, {
      filename: "invoice.pdf",
      content_type: "application/pdf",
      size_bytes: PDF.length,
    });
    expect(up.upload_id).toMatch(/^upl-[0-9a-z]{26}$/);
    expect(up.expires_in).toBe(600);
    expect(up.upload_url).toMatch(
      new RegExp(`^http://127\\.0\\.0\\.1:8080/uploads/${up.upload_id}\\?expires=\\d+&sig=[0-9a-f]{64}$`),
    );
    expect(await meta(up.upload_id)).toEqual({
      client_id: "alice",
      filename: "invoice.pdf",
      content_type: "application/pdf",
      size_bytes: PDF.length,
      expires_at: new Date(h.clock.now().getTime() + 600_000).toISOString(),
      size: 0,
    });

    const stored = await put(up.upload_url, PDF, { "content-type": "application/pdf" });
    expect(stored).toEqual({ status: 200, body: { upload_id: up.upload_id, size_bytes: PDF.length } });
    expect(await h.deps.objects.get(h.deps.bucket, keys.upload(up.upload_id))).toEqual(PDF);
    expect((await meta(up.upload_id)).size).toBe(PDF.length);

    const r = await createWith(up.upload_id);
    expect(r.status).toBe(202);
    expect(((await h.store.get(r.body.id)) as Detection).spec.source).toEqual({ uploadId: up.upload_id });
    // the reservation now names the detection it started
    expect((await meta(up.upload_id)).detection).toBe(r.body.id);
  });

  it("the body is optional and a Content-Disposition filename names the document", async () => {
    const up = await reserve();
    expect((await meta(up.upload_id)).filename).toBeNull();
    await put(up.upload_url, PDF, {
      "content-disposition": `attachment; filename*=UTF-8''Rechnung%20M%C3%A4rz.pdf`,
    });
    expect((await meta(up.upload_id)).filename).toBe("Rechnung März.pdf");
  });

  it("a second PUT replaces the document", async () => {
    const up = await reserve();
    await put(up.upload_url, PDF);
    const second = Buffer.from("%PDF-1.4\nshorter\n%%EOF");
    expect((await put(up.upload_url, second)).body.size_bytes).toBe(second.length);
    expect(await h.deps.objects.get(h.deps.bucket, keys.upload(up.upload_id))).toEqual(second);
  });

  it("uses the object store's presigned URL when it has one", async () => {
    const objects = h.deps.objects as ObjectStore;
    objects.presignPut = async (bucket, key, expires) =>
      `https://s3.example/${bucket}/${key}?X-Amz-Expires=${expires}`;
    const up = await reserve();
    expect(up.upload_url).toBe(
      `https://s3.example/${h.deps.bucket}/uploads/${up.upload_id}/document?X-Amz-Expires=600`,
    );
  });

  it("upload URLs use the configured public URL", async () => {
    const other = await createHarness({ publicUrl: "https://docverify.example.com/" });
    try {
      const r = await call(other, "POST", "/v1/uploads", { token: await other.token("alice") });
      expect(r.body.upload_url).toMatch(/^https:\/\/docverify\.example\.com\/uploads\/upl-/);
    } finally {
      await other.close();
    }
  });
});

describe("uploads: errors", () => {
  it("422 for unknown body fields or a bad content type; 403 without detections:create", async () => {
    const extra = await call(h, "POST", "/v1/uploads", { token: alice, body: { name: "x.pdf" } });
    expect(extra.status).toBe(422);
    expect(extra.body.detail[0]).toMatchObject({ loc: ["body", "name"], type: "extra_forbidden" });
    const ct = await call(h, "POST", "/v1/uploads", { token: alice, body: { content_type: "pdf" } });
    expect(ct.body.detail[0].loc).toEqual(["body", "content_type"]);
    const reader = await h.token("reader");
    const r = await call(h, "POST", "/v1/uploads", { token: reader });
    expect(r.status).toBe(403);
    expect(r.body.detail).toBe("Missing required scopes: DocumentVerification:detections:create");
  });

  it("403 for a tampered signature, another upload's signature, a moved expiry or a missing sig", async () => {
    const a = await reserve();
    const b = await reserve();
    const ua = new URL(a.upload_url);
    const sigA = ua.searchParams.get("sig")!;
    const expA = ua.searchParams.get("expires")!;
    const flipped = (sigA[0] === "0" ? "1" : "0") + sigA.slice(1);
    for (const path of [
      `/uploads/${a.upload_id}?expires=${expA}&sig=${flipped}`,
      `/uploads/${b.upload_id}?expires=${expA}&sig=${sigA}`,
      `/uploads/${a.upload_id}?expires=${Number(expA) + 3600}&sig=${sigA}`,
      `/uploads/${a.upload_id}?expires=${expA}`,
      `/uploads/${a.upload_id}`,
      `/uploads/..%2F..%2Fetc?expires=${expA}&sig=${sigA}`,
    ]) {
      const r = await put(`http://x${path}`, PDF);
      expect(r.status, path).toBe(403);
      expect(r.body.detail).toMatch(/signature is not valid/);
    }
    expect(await h.deps.objects.stat(h.deps.bucket, keys.upload(a.upload_id))).toBeUndefined();
  });

  it("403 once the upload URL has expired", async () => {
    const up = await reserve();
    h.clock.advance(601_000);
    const r = await put(up.upload_url, PDF);
    expect(r.status).toBe(403);
    expect(r.body.detail).toMatch(/expired/);
  });

  it("413 over the maximum document size, and nothing stays behind", async () => {
    const up = await reserve();
    await put(up.upload_url, PDF);
    const big = Buffer.alloc(2048, 1);
    const r = await put(up.upload_url, big);
    expect(r.status).toBe(413);
    expect(r.body.detail).toMatch(/1024 bytes/);
    // streamed without a Content-Length
    const stream = new ReadableStream<Uint8Array>({
      start(ctrl) {
        for (let i = 0; i < 4; i++) ctrl.enqueue(new Uint8Array(400));
        ctrl.close();
      },
    });
    const u = new URL(up.upload_url);
    const res = await h.app.request(`${u.pathname}${u.search}`, {
      method: "PUT",
      body: stream,
      duplex: "half",
    } as RequestInit);
    expect(res.status).toBe(413);
    expect(await h.deps.objects.stat(h.deps.bucket, keys.upload(up.upload_id))).toBeUndefined();
    expect((await meta(up.upload_id)).size).toBe(0);
    expect((await createWith(up.upload_id)).body.detail[0].type).toBe("upload_empty");
  });

  it("422 for an empty PUT", async () => {
    const up = await reserve();
    const r = await put(up.upload_url, "");
    expect(r.status).toBe(422);
  });

  it("404 when the reservation is gone", async () => {
    const up = await reserve();
    await h.deps.objects.deletePrefix(h.deps.bucket, keys.uploadPrefix(up.upload_id));
    expect((await put(up.upload_url, PDF)).status).toBe(404);
  });
});

describe("uploads: declared size and the one-detection rule", () => {
  it("a PUT larger than size_bytes is 413, a smaller one 422; neither leaves bytes behind", async () => {
    const up = await reserve(alice, { size_bytes: PDF.length });
    const larger = await put(up.upload_url, Buffer.concat([PDF, Buffer.from("x")]));
    expect(larger.status).toBe(413);
    expect(larger.body.detail).toBe(
      `The document is larger than the ${PDF.length} bytes declared (size_bytes) for this upload.`,
    );
    const smaller = await put(up.upload_url, PDF.subarray(0, 10));
    expect(smaller.status).toBe(422);
    expect(smaller.body.detail).toEqual([
      {
        loc: ["body"],
        msg: `The document has 10 bytes but the upload declared size_bytes ${PDF.length}; send the whole file.`,
        type: "upload_size_mismatch",
      },
    ]);
    expect(await h.deps.objects.stat(h.deps.bucket, keys.upload(up.upload_id))).toBeUndefined();
    expect((await meta(up.upload_id)).size).toBe(0);
    // streamed without a Content-Length, the size is checked as the bytes arrive and at the end
    for (const [chunks, status] of [
      [[PDF, Buffer.from("xy")], 413],
      [[PDF.subarray(0, 5)], 422],
    ] as const) {
      const u = new URL(up.upload_url);
      const res = await h.app.request(`${u.pathname}${u.search}`, {
        method: "PUT",
        body: new ReadableStream<Uint8Array>({
          start(ctrl) {
            for (const c of chunks) ctrl.enqueue(new Uint8Array(c));
            ctrl.close();
          },
        }),
        duplex: "half",
      } as RequestInit);
      expect(res.status).toBe(status);
      expect(await h.deps.objects.stat(h.deps.bucket, keys.upload(up.upload_id))).toBeUndefined();
    }
    expect((await put(up.upload_url, PDF)).status).toBe(200);
    expect((await createWith(up.upload_id)).status).toBe(202);
  });

  it("size_bytes above the deployment's maximum is 422 at body.size_bytes; other bad sizes too", async () => {
    const r = await call(h, "POST", "/v1/uploads", { token: alice, body: { size_bytes: 1025 } });
    expect(r.status).toBe(422);
    expect(r.body.detail[0]).toMatchObject({
      loc: ["body", "size_bytes"],
      type: "less_than_equal",
      ctx: { le: 1024 },
    });
    for (const bad of [0, -1, 1.5, "12"]) {
      const b = await call(h, "POST", "/v1/uploads", { token: alice, body: { size_bytes: bad } });
      expect(b.status).toBe(422);
      expect(b.body.detail[0].loc).toEqual(["body", "size_bytes"]);
    }
  });

  it("a PUT after the upload started a detection is 409 and changes nothing", async () => {
    const up = await reserve();
    await put(up.upload_url, PDF);
    const created = await createWith(up.upload_id);
    expect(created.status).toBe(202);
    const again = await put(up.upload_url, Buffer.from("%PDF-1.4 other bytes %%EOF"));
    expect(again.status).toBe(409);
    expect(again.body.detail).toBe(
      `This upload already started detection ${created.body.id} and cannot be changed; create a new upload with POST /v1/uploads for another document.`,
    );
    expect(await h.deps.objects.get(h.deps.bucket, keys.upload(up.upload_id))).toEqual(PDF);
  });

  it("an upload starts one detection only: a second create is 422 upload_used, also after a DELETE", async () => {
    const up = await reserve();
    await put(up.upload_url, PDF);
    const first = await createWith(up.upload_id);
    expect(first.status).toBe(202);
    const second = await createWith(up.upload_id);
    expect(second.status).toBe(422);
    expect(second.body.detail[0]).toMatchObject({
      loc: ["body", "upload_id"],
      type: "upload_used",
      msg: expect.stringContaining(first.body.id),
    });
    // deleted but not yet finalized: still used
    expect((await call(h, "DELETE", `/v1/detection/${first.body.id}`, { token: alice })).status).toBe(200);
    expect((await createWith(up.upload_id)).body.detail[0].type).toBe("upload_used");
    // the finalizer removes the upload's files with the detection's: then the upload is unknown
    await h.deps.objects.deletePrefix(h.deps.bucket, keys.uploadPrefix(up.upload_id));
    const d = (await h.store.get(first.body.id))!;
    await h.store.update({ ...d, metadata: { ...d.metadata, finalizers: [] } });
    const after = await createWith(up.upload_id);
    expect(after.status).toBe(422);
    expect(after.body.detail[0]).toMatchObject({ loc: ["body", "upload_id"], type: "upload_not_found" });
    expect((await h.store.list()).items).toHaveLength(0);
  });

  it("concurrent creates with one upload: exactly one is accepted", async () => {
    const up = await reserve();
    await put(up.upload_url, PDF);
    const answers = await Promise.all([1, 2, 3, 4].map(() => createWith(up.upload_id)));
    expect(answers.map((a) => a.status).sort()).toEqual([202, 422, 422, 422]);
    expect((await h.store.list()).items).toHaveLength(1);
  });

  it("a create that fails after the claim releases it (the upload can be used again)", async () => {
    const up = await reserve();
    await put(up.upload_url, PDF);
    const create = h.store.create.bind(h.store);
    h.store.create = async () => {
      throw new Error("store write failed");
    };
    expect((await createWith(up.upload_id)).status).toBe(500);
    h.store.create = create;
    expect((await meta(up.upload_id)).detection).toBeUndefined();
    expect((await createWith(up.upload_id)).status).toBe(202);
  });

  it("a claim whose detection never came into being does not block the upload", async () => {
    const up = await reserve();
    await put(up.upload_url, PDF);
    const m = await meta(up.upload_id);
    await h.deps.objects.put(
      h.deps.bucket,
      keys.uploadMeta(up.upload_id),
      JSON.stringify({ ...m, detection: "det-01jd5x9q3m8w2v7k4c6b0n1r2t" }),
    );
    expect((await createWith(up.upload_id)).status).toBe(202);
  });
});

describe("create with upload_id: 422 at body.upload_id", () => {
  it("unknown upload", async () => {
    const r = await createWith("upl-01jd5x9q3m8w2v7k4c6b0n1r2t");
    expect(r.status).toBe(422);
    expect(r.body.detail[0]).toMatchObject({ loc: ["body", "upload_id"], type: "upload_not_found" });
  });

  it("empty upload (reserved, nothing PUT)", async () => {
    const up = await reserve();
    const r = await createWith(up.upload_id);
    expect(r.status).toBe(422);
    expect(r.body.detail[0]).toMatchObject({ loc: ["body", "upload_id"], type: "upload_empty" });
  });

  it("expired upload", async () => {
    const up = await reserve();
    await put(up.upload_url, PDF);
    h.clock.advance(601_000);
    const r = await createWith(up.upload_id);
    expect(r.status).toBe(422);
    expect(r.body.detail[0]).toMatchObject({ loc: ["body", "upload_id"], type: "upload_expired" });
  });

  it("another client's upload reads as unknown", async () => {
    const up = await reserve();
    await put(up.upload_url, PDF);
    const r = await createWith(up.upload_id, await h.token("bob"));
    expect(r.status).toBe(422);
    expect(r.body.detail[0]).toMatchObject({ loc: ["body", "upload_id"], type: "upload_not_found" });
    expect((await h.store.list()).items).toHaveLength(0);
  });
});

describe("signing helpers", () => {
  const hmac = (s: string) => Buffer.from(s).toString("hex").padEnd(64, "0").slice(0, 64);
  it("round-trips and checks expiry after the signature", () => {
    const url = new URL(signedUploadUrl("http://h/", "upl-x", 100, hmac));
    expect(url.pathname).toBe("/uploads/upl-x");
    const sig = url.searchParams.get("sig")!;
    expect(checkUploadSignature("upl-x", "100", sig, 100, hmac)).toBe("ok");
    expect(checkUploadSignature("upl-x", "100", sig, 101, hmac)).toBe("expired");
    expect(checkUploadSignature("upl-x", "101", sig, 0, hmac)).toBe("invalid");
    expect(checkUploadSignature("upl-x", "1e3", sig, 0, hmac)).toBe("invalid");
    expect(checkUploadSignature("upl-x", "100", "zz", 0, hmac)).toBe("invalid");
  });

  it("parses Content-Disposition filenames", () => {
    expect(dispositionFilename('attachment; filename="a b.pdf"')).toBe("a b.pdf");
    expect(dispositionFilename("attachment; filename=plain.pdf")).toBe("plain.pdf");
    expect(dispositionFilename(`attachment; filename="x.pdf"; filename*=UTF-8''%C3%A4.pdf`)).toBe("ä.pdf");
    expect(dispositionFilename('attachment; filename="q\\"uote.pdf"')).toBe('q"uote.pdf');
    expect(dispositionFilename("inline")).toBeUndefined();
    expect(dispositionFilename(undefined)).toBeUndefined();
  });
});
