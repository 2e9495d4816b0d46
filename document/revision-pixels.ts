import {
  type BoxTuple,
  fractionToPixels,
  type PageGeometry,
  pixelsToBox,
  toFraction,
} from "../core/page-geometry.js";
import type { DocumentModel } from "./model.js";
import { withPageRenderer } from "./pdf-images.js";
import { pixelsOf, pixelsOfPdf } from "./pixels.js";
import { rawPdfOf } from "./pdf-raw/cache.js";
import type { RawPdf } from "./pdf-raw/document.js";
import { cachedDiff, type ChangeKind } from "./pdf-raw/revision-changes.js";
import { diffRegions } from "./pixel-diff.js";
import type { RgbaImage } from "./raster.js";

/**
 * The document "as first saved" next to the document as submitted: for a PDF with incremental updates, the
 * earliest revision that still opens (its bytes up to that revision's %%EOF) and, for each page a later
 * update changed, the regions whose rendered pixels differ between the two, with the text the text layer
 * shows there before and after. Read once per document model (pdf.revisions turns the regions into
 * findings; the check step renders both versions of those pages for the reviewer).
 */

/** Pages compared at most (the first changed pages in page order). */
export const MAX_COMPARED_PAGES = 8;
/** Resolution of the comparison (dots per inch) and the bound on the longer side in pixels. */
export const COMPARE_DPI = 100;
export const COMPARE_MAX_SIDE_PX = 1600;
/** Change kinds that alter what a page shows. */
const VISIBLE_KINDS = new Set<ChangeKind>([
  "page_content",
  "page_replaced",
  "page_properties",
  "annotation_added",
  "annotation_changed",
  "annotation_removed",
  "form_field",
  "signature",
  "font_added",
  "image_changed",
]);
/** Diff at most the newest this many updates (as pdf.revisions does). */
const MAX_DIFFED = 50;

export interface FirstSaved {
  /** 0-based index of the revision. */
  revision: number;
  /** Its bytes: the file up to the end of that revision. */
  bytes: Uint8Array;
}

export interface ChangedRegion {
  /** In the page's user space (points, origin bottom left). */
  bbox: BoxTuple;
  /** Pixels that differ at COMPARE_DPI. */
  pixels: number;
  /** Text shown in the region as first saved and as submitted, where they differ. */
  before?: string;
  after?: string;
}

export interface PageComparison {
  page: number;
  geometry: PageGeometry;
  regions: ChangedRegion[];
  /** The 0-based revisions after the first saved one that changed the page. */
  revisions: number[];
}

export interface RevisionComparison {
  firstSaved: { revision: number };
  pages: PageComparison[];
  /** Pages changed but not compared (beyond MAX_COMPARED_PAGES, or beyond the first save's pages). */
  notCompared: number[];
}

const firstSavedCache = new WeakMap<DocumentModel, Promise<FirstSaved | undefined>>();
const comparisonCache = new WeakMap<DocumentModel, Promise<RevisionComparison | undefined>>();

/** The earliest revision of a PDF with incremental updates that pdfjs opens with at least one page. */
export function firstSavedRevision(
  doc: DocumentModel,
  signal?: AbortSignal,
): Promise<FirstSaved | undefined> {
  let p = firstSavedCache.get(doc);
  if (!p) {
    p = findFirstSaved(doc, signal);
    firstSavedCache.set(doc, p);
    p.then((r) => {
      if (!r && signal?.aborted) firstSavedCache.delete(doc);
    }).catch(() => firstSavedCache.delete(doc));
  }
  return p;
}

async function findFirstSaved(doc: DocumentModel, signal?: AbortSignal): Promise<FirstSaved | undefined> {
  if (!doc.pdf) return undefined;
  const raw = rawPdfOf(doc);
  if (raw.revisions.length < 2) return undefined;
  for (const rev of raw.revisions.slice(0, -1)) {
    if (signal?.aborted) return undefined;
    const bytes = doc.bytes.subarray(0, rev.end);
    try {
      const pages = await withPageRenderer(bytes, signal, async (r) => r.pageCount);
      if (pages > 0) return { revision: rev.index, bytes };
    } catch {
      // this revision does not open on its own: try the next one
    }
  }
  return undefined;
}

/** Pages (final numbering) that an update after revision `after` changed visibly, with the revisions. */
export function changedPages(raw: RawPdf, after: number): Map<number, number[]> {
  const out = new Map<number, number[]>();
  const first = Math.max(after + 1, raw.revisions.length - MAX_DIFFED);
  for (let k = first; k < raw.revisions.length; k++) {
    for (const c of cachedDiff(raw, k).changes) {
      if (c.page === undefined || !VISIBLE_KINDS.has(c.kind)) continue;
      const list = out.get(c.page) ?? [];
      if (!list.includes(k)) list.push(k);
      out.set(c.page, list);
    }
  }
  return out;
}

type TextItem = { text: string; bbox: BoxTuple };

/** Text items overlapping a region, in reading order. */
function textIn(items: TextItem[], region: BoxTuple): TextItem[] {
  return items
    .filter((t) => {
      const w = Math.min(t.bbox[2], region[2]) - Math.max(t.bbox[0], region[0]);
      const h = Math.min(t.bbox[3], region[3]) - Math.max(t.bbox[1], region[1]);
      const height = t.bbox[3] - t.bbox[1] || 1;
      return w > 0 && h > 0.3 * height && t.text.trim() !== "";
    })
    .sort((a, b) => b.bbox[1] - a.bbox[1] || a.bbox[0] - b.bbox[0]);
}

const heightOf = (t: TextItem) => Math.max(1, t.bbox[3] - t.bbox[1]);
const sameLine = (a: TextItem, b: TextItem) =>
  Math.min(a.bbox[3], b.bbox[3]) - Math.max(a.bbox[1], b.bbox[1]) > 0.5 * Math.min(heightOf(a), heightOf(b));
const gapBetween = (a: TextItem, b: TextItem) =>
  Math.max(a.bbox[0], b.bbox[0]) - Math.min(a.bbox[2], b.bbox[2]);
/** Items closer than this share of their height belong to one word (glyphs a producer wrote apart). */
const GLUED = 0.15;

/** The items glued to `seed` on their line (the rest of the word or number a changed glyph is part of). */
function grow(items: readonly TextItem[], seed: readonly TextItem[]): TextItem[] {
  const set = new Set(seed);
  for (let changed = true; changed; ) {
    changed = false;
    for (const t of items) {
      if (set.has(t) || t.text.trim() === "") continue;
      for (const u of set) {
        const h = Math.min(heightOf(t), heightOf(u));
        // Adjacent, not drawn over each other (text left under a cover overlaps the new text).
        const gap = gapBetween(t, u);
        if (sameLine(t, u) && gap <= GLUED * h && gap >= -0.3 * h) {
          set.add(t);
          changed = true;
          break;
        }
      }
    }
  }
  return [...set];
}

/** Items read as text: left to right per line, glued items joined without a space. */
function readText(items: readonly TextItem[]): string {
  const sorted = [...items].sort((a, b) => b.bbox[1] - a.bbox[1] || a.bbox[0] - b.bbox[0]);
  let out = "";
  let prev: TextItem | undefined;
  for (const t of sorted) {
    const glued = prev && sameLine(prev, t) && gapBetween(prev, t) <= GLUED * heightOf(t);
    out += `${prev && !glued ? " " : ""}${t.text.trim()}`;
    prev = t;
  }
  return out.slice(0, 200);
}

/**
 * What differs between the texts of two sides at a changed region: the items of each side the other
 * does not have (same text at about the same place), grown to the words they belong to (a changed digit
 * reads as the whole number), their texts, and the box around them.
 */
function differing(
  before: TextItem[],
  after: TextItem[],
  allBefore: readonly TextItem[],
  allAfter: readonly TextItem[],
): { before?: string; after?: string; box?: BoxTuple } {
  const rest = [...after];
  let gone: TextItem[] = [];
  for (const t of before) {
    const i = rest.findIndex(
      (x) => x.text === t.text && Math.abs(x.bbox[0] - t.bbox[0]) < 2 && Math.abs(x.bbox[1] - t.bbox[1]) < 2,
    );
    if (i >= 0) rest.splice(i, 1);
    else gone.push(t);
  }
  if (gone.length === 0 && rest.length > 0) {
    // Nothing of the first save's text is gone, yet the pixels changed and new text is here: the old
    // text is still in the file under the new drawing (covered), at the new text's place.
    const near = (t: TextItem) =>
      rest.some(
        (x) =>
          Math.min(t.bbox[2], x.bbox[2]) - Math.max(t.bbox[0], x.bbox[0]) > 0 &&
          Math.min(t.bbox[3], x.bbox[3]) - Math.max(t.bbox[1], x.bbox[1]) > 0,
      );
    for (const t of before) if (near(t)) gone.push(t);
  }
  gone = gone.length ? grow(allBefore, gone) : gone;
  const added = rest.length ? grow(allAfter, rest) : rest;
  const b = readText(gone);
  const a = readText(added);
  const boxes = [...gone, ...added].map((t) => t.bbox);
  const box = boxes.length
    ? boxes.reduce<BoxTuple>(
        (u, x) => [Math.min(u[0], x[0]), Math.min(u[1], x[1]), Math.max(u[2], x[2]), Math.max(u[3], x[3])],
        boxes[0] as BoxTuple,
      )
    : undefined;
  return { ...(b ? { before: b } : {}), ...(a ? { after: a } : {}), ...(box ? { box } : {}) };
}

/** Regions beyond this many on one page are one region: the page was redrawn. */
const MAX_REGIONS_PER_PAGE = 12;

/**
 * Compares the first-saved and the submitted rendering of every page a later update changed (at most
 * MAX_COMPARED_PAGES), once per document model. Undefined for a file without incremental updates or
 * whose earlier revisions do not open.
 */
export function compareRevisions(
  doc: DocumentModel,
  signal?: AbortSignal,
): Promise<RevisionComparison | undefined> {
  let p = comparisonCache.get(doc);
  if (!p) {
    p = compare(doc, signal);
    comparisonCache.set(doc, p);
    // A comparison stopped by its caller's time bound is not kept: another caller may have more time.
    p.then((r) => {
      if (!r && signal?.aborted) comparisonCache.delete(doc);
    }).catch(() => comparisonCache.delete(doc));
  }
  return p;
}

async function compare(doc: DocumentModel, signal?: AbortSignal): Promise<RevisionComparison | undefined> {
  const first = await firstSavedRevision(doc, signal);
  if (!first) return undefined;
  const raw = rawPdfOf(doc);
  const changed = changedPages(raw, first.revision);
  const scale = COMPARE_DPI / 72;
  // Both sides rendered exactly alike (never a resampled copy of a larger render), from the pixel
  // sources the evidence renderer shares.
  const request = { scale, maxSidePx: COMPARE_MAX_SIDE_PX, exact: true };
  const firstPixels = pixelsOfPdf(first, first.bytes);
  const before = new Map<number, { image: RgbaImage; text: { text: string; bbox: BoxTuple }[] }>();
  const notCompared: number[] = [];
  const firstPages = await firstPixels.pageCount();
  for (const page of [...changed.keys()].sort((a, b) => a - b)) {
    if (signal?.aborted) return undefined;
    if (page > firstPages || before.size >= MAX_COMPARED_PAGES) {
      notCompared.push(page);
      continue;
    }
    try {
      const rendered = await firstPixels.page(page, request, signal);
      if (rendered) before.set(page, { image: rendered.image, text: await firstPixels.text(page) });
    } catch {
      if (signal?.aborted) return undefined;
      notCompared.push(page); // this page of the first save does not render: compare the others
    }
  }
  if (signal?.aborted) return undefined;
  const pages: PageComparison[] = [];
  const pixels = pixelsOf(doc);
  for (const [page, old] of before) {
    if (signal?.aborted) return undefined;
    let rendered: Awaited<ReturnType<typeof pixels.page>>;
    let text: TextItem[];
    try {
      rendered = await pixels.page(page, request, signal);
      text = rendered ? await pixels.text(page) : [];
    } catch {
      if (signal?.aborted) return undefined;
      notCompared.push(page);
      continue;
    }
    if (!rendered) continue;
    const { image, geometry } = rendered;
    let diffs = diffRegions(old.image, image);
    if (diffs.length > MAX_REGIONS_PER_PAGE) {
      diffs = [
        diffs.reduce((u, d) => ({
          box: [
            Math.min(u.box[0], d.box[0]),
            Math.min(u.box[1], d.box[1]),
            Math.max(u.box[2], d.box[2]),
            Math.max(u.box[3], d.box[3]),
          ],
          pixels: u.pixels + d.pixels,
        })),
      ];
    }
    const regions = diffs.map((d): ChangedRegion => {
      const pixelBox = pixelsToBox(geometry, d.box, image.width, image.height);
      const { box, ...words } = differing(textIn(old.text, pixelBox), textIn(text, pixelBox), old.text, text);
      const bbox: BoxTuple = box
        ? [
            Math.round(Math.min(pixelBox[0], box[0]) * 100) / 100,
            Math.round(Math.min(pixelBox[1], box[1]) * 100) / 100,
            Math.round(Math.max(pixelBox[2], box[2]) * 100) / 100,
            Math.round(Math.max(pixelBox[3], box[3]) * 100) / 100,
          ]
        : pixelBox;
      return { bbox, pixels: d.pixels, ...words };
    });
    pages.push({ page, geometry, regions, revisions: changed.get(page) ?? [] });
  }
  if (signal?.aborted) return undefined;
  return { firstSaved: { revision: first.revision }, pages, notCompared };
}

/** A region's box in pixels of an image of the page `width` × `height` (for drawing it elsewhere). */
export function regionPixels(
  geometry: PageGeometry,
  bbox: readonly number[],
  width: number,
  height: number,
): BoxTuple | undefined {
  const f = toFraction(geometry, bbox);
  return f ? fractionToPixels(f, width, height) : undefined;
}
