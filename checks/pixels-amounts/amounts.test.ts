/**
 * Where pixels.amounts boxes an amount: the value as printed, with a currency sign the OCR read as a word of
 * its own beside it ("40.371,20 €"). An edit of the value takes its sign along, and a finding of another check
 * on the sign (pixels.glyphs judging the € against a line whose other characters were typed in) is about the
 * same value: the two boxes must overlap for the score to see one place (core/evidence.ts, placesOf).
 */
import { describe, expect, it } from "vitest";
import type { BoxTuple } from "../../core/page-geometry.js";
import type { TextRun } from "../../document/page-layout.js";
import type { InkLayout } from "../../document/pixels/ink-layout.js";
import type { PagePixels } from "../../document/pixels/page-pixels.js";
import { Rng } from "../../fixtures/random.js";
import { type AmountOnPage, amountsOnPage, amountTwins } from "./amounts.js";

/** An image page's pixels are its units (origin top left): glyph boxes map to themselves. */
const page = { page: 1, toPageBox: (b: BoxTuple) => b } as unknown as PagePixels;

/** Ink glyphs 10 px wide, 20 px tall, 2 px apart, on one line (y 100-120), from x. */
function glyphRow(x: number, n: number, first = 0) {
  return Array.from({ length: n }, (_, i) => ({
    id: first + i,
    box: [x + i * 12, 100, x + i * 12 + 10, 120] as BoxTuple,
    area: 120,
    line: 0,
    word: 0,
  }));
}

const run = (text: string, bbox: BoxTuple): TextRun => ({
  text,
  bbox,
  x: bbox[0],
  y: bbox[3],
  size: 10,
  font: "",
  fontEmbedded: false,
  renderMode: 0,
  fill: null,
  alpha: 1,
  upright: true,
  order: 0,
  confidence: 95,
});

describe("amountsOnPage: the box of the value as printed", () => {
  // "40.371,20 €": seven tall glyphs (the point and comma are too small to be kept), then the € 12 px on.
  const digits = glyphRow(200, 7);
  const euro = { id: 7, box: [296, 100, 308, 120] as BoxTuple, area: 100, line: 0, word: 1 };
  const far = { id: 8, box: [600, 100, 612, 120] as BoxTuple, area: 100, line: 0, word: 2 };
  const layout = { glyphs: [...digits, euro, far], textHeight: 20 } as unknown as InkLayout;
  const ids = layout.glyphs.map((g) => g.id);

  it("takes in a currency sign read as a word of its own beside the amount", () => {
    const [a] = amountsOnPage(
      page,
      layout,
      [run("40.371,20", [199, 99, 285, 121]), run("€", [295, 99, 309, 121])],
      ids,
    );
    expect(a?.box).toEqual([200, 100, 282, 120]);
    expect(a?.valueBox).toEqual([200, 100, 308, 120]);
    // The amount's own glyphs (what its look is measured on) stay the digits.
    expect(a?.glyphs).toEqual([0, 1, 2, 3, 4, 5, 6]);
  });

  it("leaves a currency word further along the line, or another word beside it, out", () => {
    const [a] = amountsOnPage(
      page,
      layout,
      [run("40.371,20", [199, 99, 285, 121]), run("€", [599, 99, 613, 121]), run("VAT", [295, 99, 309, 121])],
      ids,
    );
    expect(a?.valueBox).toEqual(a?.box);
  });
});

describe("amountTwins: a digit copied from another amount", () => {
  it("is found although its ink, cut from the paper the editor filled in around it, is a quarter smaller than its source's", () => {
    // 24 printed digits of one shape, each captured with its own noise, in four amounts of six; the last one
    // pasted from the first (the same pixels, ring of paper included), with its ink area found 25 % smaller.
    const W = 400;
    const H = 120;
    const rng = new Rng(7);
    const noise = () => (rng.next() + rng.next() + rng.next() - 1.5) * 16;
    const grey = new Uint8Array(W * H);
    for (let i = 0; i < grey.length; i++) grey[i] = Math.round(235 + noise() / 2);
    const shape = (x: number, y: number) => (x === 1 || x === 8 || y === 1 || y === 12 ? 40 : 235);
    const glyphs = Array.from({ length: 24 }, (_, i) => {
      const x0 = 10 + (i % 12) * 30;
      const y0 = 20 + Math.floor(i / 12) * 40;
      for (let y = 0; y < 14; y++)
        for (let x = 0; x < 10; x++)
          grey[(y0 + y) * W + x0 + x] = Math.max(0, Math.min(255, Math.round(shape(x, y) + noise())));
      return {
        id: i,
        box: [x0, y0, x0 + 10, y0 + 14] as BoxTuple,
        area: 40,
        line: 0,
        word: Math.floor(i / 6),
      };
    });
    const src = glyphs[0]!.box;
    const dst = glyphs[23]!.box;
    for (let y = -1; y < 15; y++)
      for (let x = -1; x < 11; x++)
        grey[(dst[1] + y) * W + dst[0] + x] = grey[(src[1] + y) * W + src[0] + x]!;
    glyphs[23]!.area = 30;
    const page = {
      page: 1,
      width: W,
      height: H,
      grey,
      toPageBox: (b: BoxTuple) => b,
    } as unknown as PagePixels;
    const layout = { glyphs, textHeight: 14 } as unknown as InkLayout;
    const amounts: AmountOnPage[] = [0, 1, 2, 3].map((k) => {
      const ids = [0, 1, 2, 3, 4, 5].map((j) => k * 6 + j);
      const box: BoxTuple = [
        glyphs[ids[0]!]!.box[0],
        glyphs[ids[0]!]!.box[1],
        glyphs[ids[5]!]!.box[2],
        glyphs[ids[5]!]!.box[3],
      ];
      return { text: `${k}00,000.00`, bbox: box, glyphs: ids, box, valueBox: box };
    });
    const twins = amountTwins(page, layout, amounts);
    expect(twins.map((t) => [t.glyph, t.sourceGlyph]).sort()).toEqual([
      [0, 23],
      [23, 0],
    ]);
  });
});
