import sharp from "sharp";
import type { BoxTuple } from "../../core/page-geometry.js";
import type { DocumentModel } from "../model.js";
import { imageOnlyPages, type PdfImage, scanPdfImages } from "../pdf-images.js";
import { pixelsOf } from "../pixels.js";
import { MAX_DECODE_PIXELS } from "../raster.js";
import { isJpeg } from "./jpeg-markers.js";

/**
 * The pixels the pixel checks read, decoded once per document (memoised on the model):
 * - an image document: the file itself, auto-oriented, at full resolution (within MAX_PIXELS);
 * - an image-only PDF page that draws one page-sized DCTDecode image: that JPEG's own pixel grid (so its
 *   8 × 8 blocks line up with the decoded pixels), placed over the whole page;
 * - any other image-only page: the shared pixel source's render (document/pixels.ts) at RENDER_DPI (no JPEG
 *   grid to read).
 * An image document and a page's own JPEG are decoded here at their exact pixels, never resampled: the JPEG
 * grid analyses need the encoder's 8 × 8 blocks where they were.
 * Each page keeps its encoded JPEG (when the pixels are that JPEG's), grey (luma) and RGB samples, and
 * maps a box in its pixels to the finding's box in page units (pixels, top-left origin, for an image
 * document; PDF points, bottom-left origin, for a PDF page).
 */

export interface PagePixels {
  /** 1-based page number. */
  page: number;
  width: number;
  height: number;
  /** Luma, 0-255, row-major, width × height. */
  grey: Uint8Array;
  /** RGB, 3 bytes per pixel (grey copied for grey images). */
  rgb: Uint8Array;
  /** True when the samples carry colour. */
  colour: boolean;
  /** The JPEG whose decoded pixels these are (image file or DCTDecode stream), when they are. */
  jpeg?: Uint8Array;
  /** The encoded file of an image document (JPEG, PNG, TIFF). */
  encoded?: Uint8Array;
  source: "image-file" | "pdf-image" | "pdf-render";
  /** The image reference of a PDF page image ("12 0 R"). */
  ref?: string;
  /** Dots per inch of the pixels on the page, when known (PDF placement, JFIF/EXIF density). */
  dpi?: number;
  /** A box in these pixels → the finding's bbox in page units. */
  toPageBox(px: BoxTuple): BoxTuple;
}

export interface PagePixelSet {
  pages: PagePixels[];
  /** Why some image pages were not decoded. */
  problems: string[];
}

export const PIXEL_LIMITS = {
  /** Pixels of one page image decoded at most (larger ones are scaled down; grid analyses are then off). */
  maxPixels: 24_000_000,
  /** Image-only PDF pages decoded per document. */
  maxPages: 10,
  /** Render resolution of image-only pages that are not one JPEG. */
  renderDpi: 200,
} as const;

const memo = new WeakMap<DocumentModel, Promise<PagePixelSet>>();

/** The page images of a document, decoded once (an empty set for PDFs with no image-only page). */
export function pagePixels(doc: DocumentModel): Promise<PagePixelSet> {
  let p = memo.get(doc);
  if (!p) {
    p = load(doc);
    memo.set(doc, p);
  }
  return p;
}

interface Decoded {
  width: number;
  height: number;
  rgb: Uint8Array;
  grey: Uint8Array;
  colour: boolean;
  density?: number;
  scaled: boolean;
}

/** Decodes to RGB and luma (ITU-R BT.601 weights, as JPEG's Y) at full size within maxPixels. */
export async function decodeToPixels(bytes: Uint8Array, autoOrient = true): Promise<Decoded> {
  let img = sharp(bytes, { limitInputPixels: MAX_DECODE_PIXELS, failOn: "error" });
  if (autoOrient) img = img.rotate();
  const meta = await img.metadata();
  const w = (autoOrient ? meta.autoOrient?.width : undefined) ?? meta.width ?? 0;
  const h = (autoOrient ? meta.autoOrient?.height : undefined) ?? meta.height ?? 0;
  if (!w || !h) throw new Error("the image has no dimensions");
  let scaled = false;
  if (w * h > PIXEL_LIMITS.maxPixels) {
    const f = Math.sqrt(PIXEL_LIMITS.maxPixels / (w * h));
    img = img.resize({ width: Math.floor(w * f), height: Math.floor(h * f), fit: "fill" });
    scaled = true;
  }
  const { data, info } = await img
    .flatten({ background: "#ffffff" })
    .removeAlpha()
    .toColourspace("srgb")
    .raw()
    .toBuffer({ resolveWithObject: true });
  const n = info.width * info.height;
  const ch = info.channels;
  const rgb = new Uint8Array(n * 3);
  const grey = new Uint8Array(n);
  let colourful = 0;
  for (let i = 0; i < n; i++) {
    const r = data[i * ch]!;
    const g = data[i * ch + (ch > 1 ? 1 : 0)]!;
    const b = data[i * ch + (ch > 2 ? 2 : 0)]!;
    rgb[i * 3] = r;
    rgb[i * 3 + 1] = g;
    rgb[i * 3 + 2] = b;
    grey[i] = Math.round(0.299 * r + 0.587 * g + 0.114 * b);
    if (Math.abs(r - g) > 12 || Math.abs(g - b) > 12) colourful++;
  }
  return {
    width: info.width,
    height: info.height,
    rgb,
    grey,
    colour: colourful > n * 0.002,
    density: meta.density,
    scaled,
  };
}

function round2(v: number): number {
  return Math.round(v * 100) / 100;
}

async function load(doc: DocumentModel): Promise<PagePixelSet> {
  const problems: string[] = [];
  if (!doc.pdf) {
    if (!doc.contentType.startsWith("image/")) return { pages: [], problems };
    try {
      const d = await decodeToPixels(doc.bytes);
      const jpeg = isJpeg(doc.bytes) && !d.scaled ? doc.bytes : undefined;
      return {
        pages: [
          {
            page: 1,
            width: d.width,
            height: d.height,
            grey: d.grey,
            rgb: d.rgb,
            colour: d.colour,
            ...(jpeg ? { jpeg } : {}),
            encoded: doc.bytes,
            source: "image-file",
            ...(d.density && d.density > 50 ? { dpi: d.density } : {}),
            toPageBox: (b) => b.map((v) => Math.round(v)) as BoxTuple,
          },
        ],
        problems,
      };
    } catch (err) {
      problems.push(`the image cannot be decoded (${err instanceof Error ? err.message : String(err)})`);
      return { pages: [], problems };
    }
  }
  const scan = await scanPdfImages(doc);
  const scanned = imageOnlyPages(doc, scan).slice(0, PIXEL_LIMITS.maxPages);
  const pages: PagePixels[] = [];
  const toRender: number[] = [];
  for (const n of scanned) {
    const graphics = scan.pages.find((p) => p.number === n);
    if (!graphics || graphics.width <= 0 || graphics.height <= 0) continue;
    const { width: pw, height: ph } = graphics;
    const images = scan.images.filter((i) => graphics.imageRefs.includes(i.ref));
    const big = images.filter((i) => Math.max(i.width, i.height) >= 600);
    const one: PdfImage | undefined = big.length === 1 ? big[0] : undefined;
    const fits =
      one &&
      one.filters.length === 1 &&
      one.filters[0] === "DCTDecode" &&
      isJpeg(one.encoded) &&
      Math.abs(one.width / one.height - pw / ph) < 0.03;
    if (!one || !fits) {
      toRender.push(n);
      continue;
    }
    try {
      const d = await decodeToPixels(one.encoded, false);
      if (d.scaled) {
        toRender.push(n);
        continue;
      }
      const sx = pw / d.width;
      const sy = ph / d.height;
      pages.push({
        page: n,
        width: d.width,
        height: d.height,
        grey: d.grey,
        rgb: d.rgb,
        colour: d.colour,
        jpeg: one.encoded,
        source: "pdf-image",
        ref: one.ref,
        dpi: Math.round((d.width / pw) * 72),
        toPageBox: ([x0, y0, x1, y1]) => [
          round2(x0 * sx),
          round2(ph - y1 * sy),
          round2(x1 * sx),
          round2(ph - y0 * sy),
        ],
      });
    } catch (err) {
      problems.push(`page ${n}: ${err instanceof Error ? err.message : String(err)}`);
    }
  }
  if (toRender.length) {
    // Rendered by the document's shared pixel source: OCR's render at a like scale is reused, not redone.
    const source = pixelsOf(doc);
    for (const n of toRender) {
      try {
        const r = await source.page(n, { scale: PIXEL_LIMITS.renderDpi / 72 });
        if (!r) continue;
        const img = r.image;
        const count = img.width * img.height;
        const rgb = new Uint8Array(count * 3);
        const grey = new Uint8Array(count);
        for (let i = 0; i < count; i++) {
          const red = img.data[i * 4]!;
          const g = img.data[i * 4 + 1]!;
          const b = img.data[i * 4 + 2]!;
          rgb[i * 3] = red;
          rgb[i * 3 + 1] = g;
          rgb[i * 3 + 2] = b;
          grey[i] = Math.round(0.299 * red + 0.587 * g + 0.114 * b);
        }
        const [vx0, vy0, vx1, vy1] = r.geometry.view as BoxTuple;
        const sx = (vx1 - vx0) / img.width;
        const sy = (vy1 - vy0) / img.height;
        pages.push({
          page: n,
          width: img.width,
          height: img.height,
          grey,
          rgb,
          colour: true,
          source: "pdf-render",
          dpi: Math.round(r.scale * 72),
          toPageBox: ([x0, y0, x1, y1]) => [
            round2(vx0 + x0 * sx),
            round2(vy1 - y1 * sy),
            round2(vx0 + x1 * sx),
            round2(vy1 - y0 * sy),
          ],
        });
      } catch (err) {
        problems.push(
          `rendering image-only page ${n} failed (${err instanceof Error ? err.message : String(err)})`,
        );
      }
    }
  }
  pages.sort((a, b) => a.page - b.page);
  return { pages, problems };
}
