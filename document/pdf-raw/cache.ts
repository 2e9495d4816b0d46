import type { DocumentModel } from "../model.js";
import { openRawPdf, type RawPdf } from "./document.js";

/**
 * One raw walk per document: every check that reads the raw structure (pdf.revisions, signature.pdf,
 * metadata.producer, metadata.dates) shares it, so the file is split into revisions once per check step.
 */
const cache = new WeakMap<Uint8Array, RawPdf>();

export function rawPdfOf(doc: Pick<DocumentModel, "bytes">): RawPdf {
  let raw = cache.get(doc.bytes);
  if (!raw) {
    raw = openRawPdf(doc.bytes);
    cache.set(doc.bytes, raw);
  }
  return raw;
}
