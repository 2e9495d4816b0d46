import type { CheckResult, Finding } from "../core/check-result.js";
import type { DocType } from "../core/verdict.js";
import type { PageLayout } from "./page-layout.js";

/**
 * The contract between the check runner and every check: the document is parsed once per check step
 * into a DocumentModel, then each applicable Check reads it. Checks are pure with respect to the
 * outside world (no network, no object store, no clock but ctx.now).
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
  /** What the page draws, in paint order (text runs with font, size, colour; filled areas); see page-layout.ts. */
  layout?: PageLayout;
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

export interface CheckContext {
  now: Date;
  /** Aborted when the check's time bound is reached. */
  signal?: AbortSignal;
  /** PEM bundle of trust anchors for signature.pdf (DOCVERIFY_TRUST_ANCHORS), read once by the runner. */
  trustAnchorsPem?: string;
  /** Why DOCVERIFY_TRUST_ANCHORS could not be read, when it is set but unreadable. */
  trustAnchorsError?: string;
}

export interface Check {
  /** Stable id, e.g. `metadata.dates`. */
  id: string;
  appliesTo(doc: DocumentModel): boolean;
  run(doc: DocumentModel, ctx: CheckContext): Promise<CheckResult>;
}

/** Outcome and overall severity from findings: flag when any finding reaches `flagAt`. */
export function judge(
  findings: readonly Finding[],
  flagAt = 2,
): { outcome: "pass" | "flag"; severity: number } {
  const sev = findings.map((f) => f.severity ?? 0).sort((a, b) => b - a);
  const top = sev[0] ?? 0;
  if (top < flagAt) return { outcome: "pass", severity: 0 };
  // Several independent strong findings reinforce each other a little.
  const others = sev.slice(1).filter((s) => s >= 4).length;
  return { outcome: "flag", severity: Math.min(10, top + Math.min(2, others)) };
}
