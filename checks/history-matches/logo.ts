import type { DocumentModel } from "../../document/model.js";
import { decodePdfImage, imageOnlyPages, type PdfImage, scanPdfImages } from "../../document/pdf-images.js";
import type { RgbaImage } from "../../document/raster.js";

/**
 * The logo part of a template (issue 23, scope 1): a 64-bit difference hash (dHash) of the first image the
 * first page draws, when that page is not itself a scan. An issuer's statements embed the same logo, so
 * they share it; a template farm that keeps another issuer's layout but swaps the logo, or keeps the logo
 * under another name, shows in the template key. dHash compares each cell of a 9 × 8 grey thumbnail with
 * its right neighbour (brighter by a margin), so re-encoding or rescaling the same picture keeps (almost)
 * every bit.
 *
 * The image scan is the document model's own (scanPdfImages, cached on the model and shared with the
 * other checks); decoding is of one small thumbnail. Nothing is read from an image document (a scan has
 * no logo apart from its pixels) or from images too small to be a picture (spacers, rules).
 */

/** Images narrower or lower than this (in their own pixels) are rules, spacers or bullets, not a logo. */
const MIN_SIDE = 16;
/** At most this many of the first page's images are tried (some may not decode). */
const MAX_TRIED = 3;
/**
 * A cell counts as brighter than its neighbour only by this many grey levels: logos are mostly flat colour,
 * and without a margin JPEG noise between two equal cells would flip their bit.
 */
const MARGIN = 6;

/** The dHash of an RGBA image, as 16 hex digits. */
export function differenceHash(img: RgbaImage): string {
  const cols = 9;
  const rows = 8;
  const grey = new Float64Array(cols * rows);
  const count = new Float64Array(cols * rows);
  for (let y = 0; y < img.height; y++) {
    const cy = Math.min(rows - 1, Math.floor((y * rows) / img.height));
    for (let x = 0; x < img.width; x++) {
      const cx = Math.min(cols - 1, Math.floor((x * cols) / img.width));
      const i = (y * img.width + x) * 4;
      const a = (img.data[i + 3] ?? 255) / 255;
      // Transparent parts read as the white page they are drawn on.
      const lum =
        0.299 * (img.data[i] ?? 0) + 0.587 * (img.data[i + 1] ?? 0) + 0.114 * (img.data[i + 2] ?? 0);
      grey[cy * cols + cx] = (grey[cy * cols + cx] ?? 0) + lum * a + 255 * (1 - a);
      count[cy * cols + cx] = (count[cy * cols + cx] ?? 0) + 1;
    }
  }
  let hex = "";
  for (let y = 0; y < rows; y++) {
    let nibble = 0;
    for (let x = 0; x < cols - 1; x++) {
      const left = (grey[y * cols + x] ?? 0) / Math.max(1, count[y * cols + x] ?? 0);
      const right = (grey[y * cols + x + 1] ?? 0) / Math.max(1, count[y * cols + x + 1] ?? 0);
      nibble = (nibble << 1) | (left - right > MARGIN ? 1 : 0);
      if (x % 4 === 3) {
        hex += nibble.toString(16);
        nibble = 0;
      }
    }
  }
  return hex;
}

/** The dHash of the first page's logo, or undefined when the page draws no picture (or is a scan). */
export async function logoHash(doc: DocumentModel): Promise<string | undefined> {
  if (!doc.pdf) return undefined;
  // A file whose objects cannot be walked has no readable logo; the memory still works without it.
  const scan = await scanPdfImages(doc).catch(() => undefined);
  if (!scan) return undefined;
  const first = scan.pages.find((p) => p.number === 1);
  if (!first || imageOnlyPages(doc, scan).includes(1)) return undefined;
  const byRef = new Map<string, PdfImage>(scan.images.map((i) => [i.ref, i]));
  let tried = 0;
  for (const ref of first.imageRefs) {
    const img = byRef.get(ref);
    if (!img || img.width < MIN_SIDE || img.height < MIN_SIDE) continue;
    if (tried++ >= MAX_TRIED) break;
    try {
      return differenceHash(await decodePdfImage(img, 64));
    } catch {
      // An image the decoder does not support (JBIG2, JPEG 2000 …): try the next one.
    }
  }
  return undefined;
}
