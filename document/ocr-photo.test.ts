/**
 * OCR of a phone photo of a page: the photo's light falls off towards one side, and one threshold for
 * the whole picture (tesseract's Otsu) lost the words of its darker part, half of a payslip's amounts
 * among them, so the pixel checks had few amounts to look at. Checked on the pixels: every amount printed
 * on the page is read, and the box the OCR gives it on the photo covers that amount's ink; and each of its
 * digits carries its own box, on that digit.
 */
import pino from "pino";
import { describe, expect, it } from "vitest";
import { CAPTURE_PARAMS } from "../fixtures/captures/set.js";
import { capturePage, decodeRgb } from "../fixtures/captures/simulate.js";
import { valuesOnCapture } from "../fixtures/captures/values.js";
import { makeDocument } from "../fixtures/documents.js";
import { ocrForStep } from "./ocr-pass.js";
import { modelOf } from "./testdata/model-kit.js";

const digits = (s: string) => s.replace(/\D/g, "");

/** The development captures' camera photo of a payslip (dev-006), read once for the tests below. */
let photo:
  | Promise<{
      cap: Awaited<ReturnType<typeof capturePage>>;
      printed: Awaited<ReturnType<typeof valuesOnCapture>>;
      doc: Awaited<ReturnType<typeof modelOf>>;
    }>
  | undefined;
const readPhoto = () =>
  (photo ??= (async () => {
    // Light falling off by ~40 % corner to corner.
    const pdf = await makeDocument({ seed: 2106, docType: "payslip", region: "US" });
    const cap = await capturePage(pdf, "camera_photo", CAPTURE_PARAMS.dev, 2106 ^ 0x51);
    const printed = await valuesOnCapture(pdf, cap);
    const doc = await modelOf(new Uint8Array(cap.bytes), {
      filename: "photo.jpg",
      docType: "payslip",
      region: "US",
    });
    const session = await ocrForStep(doc, { timeoutMs: 120_000, workers: 1, log: pino({ level: "silent" }) });
    await session.close();
    return { cap, printed, doc };
  })());

describe("OCR of a photographed page", () => {
  it("reads the amounts of a payslip photographed under uneven light, each boxed on its ink", async () => {
    const { cap, printed, doc } = await readPhoto();
    expect(printed.length).toBeGreaterThanOrEqual(10);
    const page = doc.imagePages?.[0];
    expect(page?.ocrReading?.perspective).toBe(true);
    const runs = page?.layout?.runs ?? [];
    const img = await decodeRgb(cap.bytes);
    const inkIn = (b: readonly number[]) => {
      let dark = 0;
      for (let y = Math.max(0, Math.floor(b[1]!)); y < Math.min(img.height, Math.ceil(b[3]!)); y++)
        for (let x = Math.max(0, Math.floor(b[0]!)); x < Math.min(img.width, Math.ceil(b[2]!)); x++)
          if (img.data[(y * img.width + x) * 3 + 1]! < 110) dark++;
      return dark;
    };
    const missed: string[] = [];
    for (const v of printed) {
      const [vx0, vy0, vx1, vy1] = v.box;
      const cx = (vx0 + vx1) / 2;
      const cy = (vy0 + vy1) / 2;
      // The run the OCR read there, in the photo's pixels (an image document's page units).
      const run = runs.find((r) => {
        const [x0, y0, x1, y1] = r.bbox;
        return cx >= x0 && cx <= x1 && cy >= y0 && cy <= y1 && digits(r.text).includes(digits(v.text));
      });
      if (!run) {
        missed.push(v.text);
        continue;
      }
      // Its box lies on the amount (not a line above or below, not shifted along it) and holds its ink.
      const [x0, y0, x1, y1] = run.bbox;
      const overlapY = Math.min(y1, vy1) - Math.max(y0, vy0);
      expect(overlapY, v.text).toBeGreaterThan(0.6 * (vy1 - vy0));
      expect(Math.abs((x0 + x1) / 2 - cx), v.text).toBeLessThan(0.3 * (vx1 - vx0));
      expect(inkIn(run.bbox), v.text).toBeGreaterThan(0.5 * inkIn(v.box));
    }
    expect(missed, `amounts not read: ${missed.join(" ")}`).toEqual([]);
  }, 300_000);

  it("keeps each character's box, mapped back onto the photo: an amount's digits each on their own printed digit", async () => {
    // The pixel checks compare a digit with the same digit elsewhere on the page; they need to know which
    // ink is which character, not only where the word is (tesseract's symbols, kept on the run as `chars`).
    const { printed, doc } = await readPhoto();
    const runs = doc.imagePages?.[0]?.layout?.runs ?? [];
    let checked = 0;
    for (const v of printed) {
      const [vx0, vy0, vx1, vy1] = v.box;
      const run = runs.find((r) => {
        const [x0, y0, x1, y1] = r.bbox;
        const cx = (vx0 + vx1) / 2;
        const cy = (vy0 + vy1) / 2;
        return cx >= x0 && cx <= x1 && cy >= y0 && cy <= y1 && digits(r.text) === digits(v.text);
      });
      if (!run) continue;
      expect(run.chars?.map((c) => c.text).join(""), v.text).toBe(run.text);
      const runDigits = (run.chars ?? []).filter((c) => /\d/.test(c.text));
      const printedDigits = [...v.text].flatMap((c, i) => (/\d/.test(c) ? [v.chars[i]!] : []));
      expect(runDigits.length, v.text).toBe(printedDigits.length);
      runDigits.forEach((c, i) => {
        const [px0, py0, px1, py1] = printedDigits[i]!;
        const cx = (c.bbox[0] + c.bbox[2]) / 2;
        const cy = (c.bbox[1] + c.bbox[3]) / 2;
        const w = px1 - px0;
        // The centre of the OCR's box for the k-th digit lies on the k-th printed digit (not its neighbour).
        expect(cx, `${v.text} digit ${i}`).toBeGreaterThan(px0 - 0.35 * w);
        expect(cx, `${v.text} digit ${i}`).toBeLessThan(px1 + 0.35 * w);
        expect(cy, `${v.text} digit ${i}`).toBeGreaterThan(py0 - 0.5 * (py1 - py0));
        expect(cy, `${v.text} digit ${i}`).toBeLessThan(py1 + 0.5 * (py1 - py0));
        expect(c.confidence).toBeGreaterThanOrEqual(0);
        expect(c.confidence).toBeLessThanOrEqual(100);
      });
      checked++;
    }
    expect(checked).toBeGreaterThanOrEqual(10);
  }, 300_000);
});
