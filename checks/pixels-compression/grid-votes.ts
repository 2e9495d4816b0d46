import type { BoxTuple } from "../../core/page-geometry.js";
import { logNfa } from "../../document/pixels/nfa.js";
import { blockFromRows, rowDcts } from "./dct.js";

/**
 * JPEG grid votes after ZERO (Nikoukhah, Anger, Ehret, Colom, Morel, Grompone von Gioi, CVPRW 2019; IPOL
 * 2021), on the text-bearing regions only: every 8 × 8 block position is DCT-transformed and its zero
 * coefficients counted (|F| < 0.5: JPEG quantises to integers at the finest); each pixel votes for the grid
 * origin (x mod 8, y mod 8) of the block through it with the most zeros (no vote on a tie, or for a block
 * constant along a row or column). The main grid is the one with a meaningful share of the votes; a region
 * whose pixels vote for another grid, denser than chance (p = 1/64, NFA < 1 with the paper's number of
 * tests), carries a different compression history — pasted from another JPEG.
 */

export interface GridRegion {
  box: BoxTuple;
  grid: number;
  votes: number;
  logNfa: number;
}

export interface GridVotes {
  /** Votes per grid origin (0-63: x + 8y), over all regions. */
  counts: number[];
  /** The main grid, or -1 when none is meaningful. */
  main: number;
  mainLogNfa: number;
  foreign: GridRegion[];
  /** Pixels that voted. */
  voters: number;
}

export function gridVotes(
  grey: Uint8Array,
  width: number,
  height: number,
  regions: readonly BoxTuple[],
  signal?: AbortSignal,
): GridVotes {
  const counts = new Array<number>(64).fill(0);
  const perRegion: { box: BoxTuple; votes: Int8Array; w: number; h: number }[] = [];
  const coef = new Float64Array(64);
  let voters = 0;
  for (const r of regions) {
    if (signal?.aborted) break;
    const [x0, y0, x1, y1] = r;
    const w = x1 - x0;
    const h = y1 - y0;
    if (w < 16 || h < 16) continue;
    const rows = rowDcts(grey, width, x0, y0, x1, y1);
    const rw = w - 7;
    const zmax = new Int8Array(w * h).fill(-1);
    const votes = new Int8Array(w * h).fill(-1);
    for (let by = 0; by + 8 <= h; by++)
      for (let bx = 0; bx + 8 <= w; bx++) {
        // Constant along x or y: no vote.
        let constX = true;
        let constY = true;
        for (let yy = 0; yy < 8 && (constX || constY); yy++)
          for (let xx = 0; xx < 8; xx++) {
            const v = grey[(y0 + by + yy) * width + x0 + bx + xx]!;
            if (v !== grey[(y0 + by + yy) * width + x0 + bx]!) constX = false;
            if (v !== grey[(y0 + by) * width + x0 + bx + xx]!) constY = false;
          }
        blockFromRows(rows, rw, bx, by, coef);
        let z = 0;
        for (let i = 1; i < 64; i++) if (Math.abs(coef[i]!) < 0.5) z++;
        const grid = constX || constY ? -1 : ((x0 + bx) % 8) + ((y0 + by) % 8) * 8;
        for (let yy = by; yy < by + 8; yy++)
          for (let xx = bx; xx < bx + 8; xx++) {
            const p = yy * w + xx;
            if (z === zmax[p]) votes[p] = -1;
            else if (z > zmax[p]!) {
              zmax[p] = z;
              votes[p] = grid;
            }
          }
      }
    // Only pixels covered by all 64 blocks through them (not the region's 7-pixel rim) vote.
    for (let y = 0; y < h; y++)
      for (let x = 0; x < w; x++) {
        if (y < 7 || x < 7 || y >= h - 7 || x >= w - 7) {
          votes[y * w + x] = -1;
          continue;
        }
        const v = votes[y * w + x]!;
        if (v >= 0) {
          counts[v]!++;
          voters++;
        }
      }
    perRegion.push({ box: r, votes, w, h });
  }
  const logNT = 2 * Math.log10(64) + 2 * Math.log10(width) + 2 * Math.log10(height);
  const tests = 10 ** logNT;
  let main = -1;
  let best = 0;
  for (let g = 0; g < 64; g++) {
    if (counts[g]! > best) {
      best = counts[g]!;
      main = g;
    }
  }
  const mainLogNfa = main >= 0 ? logNfa(tests, Math.floor(voters / 64), Math.floor(best / 64), 1 / 64) : 0;
  if (mainLogNfa >= 0) main = -1;
  const foreign: GridRegion[] = [];
  const W = 12;
  for (const r of perRegion) {
    const { votes, w, h } = r;
    const used = new Uint8Array(w * h);
    const stack: number[] = [];
    for (let s = 0; s < w * h; s++) {
      const g = votes[s]!;
      if (g < 0 || g === main || used[s]) continue;
      used[s] = 1;
      stack.length = 0;
      stack.push(s);
      let size = 0;
      let bx0 = w;
      let by0 = h;
      let bx1 = 0;
      let by1 = 0;
      while (stack.length) {
        const p = stack.pop()!;
        size++;
        const px = p % w;
        const py = (p - px) / w;
        if (px < bx0) bx0 = px;
        if (px > bx1) bx1 = px;
        if (py < by0) by0 = py;
        if (py > by1) by1 = py;
        for (let yy = Math.max(0, py - W); yy <= Math.min(h - 1, py + W); yy++)
          for (let xx = Math.max(0, px - W); xx <= Math.min(w - 1, px + W); xx++) {
            const q = yy * w + xx;
            if (!used[q] && votes[q] === g) {
              used[q] = 1;
              stack.push(q);
            }
          }
      }
      const minSize = Math.ceil((64 * logNT) / Math.log10(64));
      if (size < minSize) continue;
      const n = Math.floor(((bx1 - bx0 + 1) * (by1 - by0 + 1)) / 64);
      const k = Math.floor(size / 64);
      const l = logNfa(tests, n, k, 1 / 64);
      if (l < 0)
        foreign.push({
          box: [r.box[0] + bx0, r.box[1] + by0, r.box[0] + bx1 + 1, r.box[1] + by1 + 1],
          grid: g,
          votes: size,
          logNfa: l,
        });
    }
  }
  foreign.sort((a, b) => a.logNfa - b.logNfa);
  return { counts, main, mainLogNfa, foreign, voters };
}
