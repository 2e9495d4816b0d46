import type { Logger } from "pino";
import type { DocumentModel } from "./model.js";
import { applyOcr, createOcrEngine, type OcrEngine, type OcrPassResult } from "./ocr.js";

/**
 * The check step's OCR pass (called by checks/step.ts before the checks run): fills in the text of
 * image documents and image-only PDF pages, within a time budget, and reports the scanned pages. Uses the
 * caller's engine when given (the eval keeps one warm across documents); otherwise starts one only when a
 * page needs it and stops it afterwards, so a step process never stays alive on a tesseract worker.
 * OCR problems never fail the step: the pages keep no text and the problem is logged.
 */
export async function ocrForStep(
  doc: DocumentModel,
  opts: { engine?: OcrEngine; timeoutMs: number; log: Logger; signal?: AbortSignal },
): Promise<OcrPassResult> {
  let owned: Promise<OcrEngine> | undefined;
  const getEngine = () => {
    if (opts.engine) return Promise.resolve(opts.engine);
    owned ??= createOcrEngine();
    return owned;
  };
  const started = performance.now();
  try {
    const result = await applyOcr(doc, getEngine, { timeoutMs: opts.timeoutMs, signal: opts.signal });
    if (result.pages.length || result.problems.length) {
      opts.log.info(
        {
          ocrPages: result.pages,
          scannedPages: result.scannedPages,
          problems: result.problems.length ? result.problems : undefined,
          ms: Math.round(performance.now() - started),
        },
        "OCR pass done",
      );
    }
    return result;
  } catch (err) {
    const reason = err instanceof Error ? err.message : String(err);
    opts.log.warn({ reason }, "OCR failed; the image pages carry no text");
    return { pages: [], scannedPages: [], problems: [reason] };
  } finally {
    if (owned) await (await owned.catch(() => undefined))?.terminate();
  }
}
