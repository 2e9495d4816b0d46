import { describe, expect, it } from "vitest";
import type { PagePixels } from "../../document/pixels/page-pixels.js";
import { Rng } from "../../fixtures/random.js";
import { nearestTwo, patchDifference } from "./glyph-features.js";

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

  it("nearestTwo keeps the second smallest as the limit", () => {
    const two = nearestTwo();
    expect(two.limit()).toBe(Number.POSITIVE_INFINITY);
    for (const d of [9, 4, 7, 2, 8]) two.add(d);
    expect(two.limit()).toBe(4);
  });
});
