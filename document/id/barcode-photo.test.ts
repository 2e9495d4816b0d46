import { describe, expect, it } from "vitest";
import type { CaptureParams } from "../../fixtures/ids/capture.js";
import { genuineRendering, makeSpecimen } from "../../fixtures/ids/specimen.js";
import { dominantEdgeAngle, type GreyImage, type Point, unsharp } from "./geometry.js";
import { readIdentity } from "./read.js";
import { symbolQuad } from "./symbol-quad.js";
import { capturedIdDocument, devIdFixture, ID_NOW } from "./testdata/id-documents.js";

/**
 * A licence's PDF417 photographed at a slant (read.ts harderPdf417): ZXing reads a PDF417 only within about two
 * degrees of level, so a photo turned by 7° with perspective, whose text angle is missing or off, was read only
 * by turning the page level by a sweep of angles.
 */

/** The PDF417 read on a licence document, if any. */
async function pdf417Of(doc: Parameters<typeof readIdentity>[0]) {
  const reading = await readIdentity(doc, { now: ID_NOW });
  return reading.pages.flatMap((p) => p.barcodes).find((b) => b.format === "PDF417");
}

describe("a licence photographed at a slant", () => {
  it("its PDF417 is found and decoded exactly", async () => {
    const seed = 24005;
    const rendering = genuineRendering({ ...makeSpecimen(seed, "dl"), layout: 0 });
    const params: CaptureParams = {
      kind: "photo",
      rotationDeg: -7,
      perspective: 0.05,
      blurSigma: 0.8,
      noise: 5,
      light: 0.2,
      jpegQuality: 82,
      outputSide: 1800,
    };
    const doc = await capturedIdDocument(rendering, seed, params, seed, "US", "licence.jpg");
    expect((await pdf417Of(doc))?.text).toBe(rendering.barcode);
  }, 180_000);

  it("a PDF417 with perspective that decodes only within a degree of level is found by the odd angles", async () => {
    // A development licence photo (eval:ids --draw 1, ids-dev-d1-dl-34003-photo): nothing at the even angles.
    const seed = 34003;
    const rendering = genuineRendering({ ...makeSpecimen(seed, "dl"), layout: 1 });
    const params: CaptureParams = {
      kind: "photo",
      rotationDeg: -0.7644093730486929,
      perspective: 0.061003353300038726,
      blurSigma: 0.7184108870336786,
      noise: 3.5306886741891503,
      light: 0.10682796607725323,
      jpegQuality: 76,
      outputSide: 1696,
    };
    const doc = await capturedIdDocument(rendering, seed, params, 976420526, "US", "licence.jpg");
    expect((await pdf417Of(doc))?.text).toBe(rendering.barcode);
  }, 180_000);

  it("a small PDF417 that no angle decodes at 1100 pixels is found at full resolution", async () => {
    // A development licence photo (eval:ids --draw 1 --genuine 12, ids-dev-d1-dl-34005-photo).
    const { fixture, doc } = await devIdFixture("ids-dev-d1-dl-34005-photo", "US", {
      draw: 1,
      genuinePerKind: 12,
      tamperedPerKind: 8,
    });
    expect((await pdf417Of(doc))?.text).toBe(fixture.truth().barcode);
  }, 180_000);

  it("a blurred PDF417 that no angle decodes as photographed is found sharpened", async () => {
    // A development licence photo (eval:ids --draw 9 --tampered 12, ids-dev-d9-dl-114001-photo): modules two
    // pixels wide, blurred; nothing at any angle or resolution before the unsharp mask.
    const { fixture, doc } = await devIdFixture("ids-dev-d9-dl-114001-photo-barcode_print_mismatch", "US", {
      draw: 9,
      tamperedPerKind: 12,
    });
    expect((await pdf417Of(doc))?.text).toBe(fixture.truth().barcode);
  }, 180_000);

  it("a PDF417 misread as bytes that are no AAMVA record is searched for harder and read exactly", async () => {
    // A development licence photo (eval:ids --draw 7, ids-dev-d7-dl-94001-photo-barcode_print_mismatch), the
    // card in perspective: the first search returned a PDF417 of garbage bytes, and the harder one never ran.
    const { fixture, doc } = await devIdFixture("ids-dev-d7-dl-94001-photo-barcode_print_mismatch", "US", {
      draw: 7,
      genuinePerKind: 12,
      tamperedPerKind: 8,
    });
    expect((await pdf417Of(doc))?.text).toBe(fixture.truth().barcode);
  }, 180_000);

  it("a PDF417 in perspective that no rotation of the page decodes is outlined and warped square", async () => {
    // A development licence photo (eval:ids --draw 13, ids-dev-d13-dl-154007-photo-barcode_print_mismatch): the
    // symbol's bars lean and its top and bottom converge; no angle, resolution or sharpening read it.
    const { fixture, doc } = await devIdFixture("ids-dev-d13-dl-154007-photo-barcode_print_mismatch", "US", {
      draw: 13,
      genuinePerKind: 12,
      tamperedPerKind: 8,
    });
    const reading = await readIdentity(doc, { now: ID_NOW });
    const page = reading.pages[0]!;
    expect(page.barcodes.find((b) => b.format === "PDF417")?.text).toBe(fixture.truth().barcode);
    // Read, the printed surname (changed to BRANDT) is held against the barcode's.
    expect(page.barcodeVsViz.map((d) => [d.field, d.printed, d.doubts])).toEqual([["surname", "BRANDT", []]]);
  }, 180_000);

  it("the outline of a dense block of bars in perspective", () => {
    // Bars 3 px wide inside a quadrilateral whose top and bottom converge (white elsewhere): the outline
    // found is within 8 px of its corners (the blur rounds them).
    const w = 500;
    const h = 300;
    const corners: Point[] = [
      [100, 100],
      [400, 80],
      [400, 190],
      [100, 210],
    ];
    const data = new Uint8Array(w * h).fill(235);
    for (let y = 0; y < h; y++)
      for (let x = 0; x < w; x++) {
        const t = (x - 100) / 300;
        const top = 100 - 20 * t;
        const bottom = 210 - 20 * t;
        if (t >= 0 && t <= 1 && y >= top && y <= bottom && Math.floor(x / 3) % 2 === 0) data[y * w + x] = 20;
      }
    const quad = symbolQuad({ width: w, height: h, data });
    expect(quad).toBeDefined();
    quad!.forEach((p, i) => {
      expect(Math.hypot(p[0] - corners[i]![0], p[1] - corners[i]![1])).toBeLessThan(8);
    });
    expect(symbolQuad({ width: w, height: h, data: new Uint8Array(w * h).fill(200) })).toBeUndefined();
  });

  it("the unsharp mask pushes an edge apart and leaves flat grey alone", () => {
    // A soft step from 100 to 150 over one pixel: sharpened, the dark side dips below 100 next to the edge and
    // the light side rises above 150; a flat image is unchanged.
    const w = 9;
    const h = 3;
    const data = new Uint8Array(w * h);
    for (let y = 0; y < h; y++)
      for (let x = 0; x < w; x++) data[y * w + x] = x < 4 ? 100 : x === 4 ? 125 : 150;
    const out = unsharp({ width: w, height: h, data }, 2, 1);
    expect(out.data[1 * w + 3]!).toBeLessThan(100);
    expect(out.data[1 * w + 5]!).toBeGreaterThan(150);
    expect(out.data[1 * w + 0]!).toBe(100);
    const flat = unsharp({ width: w, height: h, data: new Uint8Array(w * h).fill(128) });
    expect([...flat.data].every((v) => v === 128)).toBe(true);
  });

  it("the dominant edge direction of a turned pattern of bars", () => {
    // Vertical bars 6 px wide, turned by 5° about the centre (y down): the estimate is within 1.5°.
    const w = 400;
    const h = 300;
    const data = new Uint8Array(w * h);
    const a = (5 * Math.PI) / 180;
    for (let y = 0; y < h; y++)
      for (let x = 0; x < w; x++) {
        const u = (x - w / 2) * Math.cos(a) + (y - h / 2) * Math.sin(a);
        data[y * w + x] = Math.floor(u / 6) % 2 === 0 ? 20 : 235;
      }
    const grey: GreyImage = { width: w, height: h, data };
    const angle = dominantEdgeAngle(grey);
    expect(angle).toBeDefined();
    expect(Math.abs(angle! - 5)).toBeLessThan(1.5);
    expect(dominantEdgeAngle({ width: w, height: h, data: new Uint8Array(w * h).fill(128) })).toBeUndefined();
  });
});
