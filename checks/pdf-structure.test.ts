import { mkdtemp, readFile, rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CheckResult } from "../core/check-result.js";
import type { DocType } from "../core/verdict.js";
import { modelOf } from "../document/testdata/model-kit.js";
import { makeDocument } from "../fixtures/documents.js";
import { type RpFixture, realProducerSet } from "../fixtures/real-producer/set.js";
import { ghostscript, qpdf, toolAvailability } from "../fixtures/real-producer/tools.js";
import { pdfStructureCheck } from "./pdf-structure.js";

const now = new Date("2026-01-15T12:00:00Z");
const run = async (bytes: Uint8Array, docType: DocType = "bank_statement") =>
  CheckResult.parse(await pdfStructureCheck.run(await modelOf(bytes, { docType }), { now }));
const codes = (r: CheckResult) => r.findings.filter((f) => (f.severity ?? 0) >= 2).map((f) => f.code);

describe("pdf.structure on generated documents", () => {
  it("passes documents whose producer is a generator it knows nothing against", async () => {
    for (const docType of ["bank_statement", "invoice", "payslip"] as const) {
      const r = await run(await makeDocument({ seed: 3, docType, region: "GB" }), docType);
      expect(r.outcome, r.summary).toBe("pass");
    }
  });
});

const tools = toolAvailability();

describe.skipIf(!tools.ok)(
  tools.ok
    ? "pdf.structure on real tools' output"
    : `pdf.structure on real tools' output: SKIPPED — ${tools.reason}`,
  () => {
    let fixtures: RpFixture[] = [];
    let work: string;
    const genuine = (family: string) =>
      fixtures.find((f) => f.label === "genuine" && f.family === family) as RpFixture;
    beforeAll(async () => {
      fixtures = (await realProducerSet({ subset: "test" })).fixtures;
      work = await mkdtemp(path.join(os.tmpdir(), "docverify-structure-"));
    }, 600_000);
    afterAll(async () => {
      if (work) await rm(work, { recursive: true, force: true });
    });

    it("passes every genuine producer's own output", async () => {
      for (const f of fixtures.filter((x) => x.label === "genuine")) {
        const r = await run(new Uint8Array(await readFile(f.file)), f.docType);
        expect(r.outcome, `${f.id}: ${r.summary}`).toBe("pass");
      }
    });

    it("finds a LibreOffice export rewritten by qpdf: its header comment and LibreOffice's broken seal", async () => {
      const out = path.join(work, "qpdf.pdf");
      await qpdf([genuine("libreoffice-writer").file, out]);
      const r = await run(new Uint8Array(await readFile(out)));
      expect(codes(r)).toEqual(["rewritten_by_other_tool", "producer_checksum_broken"]);
      expect(r.findings[0]?.evidence).toMatchObject({ writer: "qpdf", producer: "LibreOffice 7.4" });
      expect(r.findings[0]?.message).toMatch(/second \/ID differs from the first/);
      // Another document type than an issued one: a note.
      const other = await run(new Uint8Array(await readFile(out)), "other");
      expect(other.findings.every((f) => (f.severity ?? 0) <= 3)).toBe(true);
    });

    it("finds the MuPDF rewrite of the tampered copies and nothing in the incremental ones", async () => {
      for (const f of fixtures.filter((x) => x.label === "tampered")) {
        const r = await run(new Uint8Array(await readFile(f.file)), f.docType);
        const rewritten = codes(r).includes("rewritten_by_other_tool");
        const kind = f.tamper?.kind ?? "";
        expect(rewritten, `${f.id}: ${r.summary}`).toBe(
          ["mupdf_redact_insert_full", "white_box_new_text", "qpdf_same_font_edit"].includes(kind),
        );
      }
    });

    it("finds a Ghostscript file re-distilled from a PDF that still names the issuer's application", async () => {
      const original = genuine("ghostscript");
      expect(await run(new Uint8Array(await readFile(original.file)), original.docType)).toMatchObject({
        outcome: "pass",
      });
      const out = path.join(work, "redistilled.pdf");
      await ghostscript(original.file, out);
      const r = await run(new Uint8Array(await readFile(out)), original.docType);
      const f = r.findings.find((x) => x.code === "redistilled_from_pdf");
      expect(f?.evidence).toMatchObject({ creator: original.creator });
      expect(f?.severity).toBe(4);
      expect(f?.message).toMatch(/re-distilled from an existing PDF/);
    }, 60_000);
  },
);
