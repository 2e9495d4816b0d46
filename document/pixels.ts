import sharp from "sharp";
import {
  type BoxTuple,
  displayedSize,
  fractionToPixels,
  type PageGeometry,
  toFraction,
} from "../core/page-geometry.js";
import { RENDER_LIMITS } from "./budget/limits.js";
import type { DocumentModel } from "./model.js";
import { decodePdfImage, geometryOf, type PdfImage, scanPdfImages } from "./pdf-images.js";
import { type PdfjsDocument, type PdfjsPage, withPdfjs } from "./pdfjs.js";
import { ImageDecodeError, MAX_DECODE_PIXELS, type RgbaImage } from "./raster.js";

/**
 * The document's pixels, gathered once per document model and shared by everything that looks at them
 * (OCR, qr.codes, the revision diff, the reviewer's evidence, the pixel checks): pages rendered (PDF, with
 * pdfjs) or decoded (image documents, with sharp) at a resolution, crops of a page at a higher
 * resolution, and the images a PDF page draws, decoded. Results are memoised on the model:
 *
 *   const px = pixelsOf(doc);
 *   const page = await px.page(1, { scale: 300 / 72 });     // PDF: pixels per point (300 dpi)
 *   const same = await px.page(1, { scale: 1 });            // image document: the file's own pixels
 *   const crop = await px.region(1, bbox, 600 / 72);         // a box in page units, sharper
 *   for (const img of await px.pageImages(1)) await px.image(img, 1600);
 *
 * Page units are the units of findings' boxes (core/page-geometry.ts): PDF points (origin bottom left) for
 * PDFs, the file's own pixels (origin top left, after its EXIF orientation) for image documents; `scale` is
 * pixels of the raster per page unit. A request for a smaller raster than one already made is served by
 * resampling that one (no second render), unless it asks for an `exact` render (pixel comparisons
 * between two renders must render both the same way).
 *
 * Bounded: every raster stays within RENDER_LIMITS.maxPixelsPerPage (the scale is lowered to fit) and
 * sharp's input bound (MAX_DECODE_PIXELS); the memo holds at most RENDER_LIMITS.maxCachedBytes and drops
 * the least recently used rasters beyond; one render or decode runs at a time. Rasters are shared:
 * treat `image.data` as read-only (copy before drawing on it).
 */

export interface PageRaster {
  page: number;
  /** RGBA pixels of the displayed page, on white. Shared: do not modify. */
  image: RgbaImage;
  /** Where the page's units sit on the raster (PDF: points, y up; image document: pixels, y down). */
  geometry: PageGeometry;
  /** Raster pixels per page unit along each axis (PDF: dpi / 72; image document: 1 = its own pixels). */
  scale: number;
}

export interface PageRequest {
  /** Raster pixels per page unit wanted (PDF: dpi / 72; image document: 1 = its own pixels). */
  scale: number;
  /** The longer side in pixels, at most. */
  maxSidePx?: number;
  /** Pixels of the raster, at most (never more than RENDER_LIMITS.maxPixelsPerPage). */
  maxPixels?: number;
  /** Render (or decode) at exactly this size, never resample a larger raster. */
  exact?: boolean;
}

export interface PixelSource {
  /** Pages of the document (1 for an image document; 0 when it cannot be opened). */
  pageCount(): Promise<number>;
  /** Where the page's units sit on the displayed page; undefined for a page that cannot be read. */
  geometry(page: number): Promise<PageGeometry | undefined>;
  /** The page as pixels at the requested scale (within the bounds); undefined for a page out of range. */
  page(page: number, req: PageRequest, signal?: AbortSignal): Promise<PageRaster | undefined>;
  /**
   * A box of the page (page units) as pixels at `scale`, rendered (PDF) or resampled from the file (image
   * document) for that box alone, so a small region can be read far sharper than the whole page; the
   * raster's `geometry` places the crop's pixels in page units (its view is the box).
   */
  region(page: number, bbox: BoxTuple, scale: number, signal?: AbortSignal): Promise<PageRaster | undefined>;
  /** The images a PDF page draws (its image XObjects, nested forms included); none for image documents. */
  pageImages(page: number): Promise<PdfImage[]>;
  /** An embedded image's own pixels, decoded once per (image, maxSide) and shared. */
  image(img: PdfImage, maxSide: number): Promise<RgbaImage>;
  /** The PDF's text items of a page with their boxes in points (what the revision diff reads). */
  text(page: number): Promise<{ text: string; bbox: BoxTuple }[]>;
  /** Rasters made so far and their bytes (for logs and tests). */
  stats(): { renders: number; resampled: number; decodedImages: number; cachedBytes: number };
  /** Releases the opened PDF and the memo (the check step calls this when the step ends). */
  close(): Promise<void>;
}


/** The raster size for a page of `g` at `req`, within every bound. */
export function rasterSize(
  g: PageGeometry,
  req: PageRequest,
): { width: number; height: number; scale: number } {
  const size = displayedSize(g);
  let s = Math.max(1e-3, req.scale);
  const side = Math.max(size.width, size.height) * s;
  if (req.maxSidePx !== undefined && side > req.maxSidePx) s *= req.maxSidePx / side;
  const maxPixels = Math.min(req.maxPixels ?? RENDER_LIMITS.maxPixelsPerPage, RENDER_LIMITS.maxPixelsPerPage);
  const pixels = size.width * s * (size.height * s);
  if (pixels > maxPixels) s *= Math.sqrt(maxPixels / pixels);
  return {
    width: Math.max(1, Math.floor(size.width * s)),
    height: Math.max(1, Math.floor(size.height * s)),
    scale: s,
  };
}

/** RGBA pixels resampled to width × height (sharp, Lanczos). */
export async function resample(img: RgbaImage, width: number, height: number): Promise<RgbaImage> {
  const { data, info } = await sharp(Buffer.from(img.data.buffer, img.data.byteOffset, img.data.length), {
    raw: { width: img.width, height: img.height, channels: 4 },
  })
    .resize({ width, height, fit: "fill" })
    .raw()
    .toBuffer({ resolveWithObject: true });
  return {
    width: info.width,
    height: info.height,
    data: new Uint8ClampedArray(data.buffer, data.byteOffset, data.length),
  };
}

interface Entry {
  key: string;
  page: number;
  exact: boolean;
  raster: Promise<PageRaster | undefined>;
  bytes: number;
  used: number;
}

interface Backend {
  pageCount(): Promise<number>;
  geometry(page: number): Promise<PageGeometry | undefined>;
  /** Renders or decodes the page at exactly width × height (the displayed page). */
  raster(
    page: number,
    g: PageGeometry,
    width: number,
    height: number,
    signal?: AbortSignal,
  ): Promise<RgbaImage | undefined>;
  /** Renders or decodes the part `px` (pixels of a width × height raster of the page). */
  crop(
    page: number,
    g: PageGeometry,
    width: number,
    height: number,
    px: BoxTuple,
    signal?: AbortSignal,
  ): Promise<RgbaImage | undefined>;
  text(page: number): Promise<{ text: string; bbox: BoxTuple }[]>;
  close(): Promise<void>;
}

const sources = new WeakMap<object, PixelSource>();

/** The pixel source of a document model, made on first use and kept on the model. */
export function pixelsOf(doc: DocumentModel): PixelSource {
  let s = sources.get(doc);
  if (!s) {
    const backend = doc.pdf
      ? pdfBackend(doc.bytes)
      : doc.contentType.startsWith("image/")
        ? imageBackend(doc.bytes)
        : emptyBackend();
    s = createSource(backend, doc.pdf ? doc : undefined);
    sources.set(doc, s);
  }
  return s;
}

/** The pixel source of other PDF bytes (an earlier revision), kept on `owner`. */
export function pixelsOfPdf(owner: object, bytes: Uint8Array): PixelSource {
  let s = sources.get(owner);
  if (!s) {
    s = createSource(pdfBackend(bytes), undefined);
    sources.set(owner, s);
  }
  return s;
}

/**
 * Lets another model of the same bytes (a copy with some pages read again) use `doc`'s pixel source;
 * only `doc` closes it.
 */
export function sharePixels(doc: DocumentModel, copy: DocumentModel): void {
  if (copy.bytes !== doc.bytes) throw new Error("sharePixels: the copy has other bytes");
  sources.set(copy, pixelsOf(doc));
}

/** Closes the document's pixel source when one was made (the check step calls this at its end). */
export async function releasePixels(owner: object): Promise<void> {
  const s = sources.get(owner);
  if (!s) return;
  sources.delete(owner);
  await s.close();
}

function createSource(backend: Backend, pdfDoc: DocumentModel | undefined): PixelSource {
  const entries = new Map<string, Entry>();
  const images = new Map<string, Promise<RgbaImage>>();
  let clock = 0;
  let queue: Promise<unknown> = Promise.resolve();
  const counters = { renders: 0, resampled: 0, decodedImages: 0 };
  /** One render or decode at a time: memory stays at one page's worth of work. */
  const serial = <T>(run: () => Promise<T>): Promise<T> => {
    const next = queue.then(run, run);
    queue = next.catch(() => undefined);
    return next;
  };
  const cachedBytes = () => [...entries.values()].reduce((n, e) => n + e.bytes, 0);
  const evict = () => {
    let total = cachedBytes();
    const byAge = [...entries.values()].filter((e) => e.bytes > 0).sort((a, b) => a.used - b.used);
    for (const e of byAge) {
      if (total <= RENDER_LIMITS.maxCachedBytes) break;
      entries.delete(e.key);
      total -= e.bytes;
    }
  };
  const remember = (key: string, page: number, exact: boolean, raster: Promise<PageRaster | undefined>) => {
    const entry: Entry = { key, page, exact, raster, bytes: 0, used: ++clock };
    entries.set(key, entry);
    raster.then(
      (r) => {
        if (!r) entries.delete(key);
        else {
          entry.bytes = r.image.data.byteLength;
          evict();
        }
      },
      () => entries.delete(key),
    );
    return raster;
  };

  return {
    pageCount: () => backend.pageCount(),
    geometry: (n) => backend.geometry(n),
    async page(n, req, signal) {
      const g = await backend.geometry(n);
      if (!g) return undefined;
      const { width, height, scale } = rasterSize(g, req);
      const key = `${n}@${width}x${height}`;
      const hit = entries.get(key);
      if (hit && (hit.exact || !req.exact)) {
        hit.used = ++clock;
        return hit.raster;
      }
      if (!req.exact) {
        // A larger raster of the page already made (or being made): resample it.
        const larger = [...entries.values()]
          .filter((e) => e.page === n && !e.key.includes("#"))
          .map((e) => ({ e, dims: e.key.split("@")[1]!.split("x").map(Number) as [number, number] }))
          .filter(({ dims }) => dims[0] >= width && dims[1] >= height)
          .sort((a, b) => a.dims[0] - b.dims[0])[0];
        if (larger) {
          larger.e.used = ++clock;
          return remember(
            key,
            n,
            false,
            larger.e.raster.then(async (big) => {
              if (!big) return undefined;
              counters.resampled++;
              const image = await resample(big.image, width, height);
              return { page: n, image, geometry: g, scale };
            }),
          );
        }
      }
      return remember(
        key,
        n,
        true,
        serial(async () => {
          if (signal?.aborted) return undefined;
          const image = await backend.raster(n, g, width, height, signal);
          if (!image) return undefined;
          counters.renders++;
          return { page: n, image, geometry: g, scale };
        }),
      );
    },
    async region(n, bbox, scale, signal) {
      const g = await backend.geometry(n);
      if (!g) return undefined;
      const f = toFraction(g, bbox);
      if (!f) return undefined;
      // Only the box's pixels are made, at a scale lowered so they fit the page bound.
      const size = displayedSize(g);
      const area = (f[2] - f[0]) * size.width * ((f[3] - f[1]) * size.height) * scale * scale;
      const s =
        area > RENDER_LIMITS.maxPixelsPerPage
          ? scale * Math.sqrt(RENDER_LIMITS.maxPixelsPerPage / area)
          : scale;
      const fullW = Math.max(1, Math.floor(size.width * s));
      const fullH = Math.max(1, Math.floor(size.height * s));
      const px = fractionToPixels(f, fullW, fullH);
      if (px[2] - px[0] < 1 || px[3] - px[1] < 1) return undefined;
      const key = `${n}#${px.join(",")}@${fullW}x${fullH}`;
      const hit = entries.get(key);
      if (hit) {
        hit.used = ++clock;
        return hit.raster;
      }
      return remember(
        key,
        n,
        true,
        serial(async () => {
          if (signal?.aborted) return undefined;
          const image = await backend.crop(n, g, fullW, fullH, px, signal);
          if (!image) return undefined;
          counters.renders++;
          const shown: BoxTuple = [px[0], px[1], px[0] + image.width, px[1] + image.height];
          return { page: n, image, geometry: cropGeometry(g, shown, fullW, fullH), scale: s };
        }),
      );
    },
    async pageImages(n) {
      if (!pdfDoc) return [];
      const scan = await scanPdfImages(pdfDoc);
      return scan.images.filter((img) => img.pages.includes(n));
    },
    image(img, maxSide) {
      const key = `${img.ref}@${maxSide}`;
      let p = images.get(key);
      if (!p) {
        p = serial(async () => {
          const out = await decodePdfImage(img, maxSide);
          counters.decodedImages++;
          return out;
        });
        images.set(key, p);
        p.catch(() => images.delete(key));
      }
      return p;
    },
    text: (n) => backend.text(n),
    stats: () => ({ ...counters, cachedBytes: cachedBytes() }),
    async close() {
      entries.clear();
      images.clear();
      await backend.close();
    },
  };
}

/** The geometry of a crop: its view is the box of the page it shows (so pixelsToBox maps its pixels). */
function cropGeometry(g: PageGeometry, px: BoxTuple, fullW: number, fullH: number): PageGeometry {
  const [x0, y0, x1, y1] = g.view as BoxTuple;
  const w = x1 - x0;
  const h = y1 - y0;
  // Fractions of the displayed page → fractions of the unrotated page.
  const toPage = (u: number, v: number): [number, number] => {
    let a = u;
    let b = v;
    if (g.rotate === 90) [a, b] = [v, 1 - u];
    else if (g.rotate === 180) [a, b] = [1 - u, 1 - v];
    else if (g.rotate === 270) [a, b] = [1 - v, u];
    return [x0 + a * w, g.units === "pt" ? y1 - b * h : y0 + b * h];
  };
  const p = [toPage(px[0] / fullW, px[1] / fullH), toPage(px[2] / fullW, px[3] / fullH)];
  return {
    number: g.number,
    view: [
      Math.min(p[0]![0], p[1]![0]),
      Math.min(p[0]![1], p[1]![1]),
      Math.max(p[0]![0], p[1]![0]),
      Math.max(p[0]![1], p[1]![1]),
    ],
    rotate: g.rotate,
    units: g.units,
  };
}

// ---------------------------------------------------------------------------------------------
// Backends
// ---------------------------------------------------------------------------------------------

function emptyBackend(): Backend {
  return {
    pageCount: async () => 0,
    geometry: async () => undefined,
    raster: async () => undefined,
    crop: async () => undefined,
    text: async () => [],
    close: async () => undefined,
  };
}

/** An image document: its one page, decoded with sharp (EXIF orientation applied, on white). */
function imageBackend(bytes: Uint8Array): Backend {
  let meta: Promise<{ width: number; height: number } | undefined> | undefined;
  const size = () => {
    meta ??= sharp(bytes, { limitInputPixels: MAX_DECODE_PIXELS })
      .metadata()
      .then((m) => {
        const width = m.autoOrient?.width ?? m.width ?? 0;
        const height = m.autoOrient?.height ?? m.height ?? 0;
        return width && height ? { width, height } : undefined;
      })
      .catch(() => undefined);
    return meta;
  };
  /** The file's pixels (or the part `from` of them, in its own pixels) resampled to width × height. */
  const decode = async (width: number, height: number, from?: BoxTuple) => {
    try {
      let img = sharp(bytes, { limitInputPixels: MAX_DECODE_PIXELS, failOn: "error" }).rotate();
      if (from) {
        // extract() after rotate() would cut the unrotated file: orient first, then cut and resample.
        const oriented = await img.raw().toBuffer({ resolveWithObject: true });
        const cut = await sharp(oriented.data, {
          raw: { width: oriented.info.width, height: oriented.info.height, channels: oriented.info.channels },
        })
          .extract({ left: from[0], top: from[1], width: from[2] - from[0], height: from[3] - from[1] })
          .png({ compressionLevel: 0 })
          .toBuffer();
        img = sharp(cut);
      }
      const { data, info } = await img
        .resize({ width, height, fit: "fill" })
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
      throw new ImageDecodeError(err instanceof Error ? err.message : String(err));
    }
  };
  return {
    pageCount: async () => ((await size()) ? 1 : 0),
    async geometry(n) {
      const s = await size();
      if (n !== 1 || !s) return undefined;
      return { number: 1, view: [0, 0, s.width, s.height], rotate: 0, units: "px" };
    },
    raster: (_n, _g, width, height) => decode(width, height),
    async crop(_n, _g, fullW, fullH, px) {
      const own = await size();
      if (!own) return undefined;
      const kx = own.width / fullW;
      const ky = own.height / fullH;
      const from: BoxTuple = [
        Math.max(0, Math.floor(px[0] * kx)),
        Math.max(0, Math.floor(px[1] * ky)),
        Math.min(own.width, Math.ceil(px[2] * kx)),
        Math.min(own.height, Math.ceil(px[3] * ky)),
      ];
      if (from[2] - from[0] < 1 || from[3] - from[1] < 1) return undefined;
      const w = Math.max(1, Math.round((from[2] - from[0]) / kx));
      const h = Math.max(1, Math.round((from[3] - from[1]) / ky));
      return decode(w, h, from);
    },
    text: async () => [],
    close: async () => undefined,
  };
}

/** A PDF: pages rendered with pdfjs, opened once for the source's life (document/pdfjs.ts). */
function pdfBackend(bytes: Uint8Array): Backend {
  let opened: Promise<PdfjsDocument | undefined> | undefined;
  let release: (() => void) | undefined;
  let done: Promise<unknown> | undefined;
  const open = () => {
    if (!opened) {
      opened = new Promise<PdfjsDocument | undefined>((resolve) => {
        done = withPdfjs(bytes, undefined, (doc) => {
          resolve(doc);
          return new Promise<void>((r) => {
            release = r;
          });
        }).catch(() => resolve(undefined));
      });
    }
    return opened;
  };
  const geometryCache = new Map<number, Promise<PageGeometry | undefined>>();
  const render = async (
    n: number,
    width: number,
    height: number,
    g: PageGeometry,
    px: BoxTuple | undefined,
    signal?: AbortSignal,
  ): Promise<RgbaImage | undefined> => {
    const doc = await open();
    if (!doc || n < 1 || n > doc.numPages || signal?.aborted) return undefined;
    const page = await doc.getPage(n);
    const size = displayedSize(g);
    const scale = width / size.width;
    const offset = px ? { offsetX: -px[0], offsetY: -px[1] } : {};
    const viewport = page.getViewport({ scale, ...offset });
    const w = px ? px[2] - px[0] : width;
    const h = px ? px[3] - px[1] : height;
    const factory = (doc as unknown as { canvasFactory: CanvasFactory }).canvasFactory;
    const target = factory.create(w, h);
    const abort = () => task?.cancel();
    let task: { promise: Promise<void>; cancel(): void } | undefined;
    try {
      target.context.fillStyle = "#ffffff";
      target.context.fillRect(0, 0, w, h);
      const params = { canvasContext: target.context, canvas: target.canvas, viewport };
      task = page.render(params as unknown as Parameters<typeof page.render>[0]) as unknown as typeof task;
      signal?.addEventListener("abort", abort, { once: true });
      await task!.promise;
      const data = target.context.getImageData(0, 0, w, h);
      return { width: w, height: h, data: data.data };
    } catch (err) {
      if (signal?.aborted) return undefined;
      throw err;
    } finally {
      signal?.removeEventListener("abort", abort);
      factory.destroy(target);
      page.cleanup();
    }
  };
  return {
    async pageCount() {
      return (await open())?.numPages ?? 0;
    },
    geometry(n) {
      let p = geometryCache.get(n);
      if (!p) {
        p = open().then(async (doc) => {
          if (!doc || n < 1 || n > doc.numPages) return undefined;
          try {
            return geometryOf(await doc.getPage(n));
          } catch {
            return undefined;
          }
        });
        geometryCache.set(n, p);
      }
      return p;
    },
    raster: (n, g, width, height, signal) => render(n, width, height, g, undefined, signal),
    crop: (n, g, width, height, px, signal) => {
      const clipped: BoxTuple = [
        Math.max(0, px[0]),
        Math.max(0, px[1]),
        Math.min(width, px[2]),
        Math.min(height, px[3]),
      ];
      if (clipped[2] - clipped[0] < 1 || clipped[3] - clipped[1] < 1) return Promise.resolve(undefined);
      return render(n, width, height, g, clipped, signal);
    },
    async text(n) {
      const doc = await open();
      if (!doc || n < 1 || n > doc.numPages) return [];
      const page = await doc.getPage(n);
      try {
        const content = await page.getTextContent();
        const out: { text: string; bbox: BoxTuple }[] = [];
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
    async close() {
      if (!opened) return;
      await opened;
      release?.();
      await done;
    },
  };
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
