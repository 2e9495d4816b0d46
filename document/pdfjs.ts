import { getDocument } from "pdfjs-dist/legacy/build/pdf.mjs";
import { DEFAULT_DOCUMENT_BUDGET } from "../core/document-budget.js";

/** A PDF as pdfjs opened it. */
export type PdfjsDocument = Awaited<ReturnType<typeof getDocument>["promise"]>;
export type PdfjsPage = Awaited<ReturnType<PdfjsDocument["getPage"]>>;

/**
 * Bounds on what pdfjs decodes for one document, set by the check step from its budget
 * (core/document-budget.ts): images larger than `maxImagePixels` are not decoded (pdfjs' maxImageSize; the
 * budget gate has refused documents with such images already, this also covers inline images).
 */
export interface PdfjsLimits {
  maxImagePixels: number;
}
let limits: PdfjsLimits = { maxImagePixels: DEFAULT_DOCUMENT_BUDGET.maxImagePixels };

export function setPdfjsLimits(next: PdfjsLimits): void {
  limits = { ...next };
}

/**
 * Opens `bytes` with pdfjs the one way the service does — no eval, no font faces or system fonts, going
 * on past errors — hands the document to `use`, and destroys it afterwards (or at once when `signal`
 * aborts). pdfjs may detach the buffer it is given, so it gets a copy. An error opening the file goes
 * through `openError` when given (the model turns it into DocumentUnreadableError).
 */
export async function withPdfjs<T>(
  bytes: Uint8Array,
  signal: AbortSignal | undefined,
  use: (doc: PdfjsDocument) => Promise<T>,
  openError?: (err: unknown) => Error,
): Promise<T> {
  const task = getDocument({
    data: new Uint8Array(bytes),
    verbosity: 0,
    isEvalSupported: false,
    disableFontFace: true,
    useSystemFonts: false,
    stopAtErrors: false,
    maxImageSize: limits.maxImagePixels,
    isOffscreenCanvasSupported: false,
  });
  const abort = () => void task.destroy();
  signal?.addEventListener("abort", abort, { once: true });
  try {
    let doc: PdfjsDocument;
    try {
      doc = await task.promise;
    } catch (err) {
      throw openError ? openError(err) : err;
    }
    return await use(doc);
  } finally {
    signal?.removeEventListener("abort", abort);
    await task.destroy().catch(() => undefined);
  }
}
