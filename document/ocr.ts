import { createRequire } from "node:module";
import path from "node:path";
import { createWorker, OEM, PSM, type Worker } from "tesseract.js";
import type { DocumentModel, PdfPage } from "./model.js";
import { imageOnlyPages, renderPdfPages, scanPdfImages } from "./pdf-images.js";
import { decodeImageFile, type RgbaImage, toPng } from "./raster.js";

/**
 * OCR for image documents (JPEG, PNG, TIFF) and image-only PDF pages, with tesseract.js 7 running fully
 * offline: the WebAssembly core comes from tesseract.js-core in node_modules (tesseract.js requires it in
 * its Node worker), the worker script is the package's own Node worker, and the English model is read
 * from @tesseract.js-data/eng in node_modules (langPath is a local directory, so nothing is fetched);
 * cacheMethod "none" keeps tesseract from writing a copy of the model into the working directory (the
 * check step's root filesystem is read-only).
 *
 * The text is written into the model where the runner and the text checks read it: `pdf.pages[i].text`
 * of an image-only PDF page, or `imagePages` of an image document, each marked `ocr: true`.
 */

export interface OcrResult {
  text: string;
  /** Mean word confidence, 0-100. */
  confidence: number;
}

export interface OcrEngine {
  recognize(png: Buffer): Promise<OcrResult>;
  terminate(): Promise<void>;
}

const require = createRequire(import.meta.url);

/** Directory of the bundled English model (integer LSTM, `eng.traineddata.gz`). */
export function englishModelDir(): string {
  return path.join(path.dirname(require.resolve("@tesseract.js-data/eng/package.json")), "4.0.0_best_int");
}

/** Starts a tesseract worker that reads everything from node_modules and never touches the network. */
export async function createOcrEngine(): Promise<OcrEngine> {
  const worker: Worker = await createWorker("eng", OEM.LSTM_ONLY, {
    langPath: englishModelDir(),
    gzip: true,
    cacheMethod: "none",
    logger: () => undefined,
    errorHandler: () => undefined,
  });
  // Our page images carry no resolution; tell tesseract what they are rendered at (it warns otherwise).
  await worker.setParameters({
    tessedit_pageseg_mode: PSM.AUTO,
    preserve_interword_spaces: "1",
    user_defined_dpi: "180",
  });
  let terminated = false;
  return {
    async recognize(png) {
      if (terminated) throw new Error("the OCR engine was stopped");
      const { data } = await worker.recognize(png);
      return { text: data.text ?? "", confidence: data.confidence ?? 0 };
    },
    async terminate() {
      if (terminated) return;
      terminated = true;
      await worker.terminate().catch(() => undefined);
    },
  };
}

export const OCR_LIMITS = {
  /** Image documents are scaled to at most this many pixels on the longer side before OCR. */
  maxSide: 2200,
  /** Image-only PDF pages OCR'd per document. */
  maxPages: 10,
  /** Render scale of image-only PDF pages (2.5 ≈ 180 dpi). */
  renderScale: 2.5,
} as const;

export interface OcrPassResult {
  /** Pages whose text now comes from OCR. */
  pages: number[];
  /** Image-only pages (scans), OCR'd or not. */
  scannedPages: number[];
  /** Why some pages got no OCR text (caps, timeouts, undecodable images). */
  problems: string[];
}

class OcrTimeoutError extends Error {
  override name = "OcrTimeoutError";
}

async function recognizeBounded(engine: OcrEngine, img: RgbaImage, deadline: number): Promise<OcrResult> {
  const left = deadline - Date.now();
  if (left <= 0) throw new OcrTimeoutError("the OCR time budget was used up");
  const png = await toPng(img);
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new OcrTimeoutError(`OCR did not finish within ${left} ms`)), left);
  });
  try {
    return await Promise.race([engine.recognize(png), timeout]);
  } finally {
    clearTimeout(timer);
  }
}

const clean = (text: string) =>
  text
    .replace(/[ \t]+\n/g, "\n")
    .replace(/\n{3,}/g, "\n\n")
    .trim();

/**
 * Fills in the text of image documents and image-only PDF pages by OCR, within `timeoutMs` in total.
 * `engine` is created on first need by `getEngine`; a timeout stops the engine (tesseract cannot be
 * interrupted otherwise), so the caller must not reuse it after a timeout problem is reported.
 */
export async function applyOcr(
  doc: DocumentModel,
  getEngine: () => Promise<OcrEngine>,
  opts: { timeoutMs: number; signal?: AbortSignal },
): Promise<OcrPassResult> {
  const deadline = Date.now() + opts.timeoutMs;
  const result: OcrPassResult = { pages: [], scannedPages: [], problems: [] };
  const run = async (page: number, img: RgbaImage): Promise<string | undefined> => {
    try {
      const engine = await getEngine();
      const { text } = await recognizeBounded(engine, img, deadline);
      result.pages.push(page);
      return clean(text);
    } catch (err) {
      if (err instanceof OcrTimeoutError) {
        result.problems.push(`page ${page}: ${err.message}`);
        const engine = await getEngine().catch(() => undefined);
        await engine?.terminate();
        return undefined;
      }
      throw err;
    }
  };

  if (!doc.pdf) {
    if (!doc.contentType.startsWith("image/")) return result;
    result.scannedPages.push(1);
    let img: RgbaImage;
    try {
      img = await decodeImageFile(doc.bytes, OCR_LIMITS.maxSide);
    } catch (err) {
      result.problems.push(
        `the image cannot be decoded (${err instanceof Error ? err.message : String(err)})`,
      );
      doc.imagePages = [{ number: 1, text: "", width: 0, height: 0, ocr: true }];
      return result;
    }
    const text = await run(1, img);
    doc.imagePages = [{ number: 1, text: text ?? "", width: img.width, height: img.height, ocr: true }];
    return result;
  }

  const scan = await scanPdfImages(doc);
  const scanned = imageOnlyPages(doc, scan);
  result.scannedPages = scanned;
  if (scanned.length === 0) return result;
  const todo = scanned.slice(0, OCR_LIMITS.maxPages);
  if (scanned.length > todo.length)
    result.problems.push(`OCR read the first ${todo.length} of ${scanned.length} image-only pages`);
  const byNumber = new Map<number, PdfPage>(doc.pdf.pages.map((p) => [p.number, p]));
  await renderPdfPages(
    doc.bytes,
    todo,
    OCR_LIMITS.renderScale,
    async (n, img) => {
      if (Date.now() >= deadline) {
        result.problems.push(`page ${n}: the OCR time budget was used up`);
        return;
      }
      const text = await run(n, img);
      if (text === undefined) return;
      const page = byNumber.get(n);
      if (page) {
        page.text = text;
        page.ocr = true;
      }
    },
    { signal: opts.signal },
  );
  return result;
}

/**
 * An engine for long-lived callers (the eval, a warm worker): starts a tesseract worker on first use and
 * again after `terminate()` (which a timeout calls), so one stuck page does not disable OCR for the rest.
 */
export function createReusableOcrEngine(): OcrEngine {
  let current: Promise<OcrEngine> | undefined;
  return {
    async recognize(png) {
      current ??= createOcrEngine();
      return (await current).recognize(png);
    },
    async terminate() {
      const engine = current;
      current = undefined;
      await (await engine?.catch(() => undefined))?.terminate();
    },
  };
}
