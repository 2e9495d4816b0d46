import { createHash } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { keys, PrepareResult } from "../core/detection.js";
import { makeDocument, makePng, makeRandomBytes, makeTiff } from "../fixtures/documents.js";
import { runPrepareStep } from "./step.js";
import { createTestStepContext, stepInput, type TestStepContext } from "../checks/testdata/step-context.js";
import { closedPort, startTestHttpServer, type TestHttpServer } from "./testdata/http-server.js";

let pdf: Uint8Array;
let server: TestHttpServer;
let ctx: TestStepContext;
let strictCtx: TestStepContext;

beforeAll(async () => {
  pdf = await makeDocument({ seed: 1, docType: "bank_statement", region: "GB" });
  const junkPdf = Buffer.concat([Buffer.from("X-Mailer junk line\r\n"), Buffer.from(pdf)]);
  server = await startTestHttpServer({
    "/files/statement%20March.pdf": (_req, res) => {
      res.writeHead(200, { "content-type": "application/octet-stream" });
      res.end(Buffer.from(pdf));
    },
    "/download": (_req, res) => {
      res.writeHead(200, {
        "content-type": "application/pdf",
        "content-disposition": `attachment; filename="fallback.pdf"; filename*=UTF-8''Kontoauszug%20M%C3%A4rz.pdf`,
      });
      res.end(Buffer.from(pdf));
    },
    "/plain-disposition": (_req, res) => {
      res.writeHead(200, { "content-disposition": 'inline; filename="../../etc/report \\"Q1\\".pdf"' });
      res.end(Buffer.from(pdf));
    },
    "/": (_req, res) => {
      res.end(Buffer.from(pdf));
    },
    "/junk-before-header.pdf": (_req, res) => res.end(junkPdf),
    "/photo.png": (_req, res) => res.end(Buffer.from(makePng(1))),
    "/scan.tif": (_req, res) => res.end(Buffer.from(makeTiff(1))),
    "/noise.bin": (_req, res) => res.end(Buffer.from(makeRandomBytes(3, 4096))),
    "/doc.zip": (_req, res) => res.end(Buffer.from([0x50, 0x4b, 0x03, 0x04, ...makeRandomBytes(4, 200)])),
    "/empty": (_req, res) => res.end(),
    "/big.pdf": (_req, res) => res.end(Buffer.alloc(5000, 0x25)),
    "/stall.pdf": () => undefined,
    "/teapot.pdf": (_req, res) => {
      res.writeHead(503);
      res.end();
    },
  });
  // The loopback server listens on a random port: allowed here as DOCVERIFY_ALLOWED_SOURCE_PORTS would.
  ctx = await createTestStepContext({
    allowPrivateSources: true,
    downloadTimeoutSeconds: 5,
    allowedSourcePorts: [[server.port, server.port]],
  });
  strictCtx = await createTestStepContext({ allowPrivateSources: false });
});

afterAll(async () => {
  await server.close();
  await ctx.cleanup();
  await strictCtx.cleanup();
});

const sha = (b: Uint8Array) => createHash("sha256").update(b).digest("hex");

describe("runPrepareStep from a URL", () => {
  it("stores the document with its sniffed type, size, sha256 and URL file name", async () => {
    const input = stepInput("prepare", { source: { url: server.url("/files/statement%20March.pdf") } });
    const result = PrepareResult.parse(await runPrepareStep(input, ctx));
    expect(result.failure).toBeUndefined();
    expect(result.document).toEqual({
      filename: "statement March.pdf",
      contentType: "application/pdf",
      sizeBytes: pdf.length,
      key: keys.document(input.detection, "statement March.pdf"),
      sha256: sha(pdf),
    });
    const stored = await ctx.objects.get(ctx.bucket, result.document!.key);
    expect(sha(stored)).toBe(sha(pdf));
    expect((await ctx.objects.stat(ctx.bucket, result.document!.key))?.contentType).toBe("application/pdf");
  });

  it("prefers the RFC 5987 filename* of Content-Disposition", async () => {
    const result = await runPrepareStep(
      stepInput("prepare", { source: { url: server.url("/download") } }),
      ctx,
    );
    expect(result.document?.filename).toBe("Kontoauszug März.pdf");
    expect(result.document?.key).toMatch(/\/Kontoauszug_M_rz\.pdf$/);
  });

  it("takes a quoted filename without its directory parts", async () => {
    const result = await runPrepareStep(
      stepInput("prepare", { source: { url: server.url("/plain-disposition") } }),
      ctx,
    );
    expect(result.document?.filename).toBe('report "Q1".pdf');
  });

  it("records no file name when neither header nor path has one", async () => {
    const input = stepInput("prepare", { source: { url: server.url("/") } });
    const result = await runPrepareStep(input, ctx);
    expect(result.document?.filename).toBeNull();
    expect(result.document?.key).toBe(keys.document(input.detection, null));
  });

  it("accepts a PDF with junk before its header, and PNG and TIFF images", async () => {
    for (const [path, type] of [
      ["/junk-before-header.pdf", "application/pdf"],
      ["/photo.png", "image/png"],
      ["/scan.tif", "image/tiff"],
    ] as const) {
      const result = await runPrepareStep(stepInput("prepare", { source: { url: server.url(path) } }), ctx);
      expect(result.document?.contentType, path).toBe(type);
    }
  });

  it("is idempotent: a retry overwrites the same key and leaves one document", async () => {
    const input = stepInput("prepare", { source: { url: server.url("/download") } });
    const a = await runPrepareStep(input, ctx);
    const b = await runPrepareStep({ ...input, attempt: 2 }, ctx);
    expect(b).toEqual(a);
    const listed = [];
    for await (const o of ctx.objects.list(ctx.bucket, keys.documentPrefix(input.detection)))
      listed.push(o.key);
    expect(listed).toEqual([a.document?.key]);
  });

  it.each([
    ["/noise.bin", "unsupported_content_type"],
    ["/doc.zip", "unsupported_content_type"],
    ["/empty", "unsupported_content_type"],
    ["/teapot.pdf", "source_http_error"],
    ["/missing.pdf", "source_http_error"],
  ])("%s fails with %s", async (path, code) => {
    const result = await runPrepareStep(stepInput("prepare", { source: { url: server.url(path) } }), ctx);
    expect(result.document).toBeUndefined();
    expect(result.failure?.code).toBe(code);
    expect(result.failure?.message.length).toBeGreaterThan(20);
  });

  it("fails source_too_large above maxDocumentBytes", async () => {
    const small = { ...ctx, config: { ...ctx.config, maxDocumentBytes: 1000 } };
    const result = await runPrepareStep(
      stepInput("prepare", { source: { url: server.url("/big.pdf") } }),
      small,
    );
    expect(result.failure?.code).toBe("source_too_large");
  });

  it("fails source_timeout when the download outlasts downloadTimeoutSeconds", async () => {
    const quick = { ...ctx, config: { ...ctx.config, downloadTimeoutSeconds: 1 } };
    const result = await runPrepareStep(
      stepInput("prepare", { source: { url: server.url("/stall.pdf") } }),
      quick,
    );
    expect(result.failure?.code).toBe("source_timeout");
  });

  it("fails source_unreachable for an unresolvable host and a closed port", async () => {
    const dns = await runPrepareStep(
      stepInput("prepare", { source: { url: "http://nonexistent.invalid/x.pdf" } }),
      { ...ctx, config: { ...ctx.config, allowedSourcePorts: [[80, 80]] } },
    );
    expect(dns.failure?.code).toBe("source_unreachable");
    const port = await closedPort();
    const closed = await runPrepareStep(
      stepInput("prepare", { source: { url: `http://127.0.0.1:${port}/x.pdf` } }),
      { ...ctx, config: { ...ctx.config, allowedSourcePorts: [[port, port]] } },
    );
    expect(closed.failure?.code).toBe("source_unreachable");
  });

  it("fails source_forbidden for a port outside DOCVERIFY_ALLOWED_SOURCE_PORTS (default 80 and 443)", async () => {
    const defaults = {
      ...ctx,
      config: {
        ...ctx.config,
        allowedSourcePorts: [
          [80, 80],
          [443, 443],
        ] as const,
      },
    };
    const result = await runPrepareStep(stepInput("prepare", { source: { url: server.url("/") } }), defaults);
    expect(result.failure?.code).toBe("source_forbidden");
  });

  it("fails source_forbidden for private destinations unless allowed", async () => {
    for (const url of [server.url("/"), "http://169.254.169.254/latest/meta-data/", "http://2130706433/"]) {
      const result = await runPrepareStep(stepInput("prepare", { source: { url } }), strictCtx);
      expect(result.failure?.code, url).toBe("source_forbidden");
    }
  });

  it("fails source_forbidden for a non-http scheme", async () => {
    const result = await runPrepareStep(stepInput("prepare", { source: { url: "file:///etc/passwd" } }), ctx);
    expect(result.failure?.code).toBe("source_forbidden");
  });
});

describe("runPrepareStep from an upload", () => {
  async function upload(id: string, body: Uint8Array | null, meta: Record<string, unknown> | string | null) {
    if (body) await ctx.objects.put(ctx.bucket, keys.upload(id), Buffer.from(body));
    if (meta !== null) {
      await ctx.objects.put(
        ctx.bucket,
        keys.uploadMeta(id),
        typeof meta === "string" ? meta : JSON.stringify(meta),
      );
    }
  }
  const meta = (filename: string | null, client = "client-a") => ({
    client_id: client,
    filename,
    content_type: "application/pdf",
    expires_at: "2030-01-01T00:00:00Z",
    size: 1,
  });

  it("stores the uploaded bytes under the upload's file name", async () => {
    await upload("up-ok", pdf, meta("payslip.pdf"));
    const result = await runPrepareStep(stepInput("prepare", { source: { uploadId: "up-ok" } }), ctx);
    expect(result.document?.filename).toBe("payslip.pdf");
    expect(result.document?.sha256).toBe(sha(pdf));
    expect(sha(await ctx.objects.get(ctx.bucket, result.document!.key))).toBe(sha(pdf));
  });

  it.each([
    ["unknown upload", "up-none", null, null, "client-a"],
    ["metadata without bytes", "up-nobytes", null, meta("a.pdf"), "client-a"],
    ["empty upload", "up-empty", new Uint8Array(0), meta("a.pdf"), "client-a"],
    ["bytes without metadata", "up-nometa", pdf, null, "client-a"],
    ["unreadable metadata", "up-badmeta", pdf, "{not json", "client-a"],
    ["another client's upload", "up-other", pdf, meta("a.pdf", "client-b"), "client-a"],
  ] as const)("%s → upload_not_found", async (_name, id, body, m, client) => {
    await upload(id, body, m as Record<string, unknown> | string | null);
    const result = await runPrepareStep(
      stepInput("prepare", { source: { uploadId: id }, submittedBy: client }),
      ctx,
    );
    expect(result.failure?.code).toBe("upload_not_found");
  });

  it("takes only the upload its reservation names it for, of the size it was created from", async () => {
    const input = stepInput("prepare", { source: { uploadId: "up-claimed" } });
    await upload("up-claimed", pdf, {
      ...meta("a.pdf"),
      content_type: "image/png",
      size: pdf.length,
      detection: input.detection,
    });
    const ok = await runPrepareStep(input, ctx);
    expect(ok.failure).toBeUndefined();
    // the declared type travels to the check step (file.type compares it with the sniffed one)
    expect(ok.document).toMatchObject({ contentType: "application/pdf", declaredContentType: "image/png" });

    const other = await runPrepareStep(stepInput("prepare", { source: { uploadId: "up-claimed" } }), ctx);
    expect(other.failure?.code).toBe("upload_not_found");

    await upload("up-changed", pdf, { ...meta("a.pdf"), size: pdf.length + 1, detection: "det-changed" });
    const changed = await runPrepareStep(
      { ...stepInput("prepare", { source: { uploadId: "up-changed" } }), detection: "det-changed" },
      ctx,
    );
    expect(changed.failure?.code).toBe("upload_not_found");

    // same size, written again after the claim (a presigned PUT in the cluster)
    await upload("up-rewritten", pdf, {
      ...meta("a.pdf"),
      size: pdf.length,
      detection: "det-rewritten",
      document_modified_at: "2020-01-01T00:00:00.000Z",
    });
    const rewritten = await runPrepareStep(
      { ...stepInput("prepare", { source: { uploadId: "up-rewritten" } }), detection: "det-rewritten" },
      ctx,
    );
    expect(rewritten.failure?.code).toBe("upload_not_found");
  });

  it("sniffs an upload too: random bytes → unsupported_content_type", async () => {
    await upload("up-noise", makeRandomBytes(9, 2048), meta("statement.pdf"));
    const result = await runPrepareStep(stepInput("prepare", { source: { uploadId: "up-noise" } }), ctx);
    expect(result.failure?.code).toBe("unsupported_content_type");
  });
});

describe("runPrepareStep from an object in a client bucket", () => {
  it("copies the object and names it after the key's last segment", async () => {
    await ctx.objects.ensureBucket("client-docs");
    await ctx.objects.put("client-docs", "inbox/2025/scan-7.png", Buffer.from(makePng(7)));
    const result = await runPrepareStep(
      stepInput("prepare", { source: { object: { bucket: "client-docs", key: "inbox/2025/scan-7.png" } } }),
      ctx,
    );
    expect(result.document?.filename).toBe("scan-7.png");
    expect(result.document?.contentType).toBe("image/png");
  });

  it("a missing object or bucket → upload_not_found", async () => {
    for (const object of [
      { bucket: "client-docs", key: "inbox/missing.pdf" },
      { bucket: "no-such-bucket", key: "a.pdf" },
    ]) {
      const result = await runPrepareStep(stepInput("prepare", { source: { object } }), ctx);
      expect(result.failure?.code).toBe("upload_not_found");
    }
  });

  it("an object above the size limit → source_too_large", async () => {
    await ctx.objects.put("client-docs", "big.pdf", Buffer.from(pdf));
    const small = { ...ctx, config: { ...ctx.config, maxDocumentBytes: 100 } };
    const result = await runPrepareStep(
      stepInput("prepare", { source: { object: { bucket: "client-docs", key: "big.pdf" } } }),
      small,
    );
    expect(result.failure?.code).toBe("source_too_large");
  });
});
