import sharp, { type Sharp } from "sharp";
import { createWorker, OEM, PSM, type Worker } from "tesseract.js";
import { type BoxTuple, pixelsToBox } from "../core/page-geometry.js";
import { RENDER_LIMITS } from "./budget/limits.js";
import type { DocumentModel, OcrReading, PdfPage } from "./model.js";
import {
  englishModelDir,
  languageOfText,
  languagesForRegion,
  modelDirectory,
  type OcrLanguage,
} from "./ocr-languages.js";
import type { PageLayout, TextRun } from "./page-layout.js";
import { imageOnlyPages, scanPdfImages } from "./pdf-images.js";
import { type PageRaster, pixelsOf } from "./pixels.js";
import type { RgbaImage } from "./raster.js";
import { analyseScan, applyHomography, flatSize, flatten, type Homography } from "./scan-geometry.js";
import { layoutLines } from "./text-lines.js";

export { englishModelDir };

/**
 * OCR for image documents (JPEG, PNG, TIFF) and image-only PDF pages, with tesseract.js 7 running fully
 * offline: the WebAssembly core comes from tesseract.js-core in node_modules, the worker script is the
 * package's own Node worker, and the language models come from the `@tesseract.js-data/*` packages in
 * node_modules (document/ocr-languages.ts; langPath is a local directory, so nothing is fetched);
 * cacheMethod "none" keeps tesseract from writing a copy of a model into the working directory.
 *
 * Each page is read the way its text needs (docs/decisions.md, "OCR"):
 * - pixels from the document's pixel source (document/pixels.ts), shared with the other users;
 * - at the resolution its glyphs need: the page is measured first (document/scan-geometry.ts) and
 *   rendered or resampled so its median glyph is TARGET_GLYPH_PX tall (small print ≥ 300 dpi effective,
 *   low-resolution images upscaled), within RENDER_LIMITS.maxPixelsPerPage;
 * - straightened: a tilted page is rotated level, a photographed sheet whose outline is found is
 *   flattened (perspective undone), and every word's box is mapped back onto the page;
 * - in the region's language, and again in another of EN/DE/FR/NL/ES/IT when its words say so.
 *
 * The words go on the model as positioned text runs with their confidence (`page.layout.runs`, in page
 * units: PDF points for image-only PDF pages, the file's pixels with the origin top left for image
 * documents), the page text is rebuilt from them line by line (columns apart), `page.ocr` is set and
 * `page.ocrReading` says how the page was read. Time is bounded: one budget for all pages.
 */

export interface OcrWord {
  text: string;
  /** [x0, y0, x1, y1] in pixels of the image read, origin top left. */
  bbox: BoxTuple;
  /** Tesseract's confidence in the word, 0-100. */
  confidence: number;
  /** Index of the text line the word is on (in reading order). */
  line: number;
  /** Baseline of its line (pixels, y at the word's left edge). */
  baseline: number;
  /** Height of its line's text (pixels). */
  lineHeight: number;
  /** Its characters as tesseract segmented them (pixels of the image read), when it gave them. */
  chars?: OcrChar[];
}

/** A character of an OCR'd word: its text, box and tesseract's confidence in it (0-100). */
export interface OcrChar {
  text: string;
  bbox: BoxTuple;
  confidence: number;
}

export interface OcrResult {
  text: string;
  /** Mean word confidence, 0-100. */
  confidence: number;
  words: OcrWord[];
}

export interface RecognizeOptions {
  /** Languages to read with (default: the engine's current ones, English at first). */
  languages?: readonly OcrLanguage[];
  /** "page": find the layout (columns, blocks); "block": one block of text lines (a crop). */
  mode?: "page" | "block";
  /** Resolution of the image in dots per inch (helps tesseract size its analysis). */
  dpi?: number;
  /**
   * How tesseract separates ink from paper: "global" (one Otsu threshold for the picture, tesseract's
   * default) or "local" (Sauvola's threshold, from each pixel's neighbourhood), for a picture whose paper
   * is not lit evenly (a phone photo's light falloff: one threshold there loses the words of the darker part).
   */
  threshold?: "global" | "local";
  /**
   * Called once the picture has been handed to the tesseract worker (it reads on its own thread from then
   * on): the check step starts the work that needs no text then, on the other core (checks/step.ts).
   */
  onSent?: () => void;
}

/** How a tesseract worker is set up (the defaults are the product's; the OCR bench varies them). */
export interface OcrEngineOptions {
  /**
   * Tesseract's `tessedit_do_invert` (default on, as tesseract has it): a low-confidence line is also
   * recognised inverted, which reads white text on a dark band (table headers, banners). Measured to cost
   * about 1 % of OCR time on scanned receipts, so kept (docs/decisions.md, "OCR time").
   */
  invert?: boolean;
}

export interface OcrEngine {
  /** Reads a picture (PGM, PNG, JPEG: whatever tesseract's image library reads). */
  recognize(png: Buffer, opts?: RecognizeOptions): Promise<OcrResult>;
  terminate(): Promise<void>;
}

interface TessWord {
  text: string;
  confidence: number;
  bbox: { x0: number; y0: number; x1: number; y1: number };
  symbols?: { text: string; confidence: number; bbox: { x0: number; y0: number; x1: number; y1: number } }[];
}
interface TessLine {
  words: TessWord[];
  bbox: { x0: number; y0: number; x1: number; y1: number };
  baseline?: { x0: number; y0: number; x1: number; y1: number };
}

/** Words of tesseract's blocks output, with their line's baseline and height. */
function wordsOf(blocks: unknown): OcrWord[] {
  const out: OcrWord[] = [];
  let lineIndex = 0;
  for (const block of (blocks as { paragraphs: { lines: TessLine[] }[] }[] | null) ?? []) {
    for (const para of block.paragraphs ?? []) {
      for (const line of para.lines ?? []) {
        const words = (line.words ?? []).filter((w) => w.text.trim() !== "");
        if (words.length === 0) continue;
        const b = line.baseline;
        const heights = words.map((w) => w.bbox.y1 - w.bbox.y0).sort((x, y) => x - y);
        const lineHeight = heights[Math.floor(heights.length / 2)] ?? line.bbox.y1 - line.bbox.y0;
        for (const w of words) {
          const baseline =
            b && b.x1 !== b.x0 ? b.y0 + ((b.y1 - b.y0) * (w.bbox.x0 - b.x0)) / (b.x1 - b.x0) : w.bbox.y1;
          out.push({
            text: w.text.trim(),
            bbox: [w.bbox.x0, w.bbox.y0, w.bbox.x1, w.bbox.y1],
            confidence: Math.round(w.confidence),
            line: lineIndex,
            baseline,
            lineHeight,
            ...(w.symbols?.length
              ? {
                  chars: w.symbols.map((c) => ({
                    text: c.text,
                    bbox: [c.bbox.x0, c.bbox.y0, c.bbox.x1, c.bbox.y1] as BoxTuple,
                    confidence: Math.round(c.confidence),
                  })),
                }
              : {}),
          });
        }
        lineIndex++;
      }
    }
  }
  return out;
}

/** Starts a tesseract worker that reads everything from node_modules and never touches the network. */
export async function createOcrEngine(
  initial: readonly OcrLanguage[] = ["eng"],
  options: OcrEngineOptions = {},
): Promise<OcrEngine> {
  const langPath = await modelDirectory();
  let current = initial.join("+");
  const worker: Worker = await createWorker(current, OEM.LSTM_ONLY, {
    langPath,
    gzip: true,
    cacheMethod: "none",
    logger: () => undefined,
    errorHandler: () => undefined,
  });
  await worker.setParameters({
    tessedit_pageseg_mode: PSM.AUTO,
    preserve_interword_spaces: "1",
    user_defined_dpi: "300",
    tessedit_do_invert: options.invert === false ? "0" : "1",
  });
  let terminated = false;
  return {
    async recognize(png, opts = {}) {
      if (terminated) throw new Error("the OCR engine was stopped");
      const wanted = (opts.languages ?? []).join("+");
      if (wanted && wanted !== current) {
        await worker.reinitialize(wanted, OEM.LSTM_ONLY);
        current = wanted;
      }
      await worker.setParameters({
        tessedit_pageseg_mode: opts.mode === "block" ? PSM.SINGLE_BLOCK : PSM.AUTO,
        user_defined_dpi: String(Math.round(Math.min(1200, Math.max(70, opts.dpi ?? 300)))),
        thresholding_method: opts.threshold === "local" ? "2" : "0",
      });
      const reading = worker.recognize(png, {}, { text: true, blocks: true });
      opts.onSent?.();
      const { data } = await reading;
      return { text: data.text ?? "", confidence: data.confidence ?? 0, words: wordsOf(data.blocks) };
    },
    async terminate() {
      if (terminated) return;
      terminated = true;
      await worker.terminate().catch(() => undefined);
    },
  };
}

/**
 * An engine for long-lived callers (the eval, a warm worker, tests): starts a tesseract worker on first
 * use and again after `terminate()` (which a timeout calls), so one stuck page does not disable OCR for
 * the rest.
 */
export function createReusableOcrEngine(options: OcrEngineOptions = {}): OcrEngine {
  let current: Promise<OcrEngine> | undefined;
  return {
    async recognize(png, opts) {
      current ??= createOcrEngine(opts?.languages?.length ? opts.languages : ["eng"], options);
      return (await current).recognize(png, opts);
    },
    async terminate() {
      const engine = current;
      current = undefined;
      await (await engine?.catch(() => undefined))?.terminate();
    },
  };
}

export const OCR_LIMITS = {
  /** Image-only PDF pages OCR'd per document. */
  maxPages: 10,
  /**
   * The median glyph height, in pixels, pages are read at (≈ 230 dpi for 9-10 pt print). 20 rather than
   * 26 (≈ 300 dpi): on 20 realworld-dev-scans receipts word recall 65.1 → 67.0 %, characters 84.8 → 85.7 %,
   * OCR CPU −18 %; on the bench's 200 dpi statement the same words, OCR −15-20 % (docs/decisions.md).
   */
  targetGlyphPx: 20,
  /** Bounds of the resolution factor applied to a page's own pixels. */
  minFactor: 0.5,
  maxFactor: 4,
  /** Resolution assumed for an image-only PDF page whose image resolution cannot be read. */
  defaultPdfDpi: 200,
  /** Tilts smaller than this (degrees) are read as they are. */
  minSkewDeg: 0.2,
  /**
   * Tesseract workers reading the image-only pages of one PDF at once (a check step Pod has 2 CPUs; each
   * worker holds its models, ~100-200 MB, within the step's 1536 MiB).
   */
  workers: 2,
} as const;

export interface OcrPassResult {
  /** Pages whose text now comes from OCR. */
  pages: number[];
  /** Image-only pages (scans), OCR'd or not. */
  scannedPages: number[];
  /** Why some pages got no OCR text (caps, timeouts, undecodable images). */
  problems: string[];
}

export class OcrTimeoutError extends Error {
  override name = "OcrTimeoutError";
}

/** Runs `recognize` within what is left until `deadline`. */
export async function recognizeBounded(
  engine: OcrEngine,
  png: Buffer,
  deadline: number,
  opts?: RecognizeOptions,
): Promise<OcrResult> {
  const left = deadline - Date.now();
  if (left <= 0) throw new OcrTimeoutError("the OCR time budget was used up");
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new OcrTimeoutError(`OCR did not finish within ${left} ms`)), left);
  });
  try {
    return await Promise.race([engine.recognize(png, opts), timeout]);
  } finally {
    clearTimeout(timer);
  }
}

const sharpOf = (img: RgbaImage) =>
  sharp(Buffer.from(img.data.buffer, img.data.byteOffset, img.data.length), {
    raw: { width: img.width, height: img.height, channels: 4 },
  });

/**
 * The picture tesseract reads, in grey, as a binary PGM (P5): tesseract's image library takes it as it is,
 * where a PNG of the same pixels cost about 0.3 s of CPU per page to compress and as much again to inflate
 * inside tesseract (same pixels, same words read; docs/decisions.md, "OCR time").
 */
export async function pgmOf(pipeline: Sharp): Promise<{ pgm: Buffer; width: number; height: number }> {
  const { data, info } = await pipeline.greyscale().raw().toBuffer({ resolveWithObject: true });
  const n = info.width * info.height;
  let grey = data;
  if (info.channels !== 1) {
    // Grey and alpha: the pages are on white (opaque), so the grey channel is the picture.
    grey = Buffer.alloc(n);
    for (let i = 0; i < n; i++) grey[i] = data[i * info.channels]!;
  }
  const header = Buffer.from(`P5\n${info.width} ${info.height}\n255\n`, "latin1");
  return { pgm: Buffer.concat([header, grey.subarray(0, n)]), width: info.width, height: info.height };
}

/** A picture prepared for tesseract, and how its pixels map back onto the raster it was made from. */
interface Prepared {
  /** The picture as a greyscale PGM. */
  pgm: Buffer;
  /** OCR pixels → raster pixels. */
  back(x: number, y: number): [number, number];
  /**
   * A height in the straightened picture → raster pixels, the same for a whole row: the y of a row's
   * baseline in the page as straightened (rows of a tilted page share it, whatever their x).
   */
  straightY(y: number): number;
  skewDeg: number;
  perspective: boolean;
}

/** Straightens a raster for reading: flattens a photographed sheet, or levels a tilted page. */
export async function prepareForOcr(
  img: RgbaImage,
  analysis: { skewDeg: number; outline?: import("./scan-geometry.js").Quad },
): Promise<Prepared> {
  if (analysis.outline) {
    const size = flatSize(analysis.outline);
    const bounded = Math.min(
      1,
      Math.sqrt(RENDER_LIMITS.maxPixelsPerPage / Math.max(1, size.width * size.height)),
    );
    const w = Math.max(1, Math.floor(size.width * bounded));
    const h = Math.max(1, Math.floor(size.height * bounded));
    const { image, back } = flatten(img, analysis.outline, w, h);
    const map = (x: number, y: number): [number, number] => {
      const p = applyHomography(back as Homography, { x, y });
      return [p.x, p.y];
    };
    const q = analysis.outline;
    const top = (q[0].y + q[1].y) / 2;
    const bottom = (q[3].y + q[2].y) / 2;
    return {
      pgm: (await pgmOf(sharpOf(image))).pgm,
      back: map,
      straightY: (y) => top + (y / Math.max(1, h - 1)) * (bottom - top),
      skewDeg: 0,
      perspective: true,
    };
  }
  if (Math.abs(analysis.skewDeg) < OCR_LIMITS.minSkewDeg) {
    return {
      pgm: (await pgmOf(sharpOf(img))).pgm,
      back: (x, y) => [x, y],
      straightY: (y) => y,
      skewDeg: 0,
      perspective: false,
    };
  }
  // sharp rotates clockwise by the angle about the centre and grows the canvas to fit.
  const angle = -analysis.skewDeg;
  const { pgm, ...info } = await pgmOf(sharpOf(img).rotate(angle, { background: "#ffffff" }));
  const t = (-angle * Math.PI) / 180;
  const cos = Math.cos(t);
  const sin = Math.sin(t);
  const cx = img.width / 2;
  const cy = img.height / 2;
  const ox = info.width / 2;
  const oy = info.height / 2;
  return {
    pgm,
    // Undo the clockwise rotation by `angle`: rotate back by -angle about the output's centre.
    back: (x, y) => {
      const dx = x - ox;
      const dy = y - oy;
      return [cx + dx * cos - dy * sin, cy + dx * sin + dy * cos];
    },
    straightY: (y) => cy + (y - oy),
    skewDeg: analysis.skewDeg,
    perspective: false,
  };
}

/**
 * An OCR'd word as a text run of the page, in page units, with its confidence. Its box is where the word
 * is on the page as submitted; its baseline `y` is taken in the page as straightened, so the words of a
 * row of a tilted page share one baseline and rows are rebuilt from them as from a PDF's text.
 */
function toRun(w: OcrWord, prepared: Prepared, raster: PageRaster, order: number): TextRun {
  const { image, geometry } = raster;
  // A box of the picture read, mapped back onto the page as submitted (the box around its four corners).
  const back = ([x0, y0, x1, y1]: BoxTuple): BoxTuple => {
    const corners = [
      prepared.back(x0, y0),
      prepared.back(x1, y0),
      prepared.back(x0, y1),
      prepared.back(x1, y1),
    ];
    const xs = corners.map((c) => c[0]);
    const ys = corners.map((c) => c[1]);
    return [Math.min(...xs), Math.min(...ys), Math.max(...xs), Math.max(...ys)];
  };
  const px = back(w.bbox);
  const bbox = pixelsToBox(geometry, px, image.width, image.height);
  // The baseline in the page as straightened: every word of a row shares it, so rows are rebuilt right.
  const baseY = prepared.straightY(w.baseline);
  const basePage = pixelsToBox(geometry, [px[0], baseY, px[0], baseY], image.width, image.height);
  const unitsPerPx = (bbox[3] - bbox[1]) / Math.max(1, px[3] - px[1]);
  return {
    text: w.text,
    bbox,
    x: bbox[0],
    y: basePage[1],
    size: Math.max(0.5, Math.round(w.lineHeight * unitsPerPx * 1.25 * 100) / 100),
    font: "",
    fontEmbedded: false,
    renderMode: 0,
    fill: null,
    alpha: 1,
    upright: true,
    order,
    confidence: w.confidence,
    ...(w.chars
      ? {
          chars: w.chars.map((c) => ({
            text: c.text,
            bbox: pixelsToBox(geometry, back(c.bbox), image.width, image.height),
            confidence: c.confidence,
          })),
        }
      : {}),
  };
}

/** Page text from its OCR runs: one line per text line, columns two spaces apart. */
export function textOfRuns(page: number, runs: readonly TextRun[], units: "pt" | "px"): string {
  return layoutLines(page, runs, units)
    .map((l) => l.text)
    .join("\n");
}

export interface PageReadingOptions {
  engine: () => Promise<OcrEngine>;
  deadline: number;
  languages: readonly OcrLanguage[];
  signal?: AbortSignal;
  /** "block" for a crop of a few lines (no layout analysis). */
  mode?: "page" | "block";
  /** Median glyph height pages are read at (default OCR_LIMITS.targetGlyphPx; the OCR bench varies it). */
  targetGlyphPx?: number;
  /** Ink from paper (RecognizeOptions.threshold); default "local" for a photographed sheet, else "global". */
  threshold?: "global" | "local";
  /** RecognizeOptions.onSent, for the page's first reading. */
  onSent?: () => void;
}

/** Reads a page raster; returns its runs (page units) and how it was read. */
export async function readRaster(
  raster: PageRaster,
  opts: PageReadingOptions & { analysis?: ReturnType<typeof analyseScan> },
): Promise<{ runs: TextRun[]; reading: Omit<OcrReading, "ms" | "dpi" | "scale"> & { text: string } }> {
  const analysis = opts.analysis ?? analyseScan(raster.image);
  const prepared = await prepareForOcr(raster.image, analysis);
  const engine = await opts.engine();
  const dpi = raster.geometry.units === "pt" ? raster.scale * 72 : undefined;
  let languages = [...opts.languages];
  const mode = opts.mode ?? "page";
  // A photographed sheet is lit unevenly (brighter where the light falls, darker towards an edge): one
  // threshold for the whole picture loses the words of its darker part (docs/decisions.md, "OCR").
  const threshold = opts.threshold ?? (prepared.perspective ? "local" : "global");
  let result = await recognizeBounded(engine, prepared.pgm, opts.deadline, {
    languages,
    dpi,
    mode,
    threshold,
    ...(opts.onSent ? { onSent: opts.onSent } : {}),
  });
  const spoken = mode === "page" ? languageOfText(result.text) : undefined;
  if (spoken && !languages.includes(spoken)) {
    // The words are another of the six languages: read again with its model, keep the better reading.
    const again = await recognizeBounded(engine, prepared.pgm, opts.deadline, {
      languages: [spoken],
      dpi,
      mode,
      threshold,
    }).catch((err) => {
      if (err instanceof OcrTimeoutError) return undefined;
      throw err;
    });
    if (again && again.confidence >= result.confidence) {
      result = again;
      languages = [spoken];
    }
  }
  const runs = result.words.map((w, i) => toRun(w, prepared, raster, i));
  return {
    runs,
    reading: {
      skewDeg: prepared.skewDeg,
      perspective: prepared.perspective,
      languages,
      confidence: Math.round(result.confidence),
      words: runs.length,
      text: result.text,
    },
  };
}

/** The resolution factor a page's own pixels need for OCR (its glyphs brought to the target height). */
export function resolutionFactor(
  glyphHeight: number | undefined,
  targetGlyphPx: number = OCR_LIMITS.targetGlyphPx,
): number {
  if (!glyphHeight) return 1;
  const f = targetGlyphPx / glyphHeight;
  return Math.min(OCR_LIMITS.maxFactor, Math.max(OCR_LIMITS.minFactor, f));
}

/** The resolution (pixels per point) of the image an image-only PDF page shows, when readable. */
async function nativeScale(doc: DocumentModel, page: number): Promise<number | undefined> {
  const px = pixelsOf(doc);
  const [images, g] = await Promise.all([px.pageImages(page), px.geometry(page)]);
  if (!g || images.length === 0) return undefined;
  const widest = images.reduce((a, b) => (a.width * a.height >= b.width * b.height ? a : b));
  const w = Math.abs(g.view[2]! - g.view[0]!);
  const h = Math.abs(g.view[3]! - g.view[1]!);
  const long = Math.max(widest.width, widest.height) / Math.max(w, h);
  return Number.isFinite(long) && long > 0 ? long : undefined;
}

/**
 * Reads one page of the document: measures it at its own resolution, renders or resamples it at the
 * resolution its text needs, straightens it and reads it. Returns the page's runs and reading.
 */
export async function readPage(
  doc: DocumentModel,
  page: number,
  opts: PageReadingOptions,
): Promise<
  { runs: TextRun[]; reading: OcrReading; text: string; units: "pt" | "px"; box: BoxTuple } | undefined
> {
  const started = Date.now();
  const px = pixelsOf(doc);
  const probeScale = doc.pdf ? ((await nativeScale(doc, page)) ?? OCR_LIMITS.defaultPdfDpi / 72) : 1;
  const probe = await px.page(page, { scale: probeScale }, opts.signal);
  if (!probe) return undefined;
  const analysis = analyseScan(probe.image);
  const factor = resolutionFactor(analysis.glyphHeight, opts.targetGlyphPx);
  const raster =
    Math.abs(factor - 1) < 0.1
      ? probe
      : ((await px.page(page, { scale: probe.scale * factor }, opts.signal)) ?? probe);
  const scaled =
    raster === probe
      ? analysis
      : {
          ...analysis,
          outline: analysis.outline?.map((p) => ({
            x: (p.x * raster.image.width) / probe.image.width,
            y: (p.y * raster.image.height) / probe.image.height,
          })) as typeof analysis.outline,
        };
  const { runs, reading: read } = await readRaster(raster, { ...opts, analysis: scaled });
  const { text: _text, ...reading } = read;
  const units = raster.geometry.units;
  return {
    runs,
    units,
    box: raster.geometry.view as BoxTuple,
    text: textOfRuns(page, runs, units),
    reading: {
      ...reading,
      scale: Math.round(raster.scale * 1000) / 1000,
      ...(units === "pt" ? { dpi: Math.round(raster.scale * 72) } : {}),
      glyphPx: analysis.glyphHeight
        ? Math.round(analysis.glyphHeight * (raster.scale / probe.scale))
        : undefined,
      ms: Date.now() - started,
    },
  };
}

/**
 * Fills in the text of image documents and image-only PDF pages by OCR, within `timeoutMs` in total.
 * `engine` is created on first need by `getEngine`; a timeout stops the engine (tesseract cannot be
 * interrupted otherwise), so the caller must not reuse it after a timeout problem is reported.
 */
export async function applyOcr(
  doc: DocumentModel,
  getEngine: () => Promise<OcrEngine>,
  opts: {
    timeoutMs: number;
    signal?: AbortSignal;
    deadline?: number;
    targetGlyphPx?: number;
    /**
     * Further engines: the image-only pages of a PDF are shared out between `getEngine` and these, each
     * taking the next unread page, so two pages are read at once on two cores. Pages keep their order.
     */
    moreEngines?: readonly (() => Promise<OcrEngine>)[];
    /** RecognizeOptions.onSent, for each page's first reading. */
    onSent?: () => void;
  },
): Promise<OcrPassResult> {
  const deadline = opts.deadline ?? Date.now() + opts.timeoutMs;
  const result: OcrPassResult = { pages: [], scannedPages: [], problems: [] };
  const languages = languagesForRegion(doc.region);
  const read = async (n: number, engineOf: () => Promise<OcrEngine> = getEngine) => {
    try {
      return await readPage(doc, n, {
        engine: engineOf,
        deadline,
        languages,
        signal: opts.signal,
        targetGlyphPx: opts.targetGlyphPx,
        ...(opts.onSent ? { onSent: opts.onSent } : {}),
      });
    } catch (err) {
      if (err instanceof OcrTimeoutError) {
        result.problems.push(`page ${n}: ${err.message}`);
        const engine = await engineOf().catch(() => undefined);
        await engine?.terminate();
        return undefined;
      }
      throw err;
    }
  };

  if (!doc.pdf) {
    if (!doc.contentType.startsWith("image/")) return result;
    result.scannedPages.push(1);
    const g = await pixelsOf(doc).geometry(1);
    if (!g) {
      result.problems.push("the image cannot be decoded");
      doc.imagePages = [{ number: 1, text: "", width: 0, height: 0, ocr: true }];
      return result;
    }
    const width = g.view[2]!;
    const height = g.view[3]!;
    const page: PdfPage = { number: 1, text: "", width, height, ocr: true };
    doc.imagePages = [page];
    const read1 = await read(1);
    if (read1) {
      result.pages.push(1);
      page.text = read1.text;
      page.layout = { box: [0, 0, width, height], runs: read1.runs, areas: [], units: "px" };
      page.ocrReading = read1.reading;
    }
    return result;
  }

  const scan = await scanPdfImages(doc);
  const scanned = imageOnlyPages(doc, scan);
  result.scannedPages = scanned;
  if (scanned.length === 0) return result;
  const todo = scanned.slice(0, Math.min(OCR_LIMITS.maxPages, RENDER_LIMITS.maxPagesPerDocument));
  if (scanned.length > todo.length)
    result.problems.push(`OCR read the first ${todo.length} of ${scanned.length} image-only pages`);
  const byNumber = new Map<number, PdfPage>(doc.pdf.pages.map((p) => [p.number, p]));
  const engines = [getEngine, ...(opts.moreEngines ?? [])].slice(0, Math.max(1, todo.length));
  const readings = new Map<number, Awaited<ReturnType<typeof read>>>();
  const budgetUsed = new Set<number>();
  let next = 0;
  // Each engine takes the next unread page until none is left; the pages are filled in in order below.
  await Promise.all(
    engines.map(async (engineOf) => {
      while (next < todo.length) {
        const n = todo[next++]!;
        if (opts.signal?.aborted) return;
        if (Date.now() >= deadline) {
          budgetUsed.add(n);
          continue;
        }
        readings.set(n, await read(n, engineOf));
      }
    }),
  );
  for (const n of todo) {
    if (budgetUsed.has(n)) result.problems.push(`page ${n}: the OCR time budget was used up`);
    const got = readings.get(n);
    if (!got) continue;
    result.pages.push(n);
    const page = byNumber.get(n);
    if (!page) continue;
    page.text = got.text;
    page.ocr = true;
    page.ocrReading = got.reading;
    const layout: PageLayout = {
      box: page.layout?.box ?? got.box,
      runs: got.runs,
      areas: page.layout?.areas ?? [],
      units: "pt",
    };
    page.layout = layout;
  }
  return result;
}

/**
 * Reads a box of an OCR'd page again, sharper: the box is made at `factor` times the resolution the page
 * was read at (from the pixel source: rendered again for a PDF, resampled from the file for an image),
 * straightened as the page was, and read as one block of lines in the page's language. Returns the words
 * as runs in page units, or undefined when the page was not OCR'd or the box cannot be made.
 */
export async function rereadRegion(
  doc: DocumentModel,
  pageNumber: number,
  bbox: BoxTuple,
  opts: { engine: () => Promise<OcrEngine>; deadline: number; factor?: number; signal?: AbortSignal },
): Promise<TextRun[] | undefined> {
  const page = (doc.pdf?.pages ?? doc.imagePages ?? []).find((p) => p.number === pageNumber);
  const reading = page?.ocrReading;
  if (!page || !reading) return undefined;
  const crop = await pixelsOf(doc).region(pageNumber, bbox, reading.scale * (opts.factor ?? 2), opts.signal);
  if (!crop) return undefined;
  const analysis = reading.perspective ? analyseScan(crop.image) : { skewDeg: reading.skewDeg, glyphs: 0 };
  const { runs } = await readRaster(crop, {
    engine: opts.engine,
    deadline: opts.deadline,
    languages: reading.languages.filter((l): l is OcrLanguage =>
      (["eng", "deu", "fra", "nld", "spa", "ita"] as string[]).includes(l),
    ),
    signal: opts.signal,
    mode: "block",
    analysis: { ...analysis, outline: undefined },
    threshold: reading.perspective ? "local" : "global",
  });
  return runs;
}
