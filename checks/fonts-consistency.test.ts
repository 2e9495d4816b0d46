import { PDFDocument } from "pdf-lib";
import { describe, expect, it } from "vitest";
import { makeDocument, makePng } from "../fixtures/documents.js";
import { HOSTILE_TEXT_KINDS, makeHostileTextPdf } from "../fixtures/hostile-text.js";
import { prefixFonts } from "../fixtures/pdf-text-edit.js";
import { fontFace, fontsConsistencyCheck } from "./fonts-consistency.js";
import { genuineResults, runOn, tamperedResult } from "./testdata/text-check-kit.js";

const check = fontsConsistencyCheck;

describe("fontFace", () => {
  it("reduces BaseFont names to family and style", () => {
    expect(fontFace("ABCDEF+Arial-BoldItalicMT")).toEqual({ family: "Arial", bold: true, italic: true });
    expect(fontFace("TimesNewRomanPS-BoldMT")).toEqual({
      family: "TimesNewRoman",
      bold: true,
      italic: false,
    });
    expect(fontFace("Helvetica")).toEqual({ family: "Helvetica", bold: false, italic: false });
    expect(fontFace("Times-Roman")).toEqual({ family: "Times", bold: false, italic: false });
    expect(fontFace("Arial,Bold")).toEqual({ family: "Arial", bold: true, italic: false });
    expect(fontFace("Courier-Oblique")).toEqual({ family: "Courier", bold: false, italic: true });
  });
});

describe("fonts.consistency", () => {
  it("passes genuine documents of every type and region, bold totals included", async () => {
    for (const { name, result } of await genuineResults(check, [11, 12])) {
      expect(result.outcome, name).toBe("pass");
      expect(result.findings, name).toEqual([]);
    }
  }, 120_000);

  it("passes a genuine document whose fonts are all embedded subsets of one origin", async () => {
    const doc = await PDFDocument.load(await makeDocument({ seed: 3, docType: "invoice", region: "GB" }), {
      updateMetadata: false,
    });
    prefixFonts(doc, "QWMXKB");
    const r = await runOn(check, await doc.save(), { docType: "invoice" });
    expect(r.outcome).toBe("pass");
    expect(r.summary).toContain("QWMXKB+Helvetica");
  });

  it("flags an amount retyped in Courier in a column of Helvetica amounts", async () => {
    for (const [seed, region] of [
      [1, "US"],
      [2, "GB"],
      [3, "DE"],
      [4, "US"],
    ] as const) {
      const { t, result } = await tamperedResult(check, seed, "amount_font_swap", region);
      const f = result.findings.find((x) => x.code === "value_font_differs");
      expect(f, `${seed} ${region}`).toBeDefined();
      expect(f?.page).toBe(t.page);
      expect(f?.evidence).toMatchObject({ value: t.replacement, font: "Courier" });
      expect(f?.message).toMatch(/Courier.*Helvetica/);
      expect(f?.severity).toBe(7);
      expect(result.outcome).toBe("flag");
    }
  });

  it("flags the same font embedded twice on a page", async () => {
    const { t, result } = await tamperedResult(check, 2, "font_subset_twice", "DE");
    const f = result.findings.find((x) => x.code === "font_embedded_twice");
    expect(f?.evidence).toMatchObject({ font: "Helvetica-Bold", texts: [t.replacement] });
    expect(f?.evidence?.subsets).toEqual(["QWMXKB+Helvetica-Bold", "HZTPLV+Helvetica-Bold"]);
    expect(f?.severity).toBe(6);
  });

  it("flags a value typed into a line in another font", async () => {
    const doc = await PDFDocument.load(await makeDocument({ seed: 8, docType: "payslip", region: "GB" }), {
      updateMetadata: false,
    });
    const { PdfTextEditor } = await import("../fixtures/pdf-text-edit.js");
    const { StandardFonts } = await import("pdf-lib");
    const editor = new PdfTextEditor(doc);
    const target = editor.blocks().find((b) => b.text.startsWith("Employee number: "));
    if (!target) throw new Error("no employee number line");
    // Keep the label, re-type the number in Times right after it.
    await editor.rewrite(target, { text: "Employee number: " });
    const times = await editor.standard(StandardFonts.TimesRoman);
    const labelWidth = await editor.width(target, "Employee number: ");
    const page = doc.getPage(target.page - 1);
    page.drawText("999999", { x: target.x + labelWidth, y: target.y, size: target.size, font: times });
    editor.commit();
    const r = await runOn(check, await doc.save(), { docType: "payslip" });
    const f = r.findings.find((x) => x.code === "cell_mixed_fonts");
    expect(f?.evidence).toMatchObject({ odd: "999999", oddFont: "Times-Roman", mainFont: "Helvetica" });
    expect(f?.severity).toBe(7);
  });

  it("skips images and stays bounded on hostile pages", async () => {
    expect((await runOn(check, makePng(1), {})).outcome).toBe("skip");
    for (const kind of HOSTILE_TEXT_KINDS) {
      const r = await runOn(check, await makeHostileTextPdf(kind), { docType: "other" });
      expect(["pass", "flag", "skip"], kind).toContain(r.outcome);
      expect(r.summary.length, kind).toBeGreaterThan(20);
    }
  }, 120_000);
});
