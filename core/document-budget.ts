/**
 * How much work one document may cost the check step (issue 13; enforced by document/budget/): a document
 * over any of these ends FAILED `document_too_complex` before a parser spends memory or time on it.
 * Settings: DOCVERIFY_MAX_PAGES, DOCVERIFY_MAX_DECODED_MB, DOCVERIFY_MAX_OPERATORS,
 * DOCVERIFY_MAX_IMAGE_MEGAPIXELS (core/config.ts).
 */
export interface DocumentBudget {
  /** Pages of a PDF (walked, not the declared /Count) or frames of a TIFF. */
  maxPages: number;
  /**
   * Bytes the readers decode: every stream of a PDF once, and content streams (pages, forms, glyphs,
   * patterns) each time they are drawn; images aside (their size is maxImagePixels').
   */
  maxDecodedBytes: number;
  /**
   * Content-stream operators of the whole document as a reader executes them: every page, every use of a
   * form XObject counted again, Type 3 glyph procedures, tiling patterns and annotation appearances.
   */
  maxOperators: number;
  /** Pixels of one image, and of the distinct images one page draws together. */
  maxImagePixels: number;
}

/**
 * The defaults: about 30 times what the largest of ~300 real and real-producer documents needs (71 000
 * operators, 2 MB decoded, 18 million image pixels on a page, 36 pages), and within what the check step
 * reads in a few seconds and 1.5 GB (pdfjs holds ~1 GB per 3 million operators of one page).
 */
export const DEFAULT_DOCUMENT_BUDGET: DocumentBudget = {
  maxPages: 2_000,
  maxDecodedBytes: 256 * 1024 * 1024,
  maxOperators: 2_000_000,
  maxImagePixels: 64_000_000,
};
