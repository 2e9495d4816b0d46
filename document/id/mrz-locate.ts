import { type GreyImage, type Point, shrink } from "./geometry.js";

/**
 * Finds the Machine Readable Zone of an identity document in its pixels, at any rotation up to about ±25°
 * and under a mild perspective: the image is binarised against its local mean, its connected components
 * (glyphs) are chained into text lines (neighbours of similar height, close and roughly aligned), and the
 * MRZ is the group of 2 or 3 long, parallel, evenly stacked lines of 25-50 glyphs of one height — what no
 * other part of a document prints. The result is each line's fitted centre line in source pixels, from
 * which mrz-read.ts rectifies the band (and the page).
 */

export interface MrzLineGeometry {
  /** Start and end of the line's centre, source pixels (left to right along the text). */
  start: Point;
  end: Point;
  /** Median glyph height, source pixels. */
  glyphHeight: number;
  /** Glyphs chained into the line. */
  glyphs: number;
}

export interface MrzLocation {
  lines: MrzLineGeometry[];
  /** Angle of the text lines, degrees (positive = clockwise in image coordinates). */
  angleDeg: number;
}

interface Component {
  x0: number;
  y0: number;
  x1: number;
  y1: number;
  cx: number;
  cy: number;
  h: number;
  n: number;
}

/** Longest side the search works at (glyphs of an MRZ stay ≥ 8 px high there for any usual capture). */
const WORK_SIDE = 1400;

/** Ink: darker than the local mean by this much (0-255). */
const INK_CONTRAST = 18;

function binarise(img: GreyImage): Uint8Array {
  const { width: w, height: h, data } = img;
  const integral = new Float64Array((w + 1) * (h + 1));
  for (let y = 0; y < h; y++) {
    let row = 0;
    for (let x = 0; x < w; x++) {
      row += data[y * w + x]!;
      integral[(y + 1) * (w + 1) + x + 1] = integral[y * (w + 1) + x + 1]! + row;
    }
  }
  const r = Math.max(8, Math.round(Math.max(w, h) / 60));
  const out = new Uint8Array(w * h);
  for (let y = 0; y < h; y++) {
    const ya = Math.max(0, y - r);
    const yb = Math.min(h, y + r + 1);
    for (let x = 0; x < w; x++) {
      const xa = Math.max(0, x - r);
      const xb = Math.min(w, x + r + 1);
      const sum =
        integral[yb * (w + 1) + xb]! -
        integral[ya * (w + 1) + xb]! -
        integral[yb * (w + 1) + xa]! +
        integral[ya * (w + 1) + xa]!;
      const mean = sum / ((yb - ya) * (xb - xa));
      out[y * w + x] = data[y * w + x]! < mean - INK_CONTRAST ? 1 : 0;
    }
  }
  return out;
}

function components(bin: Uint8Array, w: number, h: number, maxHeight: number): Component[] {
  const label = new Int32Array(w * h);
  const out: Component[] = [];
  const stack: number[] = [];
  let next = 1;
  for (let start = 0; start < bin.length; start++) {
    if (!bin[start] || label[start]) continue;
    const id = next++;
    label[start] = id;
    stack.push(start);
    let x0 = w;
    let y0 = h;
    let x1 = 0;
    let y1 = 0;
    let n = 0;
    while (stack.length) {
      const p = stack.pop()!;
      const x = p % w;
      const y = (p - x) / w;
      n++;
      if (x < x0) x0 = x;
      if (x > x1) x1 = x;
      if (y < y0) y0 = y;
      if (y > y1) y1 = y;
      for (let dy = -1; dy <= 1; dy++) {
        const yy = y + dy;
        if (yy < 0 || yy >= h) continue;
        for (let dx = -1; dx <= 1; dx++) {
          const xx = x + dx;
          if (xx < 0 || xx >= w) continue;
          const q = yy * w + xx;
          if (bin[q] && !label[q]) {
            label[q] = id;
            stack.push(q);
          }
        }
      }
    }
    const cw = x1 - x0 + 1;
    const ch = y1 - y0 + 1;
    if (ch < 5 || ch > maxHeight || cw > ch * 1.6 || n < 6) continue;
    out.push({ x0, y0, x1, y1, cx: (x0 + x1) / 2, cy: (y0 + y1) / 2, h: ch, n });
  }
  return out;
}

const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length ? s[Math.floor(s.length / 2)]! : 0;
};

interface Chain {
  comps: Component[];
  /** Unit direction along the line, and the normal. */
  dir: Point;
  start: Point;
  end: Point;
  height: number;
  angle: number;
}

/** Chains glyphs into lines: each glyph links to its nearest right-hand neighbour that looks like a peer. */
function chains(comps: Component[], minGlyphs = 18): Chain[] {
  const sorted = [...comps].sort((a, b) => a.cx - b.cx);
  const parent = sorted.map((_, i) => i);
  const find = (i: number): number => {
    while (parent[i] !== i) {
      parent[i] = parent[parent[i]!]!;
      i = parent[i]!;
    }
    return i;
  };
  const maxH = (a: Component, b: Component) => Math.max(a.h, b.h);
  for (let i = 0; i < sorted.length; i++) {
    const a = sorted[i]!;
    let best = -1;
    let bestD = Number.POSITIVE_INFINITY;
    for (let j = i + 1; j < sorted.length; j++) {
      const b = sorted[j]!;
      const dx = b.cx - a.cx;
      const H = maxH(a, b);
      if (dx > H * 1.8) break;
      if (dx <= 0) continue;
      const ratio = Math.max(a.h, b.h) / Math.min(a.h, b.h);
      if (ratio > 2.2) continue;
      const dy = Math.abs(b.cy - a.cy);
      if (dy > H * 0.55) continue;
      const d = dx + dy * 2;
      if (d < bestD) {
        bestD = d;
        best = j;
      }
    }
    if (best >= 0) parent[find(best)] = find(i);
  }
  const groups = new Map<number, Component[]>();
  sorted.forEach((c, i) => {
    const r = find(i);
    const g = groups.get(r) ?? [];
    g.push(c);
    groups.set(r, g);
  });
  const out: Chain[] = [];
  for (const g of groups.values()) {
    if (g.length < minGlyphs) continue;
    // Least-squares line through the glyph centres.
    const n = g.length;
    const mx = g.reduce((s, c) => s + c.cx, 0) / n;
    const my = g.reduce((s, c) => s + c.cy, 0) / n;
    let sxx = 0;
    let sxy = 0;
    for (const c of g) {
      sxx += (c.cx - mx) ** 2;
      sxy += (c.cx - mx) * (c.cy - my);
    }
    const slope = sxx > 0 ? sxy / sxx : 0;
    const len = Math.hypot(1, slope);
    const dir: Point = [1 / len, slope / len];
    const proj = g.map((c) => (c.cx - mx) * dir[0] + (c.cy - my) * dir[1]);
    const height = median(g.map((c) => c.h));
    // Glyph boxes extend half a glyph beyond their centres along the line.
    const half = height * 0.42;
    const t0 = Math.min(...proj) - half;
    const t1 = Math.max(...proj) + half;
    out.push({
      comps: g,
      dir,
      start: [mx + dir[0] * t0, my + dir[1] * t0],
      end: [mx + dir[0] * t1, my + dir[1] * t1],
      height,
      angle: (Math.atan2(dir[1], dir[0]) * 180) / Math.PI,
    });
  }
  return out;
}

const lengthOf = (c: Chain) => Math.hypot(c.end[0] - c.start[0], c.end[1] - c.start[1]);

/** Does the chain look like an MRZ line: many glyphs of one height at an even pitch? */
function mrzLike(c: Chain): boolean {
  const n = c.comps.length;
  if (n < 22 || n > 52) return false;
  const pitch = lengthOf(c) / n;
  if (pitch < c.height * 0.6 || pitch > c.height * 1.35) return false;
  const tall = c.comps.filter((g) => g.h >= c.height * 0.8 && g.h <= c.height * 1.25).length;
  return tall >= n * 0.5;
}

/**
 * The MRZ of an image, or undefined when it has none. `grey` is the page in source pixels; the search runs on
 * a copy shrunk to about 1400 pixels on the longer side, and the geometry is returned in source pixels.
 */
export function locateMrz(grey: GreyImage): MrzLocation | undefined {
  return analyseText(grey).mrz;
}

/**
 * The MRZ (when there is one) and the slope of the page's text lines (the median angle of every line of 10
 * glyphs or more, degrees; undefined when there are fewer than three such lines).
 */
export function analyseText(grey: GreyImage): { mrz?: MrzLocation; textAngleDeg?: number } {
  const factor = Math.max(1, Math.floor(Math.max(grey.width, grey.height) / WORK_SIDE));
  const work = shrink(grey, factor);
  const bin = binarise(work);
  const comps = components(bin, work.width, work.height, Math.max(12, work.height / 12));
  const all = chains(comps, 10);
  const textAngleDeg = all.length >= 3 ? median(all.map((c) => c.angle)) : undefined;
  return {
    mrz: mrzOf(
      all.filter((c) => c.comps.length >= 18),
      factor,
    ),
    textAngleDeg,
  };
}

function mrzOf(chainsFound: Chain[], factor: number): MrzLocation | undefined {
  const candidates = chainsFound.filter(mrzLike);
  if (candidates.length < 2) return undefined;
  // Groups of 2-3 parallel lines of similar height and length, stacked 1.3-2.6 glyph heights apart.
  candidates.sort((a, b) => a.start[1] - b.start[1]);
  let best: { lines: Chain[]; score: number } | undefined;
  for (let i = 0; i < candidates.length; i++) {
    const group = [candidates[i]!];
    for (let j = i + 1; j < candidates.length && group.length < 3; j++) {
      const prev = group[group.length - 1]!;
      const c = candidates[j]!;
      if (Math.abs(c.angle - prev.angle) > 3) continue;
      if (Math.max(c.height, prev.height) / Math.min(c.height, prev.height) > 1.35) continue;
      const lenRatio = Math.max(lengthOf(c), lengthOf(prev)) / Math.min(lengthOf(c), lengthOf(prev));
      if (lenRatio > 1.3) continue;
      // Distance between the two centre lines, measured along the normal.
      const nx = -prev.dir[1];
      const ny = prev.dir[0];
      const mid: Point = [(c.start[0] + c.end[0]) / 2, (c.start[1] + c.end[1]) / 2];
      const gap = (mid[0] - prev.start[0]) * nx + (mid[1] - prev.start[1]) * ny;
      if (gap < prev.height * 1.2 || gap > prev.height * 2.8) continue;
      // Horizontally aligned: the starts are close along the line.
      const along = (c.start[0] - prev.start[0]) * prev.dir[0] + (c.start[1] - prev.start[1]) * prev.dir[1];
      if (Math.abs(along) > prev.height * 3) continue;
      group.push(c);
    }
    if (group.length < 2) continue;
    const score = group.reduce((s, c) => s + c.comps.length, 0);
    if (!best || score > best.score) best = { lines: group, score };
  }
  if (!best) return undefined;
  const s = factor;
  const lines = best.lines.map((c) => ({
    start: [c.start[0] * s, c.start[1] * s] as Point,
    end: [c.end[0] * s, c.end[1] * s] as Point,
    glyphHeight: c.height * s,
    glyphs: c.comps.length,
  }));
  return { lines, angleDeg: median(best.lines.map((c) => c.angle)) };
}
