import type { BoxTuple } from "../../core/page-geometry.js";
import type { InkLayout } from "../../document/pixels/ink-layout.js";
import type { PagePixels } from "../../document/pixels/page-pixels.js";

/**
 * What a glyph's pixels say about how it was made: a printed-and-captured character is blurred by the
 * printer and the optics, its ink is grainy and tinted like the rest of the page; a character typed in an
 * editor onto the capture is crisp, flat and of the editor's colour.
 */

export interface GlyphFeatures {
  id: number;
  /** Paper − darkest ink (grey levels). */
  contrast: number;
  /** Mean of the strongest fifth of the gradient magnitudes over the contrast: ~1/blur width. */
  sharpness: number;
  /** Share of the glyph box that is ink. */
  density: number;
  /** Ink pixels per boundary pixel (≈ half the stroke width). */
  stroke: number;
  /** Darkness of the ink core: (paper − core) / paper. */
  darkness: number;
  /** Chroma of the core ink: (r − g, b − g). */
  chroma: [number, number];
  /** σ of the core ink's grey (grain). */
  grain: number;
}

/** Math.hypot(gx, gy) / 2 for the grey differences gx, gy in -255..255, at [(gx + 255) * 511 + gy + 255]. */
const HALF_HYPOT = (() => {
  const t = new Float64Array(511 * 511);
  for (let gx = -255; gx <= 255; gx++)
    for (let gy = -255; gy <= 255; gy++) t[(gx + 255) * 511 + gy + 255] = Math.hypot(gx, gy) / 2;
  return t;
})();

export function glyphFeatures(page: PagePixels, layout: InkLayout, id: number): GlyphFeatures | undefined {
  const g = layout.glyphs[id];
  if (!g) return undefined;
  const [x0, y0, x1, y1] = g.box;
  const { width, grey, rgb } = page;
  const label = id + 1;
  let paper = 0;
  let paperN = 0;
  const inkVals: number[] = [];
  const grads = new Float64Array((x1 - x0) * (y1 - y0));
  let gradN = 0;
  let boundary = 0;
  for (let y = y0; y < y1; y++)
    for (let x = x0; x < x1; x++) {
      const p = y * width + x;
      if (x > 0 && y > 0 && x < width - 1 && y < page.height - 1) {
        const gx = grey[p + 1]! - grey[p - 1]!;
        const gy = grey[p + width]! - grey[p - width]!;
        grads[gradN++] = HALF_HYPOT[(gx + 255) * 511 + gy + 255]!;
      }
      if (layout.labels[p] === label) {
        inkVals.push(p);
        if (
          layout.labels[p - 1] !== label ||
          layout.labels[p + 1] !== label ||
          layout.labels[p - width] !== label ||
          layout.labels[p + width] !== label
        )
          boundary++;
      } else if (!layout.ink[p]) {
        paper += layout.paper[p]!;
        paperN++;
      }
    }
  if (inkVals.length < 6) return undefined;
  const paperLevel = paperN ? paper / paperN : (layout.paper[y0 * width + x0] ?? 255);
  const sorted = Uint8Array.from(inkVals, (p) => grey[p]!).sort();
  const darkest = sorted[Math.floor(sorted.length * 0.05)]!;
  const contrast = Math.max(1, paperLevel - darkest);
  // The strongest fifth, summed from the strongest down (ascending typed sort, read from the end).
  const ascending = grads.subarray(0, gradN).sort();
  const topN = Math.min(gradN, Math.max(1, Math.floor(gradN / 5)));
  let topSum = 0;
  for (let i = 0; i < topN; i++) topSum += ascending[gradN - 1 - i]!;
  const sharpness = topSum / topN / contrast;
  // Core: the darkest 30 % of the ink pixels.
  const cut = sorted[Math.floor(sorted.length * 0.3)]!;
  let n = 0;
  let sg = 0;
  let sg2 = 0;
  let rg = 0;
  let bg = 0;
  for (const p of inkVals) {
    const v = grey[p]!;
    if (v > cut) continue;
    n++;
    sg += v;
    sg2 += v * v;
    rg += rgb[p * 3]! - rgb[p * 3 + 1]!;
    bg += rgb[p * 3 + 2]! - rgb[p * 3 + 1]!;
  }
  const core = sg / n;
  return {
    id,
    contrast,
    sharpness,
    density: inkVals.length / ((x1 - x0) * (y1 - y0)),
    stroke: inkVals.length / Math.max(1, boundary),
    darkness: (paperLevel - core) / Math.max(1, paperLevel),
    chroma: [rg / n, bg / n],
    grain: Math.sqrt(Math.max(0, sg2 / n - core * core)),
  };
}

/** A character's nearest same-sized twin on the page and how far the next nearest is (mean grey levels). */
export interface NearestTwin {
  id: number;
  other: number;
  d1: number;
  d2: number;
}

/**
 * For each of `ids`, its nearest and next nearest twin among `ids`: characters of the same size (±1 px) and
 * ink area (±8 %), compared by `patchDifference`. Only the two nearest matter, so a pair is measured exactly
 * only while it may still be one of them. Characters with fewer than two twins are left out. The one search
 * of pixels.glyphs (every character of the page) and pixels.amounts (the amounts' characters).
 */
export function nearestTwins(
  page: PagePixels,
  layout: InkLayout,
  ids: readonly number[],
  options: { maxCompared?: number; signal?: AbortSignal; areaTolerance?: number } = {},
): NearestTwin[] {
  const maxCompared = options.maxCompared ?? Number.POSITIVE_INFINITY;
  const areaTolerance = options.areaTolerance ?? 0.08;
  const out: NearestTwin[] = [];
  for (const a of ids) {
    if (options.signal?.aborted) break;
    const ga = layout.glyphs[a]!;
    const wa = ga.box[2] - ga.box[0];
    const ha = ga.box[3] - ga.box[1];
    let d1 = Number.POSITIVE_INFINITY;
    let d2 = Number.POSITIVE_INFINITY;
    let other = -1;
    let compared = 0;
    for (const b of ids) {
      if (b === a) continue;
      const gb = layout.glyphs[b]!;
      if (Math.abs(gb.box[2] - gb.box[0] - wa) > 1 || Math.abs(gb.box[3] - gb.box[1] - ha) > 1) continue;
      if (Math.abs(ga.area - gb.area) > Math.max(3, ga.area * areaTolerance)) continue;
      const d = patchDifference(page, ga.box, gb.box, d2);
      if (d < d1) {
        d2 = d1;
        d1 = d;
        other = b;
      } else if (d < d2) d2 = d;
      if (++compared >= maxCompared) break;
    }
    if (compared >= 2) out.push({ id: a, other, d1, d2 });
  }
  return out;
}

/** A twin this close (mean grey levels) is the same pixels: no two captured characters come near it. */
export const EXACT_TWIN = 0.5;

/**
 * Whether the page's characters were rendered, not captured, by their exact twins. A document exported
 * straight to JPEG draws the same glyph identically wherever it falls at the same phase of the 8 × 8 block
 * grid, so its exact twins (≤ EXACT_TWIN) lie at offsets that are multiples of 8 px both ways, and there are
 * several. A capture has none (print and sensor noise), and a character copied by hand lands on the grid in
 * one case of 64: at least three exact pairs, every one on the grid, is a rendering's signature, and there a
 * pixel-identical twin is no evidence of a copy. Only for pixels that are a JPEG's own (unscaled).
 */
export function renderedTwins(page: PagePixels, layout: InkLayout, nearest: readonly NearestTwin[]): boolean {
  if (!page.jpeg) return false;
  const pairs = new Set<string>();
  for (const n of nearest) {
    if (n.d1 > EXACT_TWIN) continue;
    const a = layout.glyphs[n.id]!.box;
    const b = layout.glyphs[n.other]!.box;
    if ((a[0] - b[0]) % 8 !== 0 || (a[1] - b[1]) % 8 !== 0) return false;
    pairs.add(n.id < n.other ? `${n.id}:${n.other}` : `${n.other}:${n.id}`);
  }
  return pairs.size >= 3;
}

/**
 * Mean absolute grey difference of two same-sized glyph boxes (grown by 1 px), best over ±1 px shifts. With a
 * `limit`, a shift is abandoned as soon as its difference must exceed the limit, and a pair that exceeds it
 * at every shift gives Infinity: exact at or below the limit, which is all a nearest-twin search needs (the
 * pairwise searches of pixels.glyphs and pixels.amounts spent most of the check step here).
 */
export function patchDifference(
  page: PagePixels,
  a: BoxTuple,
  b: BoxTuple,
  limit = Number.POSITIVE_INFINITY,
): number {
  const { width, height, grey } = page;
  const w = a[2] - a[0] + 2;
  const h = a[3] - a[1] + 2;
  let best = Number.POSITIVE_INFINITY;
  for (let dy = -1; dy <= 1; dy++)
    for (let dx = -1; dx <= 1; dx++) {
      // The rows and columns where both patches are on the page (the same set the per-pixel tests kept).
      const ax0 = a[0] - 1;
      const ay0 = a[1] - 1;
      const bx0 = b[0] - 1 + dx;
      const by0 = b[1] - 1 + dy;
      const y0 = Math.max(0, -ay0, -by0);
      const y1 = Math.min(h, height - ay0, height - by0);
      const x0 = Math.max(0, -ax0, -bx0);
      const x1 = Math.min(w, width - ax0, width - bx0);
      if (y1 <= y0 || x1 <= x0) continue;
      const n = (y1 - y0) * (x1 - x0);
      // Abandon once the sum must give a mean above both the best shift so far and the limit.
      const cap = Math.min(best, limit) * n * (1 + 1e-9); // (1 + ε): a mean equal to the limit is kept
      let s = 0;
      for (let y = y0; y < y1 && s <= cap; y++) {
        const ra = (ay0 + y) * width + ax0;
        const rb = (by0 + y) * width + bx0;
        for (let x = x0; x < x1; x++) s += Math.abs(grey[ra + x]! - grey[rb + x]!);
      }
      if (s <= cap && s / n < best) best = s / n;
    }
  return best <= limit ? best : Number.POSITIVE_INFINITY;
}
