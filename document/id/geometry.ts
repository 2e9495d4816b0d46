import type { RgbaImage } from "../raster.js";

/**
 * Small geometry for identity documents: grey pixels, the 3 × 3 homography of four point pairs, and a
 * bilinear perspective warp (rectifying an MRZ band or a whole data page seen at an angle).
 */

export type Point = [number, number];

export interface GreyImage {
  width: number;
  height: number;
  /** One byte per pixel, row-major. */
  data: Uint8Array;
}

export function toGrey(img: RgbaImage): GreyImage {
  const out = new Uint8Array(img.width * img.height);
  const d = img.data;
  for (let i = 0, o = 0; o < out.length; i += 4, o++) {
    out[o] = ((d[i] as number) * 77 + (d[i + 1] as number) * 150 + (d[i + 2] as number) * 29) >> 8;
  }
  return { width: img.width, height: img.height, data: out };
}

/** Box-averaged downscale of a grey image by an integer factor. */
export function shrink(img: GreyImage, factor: number): GreyImage {
  if (factor <= 1) return img;
  const w = Math.floor(img.width / factor);
  const h = Math.floor(img.height / factor);
  const out = new Uint8Array(w * h);
  const n = factor * factor;
  for (let y = 0; y < h; y++) {
    for (let x = 0; x < w; x++) {
      let sum = 0;
      for (let dy = 0; dy < factor; dy++) {
        const row = (y * factor + dy) * img.width + x * factor;
        for (let dx = 0; dx < factor; dx++) sum += img.data[row + dx] as number;
      }
      out[y * w + x] = sum / n;
    }
  }
  return { width: w, height: h, data: out };
}

/** The homography H with H·from[i] ∝ to[i] (8 unknowns, Gaussian elimination with partial pivoting). */
export function homography(from: readonly Point[], to: readonly Point[]): number[] {
  const A: number[][] = [];
  for (let i = 0; i < 4; i++) {
    const [x, y] = from[i] as Point;
    const [u, v] = to[i] as Point;
    A.push([x, y, 1, 0, 0, 0, -u * x, -u * y, u]);
    A.push([0, 0, 0, x, y, 1, -v * x, -v * y, v]);
  }
  for (let c = 0; c < 8; c++) {
    let p = c;
    for (let r = c + 1; r < 8; r++) if (Math.abs(A[r]![c]!) > Math.abs(A[p]![c]!)) p = r;
    [A[c], A[p]] = [A[p]!, A[c]!];
    const row = A[c]!;
    if (Math.abs(row[c]!) < 1e-12) throw new Error("degenerate quadrilateral");
    for (let r = 0; r < 8; r++) {
      if (r === c) continue;
      const other = A[r]!;
      const f = other[c]! / row[c]!;
      if (f === 0) continue;
      for (let k = c; k < 9; k++) other[k] = other[k]! - f * row[k]!;
    }
  }
  return [...A.map((row, i) => row[8]! / row[i]!), 1];
}

export function applyHomography(H: readonly number[], [x, y]: Point): Point {
  const w = H[6]! * x + H[7]! * y + H[8]!;
  return [(H[0]! * x + H[1]! * y + H[2]!) / w, (H[3]! * x + H[4]! * y + H[5]!) / w];
}

/**
 * The quadrilateral `quad` (top-left, top-right, bottom-right, bottom-left, in source pixels) warped to an
 * upright width × height grey image (white outside the source).
 */
export function warpQuad(src: GreyImage, quad: readonly Point[], width: number, height: number): GreyImage {
  const H = homography(
    [
      [0, 0],
      [width, 0],
      [width, height],
      [0, height],
    ],
    quad,
  );
  const [h0, h1, h2, h3, h4, h5, h6, h7] = H as [
    number,
    number,
    number,
    number,
    number,
    number,
    number,
    number,
  ];
  const out = new Uint8Array(width * height);
  const sw = src.width;
  const sh = src.height;
  const s = src.data;
  for (let y = 0; y < height; y++) {
    for (let x = 0; x < width; x++) {
      const px = x + 0.5;
      const py = y + 0.5;
      const w = h6 * px + h7 * py + 1;
      const u = (h0 * px + h1 * py + h2) / w - 0.5;
      const v = (h3 * px + h4 * py + h5) / w - 0.5;
      if (u < 0 || v < 0 || u >= sw - 1 || v >= sh - 1) {
        out[y * width + x] = 255;
        continue;
      }
      const x0 = u | 0;
      const y0 = v | 0;
      const fx = u - x0;
      const fy = v - y0;
      const i = y0 * sw + x0;
      const a = s[i]! * (1 - fx) + s[i + 1]! * fx;
      const b = s[i + sw]! * (1 - fx) + s[i + sw + 1]! * fx;
      out[y * width + x] = a * (1 - fy) + b * fy;
    }
  }
  return { width, height, data: out };
}

/** Grey pixels as RGBA (for encoders that take RGBA). */
export function greyToRgba(img: GreyImage): RgbaImage {
  const data = new Uint8ClampedArray(img.width * img.height * 4);
  for (let i = 0; i < img.data.length; i++) {
    const v = img.data[i]!;
    data[i * 4] = v;
    data[i * 4 + 1] = v;
    data[i * 4 + 2] = v;
    data[i * 4 + 3] = 255;
  }
  return { width: img.width, height: img.height, data };
}

/**
 * The page's dominant edge direction, degrees in [-45, 45): the angle (image coordinates, y down, the sense of
 * a text line's slope) by which the page's horizontal and vertical edges are turned. The gradient's structure
 * tensor is summed over 8 × 8 cells (a staircase edge's pixel gradients point along the axes; summed over a cell
 * they give the edge's true direction); each cell's direction, folded modulo 90° (an edge and the edge at right
 * angles to it vote alike), is voted in half-degree bins weighted by how strongly and coherently it is oriented,
 * so a photographed card's own axes outvote a background's. Undefined when no direction wins.
 */
export function dominantEdgeAngle(grey: GreyImage, maxSide = 900): number | undefined {
  const step = Math.max(1, Math.ceil(Math.max(grey.width, grey.height) / maxSide));
  const w = Math.floor(grey.width / step);
  const h = Math.floor(grey.height / step);
  if (w < 32 || h < 32) return undefined;
  const px = (x: number, y: number) => grey.data[y * step * grey.width + x * step]!;
  const CELL = 8;
  const cw = Math.floor(w / CELL);
  const ch = Math.floor(h / CELL);
  const jxx = new Float64Array(cw * ch);
  const jyy = new Float64Array(cw * ch);
  const jxy = new Float64Array(cw * ch);
  for (let y = 1; y < Math.min(h - 1, ch * CELL); y++)
    for (let x = 1; x < Math.min(w - 1, cw * CELL); x++) {
      const gx =
        px(x + 1, y - 1) +
        2 * px(x + 1, y) +
        px(x + 1, y + 1) -
        px(x - 1, y - 1) -
        2 * px(x - 1, y) -
        px(x - 1, y + 1);
      const gy =
        px(x - 1, y + 1) +
        2 * px(x, y + 1) +
        px(x + 1, y + 1) -
        px(x - 1, y - 1) -
        2 * px(x, y - 1) -
        px(x + 1, y - 1);
      const c = Math.floor(y / CELL) * cw + Math.floor(x / CELL);
      jxx[c]! += gx * gx;
      jyy[c]! += gy * gy;
      jxy[c]! += gx * gy;
    }
  const BINS = 180;
  const votes = new Float64Array(BINS);
  let total = 0;
  for (let c = 0; c < cw * ch; c++) {
    const a = jxx[c]!;
    const b = jyy[c]!;
    const d = jxy[c]!;
    // λ1 − λ2: the energy of the cell's one direction (0 for an isotropic or flat cell).
    const weight = Math.sqrt((a - b) * (a - b) + 4 * d * d);
    if (weight === 0) continue;
    let angle = (0.5 * Math.atan2(2 * d, a - b) * 180) / Math.PI;
    angle = ((((angle + 45) % 90) + 90) % 90) - 45;
    votes[Math.min(BINS - 1, Math.floor((angle + 45) * 2))]! += weight;
    total += weight;
  }
  if (total === 0) return undefined;
  let best = -1;
  let bestVote = 0;
  for (let b = 0; b < BINS; b++) {
    const v = votes[(b + BINS - 1) % BINS]! + votes[b]! + votes[(b + 1) % BINS]!;
    if (v > bestVote) {
      bestVote = v;
      best = b;
    }
  }
  // A peak of three bins holding under 4 % of the votes (uniform: 1.7 %) is no direction.
  if (best < 0 || bestVote < 0.04 * total) return undefined;
  return best / 2 - 45 + 0.25;
}

/**
 * An unsharp mask: each pixel pushed away from the mean of the (2·radius + 1)² box around it by `amount` times
 * their difference (clamped to 0-255). A photographed PDF417's modules are two or three pixels wide and blurred
 * by the lens and the JPEG; sharpened, ZXing tells its bars apart again.
 */
export function unsharp(img: GreyImage, amount = 2, radius = 1): GreyImage {
  const { width: w, height: h, data } = img;
  const rows = new Float32Array(w * h);
  for (let y = 0; y < h; y++) {
    const row = y * w;
    for (let x = 0; x < w; x++) {
      let s = 0;
      const lo = Math.max(0, x - radius);
      const hi = Math.min(w - 1, x + radius);
      for (let i = lo; i <= hi; i++) s += data[row + i]!;
      rows[row + x] = s / (hi - lo + 1);
    }
  }
  const out = new Uint8Array(w * h);
  for (let y = 0; y < h; y++) {
    const lo = Math.max(0, y - radius);
    const hi = Math.min(h - 1, y + radius);
    for (let x = 0; x < w; x++) {
      let s = 0;
      for (let j = lo; j <= hi; j++) s += rows[j * w + x]!;
      const p = data[y * w + x]!;
      const v = p + amount * (p - s / (hi - lo + 1));
      out[y * w + x] = v < 0 ? 0 : v > 255 ? 255 : Math.round(v);
    }
  }
  return { width: w, height: h, data: out };
}
