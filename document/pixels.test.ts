import sharp from "sharp";
import { describe, expect, it } from "vitest";
import { pixelsToBox } from "../core/page-geometry.js";
import { makeDocument } from "../fixtures/documents.js";
import { RENDER_LIMITS } from "./budget/limits.js";
import { pixelsOf, releasePixels } from "./pixels.js";
import { analyseScan, applyHomography, flatten, homography, type Quad } from "./scan-geometry.js";
import { modelOf } from "./testdata/model-kit.js";

describe("the pixel source (document/pixels.ts)", () => {
  it("renders a PDF page once and serves smaller requests from it; an exact request renders", async () => {
    const doc = await modelOf(await makeDocument({ seed: 3, docType: "invoice", region: "GB" }));
    const px = pixelsOf(doc);
    expect(pixelsOf(doc)).toBe(px);
    const big = await px.page(1, { scale: 3 });
    expect(big?.image.width).toBe(Math.floor(595.28 * 3));
    const small = await px.page(1, { scale: 1.5 });
    const again = await px.page(1, { scale: 1.5 });
    expect(again).toBe(small);
    expect(px.stats()).toMatchObject({ renders: 1, resampled: 1 });
    const exact = await px.page(1, { scale: 1.5, exact: true });
    expect(exact?.image.width).toBe(small?.image.width);
    expect(px.stats().renders).toBe(2);
    await releasePixels(doc);
  });

  it("keeps every raster within the page bound, whatever is asked", async () => {
    const doc = await modelOf(await makeDocument({ seed: 3, docType: "invoice", region: "GB" }));
    const page = await pixelsOf(doc).page(1, { scale: 40, maxPixels: 10 ** 9 });
    expect(page!.image.width * page!.image.height).toBeLessThanOrEqual(RENDER_LIMITS.maxPixelsPerPage);
    const crop = await pixelsOf(doc).region(1, [0, 0, 595, 842], 40);
    expect(crop!.image.width * crop!.image.height).toBeLessThanOrEqual(RENDER_LIMITS.maxPixelsPerPage);
    await releasePixels(doc);
  });

  it("crops a box of a page sharper, with a geometry that maps its pixels back to the box", async () => {
    const doc = await modelOf(await makeDocument({ seed: 3, docType: "invoice", region: "GB" }));
    const box: [number, number, number, number] = [100, 400, 300, 450];
    const crop = await pixelsOf(doc).region(1, box, 6);
    expect(crop!.image.width).toBeGreaterThanOrEqual(1199);
    expect(crop!.image.width).toBeLessThanOrEqual(1201);
    const back = pixelsToBox(
      crop!.geometry,
      [0, 0, crop!.image.width, crop!.image.height],
      crop!.image.width,
      crop!.image.height,
    );
    for (let i = 0; i < 4; i++) expect(Math.abs(back[i]! - box[i]!)).toBeLessThan(0.5);
    await releasePixels(doc);
  });

  it("decodes an image document in its own pixels (y down) and crops it from the file", async () => {
    const png = await sharp({ create: { width: 400, height: 300, channels: 3, background: "#ffffff" } })
      .composite([
        {
          input: await sharp({ create: { width: 40, height: 20, channels: 3, background: "#000000" } })
            .png()
            .toBuffer(),
          left: 100,
          top: 200,
        },
      ])
      .png()
      .toBuffer();
    const doc = await modelOf(new Uint8Array(png));
    const px = pixelsOf(doc);
    expect(await px.geometry(1)).toMatchObject({ view: [0, 0, 400, 300], units: "px" });
    const crop = await px.region(1, [90, 190, 150, 230], 2);
    expect(crop!.image.width).toBe(120);
    // The black box sits at (10..50, 10..30) of the crop in its own pixels: (20..100, 20..60) at × 2.
    const at = (x: number, y: number) => crop!.image.data[(y * crop!.image.width + x) * 4]!;
    expect(at(60, 40)).toBeLessThan(30);
    expect(at(5, 5)).toBeGreaterThan(225);
    await releasePixels(doc);
  });
});

describe("scan geometry (document/scan-geometry.ts)", () => {
  async function renderedPage() {
    const doc = await modelOf(await makeDocument({ seed: 21, docType: "bank_statement", region: "GB" }));
    const page = await pixelsOf(doc).page(1, { scale: 200 / 72 });
    await releasePixels(doc);
    return page!.image;
  }

  it("measures glyph height and the tilt of a page (clockwise positive)", async () => {
    const img = await renderedPage();
    const level = analyseScan(img);
    expect(level.glyphHeight).toBeGreaterThan(12);
    expect(level.glyphHeight).toBeLessThan(30);
    expect(Math.abs(level.skewDeg)).toBeLessThan(0.2);
    expect(level.outline).toBeUndefined();
    for (const deg of [1.5, -2]) {
      const { data, info } = await sharp(Buffer.from(img.data.buffer), {
        raw: { width: img.width, height: img.height, channels: 4 },
      })
        .rotate(deg, { background: "#ffffff" })
        .ensureAlpha()
        .raw()
        .toBuffer({ resolveWithObject: true });
      const tilted = analyseScan({
        width: info.width,
        height: info.height,
        data: new Uint8ClampedArray(data),
      });
      expect(Math.abs(tilted.skewDeg - deg), `${deg}°`).toBeLessThan(0.3);
    }
  });

  it("finds a photographed sheet's corners on a dark background and flattens it back", async () => {
    const page = await renderedPage();
    // A "photo": the page warped into a quadrilateral on a dark desk.
    const W = 1400;
    const H = 1900;
    const q: Quad = [
      { x: 180, y: 140 },
      { x: 1220, y: 200 },
      { x: 1290, y: 1760 },
      { x: 120, y: 1700 },
    ];
    const toPage = homography(q, [
      { x: 0, y: 0 },
      { x: page.width - 1, y: 0 },
      { x: page.width - 1, y: page.height - 1 },
      { x: 0, y: page.height - 1 },
    ]);
    const data = new Uint8ClampedArray(W * H * 4);
    for (let y = 0; y < H; y++)
      for (let x = 0; x < W; x++) {
        const p = applyHomography(toPage, { x, y });
        const o = (y * W + x) * 4;
        const px = Math.round(p.x);
        const py = Math.round(p.y);
        const inside = px >= 0 && py >= 0 && px < page.width && py < page.height;
        const v = inside ? page.data[(py * page.width + px) * 4]! : 60;
        data[o] = data[o + 1] = data[o + 2] = v;
        data[o + 3] = 255;
      }
    const a = analyseScan({ width: W, height: H, data });
    expect(a.outline).toBeDefined();
    for (let i = 0; i < 4; i++) {
      expect(Math.abs(a.outline![i]!.x - q[i]!.x), `corner ${i}`).toBeLessThan(15);
      expect(Math.abs(a.outline![i]!.y - q[i]!.y), `corner ${i}`).toBeLessThan(15);
    }
    const flat = flatten({ width: W, height: H, data }, a.outline!, 1000, 1400);
    const back = applyHomography(flat.back, { x: 0, y: 0 });
    expect(Math.abs(back.x - a.outline![0]!.x)).toBeLessThan(1);
    // The flattened sheet is level again.
    expect(Math.abs(analyseScan(flat.image).skewDeg)).toBeLessThan(0.4);
  });
});
