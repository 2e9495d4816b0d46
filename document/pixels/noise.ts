import type { InkLayout } from "./ink-layout.js";

/**
 * The paper's noise, measured per 8 × 8 cell away from ink: σ from the Laplacian residual
 * (4p − n − s − e − w has variance 20σ² for white noise, and is blind to the smooth light gradients of a
 * photo), whether the cell is perfectly flat (max − min ≤ 1: what a painted box leaves after JPEG), and
 * its mean. Cells are aligned on the JPEG grid when the caller gives its origin.
 */

export const CELL = 8;

export interface CellMap {
  /** Cells across and down. */
  cw: number;
  ch: number;
  /** Grid origin in pixels (0-7). */
  ox: number;
  oy: number;
  /** σ of paper cells; NaN where the cell is not clean paper (ink within 2 px, or off the image). */
  sigma: Float32Array;
  /** 1 when a paper cell is flat (all its pixels within 1 grey level). */
  flat: Uint8Array;
  /** Mean grey of the cell. */
  mean: Float32Array;
  /** 1 when a cell is clean paper. */
  paper: Uint8Array;
}

export interface PageNoise {
  /** Median σ of the paper cells. */
  sigma: number;
  /** Fraction of paper cells that are flat. */
  flatRate: number;
  /** Fraction of paper pixels at 250 or above (a whitened or blown-out background). */
  saturatedRate: number;
  /** Paper cells measured. */
  cells: number;
  /** Spread of the paper's brightness (90th − 10th percentile of cell means): uneven light. */
  lightSpread: number;
}

export function cellMap(
  grey: Uint8Array,
  width: number,
  height: number,
  layout: InkLayout,
  ox = 0,
  oy = 0,
): CellMap {
  const cw = Math.floor((width - ox) / CELL);
  const ch = Math.floor((height - oy) / CELL);
  const sigma = new Float32Array(cw * ch).fill(Number.NaN);
  const flat = new Uint8Array(cw * ch);
  const mean = new Float32Array(cw * ch);
  const paper = new Uint8Array(cw * ch);
  // Ink counted per cell, then grown by one cell ring for "ink within 2 px".
  const inkCells = new Uint8Array(cw * ch);
  for (let cy = 0; cy < ch; cy++) {
    for (let cx = 0; cx < cw; cx++) {
      const x0 = ox + cx * CELL;
      const y0 = oy + cy * CELL;
      let inked = 0;
      for (let y = Math.max(0, y0 - 2); y < Math.min(height, y0 + CELL + 2) && !inked; y++)
        for (let x = Math.max(0, x0 - 2); x < Math.min(width, x0 + CELL + 2); x++)
          if (layout.ink[y * width + x]) {
            inked = 1;
            break;
          }
      inkCells[cy * cw + cx] = inked;
    }
  }
  for (let cy = 0; cy < ch; cy++) {
    for (let cx = 0; cx < cw; cx++) {
      const i = cy * cw + cx;
      const x0 = ox + cx * CELL;
      const y0 = oy + cy * CELL;
      let sum = 0;
      let min = 255;
      let max = 0;
      for (let y = y0; y < y0 + CELL; y++)
        for (let x = x0; x < x0 + CELL; x++) {
          const v = grey[y * width + x]!;
          sum += v;
          if (v < min) min = v;
          if (v > max) max = v;
        }
      mean[i] = sum / (CELL * CELL);
      if (inkCells[i]) continue;
      paper[i] = 1;
      flat[i] = max - min <= 1 ? 1 : 0;
      let acc = 0;
      let n = 0;
      for (let y = Math.max(1, y0); y < Math.min(height - 1, y0 + CELL); y++)
        for (let x = Math.max(1, x0); x < Math.min(width - 1, x0 + CELL); x++) {
          const p = y * width + x;
          const l = 4 * grey[p]! - grey[p - 1]! - grey[p + 1]! - grey[p - width]! - grey[p + width]!;
          acc += l * l;
          n++;
        }
      sigma[i] = n ? Math.sqrt(acc / n / 20) : Number.NaN;
    }
  }
  return { cw, ch, ox, oy, sigma, flat, mean, paper };
}

function quantile(sorted: ArrayLike<number>, q: number): number {
  if (sorted.length === 0) return 0;
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]!;
}

export function pageNoise(map: CellMap): PageNoise {
  const sig: number[] = [];
  const means: number[] = [];
  let flat = 0;
  let saturated = 0;
  for (let i = 0; i < map.sigma.length; i++) {
    if (!map.paper[i]) continue;
    sig.push(map.sigma[i]!);
    means.push(map.mean[i]!);
    if (map.flat[i]) flat++;
    if (map.mean[i]! >= 250) saturated++;
  }
  sig.sort((a, b) => a - b);
  means.sort((a, b) => a - b);
  const n = sig.length;
  return {
    sigma: Math.round(quantile(sig, 0.5) * 100) / 100,
    flatRate: n ? flat / n : 0,
    saturatedRate: n ? saturated / n : 0,
    cells: n,
    lightSpread: Math.round(quantile(means, 0.9) - quantile(means, 0.1)),
  };
}

const maps = new WeakMap<object, CellMap>();

/** The cell map of a page image on the (0, 0) grid, computed once per pixel buffer. */
export function cellMapOf(
  page: { grey: Uint8Array; width: number; height: number },
  layout: InkLayout,
): CellMap {
  let m = maps.get(page.grey);
  if (!m) {
    m = cellMap(page.grey, page.width, page.height, layout);
    maps.set(page.grey, m);
  }
  return m;
}
