import { DEFAULT_DOCUMENT_BUDGET, type DocumentBudget } from "../../core/document-budget.js";

export type { DocumentBudget };
export const DEFAULT_BUDGET = DEFAULT_DOCUMENT_BUDGET;

/** Fixed structural limits (PDF 32000-1 Annex C suggests 28 levels of q; real files nest forms < 10 deep). */
export const STRUCTURE_LIMITS = {
  /** Nested /Pages nodes above a page. */
  maxPageTreeDepth: 64,
  /** Form XObjects (and glyph procedures, patterns) drawn inside each other. */
  maxFormNesting: 32,
  /** Graphics states saved (q) without being restored, at any point of a content stream. */
  maxSaveDepth: 1_000,
  /** Objects (n g obj headers) in the file. */
  maxObjects: 2_000_000,
  /**
   * Decoded bytes of any one stream (images and embedded files aside): readers hold a stream whole, and
   * parse fonts, CMaps and XMP packets whole (the largest real ones are CJK fonts of ~20 MB).
   */
  maxStreamBytes: 64 * 1024 * 1024,
} as const;

/**
 * Rendering bounds shared by everything that rasterises PDF pages (QR scanning, OCR of scanned pages,
 * evidence crops): at most this many pixels per rendered page (the scale is lowered to fit) and at most
 * this many pages rendered per document by one caller.
 */
export const RENDER_LIMITS = {
  maxPixelsPerPage: 6_000_000,
  maxPagesPerDocument: 20,
  /**
   * Bytes of rasters the document's pixel source (document/pixels.ts) keeps for reuse; beyond, the least
   * recently used are dropped (and made again if asked for again).
   */
  maxCachedBytes: 160 * 1024 * 1024,
} as const;
