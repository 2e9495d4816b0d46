import type { PdfPage } from "../model.js";
import type { Box, TextRun } from "../page-layout.js";

/**
 * What the table reader reads: positioned pieces of text on a page. Today they are the visible, upright
 * text runs of a PDF page (document/page-layout.ts); OCR word boxes with a per-word confidence are fed
 * the same way (`ocrWordsPage`), and a page known only by its plain text becomes pieces with positions
 * made up from its characters (`plainTextPage`), which the reader trusts less.
 */

export interface TablePiece {
  text: string;
  /** [x0, y0, x1, y1] in the page's units and orientation (TablePage.origin). */
  bbox: Box;
  /** Baseline, in the page's units; default: the bottom of the box (top-left pages: its bottom edge). */
  baseline?: number;
  /** Font name, when known (PDF text). */
  font?: string;
  /** Font size (PDF text) or text height (OCR), in the page's units. */
  size?: number;
  /** 0-1: how sure the reading of the text is (OCR). Absent: read from the file, certain. */
  confidence?: number;
}

/** Where the pieces came from: decides how far their positions and texts can be trusted. */
export type PieceSource = "pdf_text" | "ocr_words" | "plain_text";

export interface TablePage {
  /** 1-based page number. */
  page: number;
  pieces: TablePiece[];
  /** "bottom_left": PDF user space (points, y up); "top_left": image pixels (y down). */
  origin: "bottom_left" | "top_left";
  source: PieceSource;
}

/** The visible upright runs of a PDF page as pieces. */
export function pdfRunsPage(page: number, runs: readonly TextRun[]): TablePage {
  const pieces: TablePiece[] = [];
  for (const r of runs) {
    if (r.hidden || !r.upright || r.text.trim() === "") continue;
    pieces.push({ text: r.text, bbox: r.bbox, baseline: r.y, font: r.font, size: r.size });
  }
  return { page, pieces, origin: "bottom_left", source: "pdf_text" };
}

/** An OCR engine's words (pixels, origin top left) with their confidence (0-1 or 0-100). */
export function ocrWordsPage(
  page: number,
  words: readonly { text: string; bbox: Box; confidence: number }[],
): TablePage {
  const pieces = words
    .filter((w) => w.text.trim() !== "")
    .map((w) => ({
      text: w.text,
      bbox: w.bbox,
      size: Math.max(1, w.bbox[3] - w.bbox[1]),
      confidence: Math.max(0, Math.min(1, w.confidence > 1 ? w.confidence / 100 : w.confidence)),
    }));
  return { page, pieces, origin: "top_left", source: "ocr_words" };
}

/** Width of a character and height of a line of the made-up geometry of plain text. */
export const PLAIN_CHAR_WIDTH = 6;
export const PLAIN_LINE_HEIGHT = 14;

/**
 * A page known only by its text: every line a row, cells split at runs of two or more spaces or a tab,
 * placed where a fixed-pitch printout would put them (origin top left). Columns of such a page are
 * only as aligned as the text's spacing: the reader marks the reading as `plain_text`.
 */
export function plainTextPage(page: number, text: string): TablePage {
  const pieces: TablePiece[] = [];
  let row = 0;
  for (const raw of text.split(/\r?\n/)) {
    const line = raw.replace(/\t/g, "    ");
    if (line.trim() === "") continue;
    row++;
    const y1 = row * PLAIN_LINE_HEIGHT;
    for (const m of line.matchAll(/\S+(?: \S+)*/g)) {
      const x0 = (m.index ?? 0) * PLAIN_CHAR_WIDTH;
      pieces.push({
        text: m[0],
        bbox: [x0, y1 - 10, x0 + m[0].length * PLAIN_CHAR_WIDTH, y1],
        baseline: y1,
        size: 10,
      });
    }
  }
  return { page, pieces, origin: "top_left", source: "plain_text" };
}

/** A document page as the reader's input: its layout's runs when it has one, else its text. */
export function tablePageOf(p: PdfPage): TablePage {
  if (!p.layout) return plainTextPage(p.number, p.text);
  const ocr = p.layout.runs.some((r) => r.confidence !== undefined);
  if (!ocr && p.layout.units !== "px") return pdfRunsPage(p.number, p.layout.runs);
  return ocrRunsPage(p.number, p.layout.runs, p.layout.units === "px" ? "top_left" : "bottom_left");
}

/**
 * An OCR'd page's words as the document model keeps them (document/ocr.ts): an image document's pixels with
 * the origin top left, or PDF points for an image-only PDF page; each with its confidence (0-100) and the
 * baseline of its row on the straightened page.
 */
export function ocrRunsPage(page: number, runs: readonly TextRun[], origin: TablePage["origin"]): TablePage {
  const pieces: TablePiece[] = [];
  for (const r of runs) {
    if (r.hidden || r.text.trim() === "") continue;
    const c = r.confidence;
    pieces.push({
      text: r.text,
      bbox: r.bbox,
      baseline: r.y,
      size: r.size > 0 ? r.size : Math.max(1, Math.abs(r.bbox[3] - r.bbox[1])),
      ...(c === undefined ? {} : { confidence: Math.max(0, Math.min(1, c > 1 ? c / 100 : c)) }),
    });
  }
  return { page, pieces, origin, source: "ocr_words" };
}
