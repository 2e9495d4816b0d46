import type { BoxTuple } from "../../core/page-geometry.js";

/**
 * Where the ink is on a page image, read from the pixels alone (no OCR): the paper's brightness estimated
 * locally (so uneven light in a photo does not turn into ink), ink as pixels clearly darker than their
 * paper, its connected components (glyphs, mostly), and the components grouped into text lines and words.
 * The pixel checks measure glyphs, words and the paper between them on this layout.
 */

export interface Glyph {
  id: number;
  /** Inclusive-exclusive pixel box [x0, y0, x1, y1]. */
  box: BoxTuple;
  /** Ink pixels. */
  area: number;
  line: number;
  word: number;
}

export interface Word {
  id: number;
  box: BoxTuple;
  glyphs: number[];
  line: number;
}

export interface TextLine {
  id: number;
  box: BoxTuple;
  words: number[];
  glyphs: number[];
  /** Median glyph height on the line. */
  height: number;
}

export interface InkLayout {
  width: number;
  height: number;
  /** Paper brightness per pixel (smooth), 0-255. */
  paper: Uint8Array;
  /** 1 where ink. */
  ink: Uint8Array;
  /** Component label per pixel (0 = none), indexes glyphs + 1 for kept components. */
  labels: Int32Array;
  glyphs: Glyph[];
  words: Word[];
  lines: TextLine[];
  /** Median glyph height over text lines (pixels). */
  textHeight: number;
}

/** Ink is darker than its paper by at least this fraction of the paper's brightness. */
const INK_CONTRAST = 0.35;
const PAPER_TILE = 32;

/** The paper brightness: a high percentile per tile, then smoothed and interpolated. */
function paperOf(grey: Uint8Array, width: number, height: number): Uint8Array {
  const tw = Math.ceil(width / PAPER_TILE);
  const th = Math.ceil(height / PAPER_TILE);
  const tiles = new Float32Array(tw * th);
  const hist = new Uint32Array(256);
  for (let ty = 0; ty < th; ty++) {
    for (let tx = 0; tx < tw; tx++) {
      hist.fill(0);
      let n = 0;
      for (let y = ty * PAPER_TILE; y < Math.min(height, (ty + 1) * PAPER_TILE); y += 2) {
        for (let x = tx * PAPER_TILE; x < Math.min(width, (tx + 1) * PAPER_TILE); x += 2) {
          hist[grey[y * width + x]!]!++;
          n++;
        }
      }
      // The 80th percentile: the paper, when at least a fifth of the tile is paper.
      let acc = 0;
      let v = 255;
      for (let i = 0; i < 256; i++) {
        acc += hist[i]!;
        if (acc >= n * 0.8) {
          v = i;
          break;
        }
      }
      tiles[ty * tw + tx] = v;
    }
  }
  // A tile covered by ink (a dark logo, a photo) takes the brightest of its neighbours' paper.
  const smooth = new Float32Array(tw * th);
  for (let ty = 0; ty < th; ty++) {
    for (let tx = 0; tx < tw; tx++) {
      let best = 0;
      const vals: number[] = [];
      for (let dy = -1; dy <= 1; dy++)
        for (let dx = -1; dx <= 1; dx++) {
          const x = tx + dx;
          const y = ty + dy;
          if (x < 0 || y < 0 || x >= tw || y >= th) continue;
          vals.push(tiles[y * tw + x]!);
        }
      vals.sort((a, b) => a - b);
      best = vals[Math.floor(vals.length * 0.6)]!;
      smooth[ty * tw + tx] = Math.max(tiles[ty * tw + tx]!, best);
    }
  }
  const paper = new Uint8Array(width * height);
  // Each column's tiles and weight, computed once (the same values the per-pixel expressions gave).
  const colX0 = new Int32Array(width);
  const colX1 = new Int32Array(width);
  const colWx = new Float64Array(width);
  for (let x = 0; x < width; x++) {
    const fx = Math.min(tw - 1, Math.max(0, (x + 0.5) / PAPER_TILE - 0.5));
    const x0 = Math.floor(fx);
    colX0[x] = x0;
    colX1[x] = Math.min(tw - 1, x0 + 1);
    colWx[x] = fx - x0;
  }
  for (let y = 0; y < height; y++) {
    const fy = Math.min(th - 1, Math.max(0, (y + 0.5) / PAPER_TILE - 0.5));
    const y0 = Math.floor(fy);
    const y1 = Math.min(th - 1, y0 + 1);
    const wy = fy - y0;
    const r0 = y0 * tw;
    const r1 = y1 * tw;
    const row = y * width;
    for (let x = 0; x < width; x++) {
      const x0 = colX0[x]!;
      const x1 = colX1[x]!;
      const wx = colWx[x]!;
      const v =
        (smooth[r0 + x0]! * (1 - wx) + smooth[r0 + x1]! * wx) * (1 - wy) +
        (smooth[r1 + x0]! * (1 - wx) + smooth[r1 + x1]! * wx) * wy;
      paper[row + x] = Math.round(v);
    }
  }
  return paper;
}

interface Component {
  box: BoxTuple;
  area: number;
}

function components(ink: Uint8Array, width: number, height: number, labels: Int32Array): Component[] {
  const out: Component[] = [];
  const stack = new Int32Array(width * height);
  for (let start = 0; start < ink.length; start++) {
    if (!ink[start] || labels[start]) continue;
    const label = out.length + 1;
    let sp = 0;
    stack[sp++] = start;
    labels[start] = label;
    let x0 = width;
    let y0 = height;
    let x1 = 0;
    let y1 = 0;
    let area = 0;
    while (sp > 0) {
      const p = stack[--sp]!;
      const x = p % width;
      const y = (p - x) / width;
      area++;
      if (x < x0) x0 = x;
      if (x > x1) x1 = x;
      if (y < y0) y0 = y;
      if (y > y1) y1 = y;
      for (let dy = -1; dy <= 1; dy++) {
        const yy = y + dy;
        if (yy < 0 || yy >= height) continue;
        for (let dx = -1; dx <= 1; dx++) {
          const xx = x + dx;
          if (xx < 0 || xx >= width) continue;
          const q = yy * width + xx;
          if (ink[q] && !labels[q]) {
            labels[q] = label;
            stack[sp++] = q;
          }
        }
      }
    }
    out.push({ box: [x0, y0, x1 + 1, y1 + 1], area });
  }
  return out;
}

function median(values: number[]): number {
  if (values.length === 0) return 0;
  const s = [...values].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)]!;
}

export function inkLayout(grey: Uint8Array, width: number, height: number): InkLayout {
  const paper = paperOf(grey, width, height);
  const ink = new Uint8Array(width * height);
  for (let i = 0; i < ink.length; i++) {
    const p = paper[i]!;
    if (p > 40 && grey[i]! < p * (1 - INK_CONTRAST)) ink[i] = 1;
  }
  const labels = new Int32Array(width * height);
  const comps = components(ink, width, height, labels);
  // Glyph-like components: not specks, not page-sized rules or pictures.
  const heights = comps.filter((c) => c.area >= 12).map((c) => c.box[3] - c.box[1]);
  const typical = Math.max(6, median(heights));
  const keep: number[] = [];
  comps.forEach((c, i) => {
    const h = c.box[3] - c.box[1];
    const w = c.box[2] - c.box[0];
    if (c.area < 6 || h < 3) return;
    if (h > typical * 4 || w > typical * 8) return;
    keep.push(i);
  });
  // Relabel: label = glyph index + 1 for kept components, 0 otherwise.
  const map = new Int32Array(comps.length + 1);
  keep.forEach((ci, gi) => {
    map[ci + 1] = gi + 1;
  });
  for (let i = 0; i < labels.length; i++) if (labels[i]) labels[i] = map[labels[i]!]!;
  const glyphs: Glyph[] = keep.map((ci, gi) => ({
    id: gi,
    box: comps[ci]!.box,
    area: comps[ci]!.area,
    line: -1,
    word: -1,
  }));

  // Lines: glyphs sorted by x join a line whose vertical span they share and that ended near them.
  const order = glyphs
    .filter((g) => g.box[3] - g.box[1] >= typical * 0.3)
    .sort((a, b) => a.box[0] - b.box[0]);
  interface Open {
    y0: number;
    y1: number;
    lastX: number;
    members: number[];
  }
  const open: Open[] = [];
  for (const g of order) {
    const gh = g.box[3] - g.box[1];
    let best: Open | undefined;
    let bestOverlap = 0;
    for (const l of open) {
      if (g.box[0] - l.lastX > typical * 3) continue;
      const ov = Math.min(l.y1, g.box[3]) - Math.max(l.y0, g.box[1]);
      const frac = ov / Math.min(gh, l.y1 - l.y0);
      if (frac > 0.5 && frac > bestOverlap) {
        best = l;
        bestOverlap = frac;
      }
    }
    if (best) {
      best.members.push(g.id);
      best.lastX = Math.max(best.lastX, g.box[2]);
      // The line's span follows its typical glyphs, not its tallest ones.
      best.y0 = Math.round((best.y0 * 3 + g.box[1]) / 4);
      best.y1 = Math.round((best.y1 * 3 + g.box[3]) / 4);
    } else open.push({ y0: g.box[1], y1: g.box[3], lastX: g.box[2], members: [g.id] });
  }
  const lines: TextLine[] = [];
  const words: Word[] = [];
  for (const l of open) {
    if (l.members.length < 2) continue;
    const members = l.members.map((i) => glyphs[i]!).sort((a, b) => a.box[0] - b.box[0]);
    const lh = median(members.map((g) => g.box[3] - g.box[1]));
    const lineId = lines.length;
    const line: TextLine = {
      id: lineId,
      box: unionBox(members.map((g) => g.box)),
      words: [],
      glyphs: [],
      height: lh,
    };
    let current: Glyph[] = [];
    const flush = () => {
      if (!current.length) return;
      const w: Word = {
        id: words.length,
        box: unionBox(current.map((g) => g.box)),
        glyphs: current.map((g) => g.id),
        line: lineId,
      };
      for (const g of current) {
        g.word = w.id;
        g.line = lineId;
      }
      words.push(w);
      line.words.push(w.id);
      current = [];
    };
    let lastEnd = -1;
    for (const g of members) {
      if (current.length && g.box[0] - lastEnd > Math.max(3, lh * 0.55)) flush();
      current.push(g);
      line.glyphs.push(g.id);
      lastEnd = Math.max(lastEnd, g.box[2]);
    }
    flush();
    lines.push(line);
  }
  const textHeight = median(lines.map((l) => l.height));
  return { width, height, paper, ink, labels, glyphs, words, lines, textHeight: textHeight || typical };
}

export function unionBox(boxes: readonly BoxTuple[]): BoxTuple {
  let x0 = Number.POSITIVE_INFINITY;
  let y0 = Number.POSITIVE_INFINITY;
  let x1 = Number.NEGATIVE_INFINITY;
  let y1 = Number.NEGATIVE_INFINITY;
  for (const b of boxes) {
    x0 = Math.min(x0, b[0]);
    y0 = Math.min(y0, b[1]);
    x1 = Math.max(x1, b[2]);
    y1 = Math.max(y1, b[3]);
  }
  return [x0, y0, x1, y1];
}

/** The box grown by `m` pixels on each side, clamped to the image. */
export function grow(b: BoxTuple, m: number, width: number, height: number): BoxTuple {
  return [
    Math.max(0, b[0] - m),
    Math.max(0, b[1] - m),
    Math.min(width, b[2] + m),
    Math.min(height, b[3] + m),
  ];
}

export function overlaps(a: BoxTuple, b: BoxTuple): boolean {
  return a[0] < b[2] && b[0] < a[2] && a[1] < b[3] && b[1] < a[3];
}

const layouts = new WeakMap<object, InkLayout>();

/** The ink layout of a page image, computed once per pixel buffer. */
export function layoutOf(page: { grey: Uint8Array; width: number; height: number }): InkLayout {
  let l = layouts.get(page.grey);
  if (!l) {
    l = inkLayout(page.grey, page.width, page.height);
    layouts.set(page.grey, l);
  }
  return l;
}
