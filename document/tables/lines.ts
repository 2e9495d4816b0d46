import type { Box } from "../page-layout.js";
import type { PieceSource, TablePage, TablePiece } from "./pieces.js";

/**
 * Lines and cells of one page from its pieces: pieces on one baseline form a line, pieces closer than
 * about an em form a cell, and cells that make one figure only together are joined again (a currency
 * mark set apart from its digits, "CR"/"DR" or a trailing minus in a run of its own, a thousands group
 * drawn as a run of its own). Every box here is in the reader's frame: y grows upwards whatever the
 * page's origin (`toReaderBox`), so "above" means a larger y on every kind of page.
 */

export interface Cell {
  text: string;
  /** Reader's frame (y up). */
  box: Box;
  pieces: TablePiece[];
  /** Font size (PDF) or text height (OCR) of the cell's largest piece. */
  size: number;
  /** Lowest confidence of the cell's pieces (1 for PDF text). */
  confidence: number;
}

export interface Line {
  page: number;
  /** 0-based, top to bottom on its page. */
  index: number;
  /** Baseline in the reader's frame. */
  baseline: number;
  box: Box;
  size: number;
  cells: Cell[];
  text: string;
  source: PieceSource;
}

/** The page's box in the reader's frame (y up): the identity for PDF pages, y mirrored for images. */
export function toReaderBox(b: Box, origin: TablePage["origin"]): Box {
  return origin === "bottom_left" ? b : [b[0], -b[3], b[2], -b[1]];
}

/** Runs within this fraction of the font size of a line's baseline belong to it. */
const BASELINE_TOLERANCE = 0.35;
/** Pieces further apart than this many ems start a new cell. */
const CELL_GAP_EM = 0.9;
/** Pieces further apart than this many ems (but within a cell) are separated by a space. */
const SPACE_GAP_EM = 0.12;

interface Placed {
  piece: TablePiece;
  box: Box;
  baseline: number;
  size: number;
}

const union = (a: Box, b: Box): Box => [
  Math.min(a[0], b[0]),
  Math.min(a[1], b[1]),
  Math.max(a[2], b[2]),
  Math.max(a[3], b[3]),
];

function cellOf(parts: Placed[]): Cell {
  let text = "";
  let box = (parts[0] as Placed).box;
  let size = 0;
  let confidence = 1;
  for (let i = 0; i < parts.length; i++) {
    const p = parts[i] as Placed;
    if (i > 0) {
      const prev = parts[i - 1] as Placed;
      const gap = p.box[0] - prev.box[2];
      if (gap > SPACE_GAP_EM * Math.max(p.size, prev.size) && !text.endsWith(" ")) text += " ";
      box = union(box, p.box);
    }
    text += p.piece.text;
    size = Math.max(size, p.size);
    confidence = Math.min(confidence, p.piece.confidence ?? 1);
  }
  return {
    text: tidyNumberText(text.replace(/\s+/g, " ").trim()),
    box,
    pieces: parts.map((p) => p.piece),
    size,
    confidence,
  };
}

/**
 * A figure drawn in pieces reads as one: "1.234 ,56" → "1.234,56" (a decimal part set apart), and
 * "- 12.00" stays readable as it is. Text other than figures is left alone.
 */
function tidyNumberText(text: string): string {
  if (/\p{L}/u.test(text.replace(/\b(?:EUR|GBP|USD|CHF|CR|DR|Cr|Dr)\b/g, ""))) return text;
  return text.replace(/(\d) ([.,]\d{1,2})(?!\d)/g, "$1$2").replace(/(\d[.,']) (\d{3})(?!\d)/g, "$1$2");
}

/** Lines of a page, top to bottom, with their cells left to right. */
export function linesOf(page: TablePage): Line[] {
  const placed: Placed[] = [];
  for (const piece of page.pieces) {
    if (piece.text.trim() === "") continue;
    const box = toReaderBox(piece.bbox, page.origin);
    const height = Math.max(0.5, box[3] - box[1]);
    const size = piece.size && piece.size > 0 ? piece.size : height;
    const baseline =
      piece.baseline !== undefined
        ? page.origin === "bottom_left"
          ? piece.baseline
          : -piece.baseline
        : box[1];
    if (![...box, baseline, size].every(Number.isFinite)) continue;
    placed.push({ piece, box, baseline, size });
  }
  placed.sort((a, b) => b.baseline - a.baseline || a.box[0] - b.box[0]);
  const groups: { baseline: number; size: number; box: Box; parts: Placed[] }[] = [];
  for (const p of placed) {
    const g = groups[groups.length - 1];
    const sameBaseline =
      g && Math.abs(g.baseline - p.baseline) <= BASELINE_TOLERANCE * Math.min(g.size, p.size);
    // OCR boxes carry no baseline: boxes overlapping by most of the smaller height share a line.
    const overlap = g ? Math.min(g.box[3], p.box[3]) - Math.max(g.box[1], p.box[1]) : 0;
    const sameBand =
      g && page.source === "ocr_words" && overlap >= 0.6 * Math.min(g.box[3] - g.box[1], p.box[3] - p.box[1]);
    if (g && (sameBaseline || sameBand)) {
      g.parts.push(p);
      g.box = union(g.box, p.box);
    } else groups.push({ baseline: p.baseline, size: p.size, box: p.box, parts: [p] });
  }
  return groups.map((g, index) => {
    const parts = g.parts.sort((a, b) => a.box[0] - b.box[0]);
    const cells: Cell[] = [];
    let current: Placed[] = [];
    for (const p of parts) {
      const prev = current[current.length - 1];
      const gap = prev ? p.box[0] - prev.box[2] : 0;
      if (
        prev &&
        (page.source === "plain_text" ||
          gap > CELL_GAP_EM * Math.max(prev.size, p.size) ||
          rateThenFigure(prev, p, gap))
      ) {
        cells.push(cellOf(current));
        current = [];
      }
      current.push(p);
    }
    if (current.length) cells.push(cellOf(current));
    const joined = joinSplitFigures(cells);
    return {
      page: page.page,
      index,
      baseline: g.baseline,
      box: g.box,
      size: Math.max(...parts.map((p) => p.size)),
      cells: joined,
      text: joined.map((c) => c.text).join("  "),
      source: page.source,
    };
  });
}

/**
 * A rate and the figure after it drawn as two pieces, a space or more apart ("8.1 %" then "13'396.74 CHF"): two
 * cells even closer than a cell gap. An invoice's rate column sits so close to a wide amount; a rate is never
 * the first half of an amount split over two pieces.
 */
function rateThenFigure(prev: Placed, p: Placed, gap: number): boolean {
  return (
    gap > SPACE_GAP_EM * Math.max(prev.size, p.size) &&
    /\d\s?%$/.test(prev.piece.text.trim()) &&
    /^(?:[-−(]?\d|[€£$¥₹]|[A-Z]{3}\s?\d)/.test(p.piece.text.trim())
  );
}

const CURRENCY_ONLY = /^(?:[€£$¥₹]|US\$|EUR|GBP|USD|CHF|JPY|CAD|AUD|SEK|NOK|DKK|PLN|CZK|INR)$/;
const NUMBER_ONLY = /^[-−–(]?\s?\d[\d.,'\u2019\u00a0\u202f ]*\)?-?$/;
const SIGN_MARK = /^(?:CR|DR|Cr|Dr|-|−|–|\+)$/;

function merge(a: Cell, b: Cell, sep: string): Cell {
  return {
    text: `${a.text}${sep}${b.text}`,
    box: union(a.box, b.box),
    pieces: [...a.pieces, ...b.pieces],
    size: Math.max(a.size, b.size),
    confidence: Math.min(a.confidence, b.confidence),
  };
}

/**
 * Cells that make one figure only together: a currency mark and its number (either side; accounting
 * layouts set "$" at the column's left edge, up to twelve ems from the digits), a number and its CR/DR
 * or trailing minus, and a leading minus or bracket and its number.
 */
export function joinSplitFigures(cells: Cell[]): Cell[] {
  const out: Cell[] = [];
  for (const [i, cell] of cells.entries()) {
    const prev = out[out.length - 1];
    // A mark between two numbers, in a cell of its own, leads the number after it (an accounting
    // column's "$" or "€" at its left edge); a suffix mark is printed a space from its number.
    const leadsNext = CURRENCY_ONLY.test(cell.text) && NUMBER_ONLY.test(cells[i + 1]?.text ?? "");
    if (prev) {
      const gap = cell.box[0] - prev.box[2];
      const em = Math.max(prev.size, cell.size);
      if (CURRENCY_ONLY.test(prev.text) && NUMBER_ONLY.test(cell.text) && gap < 12 * em) {
        out[out.length - 1] = merge(prev, cell, " ");
        continue;
      }
      if (NUMBER_ONLY.test(prev.text) && /\d/.test(prev.text)) {
        // A lone dash further away is an empty cell's placeholder in the next column, not a sign.
        const dash = /^[-−–]$/.test(cell.text);
        if (
          ((CURRENCY_ONLY.test(cell.text) && !leadsNext) || SIGN_MARK.test(cell.text)) &&
          gap < (dash ? 1.5 : 2.5) * em
        ) {
          out[out.length - 1] = merge(prev, cell, dash ? "" : " ");
          continue;
        }
      }
      if (/^[-−–(]$/.test(prev.text) && NUMBER_ONLY.test(cell.text) && gap < 1.5 * em) {
        out[out.length - 1] = merge(prev, cell, "");
        continue;
      }
    }
    out.push(cell);
  }
  return out;
}
