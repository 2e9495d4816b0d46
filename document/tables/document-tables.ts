import type { DocumentModel } from "../model.js";
import { tablePageOf } from "./pieces.js";
import { type DocumentReading, type ReadOptions, readTables } from "./reader.js";

const cache = new WeakMap<DocumentModel, DocumentReading>();

/**
 * The tables of a document (PDF pages, or the OCR pages of an image document), read once per document
 * model and shared by the checks that read them; treat the result as read-only.
 */
export function documentTables(doc: DocumentModel): DocumentReading {
  let reading = cache.get(doc);
  if (!reading) {
    const pages = doc.pdf?.pages ?? doc.imagePages ?? [];
    reading = readTables(pages.map(tablePageOf), { region: doc.region });
    cache.set(doc, reading);
  }
  return reading;
}

/** The tables of a document read again under other options (never cached): a hypothesis about its figures. */
export function documentTablesWith(doc: DocumentModel, opts: Omit<ReadOptions, "region">): DocumentReading {
  const pages = doc.pdf?.pages ?? doc.imagePages ?? [];
  return readTables(pages.map(tablePageOf), { region: doc.region, ...opts });
}
