import { describe, expect, it } from "vitest";
import { drawMarks, MARK_COLOUR, markMetrics, outlineOf, TAB_COLOUR } from "./page-marks.js";
import { diffRegions } from "./pixel-diff.js";
import type { RgbaImage } from "./raster.js";

const white = (width: number, height: number): RgbaImage => ({
  width,
  height,
  data: new Uint8ClampedArray(width * height * 4).fill(255),
});
function paint(img: RgbaImage, x0: number, y0: number, x1: number, y1: number, v = 0): void {
  for (let y = y0; y < y1; y++)
    for (let x = x0; x < x1; x++) {
      const o = (y * img.width + x) * 4;
      img.data[o] = img.data[o + 1] = img.data[o + 2] = v;
    }
}

describe("diffRegions", () => {
  it("finds each changed area as one tight region, and none on identical images", () => {
    const a = white(400, 300);
    const b = white(400, 300);
    expect(diffRegions(a, b)).toEqual([]);
    // two glyph-like marks 4 px apart (one value) and a separate change far away
    paint(b, 100, 50, 108, 62);
    paint(b, 112, 50, 120, 62);
    paint(b, 300, 200, 340, 210);
    const regions = diffRegions(a, b);
    expect(regions.map((r) => r.box).sort((p, q) => p[0] - q[0])).toEqual([
      [100, 50, 120, 62],
      [300, 200, 340, 210],
    ]);
  });

  it("ignores anti-aliasing noise: faint or isolated pixels", () => {
    const a = white(200, 200);
    const b = white(200, 200);
    paint(b, 10, 10, 60, 60, 230); // a shade change below the threshold
    paint(b, 150, 150, 151, 151); // one stray pixel
    expect(diffRegions(a, b)).toEqual([]);
  });

  it("pages of different sizes differ everywhere", () => {
    expect(diffRegions(white(10, 10), white(12, 10))).toEqual([{ box: [0, 0, 12, 10], pixels: 120 }]);
  });
});

describe("drawMarks", () => {
  it("draws each box just outside what it marks, in MARK_COLOUR, with a numbered tab beside it", () => {
    const img = white(900, 1200);
    drawMarks(img, [{ number: 12, box: [400, 500, 500, 520] }]);
    const at = (x: number, y: number) => [...img.data.subarray((y * 900 + x) * 4, (y * 900 + x) * 4 + 3)];
    const [x0, y0, x1, y1] = outlineOf([400, 500, 500, 520], 900, 1200);
    const { line } = markMetrics(900, 1200);
    expect(at(x0, y0)).toEqual([...MARK_COLOUR]);
    expect(at(x1 - 1, y1 - 1)).toEqual([...MARK_COLOUR]);
    expect(at(x0 + line, y0 + line)).toEqual([255, 255, 255]); // inside the outline: untouched
    expect(at(450, 510)).toEqual([255, 255, 255]); // the value itself is never covered
    expect(at(x0 - 2, y0 + 1)).toEqual([...TAB_COLOUR]); // the tab, left of the box
  });
});
