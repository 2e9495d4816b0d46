/**
 * The size an encoded image says it has inside its own data, which a decoder believes over the PDF
 * dictionary: a JPEG's frame header (SOFn) and a JPEG 2000 codestream's SIZ marker (also inside a JP2
 * file). Reads headers only; undefined when none is found within the first bytes.
 */
export interface PixelSize {
  width: number;
  height: number;
}

/** SOF0-SOF15 but DHT (C4), JPG (C8) and DAC (CC). */
const isSof = (m: number) => m >= 0xc0 && m <= 0xcf && m !== 0xc4 && m !== 0xc8 && m !== 0xcc;

export function jpegFrameSize(data: Uint8Array, scanBytes = 1 << 20): PixelSize | undefined {
  const end = Math.min(data.length, scanBytes);
  let i = 0;
  // Skip anything before SOI, as lenient decoders do.
  while (i + 1 < end && !(data[i] === 0xff && data[i + 1] === 0xd8)) i++;
  i += 2;
  while (i + 3 < end) {
    if (data[i] !== 0xff) {
      i++;
      continue;
    }
    const marker = data[i + 1] as number;
    if (marker === 0xff) {
      i++;
      continue;
    }
    if (marker === 0xd8 || marker === 0x01 || (marker >= 0xd0 && marker <= 0xd7)) {
      i += 2;
      continue;
    }
    if (marker === 0xd9) return undefined;
    const len = ((data[i + 2] as number) << 8) | (data[i + 3] as number);
    if (isSof(marker) && i + 8 < end) {
      const height = ((data[i + 5] as number) << 8) | (data[i + 6] as number);
      const width = ((data[i + 7] as number) << 8) | (data[i + 8] as number);
      return { width, height };
    }
    if (len < 2) return undefined;
    i += 2 + len;
  }
  return undefined;
}

/** The image size of a JPEG 2000 codestream (SIZ: Xsiz − XOsiz by Ysiz − YOsiz), raw or in a JP2 file. */
export function jpxSize(data: Uint8Array, scanBytes = 1 << 20): PixelSize | undefined {
  const end = Math.min(data.length, scanBytes);
  for (let i = 0; i + 21 < end; i++) {
    if (data[i] !== 0xff || data[i + 1] !== 0x51) continue;
    const u32 = (k: number) =>
      (((data[k] as number) << 24) |
        ((data[k + 1] as number) << 16) |
        ((data[k + 2] as number) << 8) |
        (data[k + 3] as number)) >>>
      0;
    const xsiz = u32(i + 6);
    const ysiz = u32(i + 10);
    const xo = u32(i + 14);
    const yo = u32(i + 18);
    if (xsiz > xo && ysiz > yo) return { width: xsiz - xo, height: ysiz - yo };
  }
  return undefined;
}
