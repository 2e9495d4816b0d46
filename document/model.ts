import type { DocType } from "../core/verdict.js";
import type { PageLayout } from "./page-layout.js";

/**
 * What every check reads: the check step parses the document once into a DocumentModel (document/pdf-model.ts
 * for PDFs, the OCR pass for images), then each applicable check (checks/check.ts) reads it.
 */

export type SupportedContentType = "application/pdf" | "image/jpeg" | "image/png" | "image/tiff";

export interface PdfPage {
  /** 1-based. */
  number: number;
  text: string;
  /** Points (1/72 inch). */
  width: number;
  height: number;
  /** True when `text` was read by OCR from the page's pixels (an image-only page or an image document). */
  ocr?: boolean;
  /**
   * What the page draws, in paint order (text runs with font, size, colour; filled areas); see
   * page-layout.ts. On an OCR'd page the runs are the words read, each with its `confidence`.
   */
  layout?: PageLayout;
  /** How an OCR'd page was read (document/ocr.ts). */
  ocrReading?: OcrReading;
}

/** How the OCR read a page: at which resolution, straightened how, in which language, how surely. */
export interface OcrReading {
  /** Raster pixels per page unit the page was read at (PDF: dpi / 72; image document: × its own pixels). */
  scale: number;
  /** Effective resolution of an image-only PDF page's reading (dots per inch). */
  dpi?: number;
  /** Median glyph height of the picture read, in its pixels. */
  glyphPx?: number;
  /** The tilt that was straightened, in degrees (clockwise positive). */
  skewDeg: number;
  /** A photographed sheet's perspective was undone. */
  perspective: boolean;
  languages: string[];
  /** Mean word confidence, 0-100. */
  confidence: number;
  words: number;
  ms: number;
}

/** A PDF feature that needs at least a given PDF version. */
export interface PdfFeature {
  name: string;
  minVersion: string;
}

/** Byte-level facts read straight from the file, independent of the parser's repairs. */
export interface PdfRaw {
  /** Bytes before `%PDF-` (readers accept up to 1024). */
  headerOffset: number;
  /** `startxref` keywords in the file. */
  startxrefCount: number;
  /** `%%EOF` markers in the file. */
  eofCount: number;
  linearized: boolean;
  /** Revisions saved: 1 for a file written once; more when incremental updates were appended. */
  revisions: number;
  /** Non-whitespace bytes after the last `%%EOF`. */
  trailingBytes: number;
  /** /Version in the catalog (overrides the header version from PDF 1.4), when readable. */
  catalogVersion: string | null;
  encrypted: boolean;
  features: PdfFeature[];
}

export interface PdfModel {
  /** Version in the `%PDF-x.y` header. */
  version: string | null;
  /** Page count the document declares. */
  pageCount: number;
  /** Info dictionary entries as strings, exactly as stored (dates stay `D:...`). */
  info: Record<string, string>;
  /** XMP properties by canonical prefix (`xmp:CreateDate`, `pdf:Producer`, ...); absent when no XMP. */
  xmp?: Record<string, string>;
  /** Pages whose text was extracted (at most MAX_TEXT_PAGES). */
  pages: PdfPage[];
  /** Set when not every declared page could be read (cap, broken page tree, fake /Count). */
  pagesUnread: number;
  raw: PdfRaw;
}

export interface DocumentModel {
  bytes: Uint8Array;
  sizeBytes: number;
  /** Sniffed by the prepare step. */
  contentType: string;
  filename: string | null;
  /** The content type the caller declared (an upload's content_type); null when it declared none. */
  declaredContentType?: string | null;
  declaredDocType: DocType;
  region: string;
  pdf?: PdfModel;
  /**
   * The pages of an image document (JPEG, PNG, TIFF) with their OCR text, set by the OCR pass before the
   * checks run (document/ocr-pass.ts); read page text through `textPages` (document/document-text.ts).
   */
  imagePages?: PdfPage[];
  /** Problems met while parsing that did not stop it (for logs and the text file). */
  warnings: string[];
}
