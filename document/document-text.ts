import type { DocumentModel, PdfPage } from "./model.js";

/**
 * The document's text pages whatever their source: the PDF's extracted text (with OCR text on image-only
 * pages) or the OCR text of an image document. Text checks read pages through this so they work on scans.
 */
export function textPages(doc: DocumentModel): PdfPage[] {
  return doc.pdf?.pages ?? doc.imagePages ?? [];
}

/** All page text joined with blank lines. */
export function fullText(doc: DocumentModel): string {
  return textPages(doc)
    .map((p) => p.text)
    .join("\n\n");
}

/** The text file the agent reads: one `--- page N ---` line before each page's text. */
export function renderPageText(doc: DocumentModel): string {
  return textPages(doc)
    .map((p) => `--- page ${p.number} ---\n${p.text}\n`)
    .join("");
}
