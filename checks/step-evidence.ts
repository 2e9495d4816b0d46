import sharp from "sharp";
import type { CheckResult } from "../core/check-result.js";
import { keys } from "../core/detection.js";
import {
  type BuiltEvidence,
  buildEvidence,
  type EvidenceManifest,
  type EvidencePage,
  type PageImage,
  pagesWithFindings,
  EVIDENCE_LIMITS,
} from "../core/evidence.js";
import {
  type BoxTuple,
  displayedSize,
  fractionToPixels,
  type PageGeometry,
  toFraction,
} from "../core/page-geometry.js";
import type { ObjectStore } from "../core/ports.js";
import type { Logger } from "../core/step-context.js";
import { EVIDENCE_MANIFEST } from "../core/step-results.js";
import { writeStored } from "../core/stored.js";
import type { DocumentModel } from "../document/model.js";
import { drawMarks, type Mark } from "../document/page-marks.js";
import { type PixelSource, pixelsOf, pixelsOfPdf } from "../document/pixels.js";
import type { RgbaImage } from "../document/raster.js";
import {
  compareRevisions,
  firstSavedRevision,
  type RevisionComparison,
} from "../document/revision-pixels.js";
import { documentLines } from "../document/text-lines.js";

/**
 * The reviewer's evidence, made by the check step after the checks ran (docs/evidence.md): the findings as
 * data with their groups (core/evidence.ts), and every page that carries findings rendered to PNG with each
 * group's boxes drawn and numbered; for a PDF with incremental updates, the pages a later update changed
 * also as first saved, with the changed regions marked on both. Stored beside the step results under
 * `evidence/<detection>/` (deleted with the detection and at retention, core/detection-files.ts).
 *
 * Bounded: only pages with findings, strongest first, at most `maxImages` images and `maxBytes` bytes per
 * detection, each at `dpi` with the longer side at most `maxSidePx`, all within `timeoutMs`; what is left
 * out is listed with the reason. Rendering never fails the step: an error leaves the rest unrendered.
 */

export const RENDER_DEFAULTS = {
  /** Dots per inch of the page images (1 PDF point = dpi / 72 pixels). */
  dpi: 110,
  /** The longer side of an image, in pixels, at most. */
  maxSidePx: 2000,
  /** Images per detection (submitted and first-saved pages together). */
  maxImages: 20,
  /** Bytes of PNG per detection. */
  maxBytes: 16 * 1024 * 1024,
  /** Rendering time per detection; default min(30 s, a quarter of the step timeout). */
  timeoutMs: 30_000,
} as const;

export type RenderLimits = { [K in keyof typeof RENDER_DEFAULTS]: number };

export interface EvidenceContext {
  detection: string;
  objects: ObjectStore;
  bucket: string;
  log: Logger;
  limits?: Partial<RenderLimits>;
}

/** The label printed left of a value on its line ("Closing balance"), from the page's text lines. */
export function labelBeside(doc: DocumentModel, page: number, bbox: BoxTuple): string | undefined {
  const lines = documentLines(doc).filter((l) => l.page === page && l.y !== undefined);
  const mid = (bbox[1] + bbox[3]) / 2;
  const line = lines
    .filter((l) => (l.y as number) >= bbox[1] - 3 && (l.y as number) <= bbox[3] + 3)
    .sort((a, b) => Math.abs((a.y as number) - mid) - Math.abs((b.y as number) - mid))[0];
  if (!line) return undefined;
  const label = line.cells.find(
    (c) => c.bbox !== undefined && c.bbox[2] <= bbox[0] + 1 && /\p{L}{2}/u.test(c.text),
  );
  return label ? label.text.replace(/[:\s]+$/, "") : undefined;
}

/**
 * PNG at zlib level 3 without adaptive filtering: on a 1546 × 2000 photo 0.7 s instead of 4.2-4.7 s
 * (level 6, adaptive) for 16 % more bytes; on a rendered statement page 18 ms instead of 309 ms and 11 %
 * fewer bytes (docs/decisions.md, "The check step's order").
 */
async function encodePng(img: RgbaImage): Promise<Buffer> {
  return sharp(Buffer.from(img.data.buffer, img.data.byteOffset, img.data.length), {
    raw: { width: img.width, height: img.height, channels: 4 },
  })
    .removeAlpha()
    .png({ compressionLevel: 3, adaptiveFiltering: false })
    .toBuffer();
}

function marksFor(
  built: BuiltEvidence,
  page: number,
  geometry: PageGeometry,
  img: RgbaImage,
  only?: (group: number) => boolean,
): Mark[] {
  return (built.marks.get(page) ?? [])
    .filter((m) => !only || only(m.group))
    .flatMap((m) => {
      const f = toFraction(geometry, m.bbox);
      return f ? [{ number: m.group, box: fractionToPixels(f, img.width, img.height) }] : [];
    });
}

interface Budget {
  images: number;
  bytes: number;
  deadline: number;
  limits: RenderLimits;
  notes: string[];
}

/** Why the next image cannot be made, or undefined when it can. */
function refusal(b: Budget, signal: AbortSignal): EvidencePage["notRendered"] | undefined {
  if (b.images >= b.limits.maxImages) return "page_cap";
  if (b.bytes >= b.limits.maxBytes) return "byte_cap";
  if (signal.aborted || Date.now() > b.deadline) return "time";
  return undefined;
}

async function store(
  ctx: EvidenceContext,
  b: Budget,
  key: string,
  img: RgbaImage,
  revision?: number,
): Promise<PageImage | "byte_cap"> {
  const png = await encodePng(img);
  if (b.bytes + png.length > b.limits.maxBytes) return "byte_cap";
  try {
    await ctx.objects.put(ctx.bucket, key, png, { contentType: "image/png" });
  } catch (err) {
    throw new EvidenceStoreError(`storing ${key} failed`, { cause: err });
  }
  b.images++;
  b.bytes += png.length;
  return {
    key,
    widthPx: img.width,
    heightPx: img.height,
    bytes: png.length,
    ...(revision !== undefined ? { revision } : {}),
  };
}

/**
 * Builds the evidence of a checked document, renders its pages and stores everything; returns the
 * manifest (also stored at keys.evidence(detection)). Infrastructure errors of the object store are
 * thrown (the step is retried); anything else is logged and leaves pages unrendered.
 */
export async function writeEvidence(
  doc: DocumentModel,
  checks: readonly CheckResult[],
  ctx: EvidenceContext,
): Promise<EvidenceManifest> {
  const limits: RenderLimits = { ...RENDER_DEFAULTS, ...ctx.limits };
  const started = Date.now();
  const ctl = new AbortController();
  const timer = setTimeout(() => ctl.abort(new Error("evidence rendering time is up")), limits.timeoutMs);
  const budget: Budget = { images: 0, bytes: 0, deadline: started + limits.timeoutMs, limits, notes: [] };
  const imageDocument = !doc.pdf && doc.contentType.startsWith("image/");
  const findingsTotal = checks.reduce((n, c) => n + c.findings.length, 0);
  // An image document is its one page: every finding about it is about that page.
  const withFindings = imageDocument
    ? findingsTotal > 0
      ? [{ page: 1, severity: 0, count: findingsTotal }]
      : []
    : pagesWithFindings(checks).slice(0, EVIDENCE_LIMITS.maxPages);
  const geometry = new Map<number, PageGeometry>();
  const images = new Map<number, PageImage>();
  const firstSaved = new Map<number, PageImage>();
  const refused = new Map<number, NonNullable<EvidencePage["notRendered"]>>();
  let built: BuiltEvidence | undefined;
  let pageCount: number | null = doc.pdf?.pageCount ?? (doc.imagePages ? doc.imagePages.length : null);
  const build = () =>
    buildEvidence({
      detection: ctx.detection,
      checks,
      geometry,
      labelOf: (page, bbox) => labelBeside(doc, page, bbox),
    });
  try {
    if (doc.pdf) {
      let comparison: RevisionComparison | undefined;
      if (doc.pdf.raw.revisions > 1)
        comparison = await compareRevisions(doc, ctl.signal).catch(() => undefined);
      const r = pixelsOf(doc);
      pageCount = await r.pageCount();
      for (const { page } of withFindings) {
        if (ctl.signal.aborted) break;
        const g = await r.geometry(page);
        if (g) geometry.set(page, g);
      }
      built = build();
      await renderPages(r, pageCount, built, withFindings, {
        geometry,
        images,
        refused,
        budget,
        ctx,
        signal: ctl.signal,
      });
      if (comparison && built) {
        await renderFirstSaved(doc, built, comparison, {
          geometry,
          firstSaved,
          budget,
          ctx,
          signal: ctl.signal,
        });
      }
    } else if (imageDocument && withFindings.length > 0) {
      await renderImage(doc, checks, {
        geometry,
        images,
        refused,
        budget,
        ctx,
        build: () => (built = build()),
      });
    }
  } catch (err) {
    if (isStoreError(err)) throw err.cause;
    const reason = err instanceof Error ? err.message : String(err);
    ctx.log.warn({ reason }, "rendering the evidence stopped");
    budget.notes.push(`Rendering stopped: ${reason}.`);
  } finally {
    clearTimeout(timer);
  }
  built ??= build();
  const pages: EvidencePage[] = withFindings
    .map(({ page }) => {
      const g = geometry.get(page);
      const size = g ? displayedSize(g) : undefined;
      const image = images.get(page) ?? null;
      return {
        number: page,
        width: size ? Math.round(size.width * 100) / 100 : null,
        height: size ? Math.round(size.height * 100) / 100 : null,
        rotate: g?.rotate ?? 0,
        geometry: g ?? null,
        findingCount: imageDocument
          ? findingsTotal
          : checks.reduce((n, c) => n + c.findings.filter((f) => f.page === page).length, 0),
        groups: [...new Set((built?.marks.get(page) ?? []).map((m) => m.group))].sort((a, b) => a - b),
        image,
        firstSaved: firstSaved.get(page) ?? null,
        notRendered: image
          ? null
          : (refused.get(page) ?? (pageCount !== null && page > pageCount ? "unavailable" : "error")),
      };
    })
    .sort((a, b) => a.number - b.number);
  for (const reason of new Set(refused.values())) {
    const n = [...refused.values()].filter((x) => x === reason).length;
    budget.notes.push(
      `${n} page${n > 1 ? "s" : ""} with findings not rendered: ${
        reason === "page_cap"
          ? `at most ${limits.maxImages} images per detection`
          : reason === "byte_cap"
            ? `at most ${limits.maxBytes} bytes of images per detection`
            : reason === "time"
              ? `rendering is bounded to ${limits.timeoutMs} ms per detection`
              : "the page could not be rendered"
      }.`,
    );
  }
  const manifest: EvidenceManifest = {
    version: 1,
    detection: ctx.detection,
    contentType: doc.contentType,
    pageCount,
    findingsTotal: built.findingsTotal,
    findings: built.findings,
    groupsTotal: built.groupsTotal,
    groups: built.groups,
    pages,
    checks: built.checks,
    render: {
      dpi: limits.dpi,
      maxSidePx: limits.maxSidePx,
      maxImages: limits.maxImages,
      maxBytes: limits.maxBytes,
      images: budget.images,
      bytes: budget.bytes,
      ms: Date.now() - started,
      notes: budget.notes,
    },
  };
  await writeStored(ctx.objects, ctx.bucket, EVIDENCE_MANIFEST, manifest, ctx.detection);
  return manifest;
}

/** A write to the object store failed: the step must be retried (an error of the document is not). */
class EvidenceStoreError extends Error {
  override name = "EvidenceStoreError";
}
const isStoreError = (err: unknown): err is EvidenceStoreError => err instanceof EvidenceStoreError;

interface RenderState {
  geometry: Map<number, PageGeometry>;
  images: Map<number, PageImage>;
  refused: Map<number, NonNullable<EvidencePage["notRendered"]>>;
  budget: Budget;
  ctx: EvidenceContext;
  signal: AbortSignal;
}

/** A copy of a shared raster to draw on. */
const copyOf = (img: RgbaImage): RgbaImage => ({
  width: img.width,
  height: img.height,
  data: new Uint8ClampedArray(img.data),
});

async function renderPages(
  r: PixelSource,
  pageCount: number,
  built: BuiltEvidence,
  pages: { page: number }[],
  s: RenderState,
): Promise<void> {
  const scale = s.budget.limits.dpi / 72;
  for (const { page } of pages) {
    if (page > pageCount) continue;
    const no = refusal(s.budget, s.signal);
    if (no) {
      s.refused.set(page, no);
      continue;
    }
    let rendered: Awaited<ReturnType<PixelSource["page"]>>;
    try {
      rendered = await r.page(page, { scale, maxSidePx: s.budget.limits.maxSidePx }, s.signal);
    } catch (err) {
      if (s.signal.aborted) {
        s.refused.set(page, "time");
        continue;
      }
      s.ctx.log.warn(
        { page, reason: err instanceof Error ? err.message : String(err) },
        "a page did not render",
      );
      s.refused.set(page, "error");
      continue;
    }
    if (!rendered) {
      if (s.signal.aborted) s.refused.set(page, "time");
      continue;
    }
    s.geometry.set(page, rendered.geometry);
    const image = copyOf(rendered.image);
    drawMarks(image, marksFor(built, page, rendered.geometry, image));
    const stored = await store(s.ctx, s.budget, keys.evidencePage(s.ctx.detection, page), image);
    if (stored === "byte_cap") s.refused.set(page, "byte_cap");
    else s.images.set(page, stored);
  }
}

/** The changed pages as first saved, with the marks of the groups of their changed regions. */
async function renderFirstSaved(
  doc: DocumentModel,
  built: BuiltEvidence,
  comparison: RevisionComparison,
  s: Omit<RenderState, "images" | "refused"> & { firstSaved: Map<number, PageImage> },
): Promise<void> {
  const first = await firstSavedRevision(doc, s.signal);
  if (!first) return;
  const regionGroups = new Set(
    built.findings
      .filter((f) => f.code === "revision_changed_region" && f.group !== null)
      .map((f) => f.group),
  );
  const scale = s.budget.limits.dpi / 72;
  const r = pixelsOfPdf(first, first.bytes);
  for (const pc of comparison.pages) {
    if (refusal(s.budget, s.signal)) {
      s.budget.notes.push(`Page ${pc.page} as first saved was not rendered (image, byte or time bound).`);
      continue;
    }
    const rendered = await r.page(pc.page, { scale, maxSidePx: s.budget.limits.maxSidePx }, s.signal);
    if (!rendered) continue;
    // The marks are placed with the submitted page's geometry (the regions are where the submitted
    // page differs); when the first save's page box differs, its own geometry places them.
    const g = s.geometry.get(pc.page) ?? rendered.geometry;
    const image = copyOf(rendered.image);
    drawMarks(
      image,
      marksFor(built, pc.page, g, image, (n) => regionGroups.has(n)),
    );
    const stored = await store(
      s.ctx,
      s.budget,
      keys.evidencePage(s.ctx.detection, pc.page, "first-saved"),
      image,
      first.revision + 1,
    );
    if (stored !== "byte_cap") s.firstSaved.set(pc.page, stored);
  }
}

/** An image document: its one page, scaled down, with the marks of its findings. */
async function renderImage(
  doc: DocumentModel,
  _checks: readonly CheckResult[],
  s: Omit<RenderState, "signal"> & { build: () => BuiltEvidence },
): Promise<void> {
  const pixels = pixelsOf(doc);
  const g = await pixels.geometry(1);
  if (!g) return;
  s.geometry.set(1, g);
  const built = s.build();
  const page = await pixels.page(1, { scale: 1, maxSidePx: s.budget.limits.maxSidePx });
  if (!page) return;
  const img = copyOf(page.image);
  drawMarks(img, marksFor(built, 1, g, img));
  const stored = await store(s.ctx, s.budget, keys.evidencePage(s.ctx.detection, 1), img);
  if (stored === "byte_cap") s.refused.set(1, "byte_cap");
  else s.images.set(1, stored);
}
