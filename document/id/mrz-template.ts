import type { GreyImage } from "./geometry.js";
import { lineCells } from "./mrz-cells.js";
import { CHECKED_FIELDS, fieldChecks, MRZ_ALPHABET, MRZ_TEMPLATES, type MrzFormat } from "./mrz-format.js";
import { CELL_WINDOW, normalise, type TemplateBank } from "./ocrb.js";

/**
 * Reads the lines of a rectified MRZ band by what they are: OCR-B at a fixed pitch. Each line's cell grid is
 * fitted to its glyphs (mrz-cells.ts), each cell is sampled into the normalised window the OCR-B templates were
 * sampled in (ocrb.ts), and classified by normalised cross-correlation against the characters its position
 * allows (ICAO 9303: digits in dates and check digits, letters and fillers in names and codes …), over small
 * shifts and every template variant. Each character carries its score and its margin over the best other
 * character: the margin says how sure the reading is. Pure pixel work, no OCR engine.
 */

export interface CellRead {
  char: string;
  /** Best correlation (−1…1). */
  score: number;
  /** The best other character the position allows, and its score. */
  runnerUp: string;
  runnerUpScore: number;
  /** score − runnerUpScore. */
  margin: number;
}

export interface TemplateReading {
  lines: string[];
  cells: CellRead[][];
}

/** Margin of samples around the window, for aligning the cell with each template. */
const SHIFT = 4;
/** Fine offsets (samples) tried around the centroid alignment. */
const FINE = [-0.5, 0, 0.5];
const FINE_OFFSETS: [number, number][] = FINE.flatMap((y) => FINE.map((x) => [x, y] as [number, number]));
/** Characters refined after the coarse pass. */
const REFINED = 4;

/** The characters each class of position allows (mrz-format.ts MRZ_TEMPLATES). */
const LETTERS = "ABCDEFGHIJKLMNOPQRSTUVWXYZ";
const DIGITS = "0123456789";
export const CLASS_CHARS: Record<string, string> = {
  A: `${LETTERS}<`,
  P: `${LETTERS}<`,
  N: `${DIGITS}<`,
  D: DIGITS,
  d: `${DIGITS}<`,
  X: MRZ_ALPHABET,
  S: "MFX<",
};

/**
 * Samples `(w + 2·SHIFT) × (h + 2·SHIFT)` points of the window of cell `k` (ink = high values), each the mean of
 * 3 × 3 bilinear taps over its footprint.
 */
export function sampleCell(
  img: GreyImage,
  cell: { centre: number; pitch: number; capTop: number; baseline: number; y0: number },
  w: number,
  h: number,
): Float32Array {
  const capH = cell.baseline - cell.capTop;
  const x0 = cell.centre - (0.5 + CELL_WINDOW.left) * cell.pitch;
  const x1 = cell.centre + (0.5 + CELL_WINDOW.right) * cell.pitch;
  const y0 = cell.y0 + cell.baseline - CELL_WINDOW.above * capH;
  const y1 = cell.y0 + cell.baseline + CELL_WINDOW.below * capH;
  const sx = (x1 - x0) / w;
  const sy = (y1 - y0) / h;
  const W = w + 2 * SHIFT;
  const H = h + 2 * SHIFT;
  const out = new Float32Array(W * H);
  const { width: iw, height: ih, data } = img;
  const at = (x: number, y: number): number => {
    if (x < 0 || y < 0 || x >= iw - 1 || y >= ih - 1) return 0;
    const xi = x | 0;
    const yi = y | 0;
    const fx = x - xi;
    const fy = y - yi;
    const i = yi * iw + xi;
    const a = data[i]! * (1 - fx) + data[i + 1]! * fx;
    const b = data[i + iw]! * (1 - fx) + data[i + iw + 1]! * fx;
    return 255 - (a * (1 - fy) + b * fy);
  };
  for (let j = 0; j < H; j++) {
    const ys = y0 + (j - SHIFT) * sy;
    for (let i = 0; i < W; i++) {
      const xs = x0 + (i - SHIFT) * sx;
      let s = 0;
      for (let a = 0; a < 3; a++)
        for (let b = 0; b < 3; b++) s += at(xs + ((b + 0.5) * sx) / 3, ys + ((a + 0.5) * sy) / 3);
      out[j * W + i] = s / 9;
    }
  }
  return out;
}

/** Ink centroid of the cell's own span (the window without its margins and neighbours' edges). */
function centroid(
  v: Float32Array,
  W: number,
  x0: number,
  x1: number,
  y0: number,
  y1: number,
): [number, number] {
  const vals: number[] = [];
  for (let y = y0; y < y1; y++) for (let x = x0; x < x1; x++) vals.push(v[y * W + x]!);
  vals.sort((a, b) => a - b);
  const bg = vals[Math.floor(vals.length * 0.3)] ?? 0;
  let sx = 0;
  let sy = 0;
  let n = 0;
  for (let y = y0; y < y1; y++)
    for (let x = x0; x < x1; x++) {
      const w = Math.max(0, v[y * W + x]! - bg);
      sx += w * x;
      sy += w * y;
      n += w;
    }
  return n > 0 ? [sx / n, sy / n] : [(x0 + x1) / 2, (y0 + y1) / 2];
}

/** The w × h window of a margin-padded sample, offset by (ox, oy) samples (bilinear). */
function shifted(
  sample: Float32Array,
  w: number,
  h: number,
  ox: number,
  oy: number,
  out: Float32Array,
): void {
  const W = w + 2 * SHIFT;
  const H = h + 2 * SHIFT;
  for (let j = 0; j < h; j++) {
    const y = Math.min(H - 1.001, Math.max(0, j + SHIFT + oy));
    const yi = y | 0;
    const fy = y - yi;
    for (let i = 0; i < w; i++) {
      const x = Math.min(W - 1.001, Math.max(0, i + SHIFT + ox));
      const xi = x | 0;
      const fx = x - xi;
      const p = yi * W + xi;
      out[j * w + i] =
        (sample[p]! * (1 - fx) + sample[p + 1]! * fx) * (1 - fy) +
        (sample[p + W]! * (1 - fx) + sample[p + W + 1]! * fx) * fy;
    }
  }
}

/**
 * Classifies one sampled cell against the allowed characters: each character's templates are aligned with
 * the cell by ink centroid, refined by half-sample offsets; best and runner-up over the characters.
 */
export function classify(sample: Float32Array, bank: TemplateBank, allowed: string): CellRead {
  const { w, h } = bank.size;
  const W = w + 2 * SHIFT;
  // The cell proper spans [0.15, 1.15] pitch of the 1.3-pitch window.
  const cx0 = SHIFT + Math.round((w * CELL_WINDOW.left) / (1 + CELL_WINDOW.left + CELL_WINDOW.right));
  const cx1 = SHIFT + w - Math.round((w * CELL_WINDOW.right) / (1 + CELL_WINDOW.left + CELL_WINDOW.right));
  const [sx, sy] = centroid(sample, W, cx0, cx1, SHIFT, SHIFT + h);
  // Windows at offsets quantised to half samples, normalised once and shared by the characters.
  const windows = new Map<number, Float32Array>();
  const windowAt = (ox: number, oy: number): Float32Array => {
    const qx = Math.round(ox * 2);
    const qy = Math.round(oy * 2);
    const key = qx * 1000 + qy;
    let v = windows.get(key);
    if (!v) {
      v = new Float32Array(w * h);
      shifted(sample, w, h, qx / 2, qy / 2, v);
      normalise(v);
      windows.set(key, v);
    }
    return v;
  };
  const score = (c: string, offsets: readonly (readonly [number, number])[]): number => {
    const ts = bank.byChar.get(c);
    if (!ts?.length) return -2;
    const [tx, ty] = bank.centroids.get(c)!;
    const bx = Math.max(-SHIFT + 0.6, Math.min(SHIFT - 0.6, sx - SHIFT - tx));
    const by = Math.max(-SHIFT + 0.6, Math.min(SHIFT - 0.6, sy - SHIFT - ty));
    let best = -2;
    for (const [fx, fy] of offsets) {
      const sub = windowAt(bx + fx, by + fy);
      for (const t of ts) {
        let dot = 0;
        const v = t.v;
        for (let i = 0; i < v.length; i++) dot += v[i]! * sub[i]!;
        if (dot > best) best = dot;
      }
    }
    return best;
  };
  // Every allowed character at its centroid alignment, then the best few refined over half-sample offsets.
  const coarse = [...allowed]
    .map((c) => [c, score(c, [[0, 0]])] as [string, number])
    .sort((a, b) => b[1] - a[1]);
  const ranked = coarse
    .slice(0, REFINED)
    .map(([c]) => [c, score(c, FINE_OFFSETS)] as [string, number])
    .sort((a, b) => b[1] - a[1]);
  const [c1, s1] = ranked[0] ?? ["?", -1];
  const [c2, s2] = ranked[1] ?? ["?", -1];
  return { char: c1, score: s1, runnerUp: c2, runnerUpScore: s2, margin: s1 - s2 };
}

/** The band as template-matching sees it: the rectified image, its line centres and grid. */
export interface BandForTemplates {
  image: GreyImage;
  lineCentres: number[];
  left: number;
  pitch: number;
  glyphPx: number;
  lineStep: number;
}

/** Reads every line of a rectified band of `format` against `bank`. */
export function readByTemplates(
  band: BandForTemplates,
  format: MrzFormat,
  bank: TemplateBank,
): TemplateReading {
  const columns = MRZ_TEMPLATES[format][0]!.length;
  const half = Math.min(band.lineStep * 0.62, band.glyphPx * 1.1);
  const lines: string[] = [];
  const cells: CellRead[][] = [];
  band.lineCentres.forEach((centre, li) => {
    const y0 = Math.max(0, Math.round(centre - half));
    const y1 = Math.min(band.image.height, Math.round(centre + half));
    const strip: GreyImage = {
      width: band.image.width,
      height: y1 - y0,
      data: band.image.data.slice(y0 * band.image.width, y1 * band.image.width),
    };
    const lc = lineCells(strip, columns, band.left, band.pitch, bank.fillerOffset);
    const tpl = MRZ_TEMPLATES[format][li] ?? "";
    const row: CellRead[] = [];
    for (let k = 0; k < columns; k++) {
      const allowed = CLASS_CHARS[tpl[k] ?? "X"] ?? MRZ_ALPHABET;
      const cell = {
        centre: lc.centres[k]!,
        pitch: lc.pitch,
        capTop: lc.capTops[k]!,
        baseline: lc.baselines[k]!,
        y0,
      };
      row.push(classify(sampleCell(band.image, cell, bank.size.w, bank.size.h), bank, allowed));
    }
    cells.push(row);
    lines.push(row.map((c) => c.char).join(""));
  });
  return { lines, cells };
}

export interface TemplateCorrection {
  line: number;
  at: number;
  from: string;
  to: string;
}

/**
 * Settles failing check digits by the reader's own doubts: in each field whose check digit fails, the
 * characters read with a margin below `maxMargin` (the field's and the check digit itself) are tried with their
 * runner-up, one and then two at a time; a variant is kept only when it is the only one that makes the check
 * pass. A character read with a clear margin is never changed, so a forger's clearly printed wrong digit stays.
 */
export function correctByRunnerUps(
  format: MrzFormat,
  reading: TemplateReading,
  maxMargin: number,
): { lines: string[]; corrections: TemplateCorrection[] } {
  const lines = [...reading.lines];
  const corrections: TemplateCorrection[] = [];
  for (const spec of CHECKED_FIELDS[format]) {
    const check = fieldChecks(format, lines).find((c) => c.name === spec.name);
    if (!check || check.ok) continue;
    const positions: [number, number][] = [];
    const ranges: [number, number, number][] = [...spec.covers, [check.line, check.at, check.at + 1]];
    for (const [l, a, b] of ranges)
      for (let i = a; i < b; i++) {
        const c = reading.cells[l]?.[i];
        if (c && c.margin < maxMargin && c.runnerUp !== "?") positions.push([l, i]);
      }
    if (positions.length === 0 || positions.length > 12) continue;
    const fits: [number, number][][] = [];
    const othersOk = (trial: string[]) =>
      fieldChecks(format, trial).filter((c) => !c.ok && c.name !== spec.name && c.name !== "composite")
        .length <=
      fieldChecks(format, lines).filter((c) => !c.ok && c.name !== spec.name && c.name !== "composite")
        .length;
    const test = (swaps: [number, number][]) => {
      const trial = [...lines];
      for (const [l, i] of swaps)
        trial[l] = trial[l]!.slice(0, i) + reading.cells[l]![i]!.runnerUp + trial[l]!.slice(i + 1);
      const c = fieldChecks(format, trial).find((x) => x.name === spec.name);
      if (c?.ok && othersOk(trial)) fits.push(swaps);
    };
    for (const p of positions) test([p]);
    if (fits.length === 0)
      for (let a = 0; a < positions.length; a++)
        for (let b = a + 1; b < positions.length; b++) test([positions[a]!, positions[b]!]);
    if (fits.length !== 1) continue;
    for (const [l, i] of fits[0]!) {
      const from = lines[l]![i]!;
      const to = reading.cells[l]![i]!.runnerUp;
      lines[l] = lines[l]!.slice(0, i) + to + lines[l]!.slice(i + 1);
      corrections.push({ line: l, at: i, from, to });
    }
  }
  return { lines, corrections };
}
