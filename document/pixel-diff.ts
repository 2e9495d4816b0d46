import type { RgbaImage } from "./raster.js";

/**
 * Where two renderings of the same page differ: pixels whose colour moved by more than a threshold are
 * counted per small cell, cells with too few of them are noise (anti-aliasing), and changed cells closer
 * than a join distance form one region (the characters of one value). Returns regions in pixels, largest
 * first, at most maxRegions.
 */

export interface DiffOptions {
  /** A pixel differs when a channel moved by more than this (0-255). Default 48. */
  threshold?: number;
  /** Cell size in pixels. Default 4. */
  cell?: number;
  /** Changed pixels a cell needs to count. Default 2. */
  minPixelsPerCell?: number;
  /** Changed cells within this many cells of each other join one region. Default 3. */
  joinCells?: number;
  /** Changed pixels a region needs. Default 8. */
  minPixels?: number;
  maxRegions?: number;
}

export interface DiffRegion {
  /** [x0, y0, x1, y1] in pixels, x1/y1 exclusive. */
  box: [number, number, number, number];
  /** Pixels that differ inside it. */
  pixels: number;
}

export function diffRegions(a: RgbaImage, b: RgbaImage, opts: DiffOptions = {}): DiffRegion[] {
  if (a.width !== b.width || a.height !== b.height) {
    return [{ box: [0, 0, b.width, b.height], pixels: b.width * b.height }];
  }
  const threshold = opts.threshold ?? 48;
  const cell = opts.cell ?? 4;
  const minPerCell = opts.minPixelsPerCell ?? 2;
  const join = opts.joinCells ?? 3;
  const minPixels = opts.minPixels ?? 8;
  const maxRegions = opts.maxRegions ?? 50;
  const { width, height } = a;
  const cw = Math.ceil(width / cell);
  const ch = Math.ceil(height / cell);
  const counts = new Uint16Array(cw * ch);
  // Per cell: the bounding box of its changed pixels (cells are small, so the cell box is enough).
  for (let y = 0; y < height; y++) {
    const row = y * width * 4;
    const cy = Math.floor(y / cell) * cw;
    for (let x = 0; x < width; x++) {
      const o = row + x * 4;
      const d = Math.max(
        Math.abs((a.data[o] as number) - (b.data[o] as number)),
        Math.abs((a.data[o + 1] as number) - (b.data[o + 1] as number)),
        Math.abs((a.data[o + 2] as number) - (b.data[o + 2] as number)),
      );
      if (d > threshold)
        counts[cy + Math.floor(x / cell)] = (counts[cy + Math.floor(x / cell)] as number) + 1;
    }
  }
  const changed = new Uint8Array(cw * ch);
  for (let i = 0; i < counts.length; i++) if ((counts[i] as number) >= minPerCell) changed[i] = 1;

  const seen = new Uint8Array(cw * ch);
  const regions: DiffRegion[] = [];
  const stack: number[] = [];
  for (let start = 0; start < changed.length; start++) {
    if (!changed[start] || seen[start]) continue;
    seen[start] = 1;
    stack.push(start);
    let [x0, y0, x1, y1] = [cw, ch, -1, -1];
    let pixels = 0;
    while (stack.length > 0) {
      const i = stack.pop() as number;
      const cx = i % cw;
      const cy = Math.floor(i / cw);
      x0 = Math.min(x0, cx);
      y0 = Math.min(y0, cy);
      x1 = Math.max(x1, cx);
      y1 = Math.max(y1, cy);
      pixels += counts[i] as number;
      for (let dy = -join; dy <= join; dy++) {
        const ny = cy + dy;
        if (ny < 0 || ny >= ch) continue;
        for (let dx = -join; dx <= join; dx++) {
          const nx = cx + dx;
          if (nx < 0 || nx >= cw) continue;
          const j = ny * cw + nx;
          if (changed[j] && !seen[j]) {
            seen[j] = 1;
            stack.push(j);
          }
        }
      }
    }
    if (pixels < minPixels) continue;
    regions.push({
      box: tighten(a, b, threshold, [
        x0 * cell,
        y0 * cell,
        Math.min(width, (x1 + 1) * cell),
        Math.min(height, (y1 + 1) * cell),
      ]),
      pixels,
    });
  }
  return regions.sort((p, q) => q.pixels - p.pixels).slice(0, maxRegions);
}

/** The box shrunk to the pixels inside it that differ. */
function tighten(
  a: RgbaImage,
  b: RgbaImage,
  threshold: number,
  box: [number, number, number, number],
): [number, number, number, number] {
  let [x0, y0, x1, y1] = [box[2], box[3], box[0] - 1, box[1] - 1];
  for (let y = box[1]; y < box[3]; y++) {
    for (let x = box[0]; x < box[2]; x++) {
      const o = (y * a.width + x) * 4;
      const d = Math.max(
        Math.abs((a.data[o] as number) - (b.data[o] as number)),
        Math.abs((a.data[o + 1] as number) - (b.data[o + 1] as number)),
        Math.abs((a.data[o + 2] as number) - (b.data[o + 2] as number)),
      );
      if (d <= threshold) continue;
      if (x < x0) x0 = x;
      if (y < y0) y0 = y;
      if (x > x1) x1 = x;
      if (y > y1) y1 = y;
    }
  }
  return x1 < x0 ? box : [x0, y0, x1 + 1, y1 + 1];
}
