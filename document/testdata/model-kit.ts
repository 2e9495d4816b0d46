import { fileTypeFromBuffer } from "file-type";
import type { DocType } from "../../core/verdict.js";
import type { DocumentModel, SupportedContentType } from "../model.js";
import { pdfHeaderOffset } from "../pdf-header.js";
import { buildDocumentModel } from "../pdf-model.js";

/** Builds the DocumentModel a check sees, from bytes, as the runner would after prepare. */
export async function modelOf(
  bytes: Uint8Array,
  opts: {
    filename?: string | null;
    docType?: DocType;
    region?: string;
    declaredContentType?: string | null;
  } = {},
): Promise<DocumentModel> {
  const contentType = await contentTypeOf(bytes);
  return buildDocumentModel({
    bytes,
    contentType,
    filename: opts.filename === undefined ? "document.pdf" : opts.filename,
    declaredContentType: opts.declaredContentType ?? null,
    declaredDocType: opts.docType ?? "bank_statement",
    region: opts.region ?? "GB",
  });
}

/** The kit names the type itself (the prepare step's sniffer is not document/'s to import). */
async function contentTypeOf(bytes: Uint8Array): Promise<SupportedContentType> {
  if (pdfHeaderOffset(bytes) >= 0) return "application/pdf";
  const mime = (await fileTypeFromBuffer(bytes))?.mime;
  if (mime === "image/jpeg" || mime === "image/png" || mime === "image/tiff") return mime;
  throw new Error(`test document is not a supported type (${mime ?? "unknown"})`);
}
