import { PDFDocument } from "pdf-lib";
import { describe, expect, it } from "vitest";
import { makeDocument, makePng } from "../fixtures/documents.js";
import { HOSTILE_TEXT_KINDS, makeHostileTextPdf } from "../fixtures/hostile-text.js";
import { prefixFonts } from "../fixtures/pdf-text-edit.js";
import { layoutDocument, run } from "../document/testdata/layout-kit.js";
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
      expect(f?.severity).toBe(4);
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
    expect(f?.severity).toBe(4);
  });

  it("judges a second face against the document's own typography, not against an ideal", async () => {
    const { StandardFonts } = await import("pdf-lib");
    const doc = await PDFDocument.create();
    const page = doc.addPage([595, 842]);
    const body = await doc.embedFont(StandardFonts.Helvetica);
    const bold = await doc.embedFont(StandardFonts.HelveticaBold);
    const mono = await doc.embedFont(StandardFonts.Courier);
    const monoBold = await doc.embedFont(StandardFonts.CourierBold);
    const dingbats = await doc.embedFont(StandardFonts.ZapfDingbats);
    const line = (y: number, parts: [string, typeof body, number?][]) => {
      let x = 50;
      for (const [text, font, size = 10] of parts) {
        page.drawText(text, { x, y, size, font });
        x += font.widthOfTextAtSize(text, size);
      }
    };
    // A pictograph from a symbol font inside the contact line.
    line(800, [
      ["\u260e", dingbats],
      [" 0158 496 0354  www.example-bank.co.uk", body],
    ]);
    // Identifiers in a monospace face beside their labels, on several lines: the document's own pattern.
    line(780, [
      ["Account number ", body],
      ["12345678", mono],
    ]);
    line(765, [
      ["Sort code ", body],
      ["12-34-56", mono],
    ]);
    line(750, [
      ["Reference ", body],
      ["INV-2025-0042", mono],
    ]);
    // A column of monospace amounts whose total row is bold and larger, its label bold in the body face.
    const amounts = ["120.00", "80.50", "99.99", "12.34", "45.00", "1,000.00"];
    amounts.forEach((a, i) => {
      line(700 - 15 * i, [[`Item ${i + 1}`, body]]);
      page.drawText(a, { x: 400 - mono.widthOfTextAtSize(a, 10), y: 700 - 15 * i, size: 10, font: mono });
    });
    page.drawText("Total", { x: 50, y: 600, size: 11, font: bold });
    page.drawText("1,357.83", {
      x: 400 - monoBold.widthOfTextAtSize("1,357.83", 11),
      y: 600,
      size: 11,
      font: monoBold,
    });
    const r = await runOn(check, await doc.save(), { docType: "invoice", region: "GB" });
    expect(r.findings.filter((f) => (f.severity ?? 0) >= 2)).toEqual([]);
  });

  it("a value in a font left out among embedded subsets is an anomaly; one embedded whole among subsets a note", async () => {
    // FOP embeds whole what it cannot subset, Ghostscript draws bitmap faces as Type 3: a genuine producer's
    // choice. A font not embedded at all among embedded ones is what an editor's added text looks like.
    const page = (odd: { font: string; fontEmbedded: boolean }) => [
      ...Array.from({ length: 12 }, (_, i) => ({
        ...run(`Line ${i + 1} of the statement`, 50, 700 - 14 * i, { font: "ABCDEF+LiberationSans" }),
      })),
      { ...run("Total", 50, 500, { font: "ABCDEF+LiberationSans" }) },
      { ...run("1,250.00", 300, 500, { font: odd.font }), fontEmbedded: odd.fontEmbedded },
    ];
    const origin = async (odd: { font: string; fontEmbedded: boolean }) =>
      (
        await check.run(layoutDocument([page(odd)], { docType: "invoice" }), { now: new Date() })
      ).findings.find((f) => f.code === "font_origin_mixed")?.severity;
    expect(await origin({ font: "Helvetica", fontEmbedded: false })).toBe(3);
    expect(await origin({ font: "DejaVuSansMono", fontEmbedded: true })).toBe(2);
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
