import { type GreyImage, homography, type Point, warpQuad } from "./geometry.js";
import type { IdOcr, OcrLine } from "./id-ocr.js";
import { type LineCells, lineCells } from "./mrz-cells.js";
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
import type { MrzLocation } from "./mrz-locate.js";
import { correctByRunnerUps, readByTemplates } from "./mrz-template.js";
import { templateBank } from "./ocrb.js";

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
  /** Positions the confirming readings (when made) read differently: the reading is not settled there. */
  disagreed: Set<string>;
  /**
   * Positions read with a clear template margin on which both confirming readings agree (filled only when the
   * reading needed confirming: a failing check digit or an impossible date).
   */
  confirmed: Set<string>;
  /** The confirming readers (empty when none was needed). */
  confirmedBy: string[];
  /**
   * Per position (`line:column`) not confirmed, the other characters a reader saw there: the confirming
   * readings' characters, the first reading's before correction, and the templates' runner-up where they were
   * unsure. What a misreading there could have been.
   */
  alternatives: Map<string, string[]>;
  /** Per line and cell, the template margin of the first reading. */
  margins: number[][];
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

export interface Band {
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
export function rectify(src: GreyImage, loc: MrzLocation, glyphPx: number, columns: number): Band {
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
  const first0 = warpQuad(src, [tl, tr, br, bl], width, height);
  const H0 = homography(
    [
      [0, 0],
      [width, 0],
      [width, height],
      [0, height],
    ],
    [tl, tr, br, bl],
  );
  // The lines fix the band's horizontal; its vertical (the glyphs' upright strokes) comes from the glyphs:
  // under perspective the document's vertical is not the lines' normal, and a sheared band reads badly.
  const shear = bestShear(first0);
  const yc = height / 2;
  const H = shear === 0 ? H0 : multiply3(H0, [1, shear, -shear * yc, 0, 1, 0, 0, 0, 1]);
  const corner = (x: number, y: number): Point => {
    const w = H[6]! * x + H[7]! * y + H[8]!;
    return [(H[0]! * x + H[1]! * y + H[2]!) / w, (H[3]! * x + H[4]! * y + H[5]!) / w];
  };
  const image =
    shear === 0
      ? first0
      : warpQuad(
          src,
          [corner(0, 0), corner(width, 0), corner(width, height), corner(0, height)],
          width,
          height,
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

function multiply3(A: readonly number[], B: readonly number[]): number[] {
  const out = new Array<number>(9).fill(0);
  for (let r = 0; r < 3; r++)
    for (let c = 0; c < 3; c++) for (let k = 0; k < 3; k++) out[r * 3 + c]! += A[r * 3 + k]! * B[k * 3 + c]!;
  return out.map((v) => v / out[8]!);
}

/**
 * The horizontal shear (x shift per row) that makes the band's glyphs upright: the one whose column profile of
 * ink is sharpest (upright strokes and the gaps between monospaced cells line up).
 */
export function bestShear(img: GreyImage): number {
  const { width: w, height: h, data } = img;
  let mean = 0;
  for (const v of data) mean += v;
  mean /= data.length;
  const ink: [number, number][] = [];
  for (let y = 0; y < h; y++)
    for (let x = 0; x < w; x++) if (data[y * w + x]! < mean - 40) ink.push([x, y - h / 2]);
  if (ink.length < 50) return 0;
  let best = 0;
  let bestScore = -1;
  const profile = new Float64Array(w + 2 * h);
  for (let s = -0.36; s <= 0.3601; s += 0.02) {
    profile.fill(0);
    for (const [x, y] of ink) {
      const xx = Math.round(x - s * y) + h;
      if (xx >= 0 && xx < profile.length) profile[xx]! += 1;
    }
    let score = 0;
    for (const v of profile) score += v * v;
    if (score > bestScore) {
      bestScore = score;
      best = s;
    }
  }
  return Math.abs(best) < 0.01 ? 0 : best;
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

export function guessFormat(loc: MrzLocation): MrzFormat {
  if (loc.lines.length === 3) return "TD1";
  const glyphs = Math.max(...loc.lines.map((l) => l.glyphs));
  return Math.abs(glyphs - 44) <= Math.abs(glyphs - 36) ? "TD3" : "TD2";
}

/**
 * One line read cell by cell: fillers from their shape (mrz-cells.ts), the other cells by the OCR. The OCR's
 * characters go to the inked cells in order when their counts agree; otherwise by position, after finding the
 * shift that puts most of them on inked cells (tesseract's boxes sit a little off the glyphs). Shifts are
 * counted by the distinct inked cells they fill (two characters rounded into one cell fill one), and among
 * shifts filling as many, the one that centres the characters in their cells best is taken: the first of a
 * run of equal shifts sits on its edge, where a character a little left of its centre rounds into the cell
 * before and pushes its neighbours along (dev draw 13: a TD1 photo's second reading one cell off from the
 * third character on).
 */
export function cellText(
  cells: Pick<LineCells, "kinds" | "left" | "pitch">,
  line: Pick<OcrLine, "words"> | undefined,
): { text: string; conf: number[] } {
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
  let residual = Number.POSITIVE_INFINITY;
  for (let step = -20; step <= 20; step++) {
    const d = step / 20;
    const filled = new Set<number>();
    let r = 0;
    for (const s of symbols) {
      const k = Math.round(pos(s) + d);
      if (chars[k] !== "?") continue;
      filled.add(k);
      r += (pos(s) + d - k) ** 2;
    }
    if (filled.size > hits || (filled.size === hits && r < residual - 1e-9))
      [hits, residual, shift] = [filled.size, r, d];
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

/** Template reader settings: the sampled window sizes of the first and the confirming reading. */
const TEMPLATE_SIZE = { w: 20, h: 32 } as const;
const HIRES_SIZE = { w: 26, h: 42 } as const;
const HIRES_GLYPH_PX = 58;
/** A character whose best template beats the runner-up by less than this is unsure (calibrated on dev). */
export const SURE_MARGIN = 0.045;
/** …or whose best correlation is below this. */
export const SURE_SCORE = 0.55;
/** Runner-ups tried by the check-digit correction: characters below this margin. */
const CORRECTABLE_MARGIN = 0.06;

/** Does a reading need confirming: a check digit failing, or a date that is no calendar date? */
function needsConfirming(format: MrzFormat, lines: readonly string[]): boolean {
  if (fieldChecks(format, lines).some((c) => !c.ok)) return true;
  const spans =
    format === "TD1"
      ? [
          [1, 0],
          [1, 8],
        ]
      : [
          [1, 13],
          [1, 21],
        ];
  for (const [l, at] of spans) {
    const raw = (lines[l!] ?? "").slice(at!, at! + 6);
    if (!/^\d{6}$/.test(raw)) continue;
    const m = Number(raw.slice(2, 4));
    const d = Number(raw.slice(4, 6));
    if (m < 1 || m > 12 || d < 1 || d > new Date(Date.UTC(2000 + Number(raw.slice(0, 2)), m, 0)).getUTCDate())
      return true;
  }
  return false;
}

/** One reading by the tesseract engine (the independent second reader), classes forced, look-alikes settled. */
async function readByOcr(src: GreyImage, loc: MrzLocation, ocr: IdOcr, format: MrzFormat): Promise<string[]> {
  const once = await readOnce(src, loc, ocr, GLYPH_PX, format);
  const a = settle(format, once.read);
  return correctByCheckDigits(format, a.lines, lowConfidence(a.conf)).lines;
}

export interface MrzBand {
  format: MrzFormat;
  band: Band;
}

/**
 * The MRZ band at `loc` rectified as `readMrz` reads it (its format guessed from the lines): known before the
 * band is read, so the visual zone above it can be read meanwhile.
 */
export function mrzBand(src: GreyImage, loc: MrzLocation): MrzBand {
  const format = guessFormat(loc);
  return { format, band: rectify(src, loc, GLYPH_PX, MRZ_SHAPES[format].width) };
}

/**
 * Reads the MRZ at `loc` in `src` (grey, source pixels). The band is rectified and read by OCR-B templates
 * (mrz-template.ts), cell by cell at the fixed pitch, each character with its margin over the runner-up;
 * failing check digits are settled by the runner-ups of unsure characters only. When a check digit still fails
 * or a date is no calendar date, the reading is confirmed twice, independently: by the tesseract engine on the
 * same band (`ocr`, started only then) and by the templates again on a band rectified at a higher resolution
 * with finer templates. A character is `confirmed` when the templates read it with a clear margin and both
 * other readings agree; where the templates were unsure and both others agree on another character, theirs
 * is taken.
 */
export async function readMrz(
  src: GreyImage,
  loc: MrzLocation,
  ocr: () => Promise<IdOcr>,
  rectified: MrzBand = mrzBand(src, loc),
): Promise<MrzReading | undefined> {
  const { format, band } = rectified;
  const columns = MRZ_SHAPES[format].width;
  const first = readByTemplates(band, format, templateBank(TEMPLATE_SIZE));
  const settled = correctByRunnerUps(format, first, CORRECTABLE_MARGIN);
  let lines = settled.lines;
  const corrections: Correction[] = settled.corrections.map((c) => ({ ...c, why: "check_digit" as const }));
  const unsure = new Set<string>();
  first.cells.forEach((row, li) => {
    row.forEach((c, i) => {
      if (c.margin < SURE_MARGIN || c.score < SURE_SCORE) unsure.add(`${li}:${i}`);
    });
  });
  for (const c of settled.corrections) unsure.add(`${c.line}:${c.at}`);
  const disagreed = new Set<string>();
  const confirmed = new Set<string>();
  let confirmedBy: string[] = [];
  let otherReadings: string[][] = [];
  if (needsConfirming(format, lines)) {
    const engine = await ocr();
    const second = await readByOcr(src, loc, engine, format);
    const hiBand = rectify(src, loc, HIRES_GLYPH_PX, columns);
    const hi = readByTemplates(hiBand, format, templateBank(HIRES_SIZE));
    const third = correctByRunnerUps(format, hi, CORRECTABLE_MARGIN).lines;
    confirmedBy = ["tesseract", "templates at a higher resolution"];
    otherReadings = [second, third];
    lines = lines.map((line, li) =>
      [...line]
        .map((ch, i) => {
          const key = `${li}:${i}`;
          const b = second[li]?.[i];
          const c = third[li]?.[i];
          if (unsure.has(key) && b !== undefined && b === c && b !== ch && b !== "?") {
            corrections.push({ line: li, at: i, from: ch, to: b, why: "check_digit" });
            return b;
          }
          // A near tie of both template readings between the same two characters (OCR-B's B and 8 on a
          // blurred photo: 0.909 against 0.890, and 0.909 against 0.901 at the higher resolution) is broken by
          // tesseract when it read the runner-up (dev draw 13: a TD1 photo's optional data, which only the
          // composite covers, and a changed expiry failing it, so no check digit could settle it).
          const lo = first.cells[li]?.[i];
          const hiCell = hi.cells[li]?.[i];
          if (
            unsure.has(key) &&
            lo?.char === ch &&
            hiCell?.char === ch &&
            hiCell.margin < SURE_MARGIN &&
            b === lo.runnerUp &&
            b === hiCell.runnerUp
          ) {
            corrections.push({ line: li, at: i, from: ch, to: b, why: "check_digit" });
            return b;
          }
          return ch;
        })
        .join(""),
    );
    lines.forEach((line, li) => {
      [...line].forEach((ch, i) => {
        const key = `${li}:${i}`;
        const agree = second[li]?.[i] === ch && third[li]?.[i] === ch;
        if (!agree) disagreed.add(key);
        else if (!unsure.has(key)) confirmed.add(key);
      });
    });
  }
  const H = band.H;
  const toSrc = (x: number, y: number): Point => {
    const w = H[6]! * x + H[7]! * y + H[8]!;
    return [(H[0]! * x + H[1]! * y + H[2]!) / w, (H[3]! * x + H[4]! * y + H[5]!) / w];
  };
  const pitch = (band.image.width - 2 * band.left) / columns;
  const cellToSource = (column: number, line: number): Point =>
    toSrc(band.left + column * pitch, band.top + (line - 0.5) * band.lineStep);
  const lineBoxes = lines.map((_, li) => {
    const y0 = band.lineCentres[li]! - band.glyphPx * 0.7;
    const y1 = band.lineCentres[li]! + band.glyphPx * 0.7;
    const pts = [
      toSrc(band.left, y0),
      toSrc(band.left + columns * pitch, y0),
      toSrc(band.left + columns * pitch, y1),
      toSrc(band.left, y1),
    ];
    return [
      Math.min(...pts.map((p) => p[0])),
      Math.min(...pts.map((p) => p[1])),
      Math.max(...pts.map((p) => p[0])),
      Math.max(...pts.map((p) => p[1])),
    ] as [number, number, number, number];
  });
  const margins = first.cells.map((row) => row.map((c) => c.margin));
  const alternatives = new Map<string, string[]>();
  lines.forEach((line, li) => {
    [...line].forEach((ch, i) => {
      const key = `${li}:${i}`;
      if (confirmed.has(key)) return;
      const cell = first.cells[li]?.[i];
      const seen = [
        otherReadings[0]?.[li]?.[i],
        otherReadings[1]?.[li]?.[i],
        first.lines[li]?.[i],
        unsure.has(key) ? cell?.runnerUp : undefined,
      ];
      const others = [...new Set(seen.filter((c): c is string => !!c && c !== ch && c !== "?"))];
      if (others.length) alternatives.set(key, others);
    });
  });
  return {
    format,
    lines,
    raw: first.lines,
    corrections,
    uncertain: lines.map((_, li) =>
      [...unsure].filter((k) => k.startsWith(`${li}:`)).map((k) => Number(k.split(":")[1])),
    ),
    unsure,
    disagreed,
    confirmed,
    confirmedBy,
    alternatives,
    margins,
    confidence: Math.round(
      100 *
        Math.min(
          1,
          first.cells.flat().reduce((s, c) => s + c.score, 0) / Math.max(1, first.cells.flat().length),
        ),
    ),
    lineBoxes,
    cellToSource,
    bandToSource: H,
    band: {
      width: band.image.width,
      height: band.image.height,
      pitch,
      lineStep: band.lineStep,
      left: band.left,
      top: band.top,
      glyphPx: band.glyphPx,
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
