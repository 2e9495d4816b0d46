import { describe, expect, it } from "vitest";
import { CheckResult } from "../core/check-result.js";
import { modelOf } from "../document/testdata/model-kit.js";
import { makeDocument, makePng, makeTiff } from "../fixtures/documents.js";
import { extensionOf, fileTypeCheck } from "./file-type.js";

const now = new Date("2026-01-15T12:00:00Z");
type Opts = NonNullable<Parameters<typeof modelOf>[1]>;
const run = async (bytes: Uint8Array, opts: Opts) =>
  CheckResult.parse(await fileTypeCheck.run(await modelOf(bytes, opts), { now }));
const codes = (r: CheckResult) => r.findings.map((f) => f.code);

describe("file.type", () => {
  it("passes when name, declared type and content agree", async () => {
    const pdf = await makeDocument({ seed: 1, docType: "bank_statement", region: "GB" });
    const r = await run(pdf, { filename: "Statement-2025-03.PDF", docType: "bank_statement" });
    expect(r.outcome).toBe("pass");
    expect(r.findings).toEqual([]);
    expect(r.summary).toMatch(/agree\.$/);
    const id = await run(makePng(1), { filename: "passport.png", docType: "id_document" });
    expect(id.outcome).toBe("pass");
    expect(id.findings).toEqual([]);
  });

  it("flags a .pdf name on PNG content", async () => {
    const r = await run(makePng(2), { filename: "statement.pdf", docType: "bank_statement" });
    expect(r.outcome).toBe("flag");
    expect(codes(r)).toContain("extension_mismatch");
    expect(r.severity).toBe(4);
    expect(r.findings[0]?.evidence).toMatchObject({ extension: "pdf", contentType: "image/png" });
  });

  it("flags a .docx name on PDF content as a conversion", async () => {
    const pdf = await makeDocument({ seed: 1, docType: "payslip", region: "US" });
    const r = await run(pdf, { filename: "payslip.docx", docType: "payslip" });
    expect(r.outcome).toBe("flag");
    expect(r.findings[0]?.message).toMatch(/Word document.*converted or renamed/);
  });

  it("flags a declared content type that differs from the real one, as a finding (not a failure)", async () => {
    const pdf = await makeDocument({ seed: 1, docType: "invoice", region: "US" });
    const r = await run(pdf, {
      filename: "invoice.pdf",
      docType: "invoice",
      declaredContentType: "image/png",
    });
    expect(r.outcome).toBe("flag");
    expect(codes(r)).toEqual(["declared_content_type_mismatch"]);
    expect(r.findings[0]).toMatchObject({
      severity: 4,
      evidence: { declaredContentType: "image/png", contentType: "application/pdf" },
    });
    expect(r.findings[0]?.message).toMatch(/declared as a PNG image, but its content is a PDF/);
    // agreeing declarations, aliases, parameters and generic binary types say nothing
    for (const declared of [
      "application/pdf",
      "application/x-pdf",
      "Application/PDF; charset=binary",
      "application/octet-stream",
      null,
    ]) {
      const ok = await run(pdf, {
        filename: "invoice.pdf",
        docType: "invoice",
        declaredContentType: declared,
      });
      expect(codes(ok), String(declared)).toEqual([]);
    }
    const jpeg = await run(makePng(4), {
      filename: "id.png",
      docType: "id_document",
      declaredContentType: "image/jpg",
    });
    expect(codes(jpeg)).toEqual(["declared_content_type_mismatch"]);
    expect(jpeg.findings[0]?.message).toMatch(/declared as a JPEG image, but its content is a PNG image/);
  });

  it("notes a missing extension or file name without flagging", async () => {
    const pdf = await makeDocument({ seed: 1, docType: "invoice", region: "US" });
    const noExt = await run(pdf, { filename: "invoice", docType: "invoice" });
    expect(noExt.outcome).toBe("pass");
    expect(codes(noExt)).toEqual(["extension_missing"]);
    expect(noExt.summary).toMatch(/1 minor note/);
    const noName = await run(pdf, { filename: null, docType: "invoice" });
    expect(codes(noName)).toEqual(["filename_missing"]);
    expect(noName.outcome).toBe("pass");
  });

  it("notes an image submitted as a bank statement as mild, not a flag", async () => {
    const r = await run(makeTiff(3), { filename: "scan.tiff", docType: "bank_statement" });
    expect(r.outcome).toBe("pass");
    expect(codes(r)).toEqual(["image_for_digital_document"]);
    expect(r.findings[0]?.severity).toBe(1);
  });

  it("flags bytes before the PDF header", async () => {
    const pdf = await makeDocument({ seed: 1, docType: "invoice", region: "DE" });
    const wrapped = new Uint8Array(Buffer.concat([Buffer.from("garbage-before-header\n"), Buffer.from(pdf)]));
    const r = await run(wrapped, { filename: "rechnung.pdf", docType: "invoice" });
    expect(codes(r)).toContain("pdf_header_offset");
    expect(r.outcome).toBe("flag");
  });

  it("flags a PDF version older than the features it uses", async () => {
    const pdf = Buffer.from(await makeDocument({ seed: 1, docType: "invoice", region: "DE" })).toString(
      "latin1",
    );
    // An object stream (PDF 1.5) in a file that claims PDF 1.3.
    const old = pdf
      .replace("%PDF-1.7", "%PDF-1.3")
      .replace("/Type /Pages", "/Type /Pages /Extra << /Type /ObjStm >>");
    const r = await run(new Uint8Array(Buffer.from(old, "latin1")), {
      filename: "a.pdf",
      docType: "invoice",
    });
    expect(codes(r)).toContain("pdf_version_features");
    expect(r.findings.find((f) => f.code === "pdf_version_features")?.message).toMatch(
      /PDF 1\.3 .*object streams \(PDF 1\.5\)/,
    );
  });

  it("flags data appended after the final %%EOF", async () => {
    const pdf = await makeDocument({ seed: 1, docType: "receipt", region: "US" });
    const appended = new Uint8Array(
      Buffer.concat([
        Buffer.from(pdf),
        Buffer.from("\n<script>hidden payload that readers never show</script>\n"),
      ]),
    );
    const r = await run(appended, { filename: "r.pdf", docType: "receipt" });
    expect(codes(r)).toContain("data_after_eof");
  });

  it("reads extensions", () => {
    expect(extensionOf("a.b.PDF")).toBe("pdf");
    expect(extensionOf(".hidden")).toBeNull();
    expect(extensionOf("noext")).toBeNull();
    expect(extensionOf("dir.v2/file")).toBeNull();
  });
});
