import { fileTypeFromBuffer } from "file-type";
import type { SupportedContentType } from "../document/model.js";
import { pdfHeaderOffset } from "../document/pdf-header.js";

/**
 * The real content type of a document from its magic bytes (never from its name or a Content-Type
 * header). Only PDF, JPEG, PNG and TIFF are supported. A PDF with up to 1024 bytes of junk before its
 * `%PDF-` header still counts as a PDF, as readers accept it.
 */
const SUPPORTED = new Set<string>(["application/pdf", "image/jpeg", "image/png", "image/tiff"]);

export interface Sniffed {
  /** The supported type, or undefined. */
  contentType: SupportedContentType | undefined;
  /** What file-type recognised (also for unsupported content), for logs and messages. */
  detected: string | undefined;
}

export async function sniffContentType(bytes: Uint8Array): Promise<Sniffed> {
  const ft = bytes.length > 0 ? await fileTypeFromBuffer(bytes) : undefined;
  if (ft && SUPPORTED.has(ft.mime))
    return { contentType: ft.mime as SupportedContentType, detected: ft.mime };
  if (pdfHeaderOffset(bytes) >= 0)
    return { contentType: "application/pdf", detected: ft?.mime ?? "application/pdf" };
  return { contentType: undefined, detected: ft?.mime };
}
