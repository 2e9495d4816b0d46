import type { DocumentModel } from "../model.js";

/**
 * Which documents the identity checks read: every image document (a photo or scan of a data page or a
 * card), and short PDFs that are declared identity documents, carry scanned pages, or print MRZ-like text.
 * Other PDFs (statements, invoices) are not rendered for them.
 */
export function mayBeIdentityDocument(doc: DocumentModel): boolean {
  if (!doc.pdf) return doc.contentType.startsWith("image/");
  if (doc.pdf.pageCount > 4) return false;
  return (
    doc.declaredDocType === "id_document" ||
    doc.pdf.pages.some((p) => p.ocr || /[A-Z0-9]<<|<<[A-Z]/.test(p.text) || p.text.trim().length < 40)
  );
}
