import type { RgbaImage } from "./raster.js";

/**
 * What OCR needs to know about a scanned or photographed page before reading it, measured on its pixels:
 * how tall its glyphs are (so it is read at the resolution its text needs), how far it is tilted (so it
 * is read straight), and, for a photo of a sheet on a darker background, where the sheet's four corners
 * are (so its perspective is undone). Pure functions over pixels; the OCR pass (document/ocr.ts) applies them.
 */

export interface Point {
  x: number;
  y: number;
}

/** A sheet's corners in pixels: top left, top right, bottom right, bottom left. */
export type Quad = [Point, Point, Point, Point];

export interface ScanAnalysis {
  /** Median height of glyph-like ink blobs, in pixels of the analysed image; undefined with too few. */
  glyphHeight?: number;
  /** Glyph-like blobs found. */
  glyphs: number;
  /** Clockwise tilt of the text lines in degrees (rotate the image by minus this to straighten it). */
  skewDeg: number;
  /** The sheet's outline when the picture shows the sheet on a visibly darker background. */
  outline?: Quad;
}

/** Grey levels (0-255) of RGBA pixels. */
export function greyOf(img: RgbaImage): Uint8Array {
  const n = img.width * img.height;
  const out = new Uint8Array(n);
  const d = img.data;
  for (let i = 0; i < n; i++) {
    out[i] = (d[4 * i]! * 77 + d[4 * i + 1]! * 150 + d[4 * i + 2]! * 29) >> 8;
  }
  return out;
}

/** Otsu's threshold of a grey histogram. */
export function otsu(grey: Uint8Array): number {
  const hist = new Float64Array(256);
  for (const v of grey) hist[v]!++;
  const total = grey.length;
  let sum = 0;
  for (let i = 0; i < 256; i++) sum += i * hist[i]!;
  let sumB = 0;
  let wB = 0;
  let best = 0;
  let threshold = 128;
  for (let t = 0; t < 256; t++) {
    wB += hist[t]!;
    if (wB === 0) continue;
    const wF = total - wB;
    if (wF === 0) break;
    sumB += t * hist[t]!;
    const mB = sumB / wB;
    const mF = (sum - sumB) / wF;
    const between = wB * wF * (mB - mF) * (mB - mF);
    if (between > best) {
      best = between;
      threshold = t;
    }
  }
  return threshold;
}

interface Blob {
  x0: number;
  y0: number;
  x1: number;
  y1: number;
  n: number;
}

/** Connected components (8-neighbours) of the pixels where `on` is 1; at most `max` blobs. */
function blobs(on: Uint8Array, width: number, height: number, max = 200_000): Blob[] {
  const label = new Int32Array(width * height).fill(-1);
  const out: Blob[] = [];
  const stack: number[] = [];
  for (let start = 0; start < on.length; start++) {
    if (!on[start] || label[start] !== -1) continue;
    if (out.length >= max) break;
    const id = out.length;
    const b: Blob = { x0: width, y0: height, x1: 0, y1: 0, n: 0 };
    label[start] = id;
    stack.push(start);
    while (stack.length) {
      const p = stack.pop()!;
      const x = p % width;
      const y = (p - x) / width;
      b.n++;
      if (x < b.x0) b.x0 = x;
      if (x > b.x1) b.x1 = x;
      if (y < b.y0) b.y0 = y;
      if (y > b.y1) b.y1 = y;
      for (let dy = -1; dy <= 1; dy++) {
        const yy = y + dy;
        if (yy < 0 || yy >= height) continue;
        for (let dx = -1; dx <= 1; dx++) {
          const xx = x + dx;
          if (xx < 0 || xx >= width) continue;
          const q = yy * width + xx;
          if (on[q] && label[q] === -1) {
            label[q] = id;
            stack.push(q);
          }
        }
      }
    }
    out.push(b);
  }
  return out;
}

const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)];
};

/** Blobs shaped like printed characters (not rules, boxes, specks or pictures). */
function glyphLike(all: Blob[], width: number, height: number): Blob[] {
  const maxH = Math.max(8, height / 12);
  return all.filter((b) => {
    const w = b.x1 - b.x0 + 1;
    const h = b.y1 - b.y0 + 1;
    if (h < 4 || h > maxH || w > 3 * h || w < 0.08 * h || w > width / 4) return false;
    return b.n >= 0.12 * w * h;
  });
}

/** Tilt of the text lines: the angle at which the glyphs' bottoms line up best (projection profile). */
function skewOf(glyphs: Blob[]): number {
  if (glyphs.length < 20) return 0;
  const pts = glyphs.map((b) => ({ x: (b.x0 + b.x1) / 2, y: b.y1 }));
  const score = (deg: number) => {
    const t = (deg * Math.PI) / 180;
    const s = Math.sin(t);
    const c = Math.cos(t);
    const bins = new Map<number, number>();
    for (const p of pts) {
      const k = Math.round(p.y * c - p.x * s);
      bins.set(k, (bins.get(k) ?? 0) + 1);
    }
    let sum = 0;
    for (const v of bins.values()) sum += v * v;
    return sum;
  };
  let best = 0;
  let bestScore = score(0);
  for (let d = -8; d <= 8; d += 0.25) {
    const v = score(d);
    if (v > bestScore) {
      bestScore = v;
      best = d;
    }
  }
  let fine = best;
  for (let d = best - 0.25; d <= best + 0.25; d += 0.05) {
    const v = score(d);
    if (v > bestScore) {
      bestScore = v;
      fine = d;
    }
  }
  return Math.round(fine * 100) / 100;
}

/**
 * The sheet's four corners, when the picture shows a bright sheet on a clearly darker background (a phone
 * photo of a page on a desk). Undefined for a scan (the sheet fills the picture) or when no sheet-like
 * bright region is found.
 */
function outlineOf(grey: Uint8Array, width: number, height: number): Quad | undefined {
  // Coarse grid: the sheet is large, so a 1/4 sampling is plenty.
  const step = Math.max(1, Math.round(Math.max(width, height) / 400));
  const w = Math.floor(width / step);
  const h = Math.floor(height / step);
  if (w < 40 || h < 40) return undefined;
  const small = new Uint8Array(w * h);
  for (let y = 0; y < h; y++)
    for (let x = 0; x < w; x++) small[y * w + x] = grey[y * step * width + x * step]!;
  const t = otsu(small);
  // The border ring: a sheet on a background leaves most of it dark.
  let ring = 0;
  let dark = 0;
  for (let x = 0; x < w; x++) {
    for (const y of [0, h - 1]) {
      ring++;
      if (small[y * w + x]! < t) dark++;
    }
  }
  for (let y = 0; y < h; y++) {
    for (const x of [0, w - 1]) {
      ring++;
      if (small[y * w + x]! < t) dark++;
    }
  }
  if (dark < 0.6 * ring) return undefined;
  // The sheet is the largest bright region (text on it leaves holes, not gaps in its outline).
  const bright = new Uint8Array(w * h);
  for (let i = 0; i < bright.length; i++) bright[i] = small[i]! >= t ? 1 : 0;
  const sheet = blobs(bright, w, h, 5_000).sort((a, b) => b.n - a.n)[0];
  if (!sheet) return undefined;
  const area = (sheet.x1 - sheet.x0 + 1) * (sheet.y1 - sheet.y0 + 1);
  if (area < 0.2 * w * h) return undefined;
  // Corners: the sheet's extreme points along the diagonals.
  let tl = { x: 0, y: 0, v: Infinity };
  let tr = { x: 0, y: 0, v: -Infinity };
  let br = { x: 0, y: 0, v: -Infinity };
  let bl = { x: 0, y: 0, v: Infinity };
  for (let y = sheet.y0; y <= sheet.y1; y++) {
    for (let x = sheet.x0; x <= sheet.x1; x++) {
      if (!bright[y * w + x]) continue;
      if (x + y < tl.v) tl = { x, y, v: x + y };
      if (x - y > tr.v) tr = { x, y, v: x - y };
      if (x + y > br.v) br = { x, y, v: x + y };
      if (x - y < bl.v) bl = { x, y, v: x - y };
    }
  }
  const quad: Quad = [tl, tr, br, bl].map((p) => ({ x: p.x * step, y: p.y * step })) as Quad;
  // A sheet touching the picture's edges is a scan's page, not a photo's.
  const margin = 2 * step;
  if (quad.every((p) => p.x <= margin || p.y <= margin || p.x >= width - margin || p.y >= height - margin))
    return undefined;
  return quad;
}

/**
 * Analyses a page picture: glyph height, tilt, and a photographed sheet's outline. Works on at most
 * `maxPixels` pixels (a larger picture is sampled), so it costs tens of milliseconds.
 */
export function analyseScan(img: RgbaImage, maxPixels = 2_500_000): ScanAnalysis {
  const grey = greyOf(img);
  const k = Math.max(1, Math.ceil(Math.sqrt((img.width * img.height) / maxPixels)));
  const w = Math.floor(img.width / k);
  const h = Math.floor(img.height / k);
  let g = grey;
  if (k > 1) {
    g = new Uint8Array(w * h);
    for (let y = 0; y < h; y++) for (let x = 0; x < w; x++) g[y * w + x] = grey[y * k * img.width + x * k]!;
  }
  const t = otsu(g);
  const ink = new Uint8Array(w * h);
  for (let i = 0; i < ink.length; i++) ink[i] = g[i]! < t ? 1 : 0;
  const glyphs = glyphLike(blobs(ink, w, h), w, h);
  const heights = glyphs.map((b) => b.y1 - b.y0 + 1);
  const outline = outlineOf(grey, img.width, img.height);
  return {
    glyphHeight: glyphs.length >= 30 ? (median(heights) as number) * k : undefined,
    glyphs: glyphs.length,
    skewDeg: skewOf(glyphs),
    ...(outline ? { outline } : {}),
  };
}

// ---------------------------------------------------------------------------------------------
// Perspective
// ---------------------------------------------------------------------------------------------

/** A 3 × 3 homography, row-major, h[8] = 1. */
export type Homography = number[];

/** The homography taking the four `from` points onto the four `to` points (direct linear solve). */
export function homography(from: Quad, to: Quad): Homography {
  const a: number[][] = [];
  const b: number[] = [];
  for (let i = 0; i < 4; i++) {
    const { x, y } = from[i]!;
    const { x: u, y: v } = to[i]!;
    a.push([x, y, 1, 0, 0, 0, -u * x, -u * y]);
    b.push(u);
    a.push([0, 0, 0, x, y, 1, -v * x, -v * y]);
    b.push(v);
  }
  // Gaussian elimination with partial pivoting.
  for (let c = 0; c < 8; c++) {
    let p = c;
    for (let r = c + 1; r < 8; r++) if (Math.abs(a[r]![c]!) > Math.abs(a[p]![c]!)) p = r;
    [a[c], a[p]] = [a[p]!, a[c]!];
    [b[c], b[p]] = [b[p]!, b[c]!];
    for (let r = 0; r < 8; r++) {
      if (r === c) continue;
      const f = a[r]![c]! / a[c]![c]!;
      for (let k = c; k < 8; k++) a[r]![k]! -= f * a[c]![k]!;
      b[r]! -= f * b[c]!;
    }
  }
  return [...b.map((v, i) => v / a[i]![i]!), 1];
}

export function applyHomography(h: Homography, p: Point): Point {
  const d = h[6]! * p.x + h[7]! * p.y + 1;
  return { x: (h[0]! * p.x + h[1]! * p.y + h[2]!) / d, y: (h[3]! * p.x + h[4]! * p.y + h[5]!) / d };
}

/** The sheet's size once flattened: the mean lengths of its opposite sides. */
export function flatSize(q: Quad): { width: number; height: number } {
  const len = (a: Point, b: Point) => Math.hypot(a.x - b.x, a.y - b.y);
  return {
    width: Math.round((len(q[0], q[1]) + len(q[3], q[2])) / 2),
    height: Math.round((len(q[0], q[3]) + len(q[1], q[2])) / 2),
  };
}

/**
 * The sheet inside `q` flattened onto a width × height rectangle (bilinear sampling); with the homography
 * from the flattened picture back to the original one, for mapping what is read there back.
 */
export function flatten(
  img: RgbaImage,
  q: Quad,
  width: number,
  height: number,
): { image: RgbaImage; back: Homography } {
  const rect: Quad = [
    { x: 0, y: 0 },
    { x: width - 1, y: 0 },
    { x: width - 1, y: height - 1 },
    { x: 0, y: height - 1 },
  ];
  const back = homography(rect, q);
  const out = new Uint8ClampedArray(width * height * 4);
  const src = img.data;
  const W = img.width;
  const H = img.height;
  for (let y = 0; y < height; y++) {
    for (let x = 0; x < width; x++) {
      const p = applyHomography(back, { x, y });
      const o = (y * width + x) * 4;
      const x0 = Math.floor(p.x);
      const y0 = Math.floor(p.y);
      if (x0 < 0 || y0 < 0 || x0 >= W - 1 || y0 >= H - 1) {
        out[o] = out[o + 1] = out[o + 2] = out[o + 3] = 255;
        continue;
      }
      const fx = p.x - x0;
      const fy = p.y - y0;
      const i00 = (y0 * W + x0) * 4;
      const i10 = i00 + 4;
      const i01 = i00 + W * 4;
      const i11 = i01 + 4;
      for (let c = 0; c < 3; c++) {
        const top = src[i00 + c]! * (1 - fx) + src[i10 + c]! * fx;
        const bottom = src[i01 + c]! * (1 - fx) + src[i11 + c]! * fx;
        out[o + c] = top * (1 - fy) + bottom * fy;
      }
      out[o + 3] = 255;
    }
  }
  return { image: { width, height, data: out }, back };
}
