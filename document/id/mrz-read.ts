import { type GreyImage, homography, type Point, warpQuad } from "./geometry.js";
import type { IdOcr, OcrLine } from "./id-ocr.js";
import {
  CHECKED_FIELDS,
  type Correction,
  correctByCheckDigits,
  fieldChecks,
  forceClasses,
  MRZ_SHAPES,
  MRZ_TEMPLATES,
  type MrzFormat,
} from "./mrz-format.js";
import { type LineCells, lineCells } from "./mrz-cells.js";
import type { MrzLocation } from "./mrz-locate.js";

/**
 * Reads a located MRZ: the band is rectified (a homography from the fitted lines to an upright grid, so a
 * rotated or tilted photo reads like a scan), each line is cut out at a fixed glyph height and read by the
 * MRZ-restricted OCR, the characters are placed into the format's fixed grid by their position, and the
 * result is settled by character classes and check digits (mrz-format.ts). A second reading of every line
 * at another scale confirms the first: a character the two readings disagree on is uncertain.
 */

/** Glyph height of the rectified band, pixels (tesseract reads best with capitals of 30-40 px). */
const GLYPH_PX = 34;

export interface MrzReading {
  format: MrzFormat;
  /** The lines as settled (fixed width). */
  lines: string[];
  /** The lines as the OCR gave them, before correction. */
  raw: string[];
  corrections: Correction[];
  /** Per line, the positions the two readings disagreed on (after correction). */
  uncertain: number[][];
  /** Positions (`line:column`) read with low confidence or differently by the two readings. */
  unsure: Set<string>;
  /** Positions the two readings (when a second was made) read differently: the reading is not settled there. */
  disagreed: Set<string>;
  /** Mean OCR confidence of the lines, 0-100. */
  confidence: number;
  /** Each line's box in source pixels, as [x0, y0, x1, y1] (axis-aligned hull of the rotated line). */
  lineBoxes: [number, number, number, number][];
  /** Maps a rectified-band point (in character cells: column, line) to source pixels. */
  cellToSource(column: number, line: number): Point;
  /** The homography from the rectified band (pixels) to the source. */
  bandToSource: number[];
  /** Rectified band geometry: pixels per character cell and per line. */
  band: {
    width: number;
    height: number;
    pitch: number;
    lineStep: number;
    left: number;
    top: number;
    glyphPx: number;
  };
}

interface Band {
  glyphPx: number;
  image: GreyImage;
  H: number[];
  pitch: number;
  lineStep: number;
  left: number;
  top: number;
  lineCentres: number[];
}

function sub(a: Point, b: Point): Point {
  return [a[0] - b[0], a[1] - b[1]];
}
function add(a: Point, b: Point, k = 1): Point {
  return [a[0] + b[0] * k, a[1] + b[1] * k];
}
const norm = (p: Point) => Math.hypot(p[0], p[1]);

/** Rectifies the band so glyphs are `glyphPx` high and the lines run along the x axis. */
function rectify(src: GreyImage, loc: MrzLocation, glyphPx: number, columns: number): Band {
  const first = loc.lines[0]!;
  const last = loc.lines[loc.lines.length - 1]!;
  const glyph = loc.lines.reduce((s, l) => s + l.glyphHeight, 0) / loc.lines.length;
  const dir = sub(first.end, first.start);
  const unit: Point = [dir[0] / norm(dir), dir[1] / norm(dir)];
  const normal: Point = [-unit[1], unit[0]];
  // The lines' common left and right ends (the same columns in every line).
  const starts = loc.lines.map((l) => l.start);
  const ends = loc.lines.map((l) => l.end);
  const along = (p: Point) => (p[0] - first.start[0]) * unit[0] + (p[1] - first.start[1]) * unit[1];
  const t0 = Math.min(...starts.map(along));
  const t1 = Math.max(...ends.map(along));
  const widthSrc = t1 - t0;
  const scale = glyphPx / glyph;
  const padX = glyph * 1.2;
  const padY = glyph * 1.3;
  const lineSpanSrc =
    (last.start[0] - first.start[0]) * normal[0] + (last.start[1] - first.start[1]) * normal[1];
  // Corners along each line's own fit (perspective: the first and last lines may differ in angle and length).
  const tl = add(add(first.start, unit, t0 - along(first.start) - padX), normal, -padY);
  const tr = add(add(first.end, unit, t1 - along(first.end) + padX), normal, -padY);
  const lastUnit: Point = (() => {
    const d = sub(last.end, last.start);
    return [d[0] / norm(d), d[1] / norm(d)];
  })();
  const lastAlong = (p: Point) => (p[0] - last.start[0]) * lastUnit[0] + (p[1] - last.start[1]) * lastUnit[1];
  const lastT0 = Math.min(...starts.map((p) => lastAlong(p)));
  const lastT1 = Math.max(...ends.map((p) => lastAlong(p)));
  const br = add(add(last.start, lastUnit, lastT1 + padX), normal, padY);
  const bl = add(add(last.start, lastUnit, lastT0 - padX), normal, padY);
  const width = Math.round((widthSrc + 2 * padX) * scale);
  const height = Math.round((lineSpanSrc + 2 * padY) * scale);
  const image = warpQuad(src, [tl, tr, br, bl], width, height);
  const H = homography(
    [
      [0, 0],
      [width, 0],
      [width, height],
      [0, height],
    ],
    [tl, tr, br, bl],
  );
  const n = loc.lines.length;
  const lineStep = n > 1 ? (lineSpanSrc * scale) / (n - 1) : glyphPx * 1.8;
  const top = padY * scale;
  return {
    glyphPx,
    image,
    H,
    pitch: (widthSrc * scale) / columns,
    lineStep,
    left: padX * scale,
    top,
    lineCentres: Array.from({ length: n }, (_, i) => top + i * lineStep),
  };
}

function strip(img: GreyImage, centre: number, half: number): GreyImage {
  const y0 = Math.max(0, Math.round(centre - half));
  const y1 = Math.min(img.height, Math.round(centre + half));
  return { width: img.width, height: y1 - y0, data: img.data.slice(y0 * img.width, y1 * img.width) };
}

const DIGITS = "0123456789";
const LOOKALIKE_OF: Record<string, string> = {
  "0": "O",
  O: "0",
  "1": "I",
  I: "1",
  "5": "S",
  S: "5",
  "8": "B",
  B: "8",
  "2": "Z",
  Z: "2",
  "6": "G",
  G: "6",
};
const LETTERS = "ABCDEFGHIJKLMNOPQRSTUVWXYZ";

function crop(img: GreyImage, x0: number, x1: number): GreyImage {
  const w = Math.max(1, x1 - x0);
  const data = new Uint8Array(w * img.height);
  for (let y = 0; y < img.height; y++)
    data.set(img.data.subarray(y * img.width + x0, y * img.width + x0 + w), y * w);
  return { width: w, height: img.height, data };
}

function padWhite(img: GreyImage, pad: number): GreyImage {
  const w = img.width + 2 * pad;
  const h = img.height + 2 * pad;
  const data = new Uint8Array(w * h).fill(255);
  for (let y = 0; y < img.height; y++)
    data.set(img.data.subarray(y * img.width, (y + 1) * img.width), (y + pad) * w + pad);
  return { width: w, height: h, data };
}

function guessFormat(loc: MrzLocation): MrzFormat {
  if (loc.lines.length === 3) return "TD1";
  const glyphs = Math.max(...loc.lines.map((l) => l.glyphs));
  return Math.abs(glyphs - 44) <= Math.abs(glyphs - 36) ? "TD3" : "TD2";
}

/**
 * One line read cell by cell: fillers from their shape (mrz-cells.ts), the other cells by the OCR. The OCR's
 * characters go to the inked cells in order when their counts agree; otherwise by position, after finding the
 * shift that puts most of them on inked cells (tesseract's boxes sit a little off the glyphs).
 */
function cellText(cells: LineCells, line: OcrLine | undefined): { text: string; conf: number[] } {
  const chars: string[] = cells.kinds.map((k) => (k === "<" ? "<" : k === "" ? "<" : "?"));
  // A filler recognised by its shape is sure; a cell without ink is not.
  const conf: number[] = cells.kinds.map((k) => (k === "<" ? 95 : k === "" ? 0 : -1));
  const symbols = (line?.words ?? [])
    .flatMap((w) => w.symbols)
    .filter((s) => /^[A-Z0-9]$/.test(s.text))
    .sort((a, b) => a.box[0] + a.box[2] - (b.box[0] + b.box[2]));
  const inked = chars.flatMap((c, k) => (c === "?" ? [k] : []));
  if (symbols.length === inked.length) {
    symbols.forEach((s, i) => {
      chars[inked[i]!] = s.text;
      conf[inked[i]!] = s.confidence;
    });
    return { text: chars.join(""), conf };
  }
  const pos = (s: (typeof symbols)[number]) => ((s.box[0] + s.box[2]) / 2 - cells.left) / cells.pitch - 0.5;
  let shift = 0;
  let hits = -1;
  for (let d = -1; d <= 1.001; d += 0.1) {
    const h = symbols.filter((s) => chars[Math.round(pos(s) + d)] === "?").length;
    if (h > hits) [hits, shift] = [h, d];
  }
  for (const s of symbols) {
    const k = Math.round(pos(s) + shift);
    if (k < 0 || k >= chars.length || cells.kinds[k] !== "?") continue;
    if (s.confidence > conf[k]!) {
      chars[k] = s.text;
      conf[k] = s.confidence;
    }
  }
  return { text: chars.join(""), conf };
}

async function readOnce(src: GreyImage, loc: MrzLocation, ocr: IdOcr, glyphPx: number, format: MrzFormat) {
  const columns = MRZ_SHAPES[format].width;
  const band = rectify(src, loc, glyphPx, columns);
  const half = Math.min(band.lineStep * 0.62, glyphPx * 1.1);
  const read: { text: string; confidence: number; conf: number[] }[] = [];
  const lineCellsRead: LineCells[] = [];
  for (const c of band.lineCentres) {
    const s = strip(band.image, c, half);
    const cells = lineCells(s, columns, band.left, band.pitch);
    lineCellsRead.push(cells);
    const line = await ocr.readMrzLine(cells.cleaned, true);
    const cellRead = cellText(cells, line);
    let text = cellRead.text;
    const conf = cellRead.conf;
    // Cells the line reading left unread: each read alone, from the characters its class allows.
    const li = read.length;
    const unread = [...text.matchAll(/\?/g)].map((m) => m.index!);
    if (unread.length <= 8) {
      for (const k of unread) {
        const cls = MRZ_TEMPLATES[format][li]?.[k] ?? "X";
        const whitelist =
          cls === "N" || cls === "D" || cls === "d"
            ? DIGITS
            : cls === "A" || cls === "P"
              ? LETTERS
              : DIGITS + LETTERS;
        const x0 = Math.max(0, Math.round(cells.left + (k - 0.2) * cells.pitch));
        const x1 = Math.min(s.width, Math.round(cells.left + (k + 1.2) * cells.pitch));
        const cell = padWhite(crop(cells.cleaned, x0, x1), Math.round(cells.pitch));
        const ch = await ocr.readChar(cell, whitelist);
        if (ch) {
          text = text.slice(0, k) + ch.text + text.slice(k + 1);
          conf[k] = ch.confidence;
        }
      }
    }
    read.push({ text, confidence: line?.confidence ?? 0, conf });
  }
  return { band, read, cells: lineCellsRead };
}

function settle(format: MrzFormat, read: { text: string; confidence: number; conf: number[] }[]) {
  const raw = read.map((l) => l.text);
  const classed = forceClasses(format, raw);
  return {
    raw,
    lines: classed.lines,
    corrections: classed.corrections,
    conf: read.map((l) => l.conf),
    confidence: read.reduce((s, l) => s + l.confidence, 0) / Math.max(1, read.length),
  };
}

/** A character read below this confidence (0-100) is unsure: check digits may settle it. */
const SURE = 80;

function lowConfidence(conf: number[][]): Set<string> {
  const out = new Set<string>();
  conf.forEach((row, li) => {
    row.forEach((c, i) => {
      if (c < SURE) out.add(`${li}:${i}`);
    });
  });
  return out;
}

const failing = (format: MrzFormat, lines: string[]) =>
  fieldChecks(format, lines).filter((c) => !c.ok).length;

/**
 * Reads the MRZ at `loc` in `src` (grey, source pixels). When the first reading leaves a check digit failing
 * or a cell unread, a second at another glyph height; when they disagree, a third, and each character goes
 * by majority (positions without one are uncertain, and the other readings' characters are tried there when
 * they make a failing check digit pass).
 */
export async function readMrz(src: GreyImage, loc: MrzLocation, ocr: IdOcr): Promise<MrzReading | undefined> {
  const format = guessFormat(loc);
  const first = await readOnce(src, loc, ocr, GLYPH_PX, format);
  const a = settle(format, first.read);
  // A second reading at another scale when the first leaves a check digit failing or a cell unread: it
  // confirms a failure, or shows which characters the OCR was unsure of.
  const needsSecond =
    failing(format, correctByCheckDigits(format, a.lines, lowConfidence(a.conf)).lines) > 0 ||
    a.lines.some((l) => l.includes("?"));
  const second = needsSecond ? await readOnce(src, loc, ocr, GLYPH_PX + 10, format) : first;
  const b = needsSecond ? settle(format, second.read) : a;
  const fa = failing(format, a.lines);
  const fb = failing(format, b.lines);
  let chosen = fb < fa || (fb === fa && b.confidence > a.confidence) ? b : a;
  const other = chosen === a ? b : a;
  const chosenBand = chosen === a ? first.band : second.band;
  // When the two readings differ, a third at another scale settles each character by majority; a character
  // no two readings agree on stays uncertain.
  const uncertain: number[][] = chosen.lines.map(() => []);
  let lines = [...chosen.lines];
  const differs = needsSecond && a.lines.some((l, li) => l !== b.lines[li]);
  if (differs) {
    const c = settle(format, (await readOnce(src, loc, ocr, GLYPH_PX - 6, format)).read);
    lines = chosen.lines.map((l, li) =>
      [...l]
        .map((ch, i) => {
          const votes = [a, b, c].map((r) => r.lines[li]?.[i] ?? "");
          const count = (x: string) => votes.filter((v) => v === x).length;
          const best = votes.reduce((p, x) => (count(x) > count(p) ? x : p), ch);
          if (count(best) < 2) uncertain[li]!.push(i);
          return best;
        })
        .join(""),
    );
  }
  const unsure = new Set<string>();
  uncertain.forEach((cols, li) => {
    for (const i of cols) unsure.add(`${li}:${i}`);
  });
  for (const k of lowConfidence(chosen.conf)) unsure.add(k);
  let byDigits = correctByCheckDigits(format, lines, unsure);
  // Look-alikes the line reading was sure of but a failing alphanumeric field puts in doubt: each such
  // character is read once more alone, between itself and its look-alike (Z or 2, I or 1 …); a cell the
  // single reading sees otherwise becomes unsure, and the check digit may settle it.
  const failingAlnum = fieldChecks(format, byDigits.lines).filter(
    (c) => !c.ok && (c.name === "documentNumber" || c.name === "optional"),
  );
  if (failingAlnum.length > 0) {
    const chosenCells = chosen === a ? first.cells : second.cells;
    for (const f of failingAlnum) {
      const spec = CHECKED_FIELDS[format].find((c) => c.name === f.name);
      for (const [li, from, to] of spec?.covers ?? []) {
        for (let i = from; i < to; i++) {
          const c = lines[li]![i]!;
          const alt = LOOKALIKE_OF[c];
          if (!alt || unsure.has(`${li}:${i}`)) continue;
          const cells = chosenCells[li]!;
          const x0 = Math.max(0, Math.round(cells.left + (i - 0.2) * cells.pitch));
          const x1 = Math.min(cells.cleaned.width, Math.round(cells.left + (i + 1.2) * cells.pitch));
          // The English model leans to digits on OCR-B's Z, I, B and S: a look-alike in a field whose check
          // digit fails is unsure whatever its confidence; the swap still has to be the only one that passes.
          const one = await ocr.readChar(
            padWhite(crop(cells.cleaned, x0, x1), Math.round(cells.pitch)),
            c + alt,
          );
          void one;
          unsure.add(`${li}:${i}`);
        }
      }
    }
    byDigits = correctByCheckDigits(format, lines, unsure);
  }
  lines = byDigits.lines;
  const corrections = [...chosen.corrections, ...byDigits.corrections];
  if (failing(format, lines) > 0) {
    const positions = uncertain.flatMap((cols, li) => cols.map((i) => [li, i] as [number, number]));
    if (positions.length > 0 && positions.length <= 10) {
      let best = lines;
      let bestFails = failing(format, lines);
      for (let mask = 1; mask < 1 << positions.length; mask++) {
        const trial = [...lines];
        positions.forEach(([li, i], k) => {
          if (mask & (1 << k))
            trial[li] = trial[li]!.slice(0, i) + other.lines[li]![i] + trial[li]!.slice(i + 1);
        });
        const f = failing(format, trial);
        if (f < bestFails) {
          best = trial;
          bestFails = f;
        }
      }
      lines = best;
    }
  }
  // A check digit the readings could not settle, over characters they all agree on, is the one its field
  // gives (the field itself is read; only its check digit was not).
  for (const c of fieldChecks(format, lines)) {
    if (c.ok || c.expected < 0 || !uncertain[c.line]?.includes(c.at)) continue;
    const spec = CHECKED_FIELDS[format].find((f) => f.name === c.name);
    const coveredSettled = (spec?.covers ?? []).every(
      ([l, from, to]) => !uncertain[l]!.some((i) => i >= from && i < to),
    );
    if (!coveredSettled) continue;
    corrections.push({
      line: c.line,
      at: c.at,
      from: lines[c.line]![c.at]!,
      to: String(c.expected),
      why: "check_digit",
    });
    lines[c.line] = lines[c.line]!.slice(0, c.at) + String(c.expected) + lines[c.line]!.slice(c.at + 1);
  }
  chosen = { ...chosen, lines, corrections };
  const bandToSource = chosenBand.H;
  const toSrc = (x: number, y: number): Point => {
    const w = bandToSource[6]! * x + bandToSource[7]! * y + 1;
    return [
      (bandToSource[0]! * x + bandToSource[1]! * y + bandToSource[2]!) / w,
      (bandToSource[3]! * x + bandToSource[4]! * y + bandToSource[5]!) / w,
    ];
  };
  const width = MRZ_SHAPES[format].width;
  const pitch = (chosenBand.image.width - 2 * chosenBand.left) / width;
  const cellToSource = (column: number, line: number): Point =>
    toSrc(chosenBand.left + column * pitch, chosenBand.top + (line - 0.5) * chosenBand.lineStep);
  const lineBoxes = lines.map((_, li) => {
    const y0 = chosenBand.lineCentres[li]! - chosenBand.glyphPx * 0.7;
    const y1 = chosenBand.lineCentres[li]! + chosenBand.glyphPx * 0.7;
    const pts = [
      toSrc(chosenBand.left, y0),
      toSrc(chosenBand.left + width * pitch, y0),
      toSrc(chosenBand.left + width * pitch, y1),
      toSrc(chosenBand.left, y1),
    ];
    return [
      Math.min(...pts.map((p) => p[0])),
      Math.min(...pts.map((p) => p[1])),
      Math.max(...pts.map((p) => p[0])),
      Math.max(...pts.map((p) => p[1])),
    ] as [number, number, number, number];
  });
  return {
    format,
    lines: chosen.lines,
    raw: chosen.raw,
    corrections: chosen.corrections,
    uncertain,
    unsure,
    disagreed: new Set(uncertain.flatMap((cols, li) => cols.map((i) => `${li}:${i}`))),
    confidence: chosen.confidence,
    lineBoxes,
    cellToSource,
    bandToSource,
    band: {
      width: chosenBand.image.width,
      height: chosenBand.image.height,
      pitch,
      lineStep: chosenBand.lineStep,
      left: chosenBand.left,
      top: chosenBand.top,
      glyphPx: chosenBand.glyphPx,
    },
  };
}

/** The source-pixel box of characters [from, to) of MRZ line `line`. */
export function mrzSpanBox(
  r: MrzReading,
  line: number,
  from: number,
  to: number,
): [number, number, number, number] {
  const toSrc = (x: number, y: number): Point => {
    const H = r.bandToSource;
    const w = H[6]! * x + H[7]! * y + 1;
    return [(H[0]! * x + H[1]! * y + H[2]!) / w, (H[3]! * x + H[4]! * y + H[5]!) / w];
  };
  const yc = r.band.top + line * r.band.lineStep;
  const y0 = yc - r.band.glyphPx * 0.7;
  const y1 = yc + r.band.glyphPx * 0.7;
  const x0 = r.band.left + from * r.band.pitch;
  const x1 = r.band.left + to * r.band.pitch;
  const pts = [toSrc(x0, y0), toSrc(x1, y0), toSrc(x1, y1), toSrc(x0, y1)];
  return [
    Math.min(...pts.map((p) => p[0])),
    Math.min(...pts.map((p) => p[1])),
    Math.max(...pts.map((p) => p[0])),
    Math.max(...pts.map((p) => p[1])),
  ];
}
