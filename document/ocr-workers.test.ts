import { PDFDocument, StandardFonts } from "pdf-lib";
import pino from "pino";
import sharp from "sharp";
import { afterAll, describe, expect, it } from "vitest";
import { makeImageOnlyPdf } from "../fixtures/scans.js";
import { buildDocumentModel } from "./pdf-model.js";
import { applyOcr, createOcrEngine, createReusableOcrEngine, type OcrEngine } from "./ocr.js";
import { ocrForStep } from "./ocr-pass.js";
import { pixelsOf, releasePixels } from "./pixels.js";

/** OCR bound for these tests: a loaded machine may take minutes, and the bound is not what they test. */
const OCR_MS = 600_000;
const WORDS = ["ALPHA 1111", "BRAVO 2222", "CHARLIE 3333"];

const started: OcrEngine[] = [];
afterAll(async () => {
  await Promise.all(started.map((e) => e.terminate()));
});

/** A PDF of three pages, one large line each, turned into an image-only PDF (a scan of it). */
async function threePageScan(): Promise<Uint8Array> {
  const pdf = await PDFDocument.create();
  const font = await pdf.embedFont(StandardFonts.Helvetica);
  for (const line of WORDS) {
    const page = pdf.addPage([420, 200]);
    page.drawText(line, { x: 30, y: 90, size: 30, font });
  }
  return makeImageOnlyPdf(await pdf.save(), { scale: 2 });
}

/** The three-page scan as a document model, declared "other", from the given region. */
async function threePageScanDocument(region: string) {
  return buildDocumentModel({
    bytes: await threePageScan(),
    contentType: "application/pdf",
    filename: "three.pdf",
    declaredDocType: "other",
    region,
  });
}

/** A real engine whose passes are counted. */
function counted(inner: OcrEngine, seen: number[]): OcrEngine {
  return {
    async recognize(png, opts) {
      const r = await inner.recognize(png, opts);
      seen.push(1);
      return r;
    },
    terminate: () => inner.terminate(),
  };
}

describe("OCR workers", () => {
  it("shares the image-only pages of a PDF between two engines and fills them in in page order", async () => {
    const doc = await threePageScanDocument("GB");
    const a = createReusableOcrEngine();
    const b = createReusableOcrEngine();
    started.push(a, b);
    const byA: number[] = [];
    const byB: number[] = [];
    const first = counted(a, byA);
    const second = counted(b, byB);
    const pass = await applyOcr(doc, async () => first, {
      timeoutMs: OCR_MS,
      moreEngines: [async () => second],
    });
    await releasePixels(doc);
    expect(pass.problems).toEqual([]);
    expect(pass.pages).toEqual([1, 2, 3]);
    // Both engines read: the second took page 2 while the first read page 1.
    expect(byA.length).toBeGreaterThan(0);
    expect(byB.length).toBeGreaterThan(0);
    expect(byA.length + byB.length).toBe(3);
    const texts = doc.pdf!.pages.map((p) => p.text);
    WORDS.forEach((w, i) => {
      expect(texts[i]).toContain(w.split(" ")[0]);
      expect(texts[i]).toContain(w.split(" ")[1]);
    });
  }, 900_000);

  it("the check step's OCR pass starts two engines of its own for a multi-page scan and stops both", async () => {
    const doc = await threePageScanDocument("GB");
    const engines: OcrEngine[] = [];
    const session = await ocrForStep(doc, {
      timeoutMs: OCR_MS,
      log: pino({ level: "silent" }),
      startEngine: async () => {
        const e = await createOcrEngine();
        engines.push(e);
        started.push(e);
        return e;
      },
    });
    try {
      expect(engines.length).toBe(2);
      expect(session.pages).toEqual([1, 2, 3]);
      expect(doc.pdf!.pages.map((p) => p.ocrReading?.words)).toEqual([2, 2, 2]);
      expect(doc.pdf!.pages[2]!.text).toContain("CHARLIE");
    } finally {
      await session.close();
      await releasePixels(doc);
    }
    // Both stopped: the second right after the page pass, the first at close().
    for (const e of engines) await expect(e.recognize(Buffer.alloc(0))).rejects.toThrow(/stopped/);
  }, 900_000);

  it("starts the engines the pages need, with the region's languages, before any page is decoded", async () => {
    const doc = await threePageScanDocument("DE");
    const events: string[] = [];
    const px = pixelsOf(doc);
    const page = px.page.bind(px);
    px.page = (n, req, signal) => {
      events.push("page decoded");
      return page(n, req, signal);
    };
    // Engines that read nothing (the order of events is what is tested, not the reading).
    const session = await ocrForStep(doc, {
      timeoutMs: OCR_MS,
      log: pino({ level: "silent" }),
      startEngine: async (languages) => {
        events.push(`engine starts (${languages.join("+")})`);
        return { recognize: async () => ({ text: "", confidence: 0, words: [] }), terminate: async () => {} };
      },
    });
    await session.close();
    await releasePixels(doc);
    expect(events.slice(0, 2)).toEqual(["engine starts (deu)", "engine starts (deu)"]);
    expect(events.filter((e) => e.startsWith("engine"))).toHaveLength(2);
    expect(events).toContain("page decoded");
  }, 300_000);

  it("calls onSent once the picture is handed to the worker, before the reading comes back", async () => {
    const svg = `<svg xmlns="http://www.w3.org/2000/svg" width="600" height="120"><rect width="100%" height="100%" fill="white"/><text x="20" y="80" font-family="sans-serif" font-size="48">Total 42.00</text></svg>`;
    const png = await sharp(Buffer.from(svg)).png().toBuffer();
    const engine = await createOcrEngine();
    started.push(engine);
    const events: string[] = [];
    const reading = engine
      .recognize(png, { mode: "block", onSent: () => events.push("sent") })
      .then((r) => events.push(`read ${r.text.trim()}`));
    await reading;
    expect(events).toEqual(["sent", "read Total 42.00"]);
  }, 300_000);

  it("reads white text on a dark band with the default engine (tessedit_do_invert kept on)", async () => {
    const svg = `<svg xmlns="http://www.w3.org/2000/svg" width="900" height="200"><rect width="100%" height="100%" fill="black"/><text x="30" y="120" font-family="sans-serif" font-size="48" fill="white">Invoice 4711 total 99.50</text></svg>`;
    const png = await sharp(Buffer.from(svg)).png().toBuffer();
    const on = await createOcrEngine();
    started.push(on);
    expect((await on.recognize(png, { mode: "block" })).text).toContain("4711");
    // And the option reaches tesseract: with inversion off the same band is not read.
    const off = await createOcrEngine(["eng"], { invert: false });
    started.push(off);
    expect((await off.recognize(png, { mode: "block" })).text).not.toContain("4711");
  }, 300_000);
});
