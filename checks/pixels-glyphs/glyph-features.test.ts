import { describe, expect, it } from "vitest";
import type { PagePixels } from "../../document/pixels/page-pixels.js";
import { Rng } from "../../fixtures/random.js";
import type { InkLayout } from "../../document/pixels/ink-layout.js";
import { nearestTwins, patchDifference, renderedTwins } from "./glyph-features.js";

/**
 * patchDifference with a limit (the bound that makes the nearest-twin searches of pixels.glyphs and
 * pixels.amounts cheap) must give exactly the unbounded difference whenever that is at or below the limit, and
 * Infinity only above it; near the page's edges as well.
 */
type Box = [number, number, number, number];

/** The unbounded reference: the per-pixel loop the bounded version replaced. */
function reference(page: PagePixels, a: Box, b: Box): number {
  const { width, height, grey } = page;
  const w = a[2] - a[0] + 2;
  const h = a[3] - a[1] + 2;
  let best = Number.POSITIVE_INFINITY;
  for (let dy = -1; dy <= 1; dy++)
    for (let dx = -1; dx <= 1; dx++) {
      let s = 0;
      let n = 0;
      for (let y = 0; y < h; y++) {
        const ya = a[1] - 1 + y;
        const yb = b[1] - 1 + y + dy;
        if (ya < 0 || yb < 0 || ya >= height || yb >= height) continue;
        for (let x = 0; x < w; x++) {
          const xa = a[0] - 1 + x;
          const xb = b[0] - 1 + x + dx;
          if (xa < 0 || xb < 0 || xa >= width || xb >= width) continue;
          s += Math.abs(grey[ya * width + xa]! - grey[yb * width + xb]!);
          n++;
        }
      }
      if (n > 0 && s / n < best) best = s / n;
    }
  return best;
}

describe("patchDifference", () => {
  it("is exact at or below its limit and Infinity above it, at the page's edges too", () => {
    const rng = new Rng(7);
    const width = 120;
    const height = 80;
    const grey = new Uint8Array(width * height);
    for (let i = 0; i < grey.length; i++) grey[i] = rng.int(0, 255);
    // A copied patch: the boxes at (10, 10) and (60, 40) below, grown by 1 px, are equal.
    for (let y = 0; y < 14; y++)
      for (let x = 0; x < 10; x++) grey[(39 + y) * width + 59 + x] = grey[(9 + y) * width + 9 + x]!;
    const page = { page: 1, width, height, grey } as unknown as PagePixels;
    const boxes: Box[] = [
      [10, 10, 18, 22],
      [60, 40, 68, 52],
      [0, 0, 8, 12],
      [111, 67, 119, 79],
      [30, 5, 38, 17],
    ];
    let checked = 0;
    for (const a of boxes)
      for (const b of boxes) {
        const exact = reference(page, a, b);
        expect(patchDifference(page, a, b)).toBe(exact);
        for (const limit of [0, exact / 2, exact, exact + 0.01, 200]) {
          const bounded = patchDifference(page, a, b, limit);
          if (exact <= limit) expect(bounded).toBe(exact);
          else expect(bounded).toBe(Number.POSITIVE_INFINITY);
          checked++;
        }
      }
    expect(checked).toBe(125);
    expect(patchDifference(page, boxes[0]!, boxes[1]!, 1)).toBeLessThan(
      patchDifference(page, boxes[0]!, boxes[4]!),
    );
  });

  it("nearestTwins finds exactly what comparing every same-sized pair finds", () => {
    const rng = new Rng(11);
    const width = 400;
    const height = 60;
    const grey = new Uint8Array(width * height);
    for (let i = 0; i < grey.length; i++) grey[i] = rng.int(0, 255);
    // Glyphs of two sizes and areas, one pasted copy among them (glyph 3 repeats glyph 0's pixels).
    const boxes: Box[] = [];
    for (let i = 0; i < 12; i++) boxes.push([5 + i * 30, 10 + (i % 3), 15 + i * 30 + (i % 2), 24 + (i % 3)]);
    for (let y = -1; y < 16; y++)
      for (let x = -1; x < 12; x++)
        grey[(boxes[3]![1] + y) * width + boxes[3]![0] + x] =
          grey[(boxes[0]![1] + y) * width + boxes[0]![0] + x]!;
    const glyphs = boxes.map((box, id) => ({ id, box, area: 40 + (id % 2) * 2 }));
    const layout = { glyphs } as unknown as InkLayout;
    const page = { page: 1, width, height, grey } as unknown as PagePixels;
    const ids = glyphs.map((g) => g.id);

    const brute = ids.flatMap((a) => {
      const ga = glyphs[a]!;
      const ds = ids
        .filter((b) => {
          const gb = glyphs[b]!;
          return (
            b !== a &&
            Math.abs(gb.box[2] - gb.box[0] - (ga.box[2] - ga.box[0])) <= 1 &&
            Math.abs(gb.box[3] - gb.box[1] - (ga.box[3] - ga.box[1])) <= 1 &&
            Math.abs(ga.area - gb.area) <= Math.max(3, ga.area * 0.08)
          );
        })
        .map((b) => ({ other: b, d: reference(page, ga.box, glyphs[b]!.box) }))
        .sort((x, y) => x.d - y.d);
      return ds.length < 2 ? [] : [{ id: a, other: ds[0]!.other, d1: ds[0]!.d, d2: ds[1]!.d }];
    });
    const found = nearestTwins(page, layout, ids);
    expect(brute.length).toBeGreaterThan(4);
    expect(found).toEqual(brute);
    // The pasted copy is its original's nearest twin, at no difference.
    expect(found.find((n) => n.id === 3)).toMatchObject({ other: 0, d1: 0 });
    // With a cap, each character is compared with at most that many others.
    expect(nearestTwins(page, layout, ids, { maxCompared: 2 }).every((n) => Number.isFinite(n.d2))).toBe(
      true,
    );
  });
});

describe("renderedTwins", () => {
  const box = (x: number, y: number): Box => [x, y, x + 10, y + 14];
  const glyphs = [
    box(16, 40),
    box(16, 240),
    box(96, 40),
    box(96, 240),
    box(200, 64),
    box(200, 160),
    box(301, 77),
  ].map((b, id) => ({ id, box: b, area: 40 }));
  const layout = { glyphs } as unknown as InkLayout;
  const jpegPage = { page: 1, width: 400, height: 300, jpeg: new Uint8Array(1) } as unknown as PagePixels;
  const twin = (id: number, other: number, d1 = 0) => ({ id, other, d1, d2: 6 });

  it("three exact pairs, all a multiple of 8 px apart both ways: a page exported straight to JPEG", () => {
    const nearest = [twin(0, 1), twin(1, 0), twin(2, 3), twin(3, 2), twin(4, 5), twin(5, 4, 0.3)];
    expect(renderedTwins(jpegPage, layout, nearest)).toBe(true);
    // The same pairs on pixels that are not a JPEG's own: no grid to be on.
    expect(renderedTwins({ ...jpegPage, jpeg: undefined }, layout, nearest)).toBe(false);
  });

  it("not with two exact pairs, nor when one exact twin is off the grid (a copy), nor for near twins", () => {
    expect(renderedTwins(jpegPage, layout, [twin(0, 1), twin(2, 3)])).toBe(false);
    expect(renderedTwins(jpegPage, layout, [twin(0, 1), twin(2, 3), twin(4, 5), twin(6, 4)])).toBe(false);
    expect(renderedTwins(jpegPage, layout, [twin(0, 1, 1.2), twin(2, 3, 0.9), twin(4, 5, 2)])).toBe(false);
  });
});
