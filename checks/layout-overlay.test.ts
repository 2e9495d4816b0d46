import { describe, expect, it } from "vitest";
import { makePng } from "../fixtures/documents.js";
import { HOSTILE_TEXT_KINDS, makeHostileTextPdf } from "../fixtures/hostile-text.js";
import { layoutOverlayCheck } from "./layout-overlay.js";
import { genuineResults, runOn, tamperedResult } from "./testdata/text-check-kit.js";

const check = layoutOverlayCheck;

describe("layout.overlay", () => {
  it("passes genuine documents of every type and region", async () => {
    for (const { name, result } of await genuineResults(check, [11, 12])) {
      expect(result.outcome, name).toBe("pass");
      expect(result.findings, name).toEqual([]);
    }
  }, 120_000);

  it("finds a value hidden under a white box with a new value on top", async () => {
    for (const region of ["US", "GB", "DE"] as const) {
      const { t, result } = await tamperedResult(check, 5, "white_box_overlay", region);
      const f = result.findings.find((x) => x.code === "text_covered_and_replaced");
      expect(f, region).toBeDefined();
      expect(f?.severity).toBe(9);
      expect(f?.page).toBe(t.page);
      expect(f?.evidence).toMatchObject({ hidden: [t.original], shown: [t.replacement] });
      expect(f?.message).toContain(t.original);
      expect(f?.message).toContain(t.replacement);
      expect(f?.bbox).toHaveLength(4);
      expect(result.outcome).toBe("flag");
      expect(result.severity).toBeGreaterThanOrEqual(9);
    }
  });

  it("finds one value printed over another", async () => {
    const { t, result } = await tamperedResult(check, 6, "text_over_text", "GB");
    const f = result.findings.find((x) => x.code === "text_over_text");
    expect(f?.evidence).toMatchObject({ under: t.original, over: t.replacement });
    expect(f?.severity).toBe(8);
  });

  it("finds invisible, white-on-white and off-page text", async () => {
    const cases = [
      ["invisible_text", "invisible_text"],
      ["white_text", "text_same_colour_as_background"],
      ["off_page_text", "text_outside_page"],
    ] as const;
    for (const [kind, code] of cases) {
      const { t, result } = await tamperedResult(check, 7, kind, "DE");
      expect(result.outcome, kind).toBe("flag");
      const f = result.findings.find((x) => x.code === code);
      expect(f?.evidence?.texts, kind).toEqual([t.replacement]);
      expect(f?.page).toBe(1);
    }
  });

  it("does not mistake what producers draw for hidden or overwritten values", async () => {
    const { PDFDocument, StandardFonts, rgb } = await import("pdf-lib");
    const doc = await PDFDocument.create();
    const font = await doc.embedFont(StandardFonts.Helvetica);
    for (let p = 1; p <= 2; p++) {
      const page = doc.addPage([595, 842]);
      // Table rows so tight that their text boxes touch.
      for (const [i, t] of ["07/13/2015  Closure", "07/21/2015  Layoff", "08/02/2015  Closure"].entries())
        page.drawText(t, { x: 50, y: 700 - 9 * i, size: 10, font });
      // A white halo drawn under the same label (chart labels), then the label itself.
      page.drawText("1:00:00", { x: 300, y: 500, size: 10, font, color: rgb(1, 1, 1) });
      page.drawText("1:00:00", { x: 300, y: 500, size: 10, font, color: rgb(0.2, 0.2, 0.2) });
      // A production slug hidden at the same place on every page.
      page.drawText(`Jkt 250001 PO 00000 Frm 0000${p}`, { x: 20, y: 10, size: 6, font, color: rgb(1, 1, 1) });
    }
    const r = await runOn(check, await doc.save(), { docType: "other" });
    expect(r.findings.filter((f) => (f.severity ?? 0) >= 2)).toEqual([]);
    expect(r.findings.map((f) => [f.code, f.severity])).toEqual([
      ["text_same_colour_as_background", 1],
      ["text_same_colour_as_background", 1],
    ]);
  });

  it("finds a value hidden in the background colour with another printed in its place", async () => {
    const { PDFDocument, StandardFonts, rgb } = await import("pdf-lib");
    const doc = await PDFDocument.create();
    const font = await doc.embedFont(StandardFonts.Helvetica);
    const page = doc.addPage([595, 842]);
    page.drawText("Total due", { x: 50, y: 400, size: 10, font });
    page.drawText("1,250.00", { x: 400, y: 400, size: 10, font, color: rgb(1, 1, 1) });
    page.drawText("4,250.00", { x: 400, y: 400, size: 10, font });
    const r = await runOn(check, await doc.save(), { docType: "invoice" });
    const f = r.findings.find((x) => x.code === "text_same_colour_as_background");
    expect(f?.severity).toBe(8);
    expect(f?.evidence).toMatchObject({ texts: ["1,250.00"], shownInstead: ["4,250.00"] });
  });

  it("skips images and stays bounded on hostile pages", async () => {
    const image = await runOn(check, makePng(1), {});
    expect(image.outcome).toBe("skip");
    for (const kind of HOSTILE_TEXT_KINDS) {
      const r = await runOn(check, await makeHostileTextPdf(kind), { docType: "other" });
      expect(["pass", "flag", "skip"], kind).toContain(r.outcome);
      expect(r.summary.length, kind).toBeGreaterThan(20);
      if (kind === "many_runs") expect(r.summary).toMatch(/read only in part/);
      if (kind === "garbage_ops") expect(r.findings.map((f) => f.code)).toContain("invisible_text");
    }
  }, 120_000);
});
