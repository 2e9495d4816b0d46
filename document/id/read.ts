import type { DocumentModel } from "../model.js";
import { renderPdfPages } from "../pdf-images.js";
import { decodeImageFile, downscale, type RgbaImage } from "../raster.js";
import { type AamvaRecord, isAamva, parseAamva } from "./aamva.js";
import { type FoundBarcode, findBarcodes } from "./barcodes.js";
import {
  type Disagreement,
  disagreements,
  type EncodedValues,
  FOUND_BY_VALUE,
  fieldsByValue,
  type ReadingDoubt,
  readingDoubts,
  sameReading,
} from "./compare.js";
import {
  applyHomography,
  dominantEdgeAngle,
  type GreyImage,
  greyToRgba,
  homography,
  type Point,
  toGrey,
  unsharp,
  warpQuad,
} from "./geometry.js";
import { createIdOcr, type IdOcr, type OcrLine } from "./id-ocr.js";
import { analyseText } from "./mrz-locate.js";
import { type MrzBand, type MrzReading, mrzBand, readMrz } from "./mrz-read.js";
import { FIELD_SPANS, type MrzValidation, validateMrz } from "./mrz-validate.js";
import { padQuad, symbolQuad } from "./symbol-quad.js";
import {
  findFields,
  loneCaptions,
  parsePrintedDate,
  plausibleValue,
  type VizField,
  type VizFieldName,
  type VizLine,
  type VizWord,
  valueWords,
  vizField,
} from "./viz.js";

/**
 * Reads an identity document once per check step, for both identity checks (id.mrz and id.barcode run in
 * parallel and share the promise): for each page (an image document's pixels, or the first pages of a PDF
 * rendered at 216 dpi), the MRZ (located, rectified, read and validated), the 2D barcodes (AAMVA payloads
 * parsed), and the visual zone's labelled fields, read on the page rectified by the MRZ's geometry (or turned
 * upright by the barcode's). Each disagreement between an encoding and the printed zone is read a second
 * time, on the field alone at twice the resolution, and kept only when the second reading disagrees too.
 *
 * Pixels come from `pagePixels` (narrow on purpose: the shared pixel source of the document model can take
 * its place); every box is returned in the finding's units (image pixels, origin top left; PDF points,
 * origin bottom left).
 */

export type Box = [number, number, number, number];

export interface PagePixels {
  page: number;
  image: RgbaImage;
  /** From the pixels of `image` to the finding's units. */
  toFindingBox(box: Box): Box;
}

export interface ConfirmedDisagreement extends Disagreement {
  /** The printed field's box and the encoded field's box, finding units. */
  printedBox: Box;
  encodedBox?: Box;
  /** What the second reading of the printed field gave. */
  reread: string;
  /**
   * Why the disagreement may be the reading's rather than the document's (compare.ts `readingDoubts`): empty
   * when both readings are confident, which alone makes it proof.
   */
  doubts: ReadingDoubt[];
}

export interface BarcodeRead extends FoundBarcode {
  box: Box;
  aamva?: AamvaRecord;
  aamvaError?: string;
}

export interface IdPage {
  page: number;
  mrz?: {
    reading: MrzReading;
    validation: MrzValidation;
    /** Box of characters [from, to) of MRZ line `line`, finding units. */
    spanBox(line: number, from: number, to: number): Box;
    lineBoxes: Box[];
  };
  barcodes: BarcodeRead[];
  /** Labelled fields the visual zone shows (finding units). */
  viz: Partial<Record<VizFieldName, VizField>>;
  mrzVsViz: ConfirmedDisagreement[];
  barcodeVsViz: ConfirmedDisagreement[];
  barcodeVsMrz: { field: string; barcode: string; mrz: string; box: Box }[];
  /** Disagreements a second reading did not confirm (the first reading was unsure). */
  unconfirmed: string[];
}

export interface IdReading {
  pages: IdPage[];
  /** Why some pages were not read (time, undecodable image). */
  problems: string[];
  ms: number;
}

export const ID_LIMITS = {
  /** Longer side the image is decoded at. */
  maxSide: 2200,
  /** PDF pages read, and their render scale (3 = 216 dpi). */
  maxPdfPages: 2,
  pdfScale: 3,
  /** Glyph height of the rectified visual zone, pixels. */
  vizGlyphPx: 38,
} as const;

/** The default pixel source: an image document's pixels, or the first PDF pages rendered. */
export async function defaultPagePixels(doc: DocumentModel, signal?: AbortSignal): Promise<PagePixels[]> {
  if (!doc.pdf) {
    const img = await decodeImageFile(doc.bytes, ID_LIMITS.maxSide);
    const sharp = (await import("sharp")).default;
    const meta = await sharp(doc.bytes).metadata();
    const fullW = meta.autoOrient?.width ?? meta.width ?? img.width;
    const k = fullW / img.width;
    return [{ page: 1, image: img, toFindingBox: (b) => b.map((v) => Math.round(v * k * 10) / 10) as Box }];
  }
  const pages: PagePixels[] = [];
  const wanted = doc.pdf.pages.slice(0, ID_LIMITS.maxPdfPages).map((p) => p.number);
  const s = ID_LIMITS.pdfScale;
  await renderPdfPages(
    doc.bytes,
    wanted,
    s,
    async (n, img) => {
      const height = doc.pdf?.pages.find((p) => p.number === n)?.height ?? img.height / s;
      pages.push({
        page: n,
        image: { width: img.width, height: img.height, data: new Uint8ClampedArray(img.data) },
        toFindingBox: ([x0, y0, x1, y1]) =>
          [x0 / s, height - y1 / s, x1 / s, height - y0 / s].map((v) => Math.round(v * 100) / 100) as Box,
      });
    },
    { signal },
  );
  return pages;
}

const hull = (pts: Point[]): Box => [
  Math.min(...pts.map((p) => p[0])),
  Math.min(...pts.map((p) => p[1])),
  Math.max(...pts.map((p) => p[0])),
  Math.max(...pts.map((p) => p[1])),
];

function mapBox(H: number[], b: Box): Box {
  return hull([
    applyHomography(H, [b[0], b[1]]),
    applyHomography(H, [b[2], b[1]]),
    applyHomography(H, [b[2], b[3]]),
    applyHomography(H, [b[0], b[3]]),
  ]);
}

interface Upright {
  image: GreyImage;
  /** From the upright image to the source pixels. */
  toSource: number[];
  /** Where the MRZ band starts in the upright image (what lies below is no visual zone). */
  mrzTop?: number;
}

/** The page rectified by the MRZ: the band's plane extended over the document above it. */
function uprightByMrz(grey: GreyImage, r: MrzBand): Upright {
  const { band } = r;
  const W = band.image.width - 2 * band.left;
  // TD1 cards are often captured front above back: look further up than a passport page is tall.
  const up = r.format === "TD1" ? 2.3 * W : 0.95 * W;
  const k = ID_LIMITS.vizGlyphPx / band.glyphPx;
  const x0 = band.left - 0.12 * W;
  const x1 = band.left + 1.12 * W;
  const y0 = band.top - up;
  // Down to the MRZ band, not over it: the band is read already, and the visual zone's OCR spends a third
  // of its time on the band's dense lines otherwise.
  const y1 = band.top - band.glyphPx * 0.6;
  const quad: Point[] = [
    applyHomography(band.H, [x0, y0]),
    applyHomography(band.H, [x1, y0]),
    applyHomography(band.H, [x1, y1]),
    applyHomography(band.H, [x0, y1]),
  ];
  const width = Math.round((x1 - x0) * k);
  const height = Math.round((y1 - y0) * k);
  const image = warpQuad(grey, quad, width, height);
  const sx = (x1 - x0) / width;
  const sy = (y1 - y0) / height;
  // Compose as a homography: upright → band → source.
  const Hs = [sx, 0, x0, 0, sy, y0, 0, 0, 1];
  const H = multiply(band.H, Hs);
  return { image, toSource: H, mrzTop: (band.top - band.glyphPx * 0.6 - y0) / sy };
}

/** The page turned upright by an angle (degrees, the text's slope), no perspective. */
function uprightByAngle(grey: GreyImage, angleDeg: number, maxSide: number): Upright {
  const a = (angleDeg * Math.PI) / 180;
  const cos = Math.cos(a);
  const sin = Math.sin(a);
  const scale = Math.min(1, maxSide / Math.max(grey.width, grey.height));
  const w = grey.width;
  const h = grey.height;
  const W = Math.round((Math.abs(w * cos) + Math.abs(h * sin)) * scale);
  const Hh = Math.round((Math.abs(w * sin) + Math.abs(h * cos)) * scale);
  // upright (u, v) → source: rotate by +angle about the centres.
  const toSrc = (u: number, v: number): Point => {
    const x = (u - W / 2) / scale;
    const y = (v - Hh / 2) / scale;
    return [w / 2 + x * cos - y * sin, h / 2 + x * sin + y * cos];
  };
  const quad = [toSrc(0, 0), toSrc(W, 0), toSrc(W, Hh), toSrc(0, Hh)];
  const image = warpQuad(grey, quad, W, Hh);
  const H = [cos / scale, -sin / scale, 0, sin / scale, cos / scale, 0, 0, 0, 1];
  const c = toSrc(0, 0);
  H[2] = c[0];
  H[5] = c[1];
  return { image, toSource: H };
}

function multiply(A: readonly number[], B: readonly number[]): number[] {
  const out = new Array<number>(9).fill(0);
  for (let r = 0; r < 3; r++)
    for (let c = 0; c < 3; c++) for (let k = 0; k < 3; k++) out[r * 3 + c]! += A[r * 3 + k]! * B[k * 3 + c]!;
  const n = out[8]!;
  return out.map((v) => v / n);
}

function crop(img: GreyImage, b: Box, pad: number, scale: number): GreyImage {
  const x0 = Math.max(0, b[0] - pad);
  const y0 = Math.max(0, b[1] - pad);
  const x1 = Math.min(img.width, b[2] + pad);
  const y1 = Math.min(img.height, b[3] + pad);
  return warpQuad(
    img,
    [
      [x0, y0],
      [x1, y0],
      [x1, y1],
      [x0, y1],
    ],
    Math.max(1, Math.round((x1 - x0) * scale)),
    Math.max(1, Math.round((y1 - y0) * scale)),
  );
}

/**
 * Another reading of a field: its box alone, one line, at `scale` times the resolution of the page's reading
 * (the second reading: twice), restricted to `whitelist` when given (the third); with the confidence of the
 * reading's least sure word (0 when it read nothing).
 */
async function readAlone(
  ocr: IdOcr,
  upright: GreyImage,
  box: Box,
  scale = 2,
  whitelist = "",
): Promise<{ text: string; confidence: number }> {
  const h = box[3] - box[1];
  const lines: OcrLine[] = await ocr.readText(
    crop(upright, box, Math.max(4, h * 0.4), scale),
    "line",
    whitelist,
  );
  const words = lines.flatMap((l) => l.words).filter((w) => w.text.trim() !== "");
  return {
    text: lines
      .map((l) => l.text)
      .join(" ")
      .trim(),
    confidence: words.length ? Math.min(...words.map((w) => w.confidence)) : 0,
  };
}

/**
 * Disagreements confirmed by a second reading of the printed field, each with the doubts that remain about
 * the reading (compare.ts `readingDoubts`).
 */
async function confirm(
  ocr: IdOcr,
  upright: Upright,
  encoded: EncodedValues,
  fields: Partial<Record<VizFieldName, VizField>>,
  lines: readonly VizLine[],
  order: "dmy" | "mdy",
  unconfirmed: string[],
  readAlready: Partial<Record<VizFieldName, string>> = {},
): Promise<(Disagreement & { reread: string; doubts: ReadingDoubt[] })[]> {
  const out: (Disagreement & { reread: string; doubts: ReadingDoubt[] })[] = [];
  for (const d of disagreements(encoded, fields, order)) {
    const alone =
      readAlready[d.field] === undefined ? await readAlone(ocr, upright.image, d.viz.box) : undefined;
    const again = readAlready[d.field] ?? alone?.text ?? "";
    const second = disagreements(encoded, { [d.field]: { ...d.viz, text: again } }, order);
    if (second.length > 0) {
      const ctx = {
        encoded,
        lines,
        order,
        mrzTop: upright.mrzTop,
        ...(alone ? { rereadConfidence: alone.confidence } : {}),
      };
      let doubts = readingDoubts(d, again, ctx);
      // A would-be proof is read a third time, with other pixels and the field's characters only: a reading
      // that gives the encoded value leaves the printed one in doubt. So is one that only the readings' own
      // disagreement or their low confidence keeps from proof: a confident third reading that repeats one of
      // them settles it (`readingDoubts`).
      if (doubts.every((x) => SETTLED_BY_THIRD.has(x))) {
        const third = await readAlone(
          ocr,
          upright.image,
          d.viz.box,
          THIRD_READING_SCALE,
          fieldAlphabet(d.field, d.viz.text),
        );
        doubts = readingDoubts(d, again, { ...ctx, third: third.text, thirdConfidence: third.confidence });
      }
      out.push({ ...d, reread: again, doubts });
    } else unconfirmed.push(`${d.field}: first read “${d.printed}”, second “${again}”`);
  }
  return out;
}

/**
 * Reads the strip under each caption the page's reading left without a value (one line, at the page's
 * resolution, then at twice it when that finds nothing) and takes a plausible value found there as the
 * field's, under its caption. Adds to `fields`.
 */
async function readUnderLoneCaptions(
  ocr: IdOcr,
  upright: GreyImage,
  lines: readonly VizLine[],
  fields: Partial<Record<VizFieldName, VizField>>,
): Promise<void> {
  for (const c of loneCaptions(lines, fields)
    .filter((x) => x.name !== "issue")
    .slice(0, LONE_CAPTIONS_READ)) {
    const h = c.glyph;
    const x0 = Math.max(0, c.columnLeft - h);
    const x1 = Math.min(upright.width, c.rightLimit - h, c.box[0] + 40 * h);
    const y0 = c.box[3] + 0.1 * h;
    const y1 = Math.min(upright.height, c.bottomLimit - 0.2 * h, c.box[3] + 3.4 * h);
    if (x1 - x0 < 4 * h || y1 - y0 < h) continue;
    for (const scale of [1, 2]) {
      const read = await ocr.readText(crop(upright, [x0, y0, x1, y1], 0, scale), "line");
      const all = read
        .flatMap((l) => l.words)
        .filter((w) => w.text.trim() !== "")
        .map((w) => ({
          text: w.text,
          confidence: w.confidence,
          box: [
            x0 + w.box[0] / scale,
            y0 + w.box[1] / scale,
            x0 + w.box[2] / scale,
            y0 + w.box[3] / scale,
          ] as Box,
        }));
      // The value: the first run of words (what follows a wide gap belongs to another column).
      const words = valueWords(all, Math.max(6, ...all.map((w) => w.box[3] - w.box[1])));
      if (words.length === 0 || !plausibleValue(c.name, words)) continue;
      fields[c.name] = vizField(c.name, words, c.text);
      break;
    }
  }
}

/**
 * Fields the page's reading left unfound because their value came out garbled (a document number read with
 * wrong characters, "vesFs7208" for Y85F57204; a date whose separators were read as digits, "030612997" for
 * 03/05/1997): each word (document number) or line (date of birth) of the visual zone that has the shape of
 * the field but fails its syntax is read again alone, at twice the resolution, and looked for by value
 * (`fieldsByValue`, the same tolerance as the page's words) in that second reading. A value found so carries
 * the second reading's confidence: a confident second reading leaves no `low_confidence` doubt. Adds to
 * `fields`, and returns the second reading of each field it added.
 */
async function readMissing(
  ocr: IdOcr,
  upright: Upright,
  lines: readonly VizLine[],
  encoded: EncodedValues,
  fields: Partial<Record<VizFieldName, VizField>>,
  order: "dmy" | "mdy",
): Promise<Partial<Record<VizFieldName, string>>> {
  const taken = Object.values(fields).map((f) => f.box);
  const free = (b: Box) => !taken.some((t) => t[0] < b[2] && b[0] < t[2] && t[1] < b[3] && b[1] < t[3]);
  const zone = lines.filter(
    (l) => l.box[1] < (upright.mrzTop ?? Number.POSITIVE_INFINITY) && !l.text.includes("<"),
  );
  const candidates: { name: "documentNumber" | "birth"; box: Box }[] = [];
  if (!fields.documentNumber && encoded.documentNumber) {
    const n = encoded.documentNumber.replace(/[^A-Z0-9]/gi, "").length;
    for (const l of zone)
      for (const w of l.words) {
        const t = w.text.replace(/[^A-Za-z0-9$]/g, "");
        if (Math.abs(t.length - n) <= 2 && (t.match(/\d/g) ?? []).length >= 3 && free(w.box))
          candidates.push({ name: "documentNumber", box: w.box });
      }
  }
  if (!fields.birth && encoded.birth)
    for (const l of zone)
      if (
        (l.text.match(/\d/g) ?? []).length >= 6 &&
        parsePrintedDate(l.text, "dmy") === undefined &&
        parsePrintedDate(l.text, "mdy") === undefined &&
        free(l.box)
      )
        candidates.push({ name: "birth", box: l.box });
  const readTwice: Partial<Record<VizFieldName, string>> = {};
  for (const c of candidates.slice(0, MISSING_READS)) {
    if (fields[c.name]) continue;
    // Read alone at a few resolutions (the OCR's slips change with the sampling) until two readings give the
    // same value of the field; the value carries the surer of the two confidences, and the other reading is
    // its second (`confirm` reads it no more). A value one reading alone gives keeps its own confidence, and
    // another scale's reading is its second.
    const readings: VizWord[] = [];
    let found: { word: VizWord; second: string } | undefined;
    for (const scale of MISSING_SCALES) {
      const again = await readAlone(ocr, upright.image, c.box, scale);
      const word: VizWord = { text: again.text, confidence: again.confidence, box: c.box };
      readings.push(word);
      const line: VizLine = { text: again.text, box: c.box, words: [word] };
      // A date read with a one-digit day or month lost a digit (documents print them with two: "05/20/1963"
      // read "1/20/1963" at two scales on a genuine dev licence): no value.
      if (c.name === "birth" && /(^|\D)\d(?!\d)/.test(again.text)) continue;
      if (again.text === "" || !fieldsByValue([line], { [c.name]: encoded[c.name] }, {}, order)[c.name])
        continue;
      const same = readings.find((w) => w !== word && sameReading(c.name, w.text, word.text, order));
      if (same) {
        found = {
          word: { ...word, confidence: Math.max(word.confidence, same.confidence) },
          second: same.text,
        };
        break;
      }
      found ??= { word, second: "" };
    }
    if (!found) continue;
    fields[c.name] = vizField(c.name, [found.word], FOUND_BY_VALUE);
    readTwice[c.name] = found.second || (readings.find((w) => w.text !== found.word.text)?.text ?? "");
  }
  return readTwice;
}

/** The scales a garbled value is read at, alone (the page's reading is 1), in order. */
const MISSING_SCALES = [2, 2.5, 1.4, 1] as const;

/** At most this many garbled values are read again (each costs one line of OCR). */
const MISSING_READS = 4;

/** At most this many lone captions are read again (each costs one line of OCR). */
const LONE_CAPTIONS_READ = 6;

/** The doubts a confident third reading can settle (`readingDoubts`); none of the others. */
const SETTLED_BY_THIRD: ReadonlySet<ReadingDoubt> = new Set([
  "readings_differ",
  "low_confidence",
  "found_by_value",
]);

/** The third reading's scale (the page's reading is 1, the second 2): another sampling of the same print. */
const THIRD_READING_SCALE = 1.4;

const LATIN_CAPITALS = "ABCDEFGHIJKLMNOPQRSTUVWXYZÀÁÂÃÄÅÆÇÈÉÊËÌÍÎÏÑÒÓÔÕÖØÙÚÛÜÝŠŽĆČĐŁŃŚŹŻ";

/** The characters a printed field of this kind can hold (a date by the form its first reading has). */
function fieldAlphabet(field: VizFieldName, text: string): string {
  if (field === "documentNumber") return "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";
  if (field === "birth" || field === "expiry" || field === "issue")
    return /[A-Za-z]{3}/.test(text) ? `0123456789 ./-${LATIN_CAPITALS}` : "0123456789 ./-";
  if (field === "nationality") return "ABCDEFGHIJKLMNOPQRSTUVWXYZ";
  return `${LATIN_CAPITALS}${LATIN_CAPITALS.toLowerCase()} '-`;
}

function fieldsToSource(
  fields: Partial<Record<VizFieldName, VizField>>,
  H: number[],
  toFinding: (b: Box) => Box,
): Partial<Record<VizFieldName, VizField>> {
  const out: Partial<Record<VizFieldName, VizField>> = {};
  for (const [k, f] of Object.entries(fields) as [VizFieldName, VizField][])
    out[k] = { ...f, box: toFinding(mapBox(H, f.box)) };
  return out;
}

function mrzEncoded(v: MrzValidation): EncodedValues {
  return {
    surname: v.fields.surname,
    givenNames: v.fields.givenNames,
    documentNumber: v.fields.documentNumber,
    birth: v.fields.birth.date,
    expiry: v.fields.expiry.date,
    nationality: v.fields.nationality,
  };
}

function aamvaEncoded(a: AamvaRecord): EncodedValues {
  return {
    surname: a.surname,
    givenNames: a.givenNames,
    documentNumber: a.documentNumber,
    birth: a.birth?.date,
    expiry: a.expiry?.date,
  };
}

/**
 * The barcodes of a page: searched at most 1600 pixels on the longer side; when none is found, at full
 * resolution and, on a page whose text runs at a slant, on the page turned upright (zxing's PDF417 reader
 * wants it level). On a page without an MRZ (a licence's back carries its PDF417 there), a PDF417 not found
 * yet, or found but no AAMVA record (misread), is looked for harder (`harderPdf417`). A page whose MRZ was
 * read is searched once: the two further searches cost ~1 s of CPU on a passport photo and find nothing there.
 */
async function pageBarcodes(
  grey: GreyImage,
  image: RgbaImage,
  textAngleDeg: number | undefined,
  effort: "once" | "level" | "harder",
): Promise<FoundBarcode[]> {
  const found = await pageBarcodesLevel(grey, image, effort === "once" ? undefined : textAngleDeg, effort);
  if (effort !== "harder") return found;
  // A PDF417 whose bytes are no AAMVA record, on a page without an MRZ, may be a misreading (ZXing returned one
  // from a licence photographed in perspective, dev draw 7): the harder search's AAMVA PDF417 replaces it.
  const misread = (b: FoundBarcode) => b.format === "PDF417" && !isAamva(b.text);
  if (found.length > 0 && !found.some(misread)) return found;
  const harder = await harderPdf417(grey, image, textAngleDeg);
  if (found.length === 0) return harder;
  const aamva = harder.filter((b) => isAamva(b.text));
  return aamva.length > 0 ? [...found.filter((b) => !misread(b)), ...aamva] : found;
}

/**
 * A PDF417 photographed at a slant: ZXing reads it only within about two degrees of level, and the page's text
 * angle is a median over lines that perspective bends (and missing on a page with few lines), so it can be off
 * by more. The page is searched once more with a single global threshold (scans whose light ZXing's local one
 * splits), then turned level at 1100 pixels (the symbol's modules stay 2-4 pixels wide) for every even angle
 * within ±12°, nearest the text's angle (or the page's dominant edge direction) first. Found on a dev set of
 * licence photos where the plain search read 0 of 4 (docs/decisions.md, identity documents). Last, the three
 * whole angles nearest the estimate at the page's full resolution (a small symbol's modules merge at 1100
 * pixels: dev draw 1, one licence photo of 14).
 */
async function harderPdf417(
  grey: GreyImage,
  image: RgbaImage,
  textAngleDeg: number | undefined,
): Promise<FoundBarcode[]> {
  const pdf417 = { formats: ["PDF417"] as const };
  const k = Math.min(1, BARCODE_SIDE / Math.max(image.width, image.height));
  const small = k < 1 ? await downscale(image, BARCODE_SIDE) : image;
  const scale = image.width / small.width;
  const global = await findBarcodes(small, { ...pdf417, binarizer: "GlobalHistogram" }).catch(
    () => [] as FoundBarcode[],
  );
  if (global.length > 0)
    return global.map((b) => ({
      ...b,
      corners: b.corners.map(([x, y]) => [x * scale, y * scale]) as FoundBarcode["corners"],
    }));
  const base = textAngleDeg ?? dominantEdgeAngle(grey) ?? 0;
  // Every even angle within ±12°, nearest the estimate first, then the odd ones: a PDF417 photographed with
  // perspective may decode only within a degree of level (dev draw 1: 3 of 4 undecoded licence photos).
  const byDistance = (xs: number[]) => xs.sort((a, b) => Math.abs(a - base) - Math.abs(b - base));
  const angles = [
    ...byDistance([...Array(13).keys()].map((i) => 2 * i - 12)),
    ...byDistance([...Array(12).keys()].map((i) => 2 * i - 11)),
  ];
  for (const [i, angle] of angles.entries()) {
    const upright = uprightByAngle(grey, angle, HARDER_SIDE);
    const rgba = greyToRgba(upright.image);
    // The global threshold only near the estimate: each search of a page without the symbol costs ~50 ms.
    for (const binarizer of i < 3
      ? (["LocalAverage", "GlobalHistogram"] as const)
      : (["LocalAverage"] as const)) {
      const again = await findBarcodes(rgba, { ...pdf417, binarizer }).catch(() => [] as FoundBarcode[]);
      if (again.length > 0)
        return again.map((b) => ({
          ...b,
          corners: b.corners.map((p) => applyHomography(upright.toSource, p)) as FoundBarcode["corners"],
          angleDeg: b.angleDeg + angle,
        }));
    }
  }
  // At 1100 pixels the modules of a small or distant symbol blur together: the three whole angles nearest the
  // estimate once more at the page's full resolution.
  const nearest = [...new Set([Math.round(base), Math.floor(base), Math.ceil(base), Math.round(base) + 1])]
    .sort((a, b) => Math.abs(a - base) - Math.abs(b - base))
    .slice(0, 3);
  const uprights = nearest.map((angle) => ({
    angle,
    upright: uprightByAngle(grey, angle, Math.max(grey.width, grey.height)),
  }));
  // Then the same, sharpened (`unsharp`): the modules of a photographed symbol two or three pixels wide are
  // blurred into each other by the lens and the JPEG (dev draw 9: a licence photo decoded only so).
  for (const sharpen of [false, true])
    for (const { angle, upright } of uprights) {
      const image = sharpen ? unsharp(upright.image) : upright.image;
      const again = await findBarcodes(greyToRgba(image), pdf417).catch(() => [] as FoundBarcode[]);
      if (again.length > 0)
        return again.map((b) => ({
          ...b,
          corners: b.corners.map((p) => applyHomography(upright.toSource, p)) as FoundBarcode["corners"],
          angleDeg: b.angleDeg + angle,
        }));
    }
  return symbolRectified(grey);
}

const HARDER_SIDE = 1100;

/**
 * Last, the symbol itself outlined (`symbolQuad`: its four edges fitted each on its own) and warped to a
 * rectangle at 1.5 times its size, in a white margin: a licence photographed in perspective leans its symbol's
 * bars and converges its top and bottom, which no rotation of the page makes level (dev draw 13: a licence photo
 * read by none of the searches above).
 */
async function symbolRectified(grey: GreyImage): Promise<FoundBarcode[]> {
  const found = symbolQuad(grey);
  if (!found) return [];
  const quad = padQuad(found, SYMBOL_PAD);
  const [tl, tr, , bl] = quad as [Point, Point, Point, Point];
  const width = Math.round(Math.hypot(tr[0] - tl[0], tr[1] - tl[1]) * SYMBOL_SCALE);
  const height = Math.round(Math.hypot(bl[0] - tl[0], bl[1] - tl[1]) * SYMBOL_SCALE);
  if (width * height > 12e6) return [];
  const margin = 30;
  const warped = warpQuad(grey, quad, width, height);
  const framed: GreyImage = {
    width: width + 2 * margin,
    height: height + 2 * margin,
    data: new Uint8Array((width + 2 * margin) * (height + 2 * margin)).fill(255),
  };
  for (let y = 0; y < height; y++)
    framed.data.set(warped.data.subarray(y * width, (y + 1) * width), (y + margin) * framed.width + margin);
  const toSource = homography(
    [
      [margin, margin],
      [margin + width, margin],
      [margin + width, margin + height],
      [margin, margin + height],
    ],
    quad,
  );
  const again = await findBarcodes(greyToRgba(framed), { formats: ["PDF417"] }).catch(
    () => [] as FoundBarcode[],
  );
  return again.map((b) => {
    const corners = b.corners.map((p) => applyHomography(toSource, p)) as FoundBarcode["corners"];
    const angleDeg =
      (Math.atan2(corners[1][1] - corners[0][1], corners[1][0] - corners[0][0]) * 180) / Math.PI;
    return { ...b, corners, angleDeg };
  });
}

/** The outlined symbol's margin (source pixels) and the scale it is warped at. */
const SYMBOL_PAD = 12;
const SYMBOL_SCALE = 1.5;

async function pageBarcodesLevel(
  grey: GreyImage,
  image: RgbaImage,
  textAngleDeg: number | undefined,
  effort: "once" | "level" | "harder",
): Promise<FoundBarcode[]> {
  const k = Math.min(1, BARCODE_SIDE / Math.max(image.width, image.height));
  const small = k < 1 ? await downscale(image, BARCODE_SIDE) : image;
  const scale = image.width / small.width;
  const found = (await findBarcodes(small).catch(() => [] as FoundBarcode[])).map((b) => ({
    ...b,
    corners: b.corners.map(([x, y]) => [x * scale, y * scale]) as FoundBarcode["corners"],
  }));
  if (found.length > 0 || effort === "once") return found;
  if (k < 1) {
    const full = await findBarcodes(image).catch(() => [] as FoundBarcode[]);
    if (full.length > 0) return full;
  }
  if (textAngleDeg === undefined || Math.abs(textAngleDeg) < 1.5) return found;
  const upright = uprightByAngle(grey, textAngleDeg, Math.max(image.width, image.height));
  const again = await findBarcodes(greyToRgba(upright.image)).catch(() => [] as FoundBarcode[]);
  return again.map((b) => {
    const corners = b.corners.map((p) => applyHomography(upright.toSource, p)) as FoundBarcode["corners"];
    return { ...b, corners, angleDeg: b.angleDeg + textAngleDeg };
  });
}

const BARCODE_SIDE = 1600;

async function readPage(
  px: PagePixels,
  ocr: () => Promise<IdOcr>,
  now: Date,
  signal?: AbortSignal,
): Promise<IdPage> {
  const t0 = performance.now();
  const c0 = process.cpuUsage();
  const lap = (what: string) => {
    if (process.env.ID_DEBUG)
      console.error(
        "timing",
        what,
        Math.round(performance.now() - t0),
        "cpu",
        Math.round(process.cpuUsage(c0).user / 1000),
      );
  };
  const grey = toGrey(px.image);
  const page: IdPage = {
    page: px.page,
    barcodes: [],
    viz: {},
    mrzVsViz: [],
    barcodeVsViz: [],
    barcodeVsMrz: [],
    unconfirmed: [],
  };
  const text = analyseText(grey);
  // A page with an MRZ band is read by the OCR (the band when the templates doubt, the visual zone always):
  // its engine starts now, in its worker thread, while the band is read.
  if (text.mrz) void ocr().catch(() => undefined);
  lap("analyse");
  const loc = text.mrz;
  let upright: Upright | undefined;
  // The visual zone above an MRZ band is rectified by the band's geometry, known before the band is read: the
  // OCR's worker thread reads it while this thread reads the band by templates and searches the barcodes.
  let byMrz: { upright: Upright; lines: Promise<OcrLine[]> } | undefined;
  if (loc) {
    const rectified = mrzBand(grey, loc);
    const zone = uprightByMrz(grey, rectified);
    byMrz = { upright: zone, lines: ocr().then((engine) => engine.readText(zone.image, "sparse")) };
    byMrz.lines.catch(() => undefined);
    const reading = await readMrz(grey, loc, ocr, rectified);
    lap("mrz read");
    if (reading) {
      const validation = validateMrz(reading.format, reading.lines, now);
      const spanBox = (line: number, from: number, to: number) => {
        const { band } = reading;
        const yc = band.top + line * band.lineStep;
        const b: Box = [
          band.left + from * band.pitch,
          yc - band.glyphPx * 0.7,
          band.left + to * band.pitch,
          yc + band.glyphPx * 0.7,
        ];
        return px.toFindingBox(mapBox(reading.bandToSource, b));
      };
      page.mrz = {
        reading,
        validation,
        spanBox,
        lineBoxes: reading.lineBoxes.map((b) => px.toFindingBox(b)),
      };
      upright = zone;
    }
  }
  if (signal?.aborted) return page;
  // A page whose MRZ was read is searched once (a passport page carries no barcode, an ID card with an MRZ no
  // PDF417 to look for harder); a page with an MRZ band not read, on the level page and turned upright.
  const found = await pageBarcodes(
    grey,
    px.image,
    text.textAngleDeg,
    page.mrz ? "once" : text.mrz ? "level" : "harder",
  );
  lap("barcodes");
  for (const b of found) {
    const read: BarcodeRead = { ...b, box: px.toFindingBox(hull([...b.corners])) };
    if (b.format === "PDF417" && isAamva(b.text)) {
      try {
        read.aamva = parseAamva(b.text);
      } catch (err) {
        read.aamvaError = err instanceof Error ? err.message : String(err);
      }
    }
    page.barcodes.push(read);
  }
  const aamva = page.barcodes.find((b) => b.aamva)?.aamva;
  if (!upright && aamva) {
    const b = page.barcodes.find((x) => x.aamva)!;
    upright = uprightByAngle(grey, b.angleDeg, 1800);
  }
  if (!upright || signal?.aborted) return page;
  const engine = await ocr();
  lap("upright");
  const lines =
    byMrz && upright === byMrz.upright ? await byMrz.lines : await engine.readText(upright.image, "sparse");
  lap("viz ocr");
  if (process.env.ID_DEBUG)
    for (const l of lines)
      console.error(
        "viz",
        l.box.map(Math.round).join(","),
        JSON.stringify(l.words.map((w) => w.text).join(" ")),
      );
  const vlines = lines.map((l) => ({
    text: l.text,
    box: l.box,
    words: l.words.map((w) => ({ text: w.text, confidence: w.confidence, box: w.box })),
  }));
  const byCaption = findFields(vlines);
  await readUnderLoneCaptions(engine, upright.image, vlines, byCaption);
  lap("lone captions");
  const encodedForSearch = page.mrz ? mrzEncoded(page.mrz.validation) : aamva ? aamvaEncoded(aamva) : {};
  const order = page.mrz || aamva?.country === "CAN" ? "dmy" : "mdy";
  const fields = fieldsByValue(vlines, encodedForSearch, byCaption, order);
  const readTwice = await readMissing(engine, upright, vlines, encodedForSearch, fields, order);
  lap("missing");
  page.viz = fieldsToSource(fields, upright.toSource, px.toFindingBox);
  const fieldSpans: Record<string, [number, number, number]> = page.mrz
    ? mrzFieldSpans(page.mrz.validation)
    : {};
  if (page.mrz && !signal?.aborted) {
    const confirmed = await confirm(
      engine,
      upright,
      mrzEncoded(page.mrz.validation),
      fields,
      vlines,
      "dmy",
      page.unconfirmed,
      page.mrz ? readTwice : {},
    );
    page.mrzVsViz = confirmed.map((d) => {
      const span = fieldSpans[d.field];
      return {
        ...d,
        printedBox: px.toFindingBox(mapBox(upright!.toSource, d.viz.box)),
        ...(span ? { encodedBox: page.mrz!.spanBox(span[0], span[1], span[2]) } : {}),
      };
    });
  }
  if (aamva && !signal?.aborted) {
    const bc = page.barcodes.find((x) => x.aamva)!;
    const confirmed = await confirm(
      engine,
      upright,
      aamvaEncoded(aamva),
      fields,
      vlines,
      aamva.country === "CAN" ? "dmy" : "mdy",
      page.unconfirmed,
      page.mrz ? {} : readTwice,
    );
    page.barcodeVsViz = confirmed.map((d) => ({
      ...d,
      printedBox: px.toFindingBox(mapBox(upright!.toSource, d.viz.box)),
      encodedBox: bc.box,
    }));
    if (page.mrz) {
      const m = page.mrz.validation.fields;
      const checks: [string, string | undefined, string | undefined][] = [
        ["surname", aamva.surname, m.surname],
        ["documentNumber", aamva.documentNumber, m.documentNumber],
        [
          "birth",
          aamva.birth?.date ? iso(aamva.birth.date) : undefined,
          m.birth.date ? iso(m.birth.date) : undefined,
        ],
      ];
      for (const [field, a, b] of checks) {
        if (
          a &&
          b &&
          a.replace(/[^A-Z0-9-]/gi, "").toUpperCase() !== b.replace(/[^A-Z0-9-]/gi, "").toUpperCase()
        )
          page.barcodeVsMrz.push({ field, barcode: a, mrz: b, box: bc.box });
      }
    }
  }
  lap("compare");
  return page;
}

const iso = (d: { y: number; m: number; d: number }) =>
  `${d.y}-${String(d.m).padStart(2, "0")}-${String(d.d).padStart(2, "0")}`;

/** The MRZ position of each comparable field: [line, from, to). */
function mrzFieldSpans(v: MrzValidation): Record<string, [number, number, number]> {
  const s = FIELD_SPANS[v.format];
  return {
    surname: s.name!,
    givenNames: s.name!,
    documentNumber: s.documentNumber!,
    birth: s.birthDate!,
    expiry: s.expirationDate!,
    nationality: s.nationality!,
  };
}

const cache = new WeakMap<DocumentModel, Promise<IdReading>>();

export interface ReadIdentityOptions {
  now: Date;
  signal?: AbortSignal;
  /** Where the pages' pixels come from (default: decode the image / render the first PDF pages). */
  pagePixels?: (doc: DocumentModel, signal?: AbortSignal) => Promise<PagePixels[]>;
  /** An OCR engine to use (default: one started on first need and stopped when done). */
  ocr?: IdOcr;
}

/** Reads the identity features of a document once; both identity checks await the same promise. */
export function readIdentity(doc: DocumentModel, opts: ReadIdentityOptions): Promise<IdReading> {
  let p = cache.get(doc);
  if (!p) {
    p = readIdentityUncached(doc, opts);
    cache.set(doc, p);
  }
  return p;
}

export async function readIdentityUncached(
  doc: DocumentModel,
  opts: ReadIdentityOptions,
): Promise<IdReading> {
  const started = performance.now();
  const problems: string[] = [];
  let engine: Promise<IdOcr> | undefined;
  const ocr = () => {
    if (opts.ocr) return Promise.resolve(opts.ocr);
    engine ??= createIdOcr();
    return engine;
  };
  const pages: IdPage[] = [];
  try {
    const pixels = await (opts.pagePixels ?? defaultPagePixels)(doc, opts.signal);
    for (const px of pixels) {
      if (opts.signal?.aborted) {
        problems.push(`page ${px.page}: the time bound was reached`);
        break;
      }
      pages.push(await readPage(px, ocr, opts.now, opts.signal));
    }
  } finally {
    if (engine) await (await engine.catch(() => undefined))?.terminate();
  }
  return { pages, problems, ms: Math.round(performance.now() - started) };
}

export type { MrzReading, MrzValidation };
