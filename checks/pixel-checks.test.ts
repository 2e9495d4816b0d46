/**
 * The pixel checks on a printed-and-scanned page made in code (checks/testdata/capture-kit.ts), tampered
 * the way forgers do it (fixtures/captures/tamper.ts): each method finds the edit where it was made, and
 * none speaks on the untouched capture, nor on the same capture re-saved innocently.
 */
import { describe, expect, it } from "vitest";
import { CheckResult } from "../core/check-result.js";
import { decodeRgb } from "../fixtures/captures/simulate.js";
import type { DocumentModel } from "../document/model.js";
import type { TextRun } from "../document/page-layout.js";
import { copyMove, digitReplace, type ValueOnCapture, whiteBox } from "../fixtures/captures/tamper.js";
import { makeDocument } from "../fixtures/documents.js";
import { genuinePhoto } from "../fixtures/tamper-image.js";
import { pixelsAmountsCheck } from "./pixels-amounts/pixels-amounts.js";
import { PIXEL_CHECKS } from "./registry.js";
import { imageModel, jpegOf, kitPage, touches } from "./testdata/capture-kit.js";

async function run(bytes: Uint8Array) {
  const doc = imageModel(bytes);
  const out: CheckResult[] = [];
  for (const c of PIXEL_CHECKS)
    if (c.appliesTo(doc)) out.push(CheckResult.parse(await c.run(doc, { now: new Date() })));
  return out;
}

const onBox = (results: CheckResult[], box: number[]) =>
  results.flatMap((r) =>
    r.findings
      .filter((f) => (f.severity ?? 0) > 0 && touches(f.evidence?.pixelBox as number[], box))
      .map((f) => `${r.checkId}:${f.code}`),
  );
const flagged = (results: CheckResult[]) =>
  results.flatMap((r) => r.findings.filter((f) => (f.severity ?? 0) > 0));

describe.each([11, 12])("a scanned page (seed %i)", (seed) => {
  it("untouched, and re-saved without an edit: no pixel check speaks", async () => {
    const k = kitPage({ seed });
    const scan = await jpegOf(k.img, 80, { density: 200 });
    expect(flagged(await run(scan))).toEqual([]);
    const resaved = await jpegOf(await decodeRgb(scan), 93);
    expect(flagged(await run(resaved))).toEqual([]);
  });

  it("saved at 70 and re-saved at 95 without an edit (the last save's steps are 1): no pixel check speaks", async () => {
    const k = kitPage({ seed });
    const scan = await decodeRgb(await jpegOf(k.img, 70, { density: 200 }));
    expect(flagged(await run(await jpegOf(scan, 95)))).toEqual([]);
  });

  it("a white box with a new value typed on it: found on the box by two methods, with page, bbox and capture class", async () => {
    const k = kitPage({ seed });
    const scan = await decodeRgb(await jpegOf(k.img, 80, { density: 200 }));
    const t = whiteBox(scan, k.values.at(-1)!, seed, "dev", "9,999.99");
    const results = await run(await jpegOf(t.img, 92));
    const hits = onBox(results, t.box);
    expect(new Set(hits.map((h) => h.split(":")[0])).size, hits.join(", ")).toBeGreaterThanOrEqual(2);
    const f = results
      .flatMap((r) => r.findings)
      .find((x) => x.evidence?.pixelBox && touches(x.evidence.pixelBox as number[], t.box))!;
    expect(f.page).toBe(1);
    expect(f.bbox).toEqual(f.evidence?.pixelBox);
    expect(f.severity).toBeLessThanOrEqual(4);
    expect(f.evidence).toMatchObject({ kind: "pixels", capture: "flatbed_scan" });
    expect(results.find((r) => r.checkId === "image.capture")?.discovered).toEqual(["capture_flatbed_scan"]);
  });

  it("a digit copied from another amount: the copy and its source are named identical", async () => {
    const k = kitPage({ seed });
    const scan = await decodeRgb(await jpegOf(k.img, 80, { density: 200 }));
    const t = copyMove(scan, k.values[2]!, k.values, seed);
    const results = await run(await jpegOf(t.img, 92));
    expect(onBox(results, t.box)).toContain("pixels.glyphs:glyph_identical");
    const identical = results.flatMap((r) => r.findings).filter((f) => f.code === "glyph_identical");
    expect(identical.length).toBe(2);
  });

  it("a value painted over after the scan was saved: its word lacks the first save's traces, and only it", async () => {
    const k = kitPage({ seed });
    const scan = await decodeRgb(await jpegOf(k.img, 70, { density: 200 }));
    const t = whiteBox(scan, k.values[3]!, seed, "dev", "8,888.88");
    const results = await run(await jpegOf(t.img, 95));
    expect(onBox(results, t.box)).toContain("pixels.compression:double_compression_absent");
    for (const f of flagged(results))
      expect(touches(f.evidence?.pixelBox as number[], t.box), f.message).toBe(true);
  });
});

describe("a digit retyped after the scan was saved (seed 12)", () => {
  it("is found by the compression history of its word", async () => {
    const k = kitPage({ seed: 12 });
    const scan = await decodeRgb(await jpegOf(k.img, 70, { density: 200 }));
    const t = digitReplace(scan, k.values[3]!, 12, "dev");
    const results = await run(await jpegOf(t.img, 95));
    expect(onBox(results, t.box)).toContain("pixels.compression:double_compression_absent");
  });
});

/** The image document as the check step has it after OCR: every amount a word the OCR read, with its box. */
function withOcrAmounts(
  bytes: Uint8Array,
  values: readonly ValueOnCapture[],
  width: number,
  height: number,
): DocumentModel {
  const runs: TextRun[] = values.map((v, i) => ({
    text: v.text,
    bbox: [v.box[0] - 2, v.box[1] - 2, v.box[2] + 2, v.box[3] + 2],
    x: v.box[0],
    y: v.box[3],
    size: v.capHeight,
    font: "",
    fontEmbedded: false,
    renderMode: 0,
    fill: null,
    alpha: 1,
    upright: true,
    order: i,
    confidence: 95,
  }));
  return {
    ...imageModel(bytes),
    imagePages: [
      {
        number: 1,
        text: values.map((v) => v.text).join("\n"),
        width,
        height,
        ocr: true,
        layout: { box: [0, 0, width, height], units: "px", runs, areas: [] },
      },
    ],
  };
}

async function amountsOf(doc: DocumentModel) {
  return CheckResult.parse(await pixelsAmountsCheck.run(doc, { now: new Date() }));
}

describe.each([11, 12])("pixels.amounts: the amounts the OCR read, one by one (seed %i)", (seed) => {
  it("untouched, and re-saved without an edit: no amount stands out", async () => {
    const k = kitPage({ seed });
    const scan = await jpegOf(k.img, 80, { density: 200 });
    const r = await amountsOf(withOcrAmounts(scan, k.values, k.img.width, k.img.height));
    expect(r.outcome).toBe("pass");
    const resaved = await jpegOf(await decodeRgb(scan), 93);
    expect((await amountsOf(withOcrAmounts(resaved, k.values, k.img.width, k.img.height))).outcome).toBe(
      "pass",
    );
  });

  it("an amount typed over a box painted on the scan: that amount, and only it, is named", async () => {
    const k = kitPage({ seed });
    const scan = await decodeRgb(await jpegOf(k.img, 80, { density: 200 }));
    const v = k.values[4]!;
    const t = whiteBox(scan, v, seed, "dev", "9,999.99");
    const values = k.values.map((x) => (x === v ? { ...x, text: "9,999.99" } : x));
    const r = await amountsOf(withOcrAmounts(await jpegOf(t.img, 92), values, k.img.width, k.img.height));
    const hits = r.findings.filter((f) => (f.severity ?? 0) >= 3);
    expect(hits.length, r.summary).toBeGreaterThanOrEqual(1);
    for (const f of hits) {
      expect(f.code).toBe("amount_look_differs");
      expect(touches(f.evidence?.pixelBox as number[], t.box), f.message).toBe(true);
      expect(f.severity).toBeLessThanOrEqual(4);
      expect(f.page).toBe(1);
    }
  });

  it("a digit copied from another amount: the copy's amount is named copied, the untouched scan none", async () => {
    const k = kitPage({ seed });
    const scan = await decodeRgb(await jpegOf(k.img, 80, { density: 200 }));
    const v = k.values[2]!;
    const t = copyMove(scan, v, k.values, seed);
    const values = k.values.map((x) => (x === v ? { ...x, text: t.after } : x));
    const r = await amountsOf(withOcrAmounts(await jpegOf(t.img, 92), values, k.img.width, k.img.height));
    const copied = r.findings.filter((f) => f.code === "amount_glyph_copied");
    expect(
      copied.some((f) => touches(f.evidence?.glyphBox as number[], t.box)),
      r.summary,
    ).toBe(true);
    const clean = await amountsOf(
      withOcrAmounts(await jpegOf(scan, 92), k.values, k.img.width, k.img.height),
    );
    expect(clean.findings.filter((f) => f.code === "amount_glyph_copied")).toEqual([]);
  });

  it("without the OCR's words there is nothing to compare: skipped", async () => {
    const k = kitPage({ seed });
    const r = await amountsOf(imageModel(await jpegOf(k.img, 80, { density: 200 })));
    expect(r.outcome).toBe("skip");
  });
});

describe("a document exported straight to JPEG, with a phone's EXIF (the synthetic corpus's genuine photo)", () => {
  it("repeats its glyphs exactly on the JPEG grid, and pixels.glyphs does not take them for copies", async () => {
    // seed 9001's genuine US bank statement photo: glyph_identical ×6 before the rendered-page rule.
    const seed = 75468080;
    const pdf = await makeDocument({ seed, docType: "bank_statement", region: "US" });
    const photo = new Uint8Array(await genuinePhoto(pdf, seed));
    const results = await run(photo);
    const glyphs = results.find((r) => r.checkId === "pixels.glyphs");
    expect(glyphs?.outcome).not.toBe("skip");
    expect(results.flatMap((r) => r.findings).filter((f) => f.code === "glyph_identical")).toEqual([]);
  }, 120_000);
});
