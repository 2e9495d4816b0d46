import { createWorker, OEM, PSM, type Worker } from "tesseract.js";
import { englishModelDir } from "../ocr.js";
import { toPng } from "../raster.js";
import { keepTesseractCodeWarm } from "../tesseract-code.js";
import { type GreyImage, greyToRgba } from "./geometry.js";
import { MRZ_ALPHABET } from "./mrz-format.js";

/**
 * The identity checks' own tesseract worker (document/ocr.ts runs the page OCR; this one reads an MRZ band
 * and the fields of a visual zone with positions). The same offline setup: the WebAssembly core and the
 * English LSTM model come from node_modules, nothing is fetched, nothing is cached on disk. No OCR-B model
 * ships on npm or Debian, so the MRZ is read with the English model restricted to the MRZ alphabet
 * (A-Z, 0-9, `<`), one line at a time, and settled by mrz-format.ts.
 */

export interface OcrSymbol {
  text: string;
  confidence: number;
  /** [x0, y0, x1, y1] in the pixels of the image read. */
  box: [number, number, number, number];
}

export interface OcrWord {
  text: string;
  confidence: number;
  box: [number, number, number, number];
  symbols: OcrSymbol[];
}

export interface OcrLine {
  text: string;
  confidence: number;
  box: [number, number, number, number];
  words: OcrWord[];
}

export interface IdOcr {
  /** One line of MRZ characters (whitelist A-Z 0-9, and `<` unless `withoutFiller`). */
  readMrzLine(img: GreyImage, withoutFiller?: boolean): Promise<OcrLine | undefined>;
  /** One character (PSM 10) from `whitelist`, with its confidence. */
  readChar(img: GreyImage, whitelist: string): Promise<{ text: string; confidence: number } | undefined>;
  /**
   * The text lines of an image with their words, boxes and confidences; `whitelist`, when given, the only
   * characters the OCR may read.
   */
  readText(img: GreyImage, mode?: "sparse" | "line", whitelist?: string): Promise<OcrLine[]>;
  terminate(): Promise<void>;
}

export { MRZ_ALPHABET };

const box = (b: { x0: number; y0: number; x1: number; y1: number }): [number, number, number, number] => [
  b.x0,
  b.y0,
  b.x1,
  b.y1,
];

function linesOf(blocks: Tesseract.Block[] | null): OcrLine[] {
  const out: OcrLine[] = [];
  for (const block of blocks ?? []) {
    for (const para of block.paragraphs) {
      for (const line of para.lines) {
        out.push({
          text: line.text.replace(/\s+$/, ""),
          confidence: line.confidence,
          box: box(line.bbox),
          words: line.words.map((w) => ({
            text: w.text,
            confidence: w.confidence,
            box: box(w.bbox),
            symbols: w.symbols.map((s) => ({ text: s.text, confidence: s.confidence, box: box(s.bbox) })),
          })),
        });
      }
    }
  }
  return out;
}

export async function createIdOcr(): Promise<IdOcr> {
  // The engine is fresh per document; tesseract's compiled machine code stays warm in the process.
  keepTesseractCodeWarm();
  const worker: Worker = await createWorker("eng", OEM.LSTM_ONLY, {
    langPath: englishModelDir(),
    gzip: true,
    cacheMethod: "none",
    logger: () => undefined,
    errorHandler: () => undefined,
  });
  let mode: string | undefined;
  const use = async (m: "mrz" | "mrz-chars" | "sparse" | "line", whitelist = "") => {
    const key = `${m}:${whitelist}`;
    if (mode === key) return;
    await worker.setParameters({
      tessedit_pageseg_mode: m === "sparse" ? PSM.SPARSE_TEXT : PSM.SINGLE_LINE,
      tessedit_char_whitelist:
        m === "mrz" ? MRZ_ALPHABET : m === "mrz-chars" ? MRZ_ALPHABET.slice(0, -1) : whitelist,
      preserve_interword_spaces: "1",
      user_defined_dpi: "300",
    });
    mode = key;
  };
  let stopped = false;
  // One call at a time: each call sets the worker's parameters and then recognises, and tesseract.js runs the
  // jobs in the order sent, so two callers interleaved (the visual zone read while the MRZ is confirmed) would
  // recognise with each other's page mode and character whitelist.
  let queue: Promise<unknown> = Promise.resolve();
  const serial = <T>(job: () => Promise<T>): Promise<T> => {
    const next = queue.then(job, job);
    queue = next.catch(() => undefined);
    return next;
  };
  const engine: IdOcr = {
    async readMrzLine(img, withoutFiller = false) {
      if (stopped) throw new Error("the ID OCR engine was stopped");
      await use(withoutFiller ? "mrz-chars" : "mrz");
      const { data } = await worker.recognize(await toPng(greyToRgba(img)), {}, { blocks: true, text: true });
      const lines = linesOf(data.blocks);
      if (lines.length === 0) return undefined;
      // PSM 7 gives one line; join in case tesseract split it.
      return {
        text: lines.map((l) => l.text.replace(/\s+/g, "")).join(""),
        confidence: Math.min(...lines.map((l) => l.confidence)),
        box: lines[0]!.box,
        words: lines.flatMap((l) => l.words),
      };
    },
    async readChar(img, whitelist) {
      if (stopped) throw new Error("the ID OCR engine was stopped");
      const key = `char:${whitelist}`;
      if (mode !== key) {
        await worker.setParameters({
          tessedit_pageseg_mode: PSM.SINGLE_CHAR,
          tessedit_char_whitelist: whitelist,
        });
        mode = key;
      }
      const { data } = await worker.recognize(await toPng(greyToRgba(img)), {}, { blocks: true, text: true });
      const sym = linesOf(data.blocks)
        .flatMap((l) => l.words.flatMap((w) => w.symbols))
        .sort((a, b) => b.confidence - a.confidence)[0];
      return sym && whitelist.includes(sym.text) ? { text: sym.text, confidence: sym.confidence } : undefined;
    },
    async readText(img, m = "sparse", whitelist = "") {
      if (stopped) throw new Error("the ID OCR engine was stopped");
      await use(m, whitelist);
      const { data } = await worker.recognize(await toPng(greyToRgba(img)), {}, { blocks: true, text: true });
      return linesOf(data.blocks);
    },
    async terminate() {
      if (stopped) return;
      stopped = true;
      await worker.terminate().catch(() => undefined);
    },
  };
  return {
    readMrzLine: (img, withoutFiller) => serial(() => engine.readMrzLine(img, withoutFiller)),
    readChar: (img, whitelist) => serial(() => engine.readChar(img, whitelist)),
    readText: (img, m, whitelist) => serial(() => engine.readText(img, m, whitelist)),
    terminate: () => engine.terminate(),
  };
}
