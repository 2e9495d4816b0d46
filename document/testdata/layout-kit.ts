import type { DocType } from "../../core/verdict.js";
import type { DocumentModel, PdfPage } from "../model.js";
import type { Box, TextRun } from "../page-layout.js";

/**
 * Pages drawn as text runs at chosen places, for the table reader's and the arithmetic check's tests:
 * the same `PageLayout` pdfjs gives the checks, without rendering a PDF. Widths are estimated (half an
 * em per character), which is all the reader needs: where a cell starts and ends.
 */

export const A4: Box = [0, 0, 595, 842];

let order = 0;

/** A run with its left edge at `x` and its baseline at `y`. */
export function run(
  text: string,
  x: number,
  y: number,
  opts: { size?: number; font?: string } = {},
): TextRun {
  const size = opts.size ?? 9;
  const width = text.length * size * 0.5;
  return {
    text,
    bbox: [x, y - 0.2 * size, x + width, y + 0.8 * size],
    x,
    y,
    size,
    font: opts.font ?? "ABCDEF+Helvetica",
    fontEmbedded: true,
    renderMode: 0,
    fill: "#000000",
    alpha: 1,
    upright: true,
    order: order++,
  };
}

/** A run whose right edge is at `right` (numbers in a right-aligned column). */
export function rightRun(
  text: string,
  right: number,
  y: number,
  opts: { size?: number; font?: string } = {},
) {
  const size = opts.size ?? 9;
  return run(text, right - text.length * size * 0.5, y, opts);
}

export interface GridColumn {
  /** Left edge (left-aligned) or right edge (right-aligned). */
  x: number;
  align?: "left" | "right";
}

/**
 * Rows of cells placed in columns, from baseline `top` down by `pitch`; an undefined or empty cell
 * draws nothing; a row given as a string is a line of words at the first column.
 */
export function grid(
  columns: readonly GridColumn[],
  rows: readonly (readonly (string | undefined)[] | string)[],
  top: number,
  opts: { pitch?: number; size?: number } = {},
): TextRun[] {
  const pitch = opts.pitch ?? 14;
  const out: TextRun[] = [];
  rows.forEach((row, i) => {
    const y = top - i * pitch;
    if (typeof row === "string") {
      out.push(run(row, columns[0]?.x ?? 50, y, opts));
      return;
    }
    row.forEach((text, k) => {
      const col = columns[k];
      if (!text || !col) return;
      out.push(col.align === "right" ? rightRun(text, col.x, y, opts) : run(text, col.x, y, opts));
    });
  });
  return out;
}

export function layoutPage(number: number, runs: readonly TextRun[]): PdfPage {
  const sorted = [...runs].sort((a, b) => b.y - a.y || a.x - b.x);
  return {
    number,
    text: sorted.map((r) => r.text).join("\n"),
    width: A4[2],
    height: A4[3],
    layout: { box: A4, runs: [...runs], areas: [] },
  };
}

/** A PDF document known by its pages' layouts (as the check step's model would hold it). */
export function layoutDocument(
  pages: readonly (readonly TextRun[])[],
  opts: { region?: string; docType?: DocType } = {},
): DocumentModel {
  const pdfPages = pages.map((runs, i) => layoutPage(i + 1, runs));
  return {
    bytes: new Uint8Array(),
    sizeBytes: 0,
    contentType: "application/pdf",
    filename: "document.pdf",
    declaredDocType: opts.docType ?? "bank_statement",
    region: opts.region ?? "GB",
    pdf: {
      version: "1.7",
      pageCount: pdfPages.length,
      info: {},
      pages: pdfPages,
      pagesUnread: 0,
      raw: {
        headerOffset: 0,
        startxrefCount: 1,
        eofCount: 1,
        linearized: false,
        revisions: 1,
        trailingBytes: 0,
        catalogVersion: null,
        encrypted: false,
        features: [],
      },
    },
    warnings: [],
  };
}
