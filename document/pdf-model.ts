import type { DocType } from "../core/verdict.js";
import type { DocumentModel, PdfFeature, PdfModel, PdfPage, PdfRaw } from "./model.js";
import { type Box, type FontInfo, layoutFromOperatorList, type PageLayout } from "./page-layout.js";
import { pdfHeaderOffset } from "./pdf-header.js";
import { type PdfjsPage, withPdfjs } from "./pdfjs.js";
import { parseXmp } from "./xmp.js";

/**
 * Parses a stored document once into the DocumentModel every check reads. PDFs go through pdfjs (Info,
 * XMP, per-page text) plus a byte scan for revision and version facts; images carry no parsed content
 * yet (OCR and EXIF come with later checks).
 */

/** Text is extracted from at most this many pages; the rest are counted in pagesUnread. */
export const MAX_TEXT_PAGES = 500;
/** Layout (text runs with fonts and positions, filled areas) is read for at most this many pages. */
export const MAX_LAYOUT_PAGES = 100;
/** Stop reading pages after this many consecutive page failures (a lying /Count, a broken tree). */
const MAX_CONSECUTIVE_PAGE_FAILURES = 3;

export class DocumentUnreadableError extends Error {
  override name = "DocumentUnreadableError";
}

/** The PDF needs a password (or certificate) to open: unreadable, and specifically so. */
export class DocumentEncryptedError extends DocumentUnreadableError {
  override name = "DocumentEncryptedError";
}

export interface ModelInput {
  bytes: Uint8Array;
  contentType: string;
  filename: string | null;
  /** The content type the caller declared, when it declared one (an upload's content_type). */
  declaredContentType?: string | null;
  declaredDocType: DocType;
  region: string;
}

export async function buildDocumentModel(input: ModelInput, signal?: AbortSignal): Promise<DocumentModel> {
  const model: DocumentModel = {
    bytes: input.bytes,
    sizeBytes: input.bytes.length,
    contentType: input.contentType,
    filename: input.filename,
    declaredContentType: input.declaredContentType ?? null,
    declaredDocType: input.declaredDocType,
    region: input.region,
    warnings: [],
  };
  if (input.contentType === "application/pdf")
    model.pdf = await parsePdf(input.bytes, model.warnings, signal);
  return model;
}

/** The Info dictionary entries the model keeps as strings. */
export const INFO_KEYS = [
  "Title",
  "Author",
  "Subject",
  "Keywords",
  "Creator",
  "Producer",
  "CreationDate",
  "ModDate",
  "Trapped",
];

function infoStrings(info: Record<string, unknown>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const k of INFO_KEYS) {
    const v = info[k];
    if (typeof v === "string") out[k] = v;
    else if (v && typeof v === "object" && "name" in v) out[k] = String((v as { name: unknown }).name);
  }
  const custom = info.Custom;
  if (custom && typeof custom === "object") {
    for (const [k, v] of Object.entries(custom as Record<string, unknown>)) {
      if (k in out) continue;
      if (typeof v === "string" || typeof v === "number" || typeof v === "boolean") out[k] = String(v);
      else if (v && typeof v === "object" && "name" in v) out[k] = String((v as { name: unknown }).name);
    }
  }
  return out;
}

async function parsePdf(bytes: Uint8Array, warnings: string[], signal?: AbortSignal): Promise<PdfModel> {
  const raw = scanPdfBytes(bytes);
  const header = /%PDF-(\d\.\d)/.exec(
    Buffer.from(bytes.subarray(raw.headerOffset, raw.headerOffset + 16)).toString("latin1"),
  );
  return withPdfjs(
    bytes,
    signal,
    async (doc) => {
      const meta = await doc.getMetadata().catch((err: unknown) => {
        warnings.push(`metadata unreadable: ${err instanceof Error ? err.message : String(err)}`);
        return undefined;
      });
      const info = infoStrings((meta?.info ?? {}) as Record<string, unknown>);
      const xmlRaw = meta?.metadata?.getRaw();
      const xmp = typeof xmlRaw === "string" && xmlRaw.trim() ? parseXmp(xmlRaw) : undefined;

      const pageCount = doc.numPages;
      const pages: PdfPage[] = [];
      let failures = 0;
      const limit = Math.min(pageCount, MAX_TEXT_PAGES);
      for (let n = 1; n <= limit; n++) {
        if (signal?.aborted) break;
        try {
          const page = await doc.getPage(n);
          const [, , w, h] = page.view;
          const content = await page.getTextContent();
          let text = "";
          for (const item of content.items) {
            if (!("str" in item)) continue;
            text += item.str;
            if (item.hasEOL) text += "\n";
          }
          const layout = n <= MAX_LAYOUT_PAGES ? await readLayout(page, warnings) : undefined;
          pages.push({
            number: n,
            text: text.replace(/[ \t]+\n/g, "\n").trimEnd(),
            width: Math.round((w ?? 0) * 100) / 100,
            height: Math.round((h ?? 0) * 100) / 100,
            ...(layout ? { layout } : {}),
          });
          page.cleanup();
          failures = 0;
        } catch (err) {
          warnings.push(`page ${n} unreadable: ${err instanceof Error ? err.message : String(err)}`);
          if (++failures >= MAX_CONSECUTIVE_PAGE_FAILURES) break;
        }
      }
      const pagesUnread = pageCount - pages.length;
      if (pageCount > MAX_TEXT_PAGES)
        warnings.push(`text read from the first ${MAX_TEXT_PAGES} of ${pageCount} pages`);
      return { version: header?.[1] ?? null, pageCount, info, xmp, pages, pagesUnread, raw };
    },
    (err) => {
      const reason = err instanceof Error ? err.message : String(err);
      if (/password/i.test(reason) || (err as { name?: string })?.name === "PasswordException") {
        return new DocumentEncryptedError("The PDF is encrypted with a password, so it cannot be read.");
      }
      return new DocumentUnreadableError(`The PDF cannot be parsed: ${reason}`);
    },
  );
}

/** The page's drawing in paint order, from one operator-list walk; undefined when pdfjs cannot list it. */
async function readLayout(page: PdfjsPage, warnings: string[]): Promise<PageLayout | undefined> {
  try {
    const ops = await page.getOperatorList();
    const fonts = new Map<string, FontInfo | undefined>();
    const fontOf = (id: string): FontInfo | undefined => {
      if (fonts.has(id)) return fonts.get(id);
      let info: FontInfo | undefined;
      try {
        if (page.commonObjs.has(id)) {
          const f = page.commonObjs.get(id) as {
            name?: unknown;
            missingFile?: unknown;
            ascent?: unknown;
            descent?: unknown;
            fontMatrix?: unknown;
            vertical?: unknown;
          } | null;
          if (f) {
            const matrix =
              f.fontMatrix && typeof (f.fontMatrix as ArrayLike<number>).length === "number"
                ? Array.from(f.fontMatrix as ArrayLike<number>)
                : undefined;
            info = {
              name: typeof f.name === "string" && f.name ? f.name : id,
              embedded: f.missingFile === false,
              ascent: typeof f.ascent === "number" && Number.isFinite(f.ascent) ? f.ascent : 0.8,
              descent: typeof f.descent === "number" && Number.isFinite(f.descent) ? f.descent : -0.2,
              widthScale:
                matrix && typeof matrix[0] === "number" && Number.isFinite(matrix[0]) && matrix[0] !== 0
                  ? Math.abs(matrix[0])
                  : 0.001,
              vertical: f.vertical === true,
            };
          }
        }
      } catch {
        info = undefined;
      }
      fonts.set(id, info);
      return info;
    };
    const [x0 = 0, y0 = 0, x1 = 0, y1 = 0] = page.view;
    const box: Box = [Math.min(x0, x1), Math.min(y0, y1), Math.max(x0, x1), Math.max(y0, y1)];
    const layout = layoutFromOperatorList(ops.fnArray, ops.argsArray, fontOf, box);
    if (layout.truncated) warnings.push(`page ${page.pageNumber} layout incomplete: ${layout.truncated}`);
    return layout;
  } catch (err) {
    warnings.push(
      `page ${page.pageNumber} layout unreadable: ${err instanceof Error ? err.message : String(err)}`,
    );
    return undefined;
  }
}

// ---------------------------------------------------------------------------------------------
// Byte-level scan
// ---------------------------------------------------------------------------------------------

function countOccurrences(buf: Buffer, needle: string): number {
  let n = 0;
  for (let i = buf.indexOf(needle); i !== -1; i = buf.indexOf(needle, i + needle.length)) n++;
  return n;
}

/** Features visible in the file's uncompressed structure, with the PDF version that introduced them. */
const FEATURE_PATTERNS: { name: string; minVersion: string; re: RegExp }[] = [
  { name: "transparency groups", minVersion: "1.4", re: /\/S\s*\/Transparency/ },
  { name: "JBIG2 images", minVersion: "1.4", re: /\/JBIG2Decode/ },
  { name: "object streams", minVersion: "1.5", re: /\/Type\s*\/ObjStm/ },
  { name: "cross-reference streams", minVersion: "1.5", re: /\/Type\s*\/XRef\b/ },
  { name: "JPEG 2000 images", minVersion: "1.5", re: /\/JPXDecode/ },
  { name: "optional content (layers)", minVersion: "1.5", re: /\/OCProperties/ },
  { name: "AES-128 encryption", minVersion: "1.6", re: /\/AESV2/ },
  // AES-256 came to PDF 1.7 through Adobe's extension level 3 (Acrobat 9 and qpdf write %PDF-1.7 with
  // /Extensions /ADBE); ISO made it part of PDF 2.0.
  { name: "AES-256 encryption", minVersion: "1.7", re: /\/AESV3/ },
];

export function scanPdfBytes(bytes: Uint8Array): PdfRaw {
  const buf = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const headerOffset = Math.max(0, pdfHeaderOffset(bytes));
  const startxrefCount = countOccurrences(buf, "startxref");
  const eofCount = countOccurrences(buf, "%%EOF");
  const head = buf.subarray(headerOffset, headerOffset + 1024).toString("latin1");
  const linearized = /\/Linearized\b/.test(head);
  // A linearized file carries a first-page trailer of its own: one marker more without being an update.
  const markers = Math.max(startxrefCount, eofCount);
  const revisions = Math.max(1, markers - (linearized && markers > 1 ? 1 : 0));
  const lastEof = buf.lastIndexOf("%%EOF");
  let trailingBytes = 0;
  if (lastEof >= 0) {
    for (let i = lastEof + 5; i < buf.length; i++) {
      const b = buf[i] as number;
      if (b !== 0x20 && b !== 0x0a && b !== 0x0d && b !== 0x09 && b !== 0x0c && b !== 0x00) trailingBytes++;
    }
  }
  const text = buf.toString("latin1");
  const versions = [...text.matchAll(/\/Version\s*\/(\d\.\d)/g)].map((m) => m[1] as string);
  const catalogVersion = versions.length ? (versions.sort().at(-1) as string) : null;
  const features: PdfFeature[] = FEATURE_PATTERNS.filter((f) => f.re.test(text)).map(
    ({ name, minVersion }) => ({
      name,
      minVersion,
    }),
  );
  const encrypted = /\/Encrypt\s+\d+\s+\d+\s+R/.test(text) || /\/Encrypt\s*<</.test(text);
  return {
    headerOffset,
    startxrefCount,
    eofCount,
    linearized,
    revisions,
    trailingBytes,
    catalogVersion,
    encrypted,
    features,
  };
}
