import type { DocumentModel, PdfPage } from "./model.js";
import { type Box, type TextRun, union } from "./page-layout.js";

/**
 * Rebuilds what a reader sees as lines and cells from the visible text runs of each page: runs on one
 * baseline form a line; runs closer than about an em form a cell (a table cell, a label, a value).
 * Pages without a layout (OCR text, or a page pdfjs could not list) fall back to their plain text,
 * cells split at runs of two or more spaces, without positions.
 */

export interface Cell {
  text: string;
  /** Absent for cells read from plain text. */
  bbox?: Box;
  runs: TextRun[];
  /** Distinct fonts of the cell's runs. */
  fonts: string[];
  /** Font size of the cell's widest run (points); absent without layout. */
  size?: number;
}

export interface Line {
  page: number;
  /** 0-based position of the line on its page, top to bottom. */
  index: number;
  /** Baseline (absent without layout). */
  y?: number;
  cells: Cell[];
  text: string;
}

/** Runs within this fraction of the font size of a line's baseline belong to it. */
const BASELINE_TOLERANCE = 0.35;
/** Runs further apart than this many ems start a new cell. */
const CELL_GAP_EM = 0.9;
/** Runs further apart than this many ems (but within a cell) are separated by a space. */
const SPACE_GAP_EM = 0.12;

function cellOf(runs: TextRun[]): Cell {
  let text = "";
  let bbox = (runs[0] as TextRun).bbox;
  let widest = runs[0] as TextRun;
  for (let i = 0; i < runs.length; i++) {
    const r = runs[i] as TextRun;
    if (i > 0) {
      const prev = runs[i - 1] as TextRun;
      const gap = r.bbox[0] - prev.bbox[2];
      if (gap > SPACE_GAP_EM * Math.max(r.size, prev.size) && !text.endsWith(" ")) text += " ";
      bbox = union(bbox, r.bbox);
    }
    text += r.text;
    if (r.bbox[2] - r.bbox[0] > widest.bbox[2] - widest.bbox[0]) widest = r;
  }
  return { text: text.trim(), bbox, runs, fonts: [...new Set(runs.map((r) => r.font))], size: widest.size };
}

/**
 * Lines of one page from its layout's visible, upright runs, top to bottom. `units` "px" (an image's
 * pixels, y down) orders lines by increasing y; PDF points (y up) by decreasing y.
 */
export function layoutLines(pageNumber: number, runs: readonly TextRun[], units: "pt" | "px" = "pt"): Line[] {
  const visible = runs.filter((r) => !r.hidden && r.upright && r.text.trim() !== "");
  const down = units === "px" ? -1 : 1;
  visible.sort((a, b) => down * (b.y - a.y) || a.x - b.x);
  const groups: { y: number; size: number; runs: TextRun[] }[] = [];
  for (const r of visible) {
    const g = groups[groups.length - 1];
    if (g && Math.abs(g.y - r.y) <= BASELINE_TOLERANCE * Math.min(g.size, r.size || g.size)) g.runs.push(r);
    else groups.push({ y: r.y, size: r.size || 1, runs: [r] });
  }
  return groups.map((g, index) => {
    const sorted = g.runs.sort((a, b) => a.bbox[0] - b.bbox[0]);
    const cells: Cell[] = [];
    let current: TextRun[] = [];
    for (const r of sorted) {
      const prev = current[current.length - 1];
      if (prev && r.bbox[0] - prev.bbox[2] > CELL_GAP_EM * Math.max(prev.size, r.size)) {
        cells.push(cellOf(current));
        current = [];
      }
      current.push(r);
    }
    if (current.length) cells.push(cellOf(current));
    return { page: pageNumber, index, y: g.y, cells, text: cells.map((c) => c.text).join("  ") };
  });
}

/** Lines of a page from plain text: cells split at two or more spaces or a tab. */
export function textLines(pageNumber: number, text: string): Line[] {
  return text
    .split(/\r?\n/)
    .map((l) => l.trim())
    .filter(Boolean)
    .map((l, index) => {
      const cells = l
        .split(/\s{2,}|\t/)
        .map((t) => t.trim())
        .filter(Boolean)
        .map((t): Cell => ({ text: t, runs: [], fonts: [] }));
      return { page: pageNumber, index, cells, text: cells.map((c) => c.text).join("  ") };
    });
}

export function pageLines(page: PdfPage): Line[] {
  return page.layout
    ? layoutLines(page.number, page.layout.runs, page.layout.units)
    : textLines(page.number, page.text);
}

const cache = new WeakMap<DocumentModel, Line[]>();

/**
 * Every page's lines in reading order (PDF pages, or the OCR pages of an image document). Computed once
 * per document model and shared by the checks that read it; treat the result as read-only.
 */
export function documentLines(doc: DocumentModel): Line[] {
  let lines = cache.get(doc);
  if (!lines) {
    const pages = doc.pdf?.pages ?? doc.imagePages ?? [];
    lines = pages.flatMap(pageLines);
    cache.set(doc, lines);
  }
  return lines;
}
