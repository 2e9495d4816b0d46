import jsQRModule, { type QRCode } from "jsqr";
import type { DocumentModel } from "../../document/model.js";
import { scanPdfImages, UnsupportedImageError, VECTOR_QR_MIN_RECTANGLES } from "../../document/pdf-images.js";
import { pixelsOf } from "../../document/pixels.js";
import { downscale, ImageDecodeError, type RgbaImage } from "../../document/raster.js";

/**
 * Finds and decodes the QR codes of a document: in an image document's pixels, in the images a PDF
 * embeds, and in rendered PDF pages that draw dense vector graphics (a QR code drawn as rectangles) or
 * images this module cannot decode itself. Pixels come from the document's pixel source
 * (document/pixels.ts), shared with OCR and the evidence. Work is capped so a document full of images
 * stays cheap.
 */

type JsQr = (
  data: Uint8ClampedArray,
  width: number,
  height: number,
  options?: { inversionAttempts?: "dontInvert" | "onlyInvert" | "attemptBoth" | "invertFirst" },
) => QRCode | null;
// jsqr is CommonJS with a default export; under NodeNext either shape can arrive.
const jsQR: JsQr = (jsQRModule as unknown as { default?: JsQr }).default ?? (jsQRModule as unknown as JsQr);

export interface FoundQr {
  payload: string;
  page: number;
  /** Where it was found: an embedded image ("image 12 0 R"), a rendered page, or the image document. */
  source: string;
  /** [x0, y0, x1, y1] in the pixels of the image it was found in. */
  pixelBox: [number, number, number, number];
}

export interface QrScan {
  codes: FoundQr[];
  /** Images that could not be decoded or inspected (with the reason), for the summary. */
  notInspected: string[];
}

export const QR_LIMITS = {
  /** Embedded images decoded per document. */
  maxImages: 16,
  /** Pages rendered per document. */
  maxRenderedPages: 3,
  /** Render scale for pages (1 = 72 dpi). */
  renderScale: 2,
  /** Longest side an image is decoded at before searching it. */
  maxSide: 1200,
} as const;

/** Smallest image side (pixels) that can hold a QR code (21 modules). */
const MIN_QR_SIDE = 21;

function findIn(img: RgbaImage, attemptInvert: boolean): Omit<FoundQr, "page" | "source"> | undefined {
  const code = jsQR(img.data, img.width, img.height, {
    inversionAttempts: attemptInvert ? "attemptBoth" : "dontInvert",
  });
  if (!code || code.data === "") return undefined;
  const xs = [
    code.location.topLeftCorner.x,
    code.location.bottomRightCorner.x,
    code.location.bottomLeftCorner.x,
    code.location.topRightCorner.x,
  ];
  const ys = [
    code.location.topLeftCorner.y,
    code.location.bottomRightCorner.y,
    code.location.bottomLeftCorner.y,
    code.location.topRightCorner.y,
  ];
  const box: [number, number, number, number] = [
    Math.round(Math.min(...xs)),
    Math.round(Math.min(...ys)),
    Math.round(Math.max(...xs)),
    Math.round(Math.max(...ys)),
  ];
  return { payload: code.data, pixelBox: box };
}

/** Searches pixels at full size, then at a smaller size (jsQR misses large codes in big images). */
async function search(
  img: RgbaImage,
  attemptInvert: boolean,
): Promise<Omit<FoundQr, "page" | "source"> | undefined> {
  const full = findIn(img, attemptInvert);
  if (full) return full;
  if (Math.max(img.width, img.height) > 700) return findIn(await downscale(img, 600), attemptInvert);
  return undefined;
}

export async function scanQrCodes(doc: DocumentModel, signal?: AbortSignal): Promise<QrScan> {
  const codes: FoundQr[] = [];
  const notInspected: string[] = [];
  const add = (c: FoundQr) => {
    if (!codes.some((x) => x.payload === c.payload && x.page === c.page)) codes.push(c);
  };

  const pixels = pixelsOf(doc);
  if (!doc.pdf) {
    const page = await pixels.page(1, { scale: 1, maxSidePx: QR_LIMITS.maxSide });
    if (!page) throw new ImageDecodeError("the image cannot be decoded");
    const found = await search(page.image, true);
    if (found) add({ ...found, page: 1, source: "the image" });
    return { codes, notInspected };
  }

  const scan = await scanPdfImages(doc);
  const renderPages = new Set<number>();
  let decoded = 0;
  for (const image of scan.images) {
    if (signal?.aborted) break;
    if (Math.min(image.width, image.height) < MIN_QR_SIDE) continue;
    if (decoded >= QR_LIMITS.maxImages) {
      notInspected.push(`image ${image.ref} (more than ${QR_LIMITS.maxImages} images)`);
      continue;
    }
    decoded++;
    try {
      const decodedImage = await pixels.image(image, QR_LIMITS.maxSide);
      const found = await search(decodedImage, false);
      if (found) add({ ...found, page: image.pages[0] ?? 1, source: `image ${image.ref}` });
    } catch (err) {
      if (!(err instanceof UnsupportedImageError)) throw err;
      // Let pdfjs decode it as part of the page instead.
      for (const p of image.pages) renderPages.add(p);
      notInspected.push(`image ${image.ref} (${err.message})`);
    }
  }
  for (const page of scan.pages) {
    if (page.rectangles >= VECTOR_QR_MIN_RECTANGLES) renderPages.add(page.number);
  }
  const pagesWithCodes = new Set(codes.map((c) => c.page));
  const toRender = [...renderPages].filter((p) => !pagesWithCodes.has(p)).sort((a, b) => a - b);
  if (toRender.length > QR_LIMITS.maxRenderedPages) {
    notInspected.push(`pages ${toRender.slice(QR_LIMITS.maxRenderedPages).join(", ")} (render cap)`);
  }
  for (const page of toRender.slice(0, QR_LIMITS.maxRenderedPages)) {
    if (signal?.aborted) break;
    const rendered = await pixels.page(page, { scale: QR_LIMITS.renderScale }, signal);
    if (!rendered) continue;
    const found = await search(rendered.image, false);
    if (found) add({ ...found, page, source: `rendered page ${page}` });
  }
  return { codes, notInspected };
}
