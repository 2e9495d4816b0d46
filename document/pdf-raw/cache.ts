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

/**
 * `compute(raw, revision)` memoised per parsed file and revision: the revision diff, the reference index
 * and the signature review are each built once per check step however many checks ask.
 */
export function perRevision<T>(
  compute: (raw: RawPdf, revision: number) => T,
): (raw: RawPdf, revision: number) => T {
  const cache = new WeakMap<RawPdf, Map<number, T>>();
  return (raw, revision) => {
    let byRevision = cache.get(raw);
    if (!byRevision) {
      byRevision = new Map();
      cache.set(raw, byRevision);
    }
    if (!byRevision.has(revision)) byRevision.set(revision, compute(raw, revision));
    return byRevision.get(revision) as T;
  };
}
