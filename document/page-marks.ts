import type { RgbaImage } from "./raster.js";

/**
 * Draws numbered boxes on a rendered page (the reviewer's evidence, docs/evidence.md): each mark is a
 * rectangle drawn just outside the given pixel box (so it never hides the value it marks) in MARK_COLOUR,
 * with its number in white on a tab of TAB_COLOUR left of its top-left corner (right of the box when the
 * box touches the left edge), where a value in a column usually has blank space. Digits come from a built-in 5 × 7 bitmap font: no font files, the same pixels everywhere.
 * The two colours are exact and fully opaque, so a test can find the boxes in the decoded PNG.
 */

export const MARK_COLOUR: readonly [number, number, number] = [230, 0, 122];
export const TAB_COLOUR: readonly [number, number, number] = [150, 0, 80];

export interface Mark {
  /** The number drawn beside the box (the group's number). */
  number: number;
  /** [x0, y0, x1, y1] in pixels of the image, origin top left. */
  box: readonly [number, number, number, number];
}

// biome-ignore format: a bitmap font reads best as rows
const DIGITS: Record<string, string[]> = {
  "0": ["01110", "10001", "10011", "10101", "11001", "10001", "01110"],
  "1": ["00100", "01100", "00100", "00100", "00100", "00100", "01110"],
  "2": ["01110", "10001", "00001", "00010", "00100", "01000", "11111"],
  "3": ["11110", "00001", "00001", "01110", "00001", "00001", "11110"],
  "4": ["00010", "00110", "01010", "10010", "11111", "00010", "00010"],
  "5": ["11111", "10000", "11110", "00001", "00001", "10001", "01110"],
  "6": ["00110", "01000", "10000", "11110", "10001", "10001", "01110"],
  "7": ["11111", "00001", "00010", "00100", "01000", "01000", "01000"],
  "8": ["01110", "10001", "10001", "01110", "10001", "10001", "01110"],
  "9": ["01110", "10001", "10001", "01111", "00001", "00010", "01100"],
};

/** Line width and the gap between a box and what it marks, for an image of this size. */
export function markMetrics(width: number, height: number): { line: number; gap: number; scale: number } {
  const long = Math.max(width, height);
  const line = long >= 1400 ? 3 : 2;
  return { line, gap: 2, scale: long >= 1400 ? 3 : 2 };
}

function fill(
  img: RgbaImage,
  x0: number,
  y0: number,
  x1: number,
  y1: number,
  c: readonly [number, number, number],
): void {
  const xa = Math.max(0, Math.floor(x0));
  const ya = Math.max(0, Math.floor(y0));
  const xb = Math.min(img.width, Math.ceil(x1));
  const yb = Math.min(img.height, Math.ceil(y1));
  for (let y = ya; y < yb; y++) {
    for (let x = xa; x < xb; x++) {
      const o = (y * img.width + x) * 4;
      img.data[o] = c[0];
      img.data[o + 1] = c[1];
      img.data[o + 2] = c[2];
      img.data[o + 3] = 255;
    }
  }
}

/** The outer rectangle of a mark's outline in pixels (what a test finds in the image). */
export function outlineOf(box: Mark["box"], width: number, height: number): [number, number, number, number] {
  const { line, gap } = markMetrics(width, height);
  return [box[0] - gap - line, box[1] - gap - line, box[2] + gap + line, box[3] + gap + line];
}

/** Draws every mark on `img` (in place): outlines first, then the numbered tabs over them. */
export function drawMarks(img: RgbaImage, marks: readonly Mark[]): void {
  const { line, scale } = markMetrics(img.width, img.height);
  for (const m of marks) {
    const [x0, y0, x1, y1] = outlineOf(m.box, img.width, img.height);
    fill(img, x0, y0, x1, y0 + line, MARK_COLOUR);
    fill(img, x0, y1 - line, x1, y1, MARK_COLOUR);
    fill(img, x0, y0, x0 + line, y1, MARK_COLOUR);
    fill(img, x1 - line, y0, x1, y1, MARK_COLOUR);
  }
  for (const m of marks) {
    const [x0, y0, x1] = outlineOf(m.box, img.width, img.height);
    const text = String(m.number);
    const pad = scale;
    const tabW = text.length * 6 * scale - scale + 2 * pad;
    const tabH = 7 * scale + 2 * pad;
    const tx = x0 - tabW >= 0 ? x0 - tabW : Math.min(img.width - tabW, x1);
    const ty = Math.max(0, Math.min(img.height - tabH, y0));
    fill(img, tx, ty, tx + tabW, ty + tabH, TAB_COLOUR);
    for (let i = 0; i < text.length; i++) {
      const rows = DIGITS[text[i] as string] ?? [];
      for (let r = 0; r < rows.length; r++) {
        for (let c = 0; c < 5; c++) {
          if (rows[r]?.[c] !== "1") continue;
          const px = tx + pad + i * 6 * scale + c * scale;
          const py = ty + pad + r * scale;
          fill(img, px, py, px + scale, py + scale, [255, 255, 255]);
        }
      }
    }
  }
}
