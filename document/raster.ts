import sharp from "sharp";

/**
 * Raster helpers shared by the image checks and OCR: decode image files to RGBA pixels with sharp under
 * a pixel budget, downscale, and compare images by a perceptual hash.
 */

/** RGBA pixels, 4 bytes per pixel, row-major. */
export interface RgbaImage {
  width: number;
  height: number;
  data: Uint8ClampedArray;
}

/** Images larger than this (width × height) are refused rather than decoded (decompression bombs). */
export const MAX_DECODE_PIXELS = 40_000_000;

export class ImageDecodeError extends Error {
  override name = "ImageDecodeError";
}

/** Decodes an image file (JPEG, PNG, TIFF, ...) to RGBA, scaled down so its longer side is ≤ maxSide. */
export async function decodeImageFile(bytes: Uint8Array, maxSide = 2000): Promise<RgbaImage> {
  try {
    const img = sharp(bytes, { limitInputPixels: MAX_DECODE_PIXELS, failOn: "error" }).rotate();
    const meta = await img.metadata();
    const w = meta.autoOrient?.width ?? meta.width ?? 0;
    const h = meta.autoOrient?.height ?? meta.height ?? 0;
    if (!w || !h) throw new ImageDecodeError("the image has no dimensions");
    if (Math.max(w, h) > maxSide) img.resize({ width: maxSide, height: maxSide, fit: "inside" });
    const { data, info } = await img
      .flatten({ background: "#ffffff" })
      .ensureAlpha()
      .raw()
      .toBuffer({ resolveWithObject: true });
    return {
      width: info.width,
      height: info.height,
      data: new Uint8ClampedArray(data.buffer, data.byteOffset, data.length),
    };
  } catch (err) {
    if (err instanceof ImageDecodeError) throw err;
    throw new ImageDecodeError(err instanceof Error ? err.message : String(err));
  }
}

/** Scales RGBA pixels down so the longer side is ≤ maxSide (no-op when already small enough). */
export async function downscale(img: RgbaImage, maxSide: number): Promise<RgbaImage> {
  if (Math.max(img.width, img.height) <= maxSide) return img;
  const { data, info } = await sharp(Buffer.from(img.data.buffer, img.data.byteOffset, img.data.length), {
    raw: { width: img.width, height: img.height, channels: 4 },
  })
    .resize({ width: maxSide, height: maxSide, fit: "inside" })
    .raw()
    .toBuffer({ resolveWithObject: true });
  return {
    width: info.width,
    height: info.height,
    data: new Uint8ClampedArray(data.buffer, data.byteOffset, data.length),
  };
}

/** PNG bytes of RGBA pixels (for OCR engines that take files). */
export async function toPng(img: RgbaImage): Promise<Buffer> {
  return sharp(Buffer.from(img.data.buffer, img.data.byteOffset, img.data.length), {
    raw: { width: img.width, height: img.height, channels: 4 },
  })
    .png({ compressionLevel: 1 })
    .toBuffer();
}

/**
 * A 64-bit difference hash (dHash) of an image file: grey 9 × 8, one bit per horizontal gradient.
 * Robust to scaling and recompression, sensitive to edited regions.
 */
export async function differenceHash(bytes: Uint8Array): Promise<bigint> {
  const pixels = await sharp(bytes, { limitInputPixels: MAX_DECODE_PIXELS })
    .rotate()
    .greyscale()
    .resize(9, 8, { fit: "fill", kernel: "lanczos3" })
    .raw()
    .toBuffer();
  let hash = 0n;
  for (let y = 0; y < 8; y++) {
    for (let x = 0; x < 8; x++) {
      const left = pixels[y * 9 + x] as number;
      const right = pixels[y * 9 + x + 1] as number;
      hash = (hash << 1n) | (left > right ? 1n : 0n);
    }
  }
  return hash;
}

/** Number of differing bits between two 64-bit hashes (0 = same picture, ≥ 20 = different pictures). */
export function hammingDistance(a: bigint, b: bigint): number {
  let x = a ^ b;
  let n = 0;
  while (x > 0n) {
    n += Number(x & 1n);
    x >>= 1n;
  }
  return n;
}

/**
 * Mean absolute difference (0-255) between two image files compared as 32 × 32 grey thumbnails: small for
 * the same picture, large when a region was changed.
 */
export async function thumbnailDifference(a: Uint8Array, b: Uint8Array): Promise<number> {
  const grey = (bytes: Uint8Array) =>
    sharp(bytes, { limitInputPixels: MAX_DECODE_PIXELS })
      .rotate()
      .greyscale()
      .resize(32, 32, { fit: "fill" })
      .raw()
      .toBuffer();
  const [pa, pb] = await Promise.all([grey(a), grey(b)]);
  let sum = 0;
  for (let i = 0; i < pa.length; i++) sum += Math.abs((pa[i] as number) - (pb[i] as number));
  return sum / pa.length;
}
