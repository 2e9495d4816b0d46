import exifr from "exifr";
import type { DocumentModel } from "../model.js";
import { layoutOf } from "./ink-layout.js";
import { type JpegInfo, readJpeg } from "./jpeg-markers.js";
import { cellMapOf, type PageNoise, pageNoise } from "./noise.js";
import { type PagePixels, pagePixels } from "./page-pixels.js";

/**
 * How each page image was captured, from what the file and its pixels say (docs/decisions.md, "Capture
 * classes"): the JPEG's tables and markers, EXIF, resolution, the paper's noise and light, and whether
 * the page fills the picture. The class decides which pixel checks apply and at which thresholds.
 *
 *   camera_photo      a photo of the page (camera EXIF, or uneven light and a background around the page)
 *   flatbed_scan      a flatbed or sheet-fed (ADF) scanner: even light, a scanner resolution, page-filling
 *   scanning_app      a phone app's flattened "scan": page-filling, whitened background, phone EXIF or none
 *   screenshot        a lossless picture of a screen: no paper noise at all, screen-like size, no density
 *   messenger         re-encoded by a messenger: no EXIF, no density, a messenger's size cap and quality
 *   pasted_image      any of the above placed into a PDF by a tool (a PDF page that is one image);
 *                     `underlying` says what the image itself looks like
 */

export const CAPTURE_CLASSES = [
  "camera_photo",
  "flatbed_scan",
  "scanning_app",
  "screenshot",
  "messenger",
  "pasted_image",
] as const;
export type CaptureClass = (typeof CAPTURE_CLASSES)[number];
export type ImageClass = Exclude<CaptureClass, "pasted_image">;

export interface PageCapture {
  page: number;
  class: CaptureClass;
  /** For pasted_image: the class of the picture itself. */
  underlying: ImageClass;
  /** 0-1: how clearly the signals point at the class. */
  confidence: number;
  /** What decided it, in words (for the evidence). */
  signals: string[];
  jpeg?: JpegInfo;
  noise: PageNoise;
  camera?: { make?: string; model?: string; software?: string };
  /** Pixels per inch when the file or the PDF says. */
  dpi?: number;
  width: number;
  height: number;
  /** True when the paper looks thresholded (ink and paper only, nearly no grey in between). */
  binarised: boolean;
}

interface Exif {
  Make?: string;
  Model?: string;
  Software?: string;
  ExposureTime?: number;
  FNumber?: number;
  ISO?: number;
  XResolution?: number;
}

async function readExif(bytes: Uint8Array): Promise<Exif | undefined> {
  try {
    return (await exifr.parse(bytes, {
      tiff: true,
      exif: true,
      xmp: false,
      icc: false,
      iptc: false,
      ifd1: false,
    })) as Exif | undefined;
  } catch {
    return undefined;
  }
}

/** Longer sides messengers and social apps scale pictures to. */
const MESSENGER_SIDES = [1280, 1600, 2048, 2560];
const SCANNER_DPI = [100, 150, 200, 240, 300, 400, 600, 1200];

/** Share of pixels between ink and paper: near 0 for a thresholded (binarised) page. */
function midtoneShare(page: PagePixels): number {
  let mid = 0;
  let n = 0;
  for (let i = 0; i < page.grey.length; i += 7) {
    const v = page.grey[i]!;
    if (v > 60 && v < 200) mid++;
    n++;
  }
  return n ? mid / n : 0;
}

/** True when the border of the picture is not paper: a photo shows the table around the page. */
function backgroundAround(page: PagePixels, paperBrightness: number): boolean {
  const { width, height, grey } = page;
  const band = Math.max(4, Math.round(Math.min(width, height) * 0.02));
  let dark = 0;
  let n = 0;
  const sample = (x: number, y: number) => {
    n++;
    if (grey[y * width + x]! < paperBrightness * 0.7) dark++;
  };
  for (let x = 0; x < width; x += 5) {
    for (let y = 0; y < band; y += 2) {
      sample(x, y);
      sample(x, height - 1 - y);
    }
  }
  for (let y = 0; y < height; y += 5) {
    for (let x = 0; x < band; x += 2) {
      sample(x, y);
      sample(width - 1 - x, y);
    }
  }
  return n > 0 && dark / n > 0.35;
}

export async function classifyPage(page: PagePixels, pdfProducer?: string): Promise<PageCapture> {
  const layout = layoutOf(page);
  let jpeg: JpegInfo | undefined;
  const source = page.jpeg ?? page.encoded;
  if (page.jpeg) {
    try {
      jpeg = readJpeg(page.jpeg);
    } catch {
      jpeg = undefined;
    }
  }
  const exif = source ? await readExif(source) : undefined;
  const map = cellMapOf(page, layout);
  const noise = pageNoise(map);
  const signals: string[] = [];
  const camera =
    exif?.Make || exif?.Model || exif?.Software
      ? { make: exif.Make?.trim(), model: exif.Model?.trim(), software: exif.Software?.trim() }
      : undefined;
  const cameraExposure =
    exif?.ExposureTime !== undefined || exif?.FNumber !== undefined || exif?.ISO !== undefined;
  const densityDpi =
    jpeg?.app.jfif && jpeg.app.jfif.densityUnits === 1 && jpeg.app.jfif.xDensity > 1
      ? jpeg.app.jfif.xDensity
      : jpeg?.app.jfif?.densityUnits === 2
        ? Math.round(jpeg.app.jfif.xDensity * 2.54)
        : exif?.XResolution && exif.XResolution > 1
          ? exif.XResolution
          : undefined;
  const dpi = page.source === "image-file" ? densityDpi : page.dpi;
  const longer = Math.max(page.width, page.height);
  const paperLevel = Math.max(120, 255 - noise.lightSpread);
  const around = backgroundAround(page, paperLevel);
  const binarised = midtoneShare(page) < 0.004 && noise.flatRate > 0.9;
  const lossless = !page.jpeg;

  let cls: ImageClass;
  let confidence = 0.6;
  if (lossless && noise.flatRate > 0.97 && noise.sigma < 0.3 && !around && (!dpi || dpi <= 144)) {
    cls = "screenshot";
    signals.push("lossless picture with perfectly flat paper (no sensor or scanner noise)");
    confidence = 0.8;
  } else if ((camera?.make || cameraExposure) && !noiseIsFlattened(noise)) {
    cls = "camera_photo";
    signals.push(
      `camera EXIF${camera?.make ? ` (${[camera.make, camera.model].filter(Boolean).join(" ")})` : ""}`,
    );
    confidence = 0.85;
  } else if ((camera?.make || cameraExposure) && noiseIsFlattened(noise)) {
    cls = "scanning_app";
    signals.push("phone EXIF with a whitened, flattened page (a scanning app's output)");
    confidence = 0.7;
  } else if (around || noise.lightSpread > 45) {
    cls = "camera_photo";
    if (around) signals.push("background around the page");
    if (noise.lightSpread > 45) signals.push(`uneven light (paper brightness spread ${noise.lightSpread})`);
    confidence = 0.6;
  } else if (
    jpeg &&
    !jpeg.app.exif &&
    (!dpi || dpi === 72 || dpi === 96) &&
    MESSENGER_SIDES.includes(longer) &&
    (jpeg.quality?.quality ?? 100) <= 85
  ) {
    cls = "messenger";
    signals.push(`no EXIF or density, longer side ${longer} px, JPEG quality ${jpeg.quality?.quality}`);
    confidence = 0.7;
  } else if (noiseIsFlattened(noise) && !dpi) {
    cls = "scanning_app";
    signals.push("page-filling picture with a whitened background and no scanner resolution");
    confidence = 0.5;
  } else {
    cls = "flatbed_scan";
    signals.push(
      dpi
        ? `resolution ${dpi} dpi${SCANNER_DPI.includes(Math.round(dpi)) ? " (a scanner setting)" : ""}`
        : "even light",
    );
    signals.push("even light, the page fills the picture");
    confidence = dpi && SCANNER_DPI.includes(Math.round(dpi)) ? 0.75 : 0.55;
  }
  if (jpeg?.quality)
    signals.push(
      `JPEG quality ${jpeg.quality.quality} (${jpeg.quality.standard ? "libjpeg's standard tables" : "its own tables"}, ${jpeg.subsampling})`,
    );
  signals.push(`paper noise σ ${noise.sigma.toFixed(1)}, ${(noise.flatRate * 100).toFixed(0)} % flat cells`);
  const pasted = page.source !== "image-file";
  if (pasted)
    signals.unshift(`a page of a PDF that is one picture${pdfProducer ? ` (producer ${pdfProducer})` : ""}`);
  return {
    page: page.page,
    class: pasted ? "pasted_image" : cls,
    underlying: cls,
    confidence,
    signals,
    ...(jpeg ? { jpeg } : {}),
    noise,
    ...(camera ? { camera } : {}),
    ...(dpi ? { dpi: Math.round(dpi) } : {}),
    width: page.width,
    height: page.height,
    binarised,
  };
}

/** A background whitened by software: most paper is flat or blown out. */
function noiseIsFlattened(n: PageNoise): boolean {
  return n.flatRate > 0.6 || n.saturatedRate > 0.6;
}

const memo = new WeakMap<DocumentModel, Promise<PageCapture[]>>();

/** The capture class of every page image of the document, computed once. */
export function captureOf(doc: DocumentModel): Promise<PageCapture[]> {
  let p = memo.get(doc);
  if (!p) {
    p = (async () => {
      const { pages } = await pagePixels(doc);
      const producer = doc.pdf?.info.Producer;
      const out: PageCapture[] = [];
      for (const page of pages) out.push(await classifyPage(page, producer));
      return out;
    })();
    memo.set(doc, p);
  }
  return p;
}
