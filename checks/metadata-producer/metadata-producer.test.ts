import { describe, expect, it } from "vitest";
import { CheckResult } from "../../core/check-result.js";
import type { DocType } from "../../core/verdict.js";
import { modelOf } from "../../document/testdata/model-kit.js";
import { appendInfoUpdate, FIXTURE_DOC_TYPES, makeDocument } from "../../fixtures/documents.js";
import { withXmpHistory } from "../../fixtures/revisions.js";
import { metadataProducerCheck } from "./metadata-producer.js";
import { classifyProducer } from "./producer-table.js";

const now = new Date("2026-01-15T12:00:00Z");
const run = async (bytes: Uint8Array, docType: DocType) =>
  CheckResult.parse(await metadataProducerCheck.run(await modelOf(bytes, { docType }), { now }));
const statementBy = (producer: string, creator = producer) =>
  makeDocument({ seed: 9, docType: "bank_statement", region: "GB", producer, creator });

describe("producer table", () => {
  it("tells Acrobat editing, OCR and Office conversion apart", () => {
    expect(classifyProducer("Adobe Acrobat Pro DC 21.1.20145 Paper Capture Plug-in")?.category).toBe("ocr");
    expect(classifyProducer("Acrobat PDFMaker 23 for Word")?.category).toBe("office");
    expect(classifyProducer("Adobe Acrobat Pro (64-bit) 24.1.20643")?.category).toBe("acrobat_save");
    expect(classifyProducer("Adobe PDF Library 23.1.175")?.category).toBe("generator");
    expect(classifyProducer("Microsoft® Word for Microsoft 365")?.category).toBe("office");
    expect(classifyProducer("www.ilovepdf.com")?.category).toBe("online_editor");
    expect(classifyProducer("Adobe Photoshop 25.0 (Windows)")?.category).toBe("image_editor");
    expect(classifyProducer("Some In-House Engine 3")).toBeUndefined();
  });
});

describe("metadata.producer", () => {
  it("passes the genuine fixtures of every type and region", async () => {
    for (const docType of FIXTURE_DOC_TYPES) {
      for (const region of ["US", "GB", "DE"] as const) {
        for (const seed of [1, 2]) {
          const r = await run(await makeDocument({ seed, docType, region }), docType);
          expect(r.outcome, `${docType} ${region} ${seed}: ${r.summary}`).toBe("pass");
        }
      }
    }
  });

  it("flags an online editor on a bank statement", async () => {
    const r = await run(await statementBy("iLovePDF"), "bank_statement");
    expect(r.outcome).toBe("flag");
    expect(r.severity).toBe(4);
    const f = r.findings.find((x) => x.code === "producer_names_editor");
    expect(f?.evidence).toMatchObject({ software: "iLovePDF", category: "online_editor" });
    expect(f?.message).toMatch(
      /Info Producer and Info Creator and XMP pdf:Producer and XMP xmp:CreatorTool name "iLovePDF"/,
    );
  });

  it("notes office software without flagging it: small issuers make statements and bills in it", async () => {
    const word = await makeDocument({
      seed: 4,
      docType: "invoice",
      region: "US",
      producer: "Microsoft® Word for Microsoft 365",
      creator: "Microsoft® Word for Microsoft 365",
    });
    expect((await run(word, "invoice")).outcome).toBe("pass");
    const statement = await run(word, "bank_statement");
    expect(statement.outcome).toBe("pass");
    expect(statement.findings.map((f) => [f.code, f.severity])).toEqual([["producer_names_editor", 1]]);
  });

  it("flags LibreOffice Draw, the way LibreOffice edits an existing PDF", async () => {
    const r = await run(await statementBy("LibreOffice 7.4", "Draw"), "payslip");
    expect(r.outcome).toBe("flag");
    const f = r.findings.find((x) => x.evidence?.category === "pdf_editor");
    expect(f?.message).toMatch(/"Draw": a PDF editor/);
    expect(f?.severity).toBe(4);
  });

  it("flags a producer chain that re-made an application's own PDF (a re-distilled LibreOffice export)", async () => {
    const r = await run(await statementBy("GPL Ghostscript 10.00.0", "Writer"), "bank_statement");
    const f = r.findings.find((x) => x.code === "producer_chain_rewritten");
    expect(f?.evidence).toMatchObject({ application: "LibreOffice", producer: "GPL Ghostscript 10.00.0" });
    expect(f?.severity).toBe(4);
    // LibreOffice's own export, and a Chrome print, are the application's own PDF writer.
    for (const [producer, creator] of [
      ["LibreOffice 7.4", "Writer"],
      ["OpenOffice.org 2.1", "Writer"],
      ["Skia/PDF m156", "Mozilla/5.0 (X11; Linux x86_64) HeadlessChrome/156.0.0.0 Safari/537.36"],
    ]) {
      const ok = await run(await statementBy(producer as string, creator), "bank_statement");
      expect(
        ok.findings.map((x) => x.code),
        creator,
      ).not.toContain("producer_chain_rewritten");
    }
  });

  it("reads editors from the XMP history and notes several tools", async () => {
    const base = await statementBy("OpenText Exstream 16.6");
    const edited = await withXmpHistory(base, {
      producer: "OpenText Exstream 16.6",
      creatorTool: "OpenText Exstream 16.6",
      createDate: "2025-10-01T02:10:00Z",
      modifyDate: "2025-10-01T02:10:00Z",
      history: [
        { action: "created", softwareAgent: "OpenText Exstream 16.6", when: "2025-10-01T02:10:00Z" },
        { action: "saved", softwareAgent: "Adobe Photoshop 25.0 (Windows)", when: "2025-11-03T19:44:10Z" },
        { action: "saved", softwareAgent: "Adobe Acrobat Pro 24.1", when: "2025-11-03T19:50:00Z" },
      ],
    });
    const r = await run(edited, "bank_statement");
    const history = r.findings.filter((f) => f.code === "history_names_editor");
    expect(history.map((f) => (f.evidence as { software: string }).software).sort()).toEqual([
      "Adobe Acrobat",
      "Adobe Photoshop",
    ]);
    expect(r.findings.map((f) => f.code)).toContain("history_multiple_tools");
    expect(r.severity).toBe(4);
  });

  it("notes a producer that changed in a later revision", async () => {
    const base = await statementBy("OpenText Exstream 16.6");
    const r = await run(
      await appendInfoUpdate(base, { Producer: "Some Other Engine 2.0" }),
      "bank_statement",
    );
    const f = r.findings.find((x) => x.code === "producer_changed_in_update");
    expect(f?.evidence).toMatchObject({
      original: "OpenText Exstream 16.6",
      latest: "Some Other Engine 2.0",
    });
    expect(r.findings.map((x) => x.code)).toContain("producer_mismatch");
  });

  it("skips images", async () => {
    const { makePng } = await import("../../fixtures/documents.js");
    const model = await modelOf(makePng(1));
    expect(metadataProducerCheck.appliesTo(model)).toBe(false);
  });
});
