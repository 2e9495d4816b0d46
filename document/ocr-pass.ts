import type { Logger } from "pino";
import type { BoxTuple } from "../core/page-geometry.js";
import type { DocumentModel } from "./model.js";
import { languagesForRegion, type OcrLanguage } from "./ocr-languages.js";
import { imageOnlyPages, scanPdfImages } from "./pdf-images.js";
import {
  applyOcr,
  createOcrEngine,
  OCR_LIMITS,
  type OcrEngine,
  type OcrPassResult,
  OcrTimeoutError,
  rereadRegion,
} from "./ocr.js";
import type { TextRun } from "./page-layout.js";

/**
 * The check step's OCR (called by checks/step.ts before the checks run): fills in the text of image
 * documents and image-only PDF pages within a time budget, reports the scanned pages, and stays open so
 * the check step can have boxes read again, sharper, when a finding rests on an uncertain reading
 * (checks/ocr-review.ts). Uses the caller's engine when given (the eval keeps one warm across documents);
 * otherwise starts one only when a page needs it and stops it at `close()`, so a step process never stays
 * alive on a tesseract worker. OCR problems never fail the step: the pages keep no text and the problem
 * is logged.
 */

export interface OcrSession extends OcrPassResult {
  /**
   * Reads a box of an OCR'd page again at `factor` × the page's resolution, within the session's time
   * budget; undefined when it cannot (no budget left, not an OCR'd page, an error).
   */
  reread(page: number, bbox: BoxTuple, factor?: number): Promise<TextRun[] | undefined>;
  /** Stops the engine the session started (not a caller's). */
  close(): Promise<void>;
}

/** How many engines the OCR pass will use: one for an image, one per image-only page of a PDF up to `workers`. */
async function enginesNeeded(doc: DocumentModel, workers: number): Promise<number> {
  if (!doc.pdf) return doc.contentType.startsWith("image/") ? 1 : 0;
  const scanned = imageOnlyPages(
    doc,
    (await scanPdfImages(doc).catch(() => undefined)) ?? { images: [], pages: [], problems: [] },
  );
  return Math.min(workers, scanned.length);
}

export async function ocrForStep(
  doc: DocumentModel,
  opts: {
    engine?: OcrEngine;
    timeoutMs: number;
    /** Further time for re-reads after the first pass (default a quarter of timeoutMs). */
    rereadMs?: number;
    /**
     * Tesseract workers for the image-only pages of a PDF (default OCR_LIMITS.workers). With a caller's
     * engine, that one reads every page (the eval keeps one warm engine).
     */
    workers?: number;
    /** Starts an engine the session owns with the region's languages (default `createOcrEngine`). */
    startEngine?: (languages: readonly OcrLanguage[]) => Promise<OcrEngine>;
    log: Logger;
    signal?: AbortSignal;
    /** RecognizeOptions.onSent: called when a page of the first pass has been handed to tesseract. */
    onSent?: () => void;
  },
): Promise<OcrSession> {
  // Slot 0 reads every image and every PDF page in turn and does the re-reads; further slots (owned
  // engines only) read more pages of a PDF at the same time. Each engine starts on its slot's first use.
  const owned: (Promise<OcrEngine> | undefined)[] = [];
  const languages = languagesForRegion(doc.region);
  const startEngine = opts.startEngine ?? createOcrEngine;
  const slot = (i: number) => () => {
    if (opts.engine && i === 0) return Promise.resolve(opts.engine);
    owned[i] ??= startEngine(languages);
    return owned[i]!;
  };
  const getEngine = slot(0);
  const workers = opts.engine ? 1 : Math.max(1, opts.workers ?? OCR_LIMITS.workers);
  const moreEngines = Array.from({ length: workers - 1 }, (_, i) => slot(i + 1));
  // The engines the pages need start loading now (WebAssembly, the region's models: ~0.5-1 s on their own
  // threads), while this thread decodes, measures and straightens the first page, not after it.
  const needed = await enginesNeeded(doc, workers);
  for (const s of [getEngine, ...moreEngines].slice(0, needed)) void s().catch(() => undefined);
  const close = async () => {
    const engines = owned.splice(0);
    await Promise.all(engines.map(async (e) => (await e?.catch(() => undefined))?.terminate()));
  };
  const started = performance.now();
  const deadline = Date.now() + opts.timeoutMs;
  let pass: OcrPassResult;
  try {
    pass = await applyOcr(doc, getEngine, {
      timeoutMs: opts.timeoutMs,
      signal: opts.signal,
      deadline,
      moreEngines,
      ...(opts.onSent ? { onSent: opts.onSent } : {}),
    });
    // The page pass is over: the further workers' memory is given back before the checks run.
    await Promise.all(
      owned.slice(1).map(async (e, i) => {
        owned[i + 1] = undefined;
        await (await e?.catch(() => undefined))?.terminate();
      }),
    );
    if (pass.pages.length || pass.problems.length) {
      const pages = doc.pdf?.pages ?? doc.imagePages ?? [];
      opts.log.info(
        {
          ocrPages: pass.pages,
          scannedPages: pass.scannedPages,
          readings: pages.filter((p) => p.ocrReading).map((p) => ({ page: p.number, ...p.ocrReading })),
          problems: pass.problems.length ? pass.problems : undefined,
          ms: Math.round(performance.now() - started),
        },
        "OCR pass done",
      );
    }
  } catch (err) {
    const reason = err instanceof Error ? err.message : String(err);
    opts.log.warn({ reason }, "OCR failed; the image pages carry no text");
    pass = { pages: [], scannedPages: [], problems: [reason] };
  }
  // Re-reads get their own budget after the first pass, so a slow first pass cannot starve them entirely.
  const rereadDeadline = Math.max(deadline, Date.now()) + (opts.rereadMs ?? Math.floor(opts.timeoutMs / 4));
  return {
    ...pass,
    async reread(page, bbox, factor) {
      if (Date.now() >= rereadDeadline) return undefined;
      try {
        return await rereadRegion(doc, page, bbox, {
          engine: getEngine,
          deadline: rereadDeadline,
          factor,
          signal: opts.signal,
        });
      } catch (err) {
        if (err instanceof OcrTimeoutError) {
          const engine = await getEngine().catch(() => undefined);
          await engine?.terminate();
        }
        opts.log.warn(
          { page, bbox, reason: err instanceof Error ? err.message : String(err) },
          "re-reading a box failed",
        );
        return undefined;
      }
    },
    close,
  };
}
