/**
 * `npm run bench:ocr`: the OCR's time per page and its accuracy, per setting, on a fixed subset of the
 * genuine receipts of ../shared/realworld-dev-scans (their ground-truth text lines are in box/*.csv).
 *
 * For each setting (target glyph height × tesseract's `tessedit_do_invert`) every image of the subset is
 * read by the product's OCR pass (document/ocr.ts `applyOcr`: measure, resample, straighten, read, and read
 * again in another language when the words say so), with one warm engine per setting, as the eval does.
 * Printed per setting: wall and CPU ms per page (medians and totals), tesseract passes per page and the
 * megapixels each read, word recall/precision against the ground truth (multiset of words, case and
 * punctuation kept, upper case: the set's ground truth is) and character accuracy (each ground-truth line against its best-matching span of an
 * OCR line: 1 - edits / characters).
 *
 *   npm run bench:ocr                          # settings 26 (before), 20 (today), 20:noinvert; 20 images
 *   npm run bench:ocr -- --settings 26,22:noinvert --n 10 --per-image
 *   npm run bench:ocr -- --step [--glyph 26] [--no-invert] [--runs 2]   # the check step on the bench scan
 *
 * Timings depend on the machine's load; the load average is printed with the results.
 */
import { readFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import sharp from "sharp";
import type { DocumentModel } from "../document/model.js";
import { applyOcr, createReusableOcrEngine, type OcrEngine, OCR_LIMITS } from "../document/ocr.js";
import { buildDocumentModel } from "../document/pdf-model.js";
import { releasePixels } from "../document/pixels.js";

const here = path.dirname(fileURLToPath(import.meta.url));
const SET = path.resolve(here, "../../shared/realworld-dev-scans");

export interface OcrSetting {
  glyphPx: number;
  invert: boolean;
}

export interface PassRecord {
  mode: string;
  languages: string;
  megapixels: number;
  ms: number;
}

export interface ImageScore {
  file: string;
  wallMs: number;
  cpuMs: number;
  passes: PassRecord[];
  gtWords: number;
  ocrWords: number;
  matchedWords: number;
  gtChars: number;
  charEdits: number;
}

/** Width and height of a PGM (P5) or of anything sharp reads. */
async function sizeOf(picture: Buffer): Promise<{ width?: number; height?: number }> {
  const pgm = /^P5\s+(\d+)\s+(\d+)\s/.exec(picture.subarray(0, 40).toString("latin1"));
  if (pgm) return { width: Number(pgm[1]), height: Number(pgm[2]) };
  return sharp(picture).metadata();
}

/** A recording wrapper: every tesseract pass with its mode, languages, pixels and time. */
export function recordingEngine(inner: OcrEngine, log: PassRecord[]): OcrEngine {
  return {
    async recognize(png, opts) {
      const meta = await sizeOf(png);
      const t = performance.now();
      try {
        return await inner.recognize(png, opts);
      } finally {
        log.push({
          mode: opts?.mode ?? "page",
          languages: (opts?.languages ?? []).join("+"),
          megapixels: ((meta.width ?? 0) * (meta.height ?? 0)) / 1e6,
          ms: performance.now() - t,
        });
      }
    },
    terminate: () => inner.terminate(),
  };
}

/** The fixed subset: every 6th image of the set (20 of 120), in file order. */
export async function subset(n: number): Promise<string[]> {
  const manifest = JSON.parse(await readFile(path.join(SET, "manifest.json"), "utf8")) as
    | { file: string }[]
    | { documents?: { file: string }[] };
  const files = (Array.isArray(manifest) ? manifest : (manifest.documents ?? []))
    .map((d) => path.basename(d.file))
    .filter((f) => f.endsWith(".jpg"))
    .sort();
  const step = Math.max(1, Math.floor(files.length / n));
  return files.filter((_, i) => i % step === 0).slice(0, n);
}

const words = (s: string) => s.split(/\s+/).filter((w) => w !== "");

/** Edit distance of `a` against the best-matching span of `b` (free start and end in b). */
function spanEdits(a: string, b: string): number {
  let prev = new Array<number>(b.length + 1).fill(0);
  for (let i = 1; i <= a.length; i++) {
    const cur = new Array<number>(b.length + 1);
    cur[0] = i;
    for (let j = 1; j <= b.length; j++) {
      const sub = prev[j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1);
      cur[j] = Math.min(sub, prev[j]! + 1, cur[j - 1]! + 1);
    }
    prev = cur;
  }
  return Math.min(...prev);
}

export function score(gtLines: string[], ocrText: string) {
  // The ground truth of this set is upper case: compare upper case.
  gtLines = gtLines.map((l) => l.toUpperCase());
  const ocrLines = ocrText
    .toUpperCase()
    .split("\n")
    .map((l) => l.replace(/\s+/g, " ").trim())
    .filter((l) => l !== "");
  const gtWords = gtLines.flatMap(words);
  const pool = new Map<string, number>();
  const ocrWords = ocrLines.flatMap(words);
  for (const w of ocrWords) pool.set(w, (pool.get(w) ?? 0) + 1);
  let matched = 0;
  for (const w of gtWords) {
    const left = pool.get(w) ?? 0;
    if (left > 0) {
      matched++;
      pool.set(w, left - 1);
    }
  }
  let gtChars = 0;
  let edits = 0;
  for (const raw of gtLines) {
    const line = raw.replace(/\s+/g, " ").trim();
    if (!line) continue;
    gtChars += line.length;
    let best = line.length;
    for (const o of ocrLines) {
      if (best === 0) break;
      best = Math.min(best, spanEdits(line, o));
    }
    edits += best;
  }
  return {
    gtWords: gtWords.length,
    ocrWords: ocrWords.length,
    matchedWords: matched,
    gtChars,
    charEdits: edits,
  };
}

async function groundTruth(file: string): Promise<string[]> {
  const csv = await readFile(path.join(SET, "box", file.replace(/\.jpg$/, ".csv")), "utf8");
  return csv
    .split(/\r?\n/)
    .filter((l) => l.trim() !== "")
    .map((l) => l.split(",").slice(8).join(","));
}

export async function benchSetting(setting: OcrSetting, files: string[]): Promise<ImageScore[]> {
  const inner = createReusableOcrEngine({ invert: setting.invert });
  const out: ImageScore[] = [];
  try {
    // Warm the engine (model load) outside the timings, as a warm step worker or the eval has it.
    const blank = await sharp({ create: { width: 64, height: 64, channels: 3, background: "#fff" } })
      .png()
      .toBuffer();
    await inner.recognize(blank);
    for (const file of files) {
      const bytes = new Uint8Array(await readFile(path.join(SET, "docs", file)));
      const passes: PassRecord[] = [];
      const engine = recordingEngine(inner, passes);
      const c0 = process.cpuUsage();
      const t = performance.now();
      const doc: DocumentModel = await buildDocumentModel({
        bytes,
        contentType: "image/jpeg",
        filename: file,
        declaredDocType: "receipt",
        region: "MY",
      });
      await applyOcr(doc, async () => engine, { timeoutMs: 600_000, targetGlyphPx: setting.glyphPx });
      const wallMs = performance.now() - t;
      const c = process.cpuUsage(c0);
      const text = doc.imagePages?.[0]?.text ?? "";
      await releasePixels(doc);
      out.push({
        file,
        wallMs,
        cpuMs: (c.user + c.system) / 1000,
        passes,
        ...score(await groundTruth(file), text),
      });
    }
  } finally {
    await inner.terminate();
  }
  return out;
}

const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length ? s[Math.floor(s.length / 2)]! : 0;
};

export function summary(setting: OcrSetting, rows: ImageScore[]) {
  const sum = (f: (r: ImageScore) => number) => rows.reduce((a, r) => a + f(r), 0);
  const passes = rows.flatMap((r) => r.passes);
  return {
    setting: `${setting.glyphPx}px${setting.invert ? "" : ":noinvert"}`,
    images: rows.length,
    wallMsMedian: Math.round(median(rows.map((r) => r.wallMs))),
    wallMsTotal: Math.round(sum((r) => r.wallMs)),
    cpuMsMedian: Math.round(median(rows.map((r) => r.cpuMs))),
    cpuMsTotal: Math.round(sum((r) => r.cpuMs)),
    passesPerPage: Math.round((passes.length / Math.max(1, rows.length)) * 100) / 100,
    languageRereads: passes.filter((p) => p.languages && p.languages !== "eng").length,
    megapixelsMedian: Math.round(median(passes.map((p) => p.megapixels)) * 100) / 100,
    passMsMedian: Math.round(median(passes.map((p) => p.ms))),
    wordRecall:
      Math.round(
        (sum((r) => r.matchedWords) /
          Math.max(
            1,
            sum((r) => r.gtWords),
          )) *
          10000,
      ) / 100,
    wordPrecision:
      Math.round(
        (sum((r) => r.matchedWords) /
          Math.max(
            1,
            sum((r) => r.ocrWords),
          )) *
          10000,
      ) / 100,
    charAccuracy:
      Math.round(
        (1 -
          sum((r) => r.charEdits) /
            Math.max(
              1,
              sum((r) => r.gtChars),
            )) *
          10000,
      ) / 100,
  };
}

export function parseSettings(spec: string): OcrSetting[] {
  return spec.split(",").map((s) => {
    const [px, flag] = s.split(":");
    const glyphPx = Number(px);
    if (!Number.isFinite(glyphPx) || glyphPx < 8 || glyphPx > 64)
      throw new Error(`bad setting "${s}": write <glyph px>[:noinvert], e.g. 26 or 20:noinvert`);
    return { glyphPx, invert: flag !== "noinvert" };
  });
}

/**
 * `--step`: the check step on the bench's scanned statement (bench/ten-page.ts `scannedCheckStep`, 1-page
 * JPEG and 3-page image-only PDF), every tesseract pass recorded: first page passes, language re-reads
 * (a page read again in another language) and crop re-reads (the OCR review), with their pixels and time.
 */
async function stepProfile(invert: boolean, runs: number, glyphPx: number | undefined) {
  const { scannedCheckStep } = await import("./ten-page.js");
  // Bench only: the step reads OCR_LIMITS, so a trial target is set there for this process.
  if (glyphPx) (OCR_LIMITS as { targetGlyphPx: number }).targetGlyphPx = glyphPx;
  for (const pages of [1, 3]) {
    const passes: PassRecord[] = [];
    const load0 = os.loadavg()[0]!;
    // Recorded: one engine (the caller's) reads every page, so each pass is seen.
    const cost = await scannedCheckStep(pages, runs, () =>
      recordingEngine(createReusableOcrEngine({ invert }), passes),
    );
    // As the product runs it: the step starts its own engines (two for a multi-page scan).
    const product = pages > 1 ? await scannedCheckStep(pages, 1) : undefined;
    const kinds = new Map<string, { n: number; ms: number; mp: number }>();
    for (const p of passes) {
      const kind =
        p.mode === "block" ? "crop re-read" : p.languages === "eng" ? "page pass" : "language re-read";
      const k = kinds.get(kind) ?? { n: 0, ms: 0, mp: 0 };
      k.n++;
      k.ms += p.ms;
      k.mp += p.megapixels;
      kinds.set(kind, k);
    }
    console.log(
      JSON.stringify({
        pages,
        invert,
        runs,
        wallMsPerPage: Math.round(cost.wallMs / pages),
        cpuMsPerPage: Math.round(cost.cpuMs / pages),
        ocrPassMs: cost.ocrMs,
        reviewMs: cost.reviewMs,
        perRun: Object.fromEntries(
          [...kinds].map(([k, v]) => [
            k,
            {
              passes: v.n / runs,
              ms: Math.round(v.ms / runs),
              megapixelsEach: Math.round((v.mp / v.n) * 100) / 100,
            },
          ]),
        ),
        ...(product
          ? {
              ownEngines: {
                wallMsPerPage: Math.round(product.wallMs / pages),
                cpuMsPerPage: Math.round(product.cpuMs / pages),
                ocrPassMs: product.ocrMs,
                pageMs: (
                  (product.last?.pass as { readings?: { ms: number }[] } | undefined)?.readings ?? []
                ).map((r) => r.ms),
              },
            }
          : {}),
        glyphPx: OCR_LIMITS.targetGlyphPx,
        last: cost.last,
        load: [load0, os.loadavg()[0]!].map((l) => l.toFixed(1)),
      }),
    );
  }
}

async function main() {
  const args = process.argv.slice(2);
  const arg = (name: string) => {
    const i = args.indexOf(`--${name}`);
    return i >= 0 ? args[i + 1] : undefined;
  };
  if (args.includes("--step"))
    return stepProfile(
      !args.includes("--no-invert"),
      Number(arg("runs") ?? 2),
      Number(arg("glyph") ?? 0) || undefined,
    );
  const settings = parseSettings(
    arg("settings") ?? `26,${OCR_LIMITS.targetGlyphPx},${OCR_LIMITS.targetGlyphPx}:noinvert`,
  );
  const files = await subset(Number(arg("n") ?? 20));
  const verbose = args.includes("--per-image");
  for (const setting of settings) {
    const load0 = os.loadavg()[0]!;
    const rows = await benchSetting(setting, files);
    if (verbose) {
      for (const r of rows)
        console.log(
          JSON.stringify({
            file: r.file,
            wallMs: Math.round(r.wallMs),
            cpuMs: Math.round(r.cpuMs),
            passes: r.passes.map(
              (p) => `${p.mode}/${p.languages}/${p.megapixels.toFixed(2)}MP/${Math.round(p.ms)}ms`,
            ),
            words: `${r.matchedWords}/${r.gtWords}`,
          }),
        );
    }
    console.log(
      JSON.stringify({ ...summary(setting, rows), load: [load0, os.loadavg()[0]!].map((l) => l.toFixed(1)) }),
    );
  }
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  main().catch((err) => {
    console.error(err);
    process.exit(1);
  });
}
