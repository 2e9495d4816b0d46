import { OPS } from "pdfjs-dist/legacy/build/pdf.mjs";
import { describe, expect, it } from "vitest";
import { makeDocument } from "../fixtures/documents.js";
import { HOSTILE_TEXT_KINDS, makeHostileTextPdf } from "../fixtures/hostile-text.js";
import { makeTextTamperedPdf } from "../fixtures/tampered-text.js";
import { type FontInfo, layoutFromOperatorList } from "./page-layout.js";
import { layoutLines, textLines } from "./text-lines.js";
import { modelOf } from "./testdata/model-kit.js";

const helvetica: FontInfo = {
  name: "Helvetica",
  embedded: false,
  ascent: 0.718,
  descent: -0.207,
  widthScale: 0.001,
  vertical: false,
};
const glyphs = (s: string, width = 500) => [...s].map((c) => ({ unicode: c, width, isSpace: c === " " }));

describe("page layout from the operator list", () => {
  it("places text runs with the real font, size, colour and position", async () => {
    const doc = await modelOf(await makeDocument({ seed: 3, docType: "invoice", region: "DE" }), {
      region: "DE",
    });
    const page = doc.pdf?.pages[0];
    const runs = page?.layout?.runs ?? [];
    expect(page?.text).toContain("RECHNUNG");
    const title = runs.find((r) => r.text === "RECHNUNG");
    expect(title).toMatchObject({
      font: "Helvetica-Bold",
      size: 16,
      renderMode: 0,
      fill: "#000000",
      upright: true,
    });
    expect(title?.x).toBe(50);
    // Right-aligned amounts end at the right margin (595.28 - 50), within the glyph metrics.
    const amounts = runs.filter((r) => /€$/.test(r.text));
    expect(amounts.length).toBeGreaterThan(4);
    for (const a of amounts) expect(a.bbox[2]).toBeGreaterThan(440);
    expect(amounts.filter((a) => Math.abs(a.bbox[2] - 545.28) < 0.5).length).toBeGreaterThan(3);
    expect(runs.every((r) => !r.hidden)).toBe(true);
    expect(page?.layout?.box).toEqual([0, 0, 595.28, 841.89]);
    // Paint order increases through the page.
    expect(runs.map((r) => r.order)).toEqual([...runs.map((r) => r.order)].sort((a, b) => a - b));
  });

  it("records filled boxes and marks text they cover, white text and invisible text", async () => {
    const overlay = await makeTextTamperedPdf(2, "white_box_overlay", { region: "GB" });
    const doc = await modelOf(overlay.bytes, { docType: "payslip" });
    const layout = doc.pdf?.pages[0]?.layout;
    const box = layout?.areas.find((a) => a.fill === "#ffffff");
    expect(box?.kind).toBe("fill");
    const hidden = layout?.runs.find((r) => r.text === overlay.original && r.hidden === "covered");
    expect(hidden?.coveredBy).toBe(box?.order);
    const shown = layout?.runs.find((r) => r.text === overlay.replacement);
    expect(shown?.hidden).toBeUndefined();
    expect(shown?.order).toBeGreaterThan(box?.order ?? Infinity);

    const white = await makeTextTamperedPdf(2, "white_text", { region: "US" });
    const wl = (await modelOf(white.bytes)).pdf?.pages[0]?.layout;
    expect(wl?.runs.find((r) => r.text === white.replacement)).toMatchObject({
      fill: "#ffffff",
      hidden: "same_colour_as_background",
    });

    const invisible = await makeTextTamperedPdf(2, "invisible_text", { region: "DE" });
    const il = (await modelOf(invisible.bytes)).pdf?.pages[0]?.layout;
    expect(il?.runs.find((r) => r.text === invisible.replacement)).toMatchObject({
      renderMode: 3,
      hidden: "render_mode_invisible",
    });

    const off = await makeTextTamperedPdf(2, "off_page_text", { region: "GB" });
    const ol = (await modelOf(off.bytes)).pdf?.pages[0]?.layout;
    expect(ol?.runs.find((r) => r.text === off.replacement)?.hidden).toBe("outside_page");
  });

  it("names the second font of a retyped amount", async () => {
    const t = await makeTextTamperedPdf(4, "amount_font_swap", { region: "US" });
    const runs = (await modelOf(t.bytes)).pdf?.pages.flatMap((p) => p.layout?.runs ?? []) ?? [];
    expect(runs.find((r) => r.text === t.replacement)?.font).toBe("Courier");
    expect(runs.filter((r) => r.font === "Helvetica").length).toBeGreaterThan(20);
  });

  it("follows text state, CTM, forms and TJ spacing in a synthetic operator list", () => {
    const fn = [
      OPS.save,
      OPS.transform,
      OPS.beginText,
      OPS.setFont,
      OPS.setHScale,
      OPS.setTextMatrix,
      OPS.showText,
      OPS.setLeading,
      OPS.nextLine,
      OPS.showText,
      OPS.endText,
      OPS.restore,
      OPS.setFillRGBColor,
      OPS.constructPath,
      OPS.paintFormXObjectBegin,
      OPS.beginText,
      OPS.setFont,
      OPS.showText,
      OPS.endText,
      OPS.paintFormXObjectEnd,
    ];
    const args = [
      null,
      [2, 0, 0, 2, 10, 20],
      null,
      ["f1", 10],
      [50],
      [1, 0, 0, 1, 5, 5],
      [[...glyphs("AB"), -2000, ...glyphs("C")]],
      [12],
      null,
      [glyphs("D")],
      null,
      null,
      ["#FFFFFF"],
      [OPS.fill, [null], [0, 0, 100, 50]],
      [
        [1, 0, 0, 1, 300, 300],
        [0, 0, 10, 10],
      ],
      null,
      ["f1", 8],
      [glyphs("E")],
      null,
      null,
    ];
    const layout = layoutFromOperatorList(
      fn,
      args,
      (id) => (id === "f1" ? helvetica : undefined),
      [0, 0, 612, 792],
    );
    const [ab, c, d, e] = layout.runs;
    // "AB": 2 glyphs × 500/1000 × 10 pt × 50 % scale = 5 units of text space, doubled by the CTM.
    expect(ab).toMatchObject({ text: "AB", x: 20, y: 30, size: 20, font: "Helvetica" });
    expect(ab?.bbox[2]).toBeCloseTo(30, 5);
    // The TJ gap of 2 em splits the run: "C" starts 5 + 10 text units later.
    expect(c?.text).toBe("C");
    expect(c?.x).toBeCloseTo(50, 5);
    expect(d).toMatchObject({ text: "D", y: 6 });
    expect(e).toMatchObject({ text: "E", x: 300, y: 300, size: 8 });
    expect(layout.areas).toEqual([
      { kind: "fill", bbox: [0, 0, 100, 50], fill: "#ffffff", alpha: 1, blended: false, order: 3 },
    ]);
    expect(e?.order).toBeGreaterThan(3);
  });

  it("text outside the clip path drawn around it is clipped, not hidden by its colour", () => {
    // A spreadsheet's header cell: white words on a coloured fill, the part of a word that overflows the cell
    // clipped at its edge ("Umsat" of "Umsatzsteuer" left of the cell, over the white page).
    const cell = (clipped: boolean) =>
      layoutFromOperatorList(
        [
          OPS.save,
          ...(clipped ? [OPS.eoClip, OPS.constructPath] : []),
          OPS.setFillRGBColor,
          OPS.beginText,
          OPS.setFont,
          OPS.setTextMatrix,
          OPS.showText,
          OPS.setTextMatrix,
          OPS.showText,
          OPS.endText,
          OPS.restore,
        ],
        [
          null,
          ...(clipped ? [null, [OPS.endPath, [null], [100, 100, 200, 120]]] : []),
          ["#FFFFFF"],
          null,
          ["f1", 10],
          [1, 0, 0, 1, 60, 105],
          [glyphs("Umsat")],
          [1, 0, 0, 1, 110, 105],
          [glyphs("zsteuer")],
        ],
        () => helvetica,
        [0, 0, 612, 792],
      ).runs;
    const open = cell(false);
    expect(open.map((r) => r.hidden)).toEqual(["same_colour_as_background", "same_colour_as_background"]);
    const [outside, inside] = cell(true);
    expect(outside).toMatchObject({ text: "Umsat", clippedOut: true });
    expect(outside?.hidden).toBeUndefined();
    // Inside the clip, white on the white page is still white on white.
    expect(inside).toMatchObject({ text: "zsteuer", hidden: "same_colour_as_background" });
    expect(inside?.clippedOut).toBeUndefined();
  });

  it("boxes a run by its inked glyphs: padding spaces and glyphs without text do not widen it", () => {
    const pad = { width: 500 };
    const layout = layoutFromOperatorList(
      [OPS.beginText, OPS.setFont, OPS.setTextMatrix, OPS.showText],
      [
        null,
        ["f1", 10],
        [1, 0, 0, 1, 100, 100],
        [[...glyphs("   "), pad, pad, ...glyphs("02"), pad, pad, pad]],
      ],
      () => helvetica,
      [0, 0, 612, 792],
    );
    const [run] = layout.runs;
    // Three spaces and two padding glyphs (5 × 5 pt) come before the text; the box starts at the "0".
    expect(run?.text).toBe("02");
    expect(run?.x).toBeCloseTo(125, 5);
    expect(run?.bbox[0]).toBeCloseTo(125, 5);
    expect(run?.bbox[2]).toBeCloseTo(135, 5);
  });

  it("caps runs, areas, operations and nesting on hostile pages", () => {
    const n = 5000;
    const fn: number[] = [];
    const args: unknown[] = [];
    for (let i = 0; i < n; i++) {
      fn.push(OPS.save, OPS.beginText, OPS.setFont, OPS.setTextMatrix, OPS.showText);
      args.push(null, null, ["f1", 10], [1, 0, 0, 1, i, i], [glyphs("x")]);
    }
    const capped = layoutFromOperatorList(fn, args, () => helvetica, [0, 0, 612, 792], {
      maxOps: 100_000,
      maxRuns: 1000,
      maxAreas: 10,
      maxStackDepth: 16,
    });
    expect(capped.runs).toHaveLength(1000);
    expect(capped.truncated).toMatch(/more than 1000 text runs/);
    const cut = layoutFromOperatorList(fn, args, () => helvetica, [0, 0, 612, 792], {
      maxOps: 50,
      maxRuns: 1000,
      maxAreas: 10,
      maxStackDepth: 16,
    });
    expect(cut.runs).toHaveLength(10);
    expect(cut.truncated).toMatch(/more than 50 drawing operations/);
  });

  it("ignores operands of the wrong type instead of throwing", () => {
    const fn = [
      OPS.setFont,
      OPS.transform,
      OPS.setTextMatrix,
      OPS.showText,
      OPS.constructPath,
      OPS.setGState,
      OPS.showText,
    ];
    const args = [
      [42, "x"],
      ["a", "b"],
      [null],
      ["not glyphs"],
      [OPS.fill, null, [1, 2]],
      [[["ca", "x"], "junk"]],
      [[null, 5, { unicode: 7 }]],
    ];
    const layout = layoutFromOperatorList(fn, args, () => undefined, [0, 0, 100, 100]);
    expect(layout.areas).toEqual([]);
    expect(layout.runs).toEqual([]);
  });

  it("reads hostile PDFs within its caps and keeps the text", async () => {
    for (const kind of HOSTILE_TEXT_KINDS) {
      const doc = await modelOf(await makeHostileTextPdf(kind), { docType: "other" });
      const page = doc.pdf?.pages[0];
      expect(page, kind).toBeDefined();
      const layout = page?.layout;
      if (kind === "many_runs") {
        expect(layout?.runs.length).toBe(20_000);
        expect(layout?.truncated).toMatch(/text runs/);
        expect(doc.warnings.join(" ")).toMatch(/page 1 layout incomplete/);
      }
      if (kind === "many_areas") expect(layout?.areas.length).toBe(20_000);
      if (kind === "deep_nesting") expect(layout?.runs.map((r) => r.text)).toContain("Balance 1,234.56");
      if (kind === "garbage_ops") {
        expect(layout?.runs.map((r) => r.text)).toEqual(
          expect.arrayContaining(["Invoice total 10.00", "Subtotal 10.00"]),
        );
        expect(layout?.runs.find((r) => r.text === "render mode 7")?.hidden).toBe("render_mode_invisible");
      }
      for (const r of layout?.runs ?? []) expect(r.bbox.every(Number.isFinite), kind).toBe(true);
    }
  }, 120_000);
});

describe("lines and cells", () => {
  it("groups runs on a baseline into cells split at wide gaps", async () => {
    const doc = await modelOf(await makeDocument({ seed: 5, docType: "invoice", region: "GB" }));
    const lines = layoutLines(1, doc.pdf?.pages[0]?.layout?.runs ?? []);
    const header = lines.find((l) => l.cells[0]?.text === "Description");
    expect(header?.cells.map((c) => c.text)).toEqual(["Description", "Qty", "Unit price", "Amount"]);
    expect(header?.cells.every((c) => c.fonts[0] === "Helvetica-Bold")).toBe(true);
    const total = lines.find((l) => l.cells[0]?.text === "Total due");
    expect(total?.cells).toHaveLength(2);
    expect(lines.map((l) => l.index)).toEqual(lines.map((_, i) => i));
  });

  it("splits plain text lines into cells at runs of spaces", () => {
    const lines = textLines(2, "Date  Description   Amount\n\n14/03/2025  TESCO  £12.50\n");
    expect(lines).toHaveLength(2);
    expect(lines[1]?.cells.map((c) => c.text)).toEqual(["14/03/2025", "TESCO", "£12.50"]);
    expect(lines[1]?.page).toBe(2);
  });
});
