import sharp, { type Metadata } from "sharp";
import type { DocumentBudget } from "../../core/document-budget.js";
import type { FailureCode } from "../../core/failure-codes.js";
import type { DocumentModel } from "../model.js";
import { rawPdfOf } from "../pdf-raw/cache.js";
import { type BudgetLimit, measurePdf, type PdfBudgetReport } from "./pdf-budget.js";

/**
 * The check step's gate (issue 13): before pdfjs, the OCR engine or any check reads the document, decide
 * whether it may be read at all.
 * - A PDF that needs a password (or a certificate) is refused `document_encrypted`; one that opens with the
 *   empty user password goes on, decrypted for the raw parser (pdf-raw/crypt.ts) as pdfjs decrypts it.
 * - A PDF over the budget (pdf-budget.ts) is refused `document_too_complex`.
 * - An image document whose header declares more pixels (or a TIFF more frames) than the budget allows is
 *   refused `document_too_complex` (read from the header; nothing is decoded).
 * The PDF's raw walk is the one the checks share afterwards (rawPdfOf: same bytes, same parse).
 */
export type Admission =
  | { ok: true; report?: PdfBudgetReport }
  | {
      ok: false;
      code: Extract<FailureCode, "document_too_complex" | "document_encrypted">;
      /** Which limit, for logs and metrics ("encrypted" for a locked file). */
      limit: BudgetLimit | "encrypted";
      /** One sentence: why (for logs; the API shows the code's fixed message). */
      reason: string;
      report?: PdfBudgetReport;
    };

export async function admitDocument(
  doc: Pick<DocumentModel, "bytes" | "contentType">,
  budget: DocumentBudget,
): Promise<Admission> {
  if (doc.contentType === "application/pdf") {
    const raw = rawPdfOf(doc);
    if (raw.security.kind === "locked") {
      return {
        ok: false,
        code: "document_encrypted",
        limit: "encrypted",
        reason: `The PDF is encrypted and cannot be opened: ${raw.security.reason}.`,
      };
    }
    const report = measurePdf(raw, budget);
    if (report.breach)
      return {
        ok: false,
        code: "document_too_complex",
        limit: report.breach.limit,
        reason: report.breach.message,
        report,
      };
    return { ok: true, report };
  }
  if (doc.contentType.startsWith("image/")) {
    let meta: Metadata;
    try {
      meta = await sharp(doc.bytes, { limitInputPixels: false, pages: -1 }).metadata();
    } catch {
      return { ok: true }; // unreadable: the OCR pass reports it as it does today
    }
    const pages = meta.pages ?? 1;
    const width = meta.width ?? 0;
    const height = (meta.pageHeight ?? meta.height ?? 0) || 0;
    if (pages > budget.maxPages)
      return {
        ok: false,
        code: "document_too_complex",
        limit: "pages",
        reason: `The image has ${pages} pages, more than the ${budget.maxPages} allowed.`,
      };
    if (width * height > budget.maxImagePixels)
      return {
        ok: false,
        code: "document_too_complex",
        limit: "image_pixels",
        reason: `The image is ${width} × ${height} pixels, more than the ${Math.round(budget.maxImagePixels / 1e6)} million allowed.`,
      };
  }
  return { ok: true };
}
