/**
 * The pixel checks read an image-only PDF page after the check step's OCR has given it text: a page whose
 * text the OCR read is still a picture (document/pdf-images.ts imageOnlyPages); a page with its own text
 * layer is not one.
 */
import { PDFDocument } from "pdf-lib";
import { describe, expect, it } from "vitest";
import { jpegOf, kitPage } from "./testdata/capture-kit.js";
import { modelOf } from "../document/testdata/model-kit.js";
import { pagePixels } from "../document/pixels/page-pixels.js";

async function scannedPdf(): Promise<Uint8Array> {
  const k = kitPage({ seed: 5, width: 600, height: 400 });
  const doc = await PDFDocument.create();
  const img = await doc.embedJpg(await jpegOf(k.img, 85));
  doc.addPage([595, 397]).drawImage(img, { x: 0, y: 0, width: 595, height: 397 });
  return doc.save();
}

const TEXT = "Opening balance 1,234.56 Salary payment 2,345.67 Rent 789.00 Closing balance 2,791.23";

describe("pagePixels on an image-only PDF page", () => {
  it("reads the page before and after the OCR gave it text, not once the page has a text layer of its own", async () => {
    const bytes = await scannedPdf();
    const before = await modelOf(bytes, { filename: "scan.pdf" });
    expect((await pagePixels(before)).pages.map((p) => p.page)).toEqual([1]);

    const read = await modelOf(bytes, { filename: "scan.pdf" });
    read.pdf!.pages[0]!.text = TEXT;
    read.pdf!.pages[0]!.ocr = true;
    expect((await pagePixels(read)).pages.map((p) => p.page)).toEqual([1]);

    const layered = await modelOf(bytes, { filename: "scan.pdf" });
    layered.pdf!.pages[0]!.text = TEXT;
    expect((await pagePixels(layered)).pages).toEqual([]);
  });
});
