import { inflateSync } from "node:zlib";
import sharp, { type OutputInfo, type Sharp } from "sharp";
import type { DocumentModel } from "./model.js";
import type { PageGeometry } from "../core/page-geometry.js";
import { RENDER_LIMITS } from "./budget/limits.js";
import { type PdfjsPage, withPdfjs } from "./pdfjs.js";
import { rawPdfOf } from "./pdf-raw/cache.js";
import type { PageInfo, RawPdf } from "./pdf-raw/document.js";
import {
  get,
  isDict,
  isName,
  isRef,
  isStream,
  isString,
  nameOf,
  numberOf,
  type PdfDict,
  type PdfStream,
  type PdfValue,
} from "./pdf-raw/objects.js";
import { MAX_DECODE_PIXELS, type RgbaImage } from "./raster.js";

/**
 * The images inside a PDF, for the image checks (qr.codes, image.metadata) and OCR: which pages draw
 * which image XObjects (read with the raw parser, document/pdf-raw/, from the page resources, nested
 * forms included), their raw JPEG bytes when DCT-encoded (EXIF survives in them), their pixels (decoded
 * here with hard size caps), which pages are image-only (scans), which pages carry dense vector drawing
 * that may be a QR code, and page rendering with pdfjs for when pixels of the whole page are needed.
 *
 * One scan per DocumentModel, shared by every caller (cached on the model object).
 */

export interface PdfImage {
  /** "12 0 R". */
  ref: string;
  /** Pages (1-based) that draw it. */
  pages: number[];
  width: number;
  height: number;
  bitsPerComponent: number;
  colorSpace: string;
  filters: string[];
  /** The encoded stream bytes; a complete JPEG file when filters is exactly ["DCTDecode"]. */
  encoded: Uint8Array;
  /** Internal: what pixel decoding needs. */
  decodeParms?: PdfDict;
  colorSpaceObject?: PdfValue;
  smask?: PdfStream;
  /** The file the image's objects resolve in. */
  pdf: RawPdf;
}

export interface PdfPageGraphics {
  number: number;
  width: number;
  height: number;
  /** Image XObjects the page (or a form it draws) uses. */
  imageRefs: string[];
  /** Rectangle operators in the page's content: a QR code drawn as vectors has hundreds. */
  rectangles: number;
}

export interface PdfImageScan {
  images: PdfImage[];
  pages: PdfPageGraphics[];
  /** Why parts could not be read (malformed objects, caps reached); empty when everything was read. */
  problems: string[];
}

/** Pages, images and bytes beyond these caps are not inspected (reported in problems). */
export const SCAN_LIMITS = {
  maxPages: 200,
  maxImages: 200,
  maxFormDepth: 8,
  /** Decoded content stream bytes read per page for counting rectangles. */
  maxContentBytes: 4_000_000,
} as const;

/** A page with this many rectangles may hold a vector QR code (21 × 21 modules draw ≥ 150). */
export const VECTOR_QR_MIN_RECTANGLES = 150;

const scans = new WeakMap<DocumentModel, Promise<PdfImageScan>>();

/** The image scan of the model's PDF, computed once (an empty scan for non-PDF documents). */
export function scanPdfImages(model: DocumentModel): Promise<PdfImageScan> {
  let scan = scans.get(model);
  if (!scan) {
    scan = Promise.resolve(
      model.pdf ? scanRaw(rawPdfOf(model), model.bytes) : { images: [], pages: [], problems: [] },
    );
    scans.set(model, scan);
  }
  return scan;
}

/** True when the file declares any image XObject: a byte test that avoids loading image-free PDFs twice. */
export function mayHaveImages(bytes: Uint8Array): boolean {
  return /\/Subtype\s*\/Image\b/.test(
    Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString("latin1"),
  );
}

/** The filter names of a stream's dictionary, in order ("?" for an entry that is no name). */
function filtersOf(pdf: RawPdf, dict: PdfDict): string[] {
  const f = pdf.resolve(get(dict, "Filter"));
  if (isName(f)) return [f.name];
  if (Array.isArray(f)) return f.map((x) => nameOf(pdf.resolve(x)) ?? "?");
  return [];
}

/** A number entry of a dictionary, 0 when absent or no number. */
function numberIn(pdf: RawPdf, dict: PdfDict, key: string): number {
  return numberOf(pdf.resolve(get(dict, key))) ?? 0;
}

function colorSpaceName(pdf: RawPdf, cs: PdfValue | undefined, dict: PdfDict): string {
  if (isName(cs)) return cs.name;
  if (Array.isArray(cs)) return nameOf(pdf.resolve(cs[0])) ?? "?";
  return pdf.resolve(get(dict, "ImageMask")) !== undefined ? "ImageMask" : "?";
}

/** The page's size from its (inherited) MediaBox; 0 × 0 when it has none that reads as a rectangle. */
function pageSize(pdf: RawPdf, page: PageInfo): { width: number; height: number } {
  let node: PdfDict | undefined = page.dict;
  for (let depth = 0; node && depth < 64; depth++) {
    const box = pdf.resolve(get(node, "MediaBox"));
    if (box !== undefined) {
      const n = Array.isArray(box) ? box.map((v) => numberOf(pdf.resolve(v))) : [];
      if (n.length !== 4 || n.some((v) => v === undefined)) return { width: 0, height: 0 };
      const [x0, y0, x1, y1] = n as [number, number, number, number];
      return { width: x1 - x0, height: y1 - y0 };
    }
    node = pdf.dict(get(node, "Parent"));
  }
  return { width: 0, height: 0 };
}

function scanRaw(pdf: RawPdf, bytes: Uint8Array): PdfImageScan {
  const problems: string[] = [];
  const hasImages = mayHaveImages(bytes);
  const images = new Map<string, PdfImage>();
  const pages: PdfPageGraphics[] = [];
  const pageList = pdf.pages();
  if (pageList.length === 0) {
    return { images: [], pages: [], problems: ["the PDF's page tree cannot be read"] };
  }
  if (pageList.length > SCAN_LIMITS.maxPages)
    problems.push(`images read from the first ${SCAN_LIMITS.maxPages} of ${pageList.length} pages`);

  for (const page of pageList.slice(0, SCAN_LIMITS.maxPages)) {
    const number = page.number;
    const refs = new Set<string>();
    const size = pageSize(pdf, page);
    if (hasImages) {
      try {
        collectImages(pdf, page.resources, number, refs, images, problems, 0, new Set());
      } catch (err) {
        problems.push(`page ${number}: resources unreadable (${errText(err)})`);
      }
    }
    let rectangles = 0;
    try {
      rectangles = countRectangles(pdf, page);
    } catch (err) {
      problems.push(`page ${number}: content unreadable (${errText(err)})`);
    }
    pages.push({ number, width: size.width, height: size.height, imageRefs: [...refs], rectangles });
  }
  return { images: [...images.values()], pages, problems };
}

function collectImages(
  pdf: RawPdf,
  resources: PdfDict | undefined,
  page: number,
  refs: Set<string>,
  images: Map<string, PdfImage>,
  problems: string[],
  depth: number,
  seenForms: Set<string>,
): void {
  if (!resources || depth > SCAN_LIMITS.maxFormDepth) return;
  const xobjects = pdf.resolve(get(resources, "XObject"));
  if (!isDict(xobjects)) return;
  for (const value of xobjects.map.values()) {
    // Only indirect XObjects: an image is identified by its object reference.
    if (!isRef(value)) continue;
    const key = `${value.num} ${value.gen} R`;
    const obj = pdf.resolve(value);
    if (!isStream(obj)) continue;
    const subtype = nameOf(pdf.resolve(get(obj.dict, "Subtype")));
    if (subtype === "Form") {
      if (seenForms.has(key)) continue;
      seenForms.add(key);
      const formResources = pdf.resolve(get(obj.dict, "Resources"));
      collectImages(
        pdf,
        isDict(formResources) ? formResources : undefined,
        page,
        refs,
        images,
        problems,
        depth + 1,
        seenForms,
      );
      continue;
    }
    if (subtype !== "Image") continue;
    refs.add(key);
    const known = images.get(key);
    if (known) {
      if (!known.pages.includes(page)) known.pages.push(page);
      continue;
    }
    if (images.size >= SCAN_LIMITS.maxImages) {
      if (!problems.includes("image cap reached")) problems.push("image cap reached");
      continue;
    }
    const dict = obj.dict;
    const cs = pdf.resolve(get(dict, "ColorSpace"));
    const smask = pdf.resolve(get(dict, "SMask"));
    const decodeParms = pdf.resolve(get(dict, "DecodeParms"));
    images.set(key, {
      ref: key,
      pages: [page],
      width: numberIn(pdf, dict, "Width"),
      height: numberIn(pdf, dict, "Height"),
      bitsPerComponent: numberIn(pdf, dict, "BitsPerComponent") || 8,
      colorSpace: colorSpaceName(pdf, cs, dict),
      filters: filtersOf(pdf, dict),
      encoded: obj.raw,
      decodeParms: isDict(decodeParms) ? decodeParms : undefined,
      colorSpaceObject: cs,
      smask: isStream(smask) ? smask : undefined,
      pdf,
    });
  }
}

/** A content stream's bytes, unfiltered or inflated, at most `max`; nothing for other filters. */
function streamBytes(pdf: RawPdf, part: PdfValue | undefined, max: number): Uint8Array {
  const stream = pdf.resolve(part);
  if (!isStream(stream)) return new Uint8Array(0);
  const filters = filtersOf(pdf, stream.dict);
  if (filters.length === 0) return stream.raw.subarray(0, max);
  if (filters.length === 1 && filters[0] === "FlateDecode") return inflateCapped(stream.raw, max);
  return new Uint8Array(0);
}

function countRectangles(pdf: RawPdf, page: PageInfo): number {
  const contents = pdf.resolve(get(page.dict, "Contents"));
  if (contents === undefined || contents === null) return 0;
  const parts = Array.isArray(contents) ? contents : [contents];
  let n = 0;
  let budget: number = SCAN_LIMITS.maxContentBytes;
  for (const part of parts.slice(0, 64)) {
    if (budget <= 0) break;
    let bytes: Uint8Array;
    try {
      bytes = streamBytes(pdf, part, budget);
    } catch (err) {
      if (err instanceof UnsupportedImageError) break;
      throw err;
    }
    budget -= bytes.length;
    const text = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString("latin1");
    n += text.match(/\sre\b/g)?.length ?? 0;
  }
  return n;
}

/**
 * Inflates a stream that should hold at most `max` bytes: a truncated stream yields what it has, one that
 * inflates beyond `max` (a decompression bomb) throws UnsupportedImageError without allocating more.
 */
export function inflateCapped(bytes: Uint8Array, max: number): Uint8Array {
  try {
    return inflateSync(bytes, { maxOutputLength: Math.max(1, max), finishFlush: 2 /* Z_SYNC_FLUSH */ });
  } catch (err) {
    if ((err as { code?: string }).code === "ERR_BUFFER_TOO_LARGE") {
      throw new UnsupportedImageError(`a stream inflates to more than the ${max} bytes it should hold`);
    }
    throw err;
  }
}

/** Pages whose drawing is only images: images drawn and (almost) no extracted text. */
export function imageOnlyPages(model: DocumentModel, scan: PdfImageScan): number[] {
  const pages = new Map((model.pdf?.pages ?? []).map((p) => [p.number, p]));
  // A page whose text the OCR read is still a picture of a page (the pixel checks read it after the OCR).
  const text = (n: number) => (pages.get(n)?.ocr ? "" : (pages.get(n)?.text ?? ""));
  return scan.pages
    .filter((p) => p.imageRefs.length > 0)
    .filter((p) => text(p.number).replace(/\s+/g, "").length < 20)
    .map((p) => p.number);
}

// ---------------------------------------------------------------------------------------------
// Pixel decoding
// ---------------------------------------------------------------------------------------------

export class UnsupportedImageError extends Error {
  override name = "UnsupportedImageError";
}

function components(img: PdfImage): number {
  const { pdf } = img;
  const cs = img.colorSpaceObject;
  const name = img.colorSpace;
  if (name === "DeviceGray" || name === "CalGray" || name === "ImageMask") return 1;
  if (name === "DeviceRGB" || name === "CalRGB") return 3;
  if (name === "DeviceCMYK") return 4;
  if (name === "Indexed") return 1;
  if (name === "ICCBased" && Array.isArray(cs)) {
    const profile = pdf.resolve(cs[1]);
    if (isStream(profile)) {
      const n = numberOf(pdf.resolve(get(profile.dict, "N")));
      if (n !== undefined) return n;
    }
  }
  throw new UnsupportedImageError(`colour space ${name} is not supported`);
}

/** The palette of an Indexed colour space over DeviceRGB (or an ICC RGB profile), as RGB triples. */
function palette(img: PdfImage): Uint8Array {
  const { pdf } = img;
  const cs = img.colorSpaceObject;
  if (!Array.isArray(cs)) throw new UnsupportedImageError("indexed colour space without a palette");
  const lookup = pdf.resolve(cs[3]);
  if (isStream(lookup)) {
    const f = filtersOf(pdf, lookup.dict);
    return f.length === 0 ? lookup.raw : inflateCapped(lookup.raw, 768);
  }
  if (isString(lookup)) return lookup.bytes;
  throw new UnsupportedImageError("indexed colour space with an unreadable palette");
}

function undoPngPredictor(data: Uint8Array, rowBytes: number, bpp: number, rows: number): Uint8Array {
  const out = new Uint8Array(rowBytes * rows);
  for (let r = 0; r < rows; r++) {
    const src = r * (rowBytes + 1);
    if (src + rowBytes >= data.length + 1) break;
    const type = data[src] as number;
    const o = r * rowBytes;
    for (let i = 0; i < rowBytes; i++) {
      const x = data[src + 1 + i] ?? 0;
      const a = i >= bpp ? (out[o + i - bpp] as number) : 0;
      const b = r > 0 ? (out[o - rowBytes + i] as number) : 0;
      const c = r > 0 && i >= bpp ? (out[o - rowBytes + i - bpp] as number) : 0;
      let v = x;
      if (type === 1) v = x + a;
      else if (type === 2) v = x + b;
      else if (type === 3) v = x + ((a + b) >> 1);
      else if (type === 4) {
        const p = a + b - c;
        const pa = Math.abs(p - a);
        const pb = Math.abs(p - b);
        const pc = Math.abs(p - c);
        v = x + (pa <= pb && pa <= pc ? a : pb <= pc ? b : c);
      }
      out[o + i] = v & 0xff;
    }
  }
  return out;
}

/** Decoded samples of an unfiltered or Flate-encoded image (PNG predictors undone), capped at the expected size. */
function flateSamples(img: PdfImage, comps: number, bpc: number): Uint8Array {
  const rowBytes = Math.ceil((img.width * comps * bpc) / 8);
  const predictor = numberOf(img.pdf.resolve(get(img.decodeParms, "Predictor")));
  const usesPng = predictor !== undefined && predictor >= 10;
  const expected = (rowBytes + (usesPng ? 1 : 0)) * img.height;
  const raw =
    img.filters.length === 0 ? img.encoded.subarray(0, expected) : inflateCapped(img.encoded, expected);
  return usesPng
    ? undoPngPredictor(raw, rowBytes, Math.max(1, Math.ceil((comps * bpc) / 8)), img.height)
    : raw;
}

/**
 * The image's pixels as RGBA, scaled down to maxSide. Supports DCT (JPEG) and Flate/unfiltered images
 * in grey, RGB, CMYK, ICC and indexed colour at 1 or 8 bits, with a soft mask composited on white.
 * Throws UnsupportedImageError for anything else (JBIG2, CCITT, JPEG 2000, exotic colour).
 */
export async function decodePdfImage(img: PdfImage, maxSide = 1600): Promise<RgbaImage> {
  const { width, height } = img;
  if (width <= 0 || height <= 0 || width * height > MAX_DECODE_PIXELS) {
    throw new UnsupportedImageError(`image size ${width} × ${height} is out of range`);
  }
  let pipeline: Sharp;
  if (img.filters.length === 1 && img.filters[0] === "DCTDecode") {
    pipeline = sharp(img.encoded, { limitInputPixels: MAX_DECODE_PIXELS });
  } else if (img.filters.length === 0 || (img.filters.length === 1 && img.filters[0] === "FlateDecode")) {
    const comps = components(img);
    const bpc = img.bitsPerComponent;
    if (bpc !== 8 && !(bpc === 1 && comps === 1))
      throw new UnsupportedImageError(`${bpc}-bit samples are not supported`);
    const samples = flateSamples(img, comps, bpc);
    const rgb = new Uint8Array(width * height * 3);
    const pal = img.colorSpace === "Indexed" ? palette(img) : undefined;
    const rowBytes = Math.ceil((width * comps * bpc) / 8);
    const mask = img.colorSpace === "ImageMask";
    for (let y = 0; y < height; y++) {
      for (let x = 0; x < width; x++) {
        const o = (y * width + x) * 3;
        if (bpc === 1) {
          const bit = ((samples[y * rowBytes + (x >> 3)] ?? 0) >> (7 - (x & 7))) & 1;
          // An image mask paints where the bit is 0 (black on white); grey 1-bit is 0 = black.
          const v = mask ? (bit ? 255 : 0) : bit ? 255 : 0;
          rgb[o] = rgb[o + 1] = rgb[o + 2] = v;
          continue;
        }
        const s = y * rowBytes + x * comps;
        if (pal) {
          const i = (samples[s] ?? 0) * 3;
          rgb[o] = pal[i] ?? 0;
          rgb[o + 1] = pal[i + 1] ?? 0;
          rgb[o + 2] = pal[i + 2] ?? 0;
        } else if (comps === 1) {
          rgb[o] = rgb[o + 1] = rgb[o + 2] = samples[s] ?? 0;
        } else if (comps === 3) {
          rgb[o] = samples[s] ?? 0;
          rgb[o + 1] = samples[s + 1] ?? 0;
          rgb[o + 2] = samples[s + 2] ?? 0;
        } else {
          const k = samples[s + 3] ?? 0;
          rgb[o] = 255 - Math.min(255, (samples[s] ?? 0) + k);
          rgb[o + 1] = 255 - Math.min(255, (samples[s + 1] ?? 0) + k);
          rgb[o + 2] = 255 - Math.min(255, (samples[s + 2] ?? 0) + k);
        }
      }
    }
    if (img.smask) compositeOnWhite(img.pdf, rgb, img.smask, width, height);
    pipeline = sharp(rgb, { raw: { width, height, channels: 3 } });
  } else {
    throw new UnsupportedImageError(`images encoded with ${img.filters.join(", ")} are not decoded`);
  }
  if (Math.max(width, height) > maxSide)
    pipeline = pipeline.resize({ width: maxSide, height: maxSide, fit: "inside" });
  let decoded: { data: Buffer; info: OutputInfo };
  try {
    decoded = await pipeline
      .flatten({ background: "#ffffff" })
      .ensureAlpha()
      .raw()
      .toBuffer({ resolveWithObject: true });
  } catch (err) {
    throw new UnsupportedImageError(`the image data cannot be decoded (${errText(err)})`);
  }
  const { data, info } = decoded;
  return {
    width: info.width,
    height: info.height,
    data: new Uint8ClampedArray(data.buffer, data.byteOffset, data.length),
  };
}

function compositeOnWhite(
  pdf: RawPdf,
  rgb: Uint8Array,
  smask: PdfStream,
  width: number,
  height: number,
): void {
  const d = smask.dict;
  if (
    numberIn(pdf, d, "Width") !== width ||
    numberIn(pdf, d, "Height") !== height ||
    (numberIn(pdf, d, "BitsPerComponent") || 8) !== 8
  )
    return;
  const f = filtersOf(pdf, d);
  if (!(f.length === 0 || (f.length === 1 && f[0] === "FlateDecode"))) return;
  let alpha: Uint8Array;
  try {
    alpha = f.length === 0 ? smask.raw : inflateCapped(smask.raw, width * height);
  } catch {
    return;
  }
  for (let i = 0; i < width * height && i < alpha.length; i++) {
    const a = (alpha[i] as number) / 255;
    for (let c = 0; c < 3; c++) rgb[i * 3 + c] = Math.round((rgb[i * 3 + c] as number) * a + 255 * (1 - a));
  }
}

// ---------------------------------------------------------------------------------------------
// Rendering with pdfjs
// ---------------------------------------------------------------------------------------------

/** A PDF opened for rendering: its page count, each page's geometry, and pages rendered one at a time. */
export interface PdfPageRenderer {
  pageCount: number;
  /** Where the page's user space sits on the displayed page; undefined for a page pdfjs cannot read. */
  geometry(page: number): Promise<PageGeometry | undefined>;
  /**
   * The page's pixels at `scale` (1 = 72 dpi), shrunk so they stay within maxPixels and (when given) so
   * the longer side stays within maxSidePx; undefined for a page number out of range.
   */
  render(
    page: number,
    scale: number,
    opts?: { maxPixels?: number; maxSidePx?: number },
  ): Promise<{ image: RgbaImage; geometry: PageGeometry } | undefined>;
  /** The page's text items with their boxes in user space (upright text; estimated for rotated text). */
  text(page: number): Promise<{ text: string; bbox: [number, number, number, number] }[]>;
}

const ROTATIONS = [0, 90, 180, 270] as const;

/** Where a pdfjs page's user space sits: its view box (normalised), its rotation, in points. */
export function geometryOf(page: PdfjsPage): PageGeometry {
  const view = (page.view as number[]).slice(0, 4);
  const r = (((page.rotate ?? 0) % 360) + 360) % 360;
  return {
    number: page.pageNumber,
    view: [
      Math.min(view[0]!, view[2]!),
      Math.min(view[1]!, view[3]!),
      Math.max(view[0]!, view[2]!),
      Math.max(view[1]!, view[3]!),
    ],
    rotate: ROTATIONS.find((x) => x === r) ?? 0,
    units: "pt",
  };
}

/**
 * Opens `bytes` with pdfjs (document/pdfjs.ts) and hands `use` a renderer over its pages; pages render
 * onto pdfjs's own canvas factory (never a second @napi-rs/canvas copy: see DEPENDENCIES.md §9), one at a
 * time, on white. Stops early when the signal aborts.
 */
export async function withPageRenderer<T>(
  bytes: Uint8Array,
  signal: AbortSignal | undefined,
  use: (renderer: PdfPageRenderer) => Promise<T>,
): Promise<T> {
  return withPdfjs(bytes, signal, (doc) => {
    const factory = (doc as unknown as { canvasFactory: CanvasFactory }).canvasFactory;
    const renderer: PdfPageRenderer = {
      pageCount: doc.numPages,
      async geometry(n) {
        if (n < 1 || n > doc.numPages) return undefined;
        try {
          return geometryOf(await doc.getPage(n));
        } catch {
          return undefined;
        }
      },
      async render(n, scale, opts = {}) {
        if (n < 1 || n > doc.numPages || signal?.aborted) return undefined;
        const page = await doc.getPage(n);
        const maxPixels = Math.min(
          opts.maxPixels ?? RENDER_LIMITS.maxPixelsPerPage,
          RENDER_LIMITS.maxPixelsPerPage,
        );
        let s = scale;
        let viewport = page.getViewport({ scale: s });
        if (opts.maxSidePx !== undefined && Math.max(viewport.width, viewport.height) > opts.maxSidePx) {
          s *= opts.maxSidePx / Math.max(viewport.width, viewport.height);
          viewport = page.getViewport({ scale: s });
        }
        const pixels = viewport.width * viewport.height;
        if (pixels > maxPixels) viewport = page.getViewport({ scale: s * Math.sqrt(maxPixels / pixels) });
        const width = Math.max(1, Math.floor(viewport.width));
        const height = Math.max(1, Math.floor(viewport.height));
        const target = factory.create(width, height);
        try {
          target.context.fillStyle = "#ffffff";
          target.context.fillRect(0, 0, width, height);
          const params = { canvasContext: target.context, canvas: target.canvas, viewport };
          await page.render(params as unknown as Parameters<typeof page.render>[0]).promise;
          const data = target.context.getImageData(0, 0, width, height);
          return { image: { width, height, data: data.data }, geometry: geometryOf(page) };
        } finally {
          factory.destroy(target);
          page.cleanup();
        }
      },
      async text(n) {
        if (n < 1 || n > doc.numPages || signal?.aborted) return [];
        const page = await doc.getPage(n);
        try {
          const content = await page.getTextContent();
          const out: { text: string; bbox: [number, number, number, number] }[] = [];
          for (const item of content.items.slice(0, 20_000)) {
            if (!("str" in item) || item.str.trim() === "") continue;
            const [a, b, , , e, f] = item.transform as number[];
            const size = Math.hypot(a ?? 0, b ?? 0) || item.height || 1;
            const w = item.width || size * 0.5 * item.str.length;
            out.push({
              text: item.str,
              bbox: [e ?? 0, (f ?? 0) - size * 0.25, (e ?? 0) + w, (f ?? 0) + size * 0.85],
            });
          }
          return out;
        } finally {
          page.cleanup();
        }
      },
    };
    return use(renderer);
  });
}

/**
 * Renders the given pages at `scale` (1 = 72 dpi), at most maxPixels per page, and hands each page's
 * pixels to `onPage`. Stops early when the signal aborts. Whatever the caller asks, the shared bounds of
 * RENDER_LIMITS (document/budget/limits.ts) hold: pixels per page (in every render), and pages per call.
 */
export async function renderPdfPages(
  bytes: Uint8Array,
  pageNumbers: readonly number[],
  scale: number,
  onPage: (page: number, image: RgbaImage) => Promise<void>,
  opts: { signal?: AbortSignal; maxPixels?: number } = {},
): Promise<void> {
  await withPageRenderer(bytes, opts.signal, async (renderer) => {
    for (const n of pageNumbers.slice(0, RENDER_LIMITS.maxPagesPerDocument)) {
      if (opts.signal?.aborted) break;
      const rendered = await renderer.render(n, scale, { maxPixels: opts.maxPixels });
      if (rendered) await onPage(n, rendered.image);
    }
  });
}

interface CanvasTarget {
  canvas: unknown;
  context: {
    fillStyle: string;
    fillRect(x: number, y: number, w: number, h: number): void;
    getImageData(x: number, y: number, w: number, h: number): { data: Uint8ClampedArray };
  };
}
interface CanvasFactory {
  create(width: number, height: number): CanvasTarget;
  destroy(target: CanvasTarget): void;
}

function errText(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}
