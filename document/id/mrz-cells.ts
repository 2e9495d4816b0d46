import { otsu } from "../scan-geometry.js";
import type { GreyImage } from "./geometry.js";

/**
 * The character cells of one rectified MRZ line: its glyphs (connected components of the binarised strip),
 * the fixed pitch grid they sit on (fitted to the glyph centres), and which cells hold the filler `<`. The
 * English OCR model reads OCR-B's `<` as K, L or C; its shape is unmistakable on pixels instead (a chevron:
 * the left edge of the glyph is inked only around its middle, the right edge only near its top and bottom),
 * so fillers are recognised here and erased before the OCR reads the remaining characters.
 */

export interface LineCells {
  /** Left edge of cell 0 and the pitch, strip pixels. */
  left: number;
  pitch: number;
  /** Per cell: `<` (a filler), `?` (ink, to be read), or `` (no ink). */
  kinds: ("<" | "?" | "")[];
  /** The strip with the fillers painted white. */
  cleaned: GreyImage;
  /** Top of the capitals and the baseline (strip rows), from the full-height glyphs. */
  capTop: number;
  baseline: number;
  /** Per cell: its centre, cap top and baseline (strip pixels), fitted along the line (a residual perspective bends the grid). */
  centres: number[];
  capTops: number[];
  baselines: number[];
}

/** Least-squares polynomial (degree 1 or 2) through (x, y) points; undefined when underdetermined. */
function polyFit(points: [number, number][], degree: 1 | 2): ((x: number) => number) | undefined {
  const n = degree + 1;
  if (points.length < n + 2) return undefined;
  const mx = points.reduce((s, [x]) => s + x, 0) / points.length;
  const sx = Math.max(1e-9, Math.sqrt(points.reduce((s, [x]) => s + (x - mx) ** 2, 0) / points.length));
  const A = Array.from({ length: n }, () => new Array<number>(n + 1).fill(0));
  for (const [x0, y] of points) {
    const x = (x0 - mx) / sx;
    const p = Array.from({ length: n }, (_, i) => x ** i);
    for (let r = 0; r < n; r++) {
      for (let c = 0; c < n; c++) A[r]![c]! += p[r]! * p[c]!;
      A[r]![n]! += p[r]! * y;
    }
  }
  for (let c = 0; c < n; c++) {
    let piv = c;
    for (let r = c + 1; r < n; r++) if (Math.abs(A[r]![c]!) > Math.abs(A[piv]![c]!)) piv = r;
    [A[c], A[piv]] = [A[piv]!, A[c]!];
    if (Math.abs(A[c]![c]!) < 1e-12) return undefined;
    for (let r = 0; r < n; r++) {
      if (r === c) continue;
      const k = A[r]![c]! / A[c]![c]!;
      for (let j = c; j <= n; j++) A[r]![j]! -= k * A[c]![j]!;
    }
  }
  const coef = A.map((row, i) => row[n]! / row[i]!);
  return (x0: number) => {
    const x = (x0 - mx) / sx;
    return coef.reduce((s, c, i) => s + c * x ** i, 0);
  };
}

interface Glyph {
  x0: number;
  y0: number;
  x1: number;
  y1: number;
  cx: number;
  pixels: number[];
}

function glyphsOf(img: GreyImage, ink: Uint8Array, minHeight: number): Glyph[] {
  const { width: w, height: h } = img;
  const seen = new Uint8Array(w * h);
  const out: Glyph[] = [];
  const stack: number[] = [];
  for (let s = 0; s < ink.length; s++) {
    if (!ink[s] || seen[s]) continue;
    seen[s] = 1;
    stack.push(s);
    const pixels: number[] = [];
    let x0 = w;
    let y0 = h;
    let x1 = 0;
    let y1 = 0;
    while (stack.length) {
      const p = stack.pop()!;
      pixels.push(p);
      const x = p % w;
      const y = (p - x) / w;
      if (x < x0) x0 = x;
      if (x > x1) x1 = x;
      if (y < y0) y0 = y;
      if (y > y1) y1 = y;
      for (let dy = -1; dy <= 1; dy++)
        for (let dx = -1; dx <= 1; dx++) {
          const xx = x + dx;
          const yy = y + dy;
          if (xx < 0 || yy < 0 || xx >= w || yy >= h) continue;
          const q = yy * w + xx;
          if (ink[q] && !seen[q]) {
            seen[q] = 1;
            stack.push(q);
          }
        }
    }
    if (y1 - y0 + 1 < minHeight || pixels.length < 8) continue;
    out.push({ x0, y0, x1, y1, cx: (x0 + x1) / 2, pixels });
  }
  return out;
}

/** Is this glyph OCR-B's `<`: left edge inked only mid-height, right edge only at top and bottom? */
function isChevron(g: Glyph, w: number): boolean {
  const gw = g.x1 - g.x0 + 1;
  const gh = g.y1 - g.y0 + 1;
  if (gw < 4 || gh < 6) return false;
  const leftEdge = g.x0 + gw * 0.2;
  const rightEdge = g.x1 - gw * 0.2;
  let leftOut = 0;
  let left = 0;
  let rightMid = 0;
  let right = 0;
  for (const p of g.pixels) {
    const x = p % w;
    const y = (p - x) / w;
    const t = (y - g.y0) / gh;
    if (x <= leftEdge) {
      left++;
      if (t < 0.28 || t > 0.72) leftOut++;
    } else if (x >= rightEdge) {
      right++;
      if (t > 0.3 && t < 0.7) rightMid++;
    }
  }
  return left > 0 && right > 0 && leftOut <= left * 0.08 && rightMid <= right * 0.08;
}

function leastSquares(pairs: [number, number][]): { left: number; pitch: number } | undefined {
  const n = pairs.length;
  if (n < 2) return undefined;
  const mk = pairs.reduce((s, [k]) => s + k + 0.5, 0) / n;
  const mx = pairs.reduce((s, [, x]) => s + x, 0) / n;
  let skk = 0;
  let skx = 0;
  for (const [k, x] of pairs) {
    skk += (k + 0.5 - mk) ** 2;
    skx += (k + 0.5 - mk) * (x - mx);
  }
  if (skk <= 0) return undefined;
  const pitch = skx / skk;
  return { left: mx - mk * pitch, pitch };
}

/**
 * The cells of a strip holding one MRZ line of `columns` characters, starting near `left` with about `pitch`
 * pixels per character (from the rectification).
 */
export function lineCells(
  strip: GreyImage,
  columns: number,
  left: number,
  pitch: number,
  /** Where the filler's ink centre sits from its cell's centre, in pitches (the font's; 0 when unknown). */
  fillerOffset = 0,
): LineCells {
  const t = otsu(strip.data);
  const ink = new Uint8Array(strip.data.length);
  for (let i = 0; i < ink.length; i++) ink[i] = strip.data[i]! <= t ? 1 : 0;
  const all = glyphsOf(strip, ink, Math.max(4, strip.height * 0.18));
  const heights = all.map((g) => g.y1 - g.y0 + 1).sort((a, b) => a - b);
  const capH = heights[Math.floor(heights.length * 0.7)] ?? strip.height / 2;
  const glyphs = all.filter((g) => g.y1 - g.y0 + 1 >= capH * 0.45).sort((a, b) => a.cx - b.cx);
  // Glyphs blurred together count for as many cells as they are wide.
  const spans = glyphs.map((g) => Math.max(1, Math.round((g.x1 - g.x0 + 1) / (pitch * 0.95))));
  const cellOf = new Map<Glyph, number[]>();
  let l = left;
  let p = pitch;
  if (spans.reduce((a, b) => a + b, 0) === columns) {
    // One glyph per cell, in order: the common case; fit the grid to it.
    let k = 0;
    const pairs: [number, number][] = [];
    glyphs.forEach((g, i) => {
      const n = spans[i]!;
      cellOf.set(
        g,
        Array.from({ length: n }, (_, j) => k + j),
      );
      if (n === 1) pairs.push([k, g.cx]);
      k += n;
    });
    const fit = leastSquares(pairs);
    if (fit && fit.pitch > pitch * 0.8 && fit.pitch < pitch * 1.2) [l, p] = [fit.left, fit.pitch];
  } else {
    for (let iter = 0; iter < 3; iter++) {
      const pairs = glyphs
        .filter((_, i) => spans[i] === 1)
        .map((g) => [Math.floor((g.cx - l) / p), g.cx] as [number, number])
        .filter(([k]) => k >= 0 && k < columns);
      if (pairs.length < columns * 0.5) break;
      const fit = leastSquares(pairs);
      if (!fit || fit.pitch < pitch * 0.8 || fit.pitch > pitch * 1.2) break;
      [l, p] = [fit.left, fit.pitch];
    }
    glyphs.forEach((g, i) => {
      const n = spans[i]!;
      const first = Math.round((g.x0 - l) / p);
      cellOf.set(
        g,
        Array.from({ length: n }, (_, j) => first + j).filter((k) => k >= 0 && k < columns),
      );
    });
  }
  if (process.env.MRZ_DEBUG)
    console.error(
      "cells",
      columns,
      glyphs.length,
      spans.join(""),
      spans.reduce((a, b) => a + b, 0),
      l.toFixed(1),
      p.toFixed(2),
      pitch.toFixed(2),
      capH,
    );
  const kinds: LineCells["kinds"] = Array.from({ length: columns }, () => "");
  const chevrons: Glyph[] = [];
  for (const g of glyphs) {
    const cells = cellOf.get(g) ?? [];
    if (cells.length === 1 && isChevron(g, strip.width)) {
      if (kinds[cells[0]!] === "") kinds[cells[0]!] = "<";
      chevrons.push(g);
    } else for (const k of cells) kinds[k] = "?";
  }
  const cleaned = new Uint8Array(strip.data);
  for (const g of chevrons) {
    const k = cellOf.get(g)?.[0] ?? -1;
    if (kinds[k] !== "<") continue;
    for (let y = Math.max(0, g.y0 - 1); y <= Math.min(strip.height - 1, g.y1 + 1); y++)
      for (let x = Math.max(0, g.x0 - 1); x <= Math.min(strip.width - 1, g.x1 + 1); x++)
        cleaned[y * strip.width + x] = 255;
  }
  // Capitals and digits are the tallest glyphs of a line (fillers stand lower); a line may hold few of them.
  const inside = glyphs.filter((g) => g.y0 > 0 && g.y1 < strip.height - 1);
  const hs = inside.map((g) => g.y1 - g.y0 + 1).sort((a, b) => a - b);
  const tallH = hs[Math.min(hs.length - 1, Math.floor(hs.length * 0.97))] ?? capH;
  const tall = inside.filter((g) => g.y1 - g.y0 + 1 >= tallH * 0.85);
  const med = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
  const capTop = med(tall.map((g) => g.y0)) ?? strip.height * 0.2;
  const baseline = (med(tall.map((g) => g.y1)) ?? strip.height * 0.8) + 1;
  // The grid bent by what the rectification left: cell centres as a quadratic of the cell index, fitted to
  // the glyphs that sit alone in one cell; cap tops and baselines as lines along x.
  // OCR-B draws `<` off the centre of its cell: fillers count at their cell's centre.
  const placed: [number, number][] = [];
  for (const g of glyphs) {
    const c = cellOf.get(g) ?? [];
    if (c.length === 1) placed.push([c[0]!, chevrons.includes(g) ? g.cx - fillerOffset * p : g.cx]);
  }
  const lin0 = polyFit(placed, 1);
  const lin = (k: number) => {
    const v = lin0?.(k);
    return v !== undefined && Math.abs(v - (l + (k + 0.5) * p)) < p * 0.5 ? v : l + (k + 0.5) * p;
  };
  const spread = placed.length
    ? Math.max(...placed.map(([k]) => k)) - Math.min(...placed.map(([k]) => k))
    : 0;
  const quad = placed.length >= 12 && spread >= columns * 0.7 ? polyFit(placed, 2) : undefined;
  // The quadratic when it follows the glyphs closely (a residual foreshortening along the line), else the line.
  const rms = (fit: ((k: number) => number) | undefined) =>
    fit && placed.length
      ? Math.sqrt(placed.reduce((s, [k, x]) => s + (x - fit(k)) ** 2, 0) / placed.length)
      : Number.POSITIVE_INFINITY;
  const useQuad = quad !== undefined && rms(quad) < p * 0.12 && rms(quad) < rms(lin0) * 0.8;
  const centres = Array.from({ length: columns }, (_, k) => (useQuad ? quad!(k) : lin(k)));
  const topFit = polyFit(
    tall.map((g) => [g.cx, g.y0]),
    1,
  );
  const baseFit = polyFit(
    tall.map((g) => [g.cx, g.y1 + 1]),
    1,
  );
  const near = (v: number | undefined, fallback: number) =>
    v !== undefined && Math.abs(v - fallback) < (baseline - capTop) * 0.25 ? v : fallback;
  const capTops = centres.map((x) => near(topFit?.(x), capTop));
  const baselines = centres.map((x) => near(baseFit?.(x), baseline));
  return {
    centres,
    capTops,
    baselines,
    left: l,
    pitch: p,
    kinds,
    cleaned: { width: strip.width, height: strip.height, data: cleaned },
    capTop,
    baseline,
  };
}
