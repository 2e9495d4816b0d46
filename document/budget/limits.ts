/**
 * How much work one document may cost the check step (issue 13): a document over any of these ends FAILED
 * `document_too_complex` before a parser spends memory or time on it (document/budget/gate.ts). The
 * settings are in core/config.ts (DOCVERIFY_MAX_PAGES, _MAX_DECODED_MB, _MAX_OPERATORS,
 * _MAX_IMAGE_MEGAPIXELS); the structural limits below are fixed, far above what any real producer writes.
 */
export interface DocumentBudget {
  /** Pages of a PDF (walked, not the declared /Count) or frames of a TIFF. */
  maxPages: number;
  /** Decoded bytes of every stream of a PDF together, images aside (their size is maxImagePixels'). */
  maxDecodedBytes: number;
  /**
   * Content-stream operators of the whole document as a reader executes them: every page, every use of a
   * form XObject counted again, Type 3 glyph procedures, tiling patterns and annotation appearances.
   */
  maxOperators: number;
  /** Pixels of one image, and of the distinct images one page draws together. */
  maxImagePixels: number;
}

export const DEFAULT_BUDGET: DocumentBudget = {
  maxPages: 2_000,
  maxDecodedBytes: 256 * 1024 * 1024,
  maxOperators: 2_000_000,
  maxImagePixels: 64_000_000,
};

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
} as const;

/**
 * Rendering bounds shared by everything that rasterises PDF pages (QR scanning, OCR of scanned pages,
 * evidence crops): at most this many pixels per rendered page (the scale is lowered to fit) and at most
 * this many pages rendered per document by one caller.
 */
export const RENDER_LIMITS = {
  maxPixelsPerPage: 6_000_000,
  maxPagesPerDocument: 20,
} as const;
