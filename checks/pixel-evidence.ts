import type { Finding } from "../core/check-result.js";
import type { BoxTuple } from "../core/page-geometry.js";
import type { DocumentModel } from "../document/model.js";
import { captureOf, type PageCapture } from "../document/pixels/capture.js";
import { type PagePixels, pagePixels } from "../document/pixels/page-pixels.js";
import { type Inspection, type Skipped, skip } from "./check.js";

/**
 * What every pixel check's finding carries (docs/api.md, "Pixel findings"): the page, the box on the page
 * image in the page's units (image pixels, origin top left, for an image document; PDF points for a PDF
 * page), the box in the image's own pixels, the capture class the thresholds came from, and how unlikely
 * the observation is on an untouched capture (log10 NFA). Pixel evidence alone is an anomaly: severity
 * ≤ 4 (HELPERS: it becomes decisive only with a second method or the arithmetic about the same value).
 */
export const PIXEL_SEVERITY_MAX = 4;

/** Observations more than one pixel check makes (see `pixelFinding`'s `method`). */
export type PixelMethod = "glyph_twin";

export function pixelFinding(
  page: PagePixels,
  capture: PageCapture | undefined,
  f: {
    code: string;
    message: string;
    box: BoxTuple;
    severity: number;
    logNfa?: number;
    /**
     * The observation the finding reports, when another check can report the same one (a character matching
     * another pixel for pixel: `glyph_twin`). Two findings of one method about one place are one observation
     * seen twice, never two kinds of evidence (agent/score.ts `independent`).
     */
    method?: PixelMethod;
    evidence?: Record<string, unknown>;
  },
): Finding {
  return {
    code: f.code,
    message: f.message,
    page: page.page,
    bbox: page.toPageBox(f.box),
    severity: Math.max(0, Math.min(PIXEL_SEVERITY_MAX, Math.round(f.severity))),
    evidence: {
      kind: "pixels",
      pixelBox: f.box,
      capture: capture?.class,
      ...(f.method ? { method: f.method } : {}),
      ...(f.logNfa !== undefined ? { log10Nfa: Math.round(f.logNfa * 10) / 10 } : {}),
      ...f.evidence,
    },
  };
}

/** "on page 2" for a PDF, "" for an image document. */
export function onPage(page: PagePixels): string {
  return page.source === "image-file" ? "" : ` on page ${page.page}`;
}

/**
 * The page loop every pixel check shares: each page image (those `pages` keeps) with its capture class, in
 * order, until the step's signal aborts. `inspect` gives the page's findings, or `undefined` when the page is
 * not judged (its capture class has no thresholds, or it has nothing to compare). A skip, with the check's own
 * reason, when there is no page image or none was judged.
 */
export async function inspectCapturedPages(
  doc: DocumentModel,
  signal: AbortSignal | undefined,
  options: {
    pages?: (page: PagePixels) => boolean;
    /** Why the check skips a document without (such) page images. */
    noPages: string;
    /** Why it skips a document none of whose page images it judged. */
    noneJudged: string;
    inspect: (page: PagePixels, capture: PageCapture) => Finding[] | undefined;
  },
): Promise<(Inspection & { judged: number }) | Skipped> {
  const pages = (await pagePixels(doc)).pages.filter((p) => options.pages?.(p) ?? true);
  if (pages.length === 0) return skip(options.noPages);
  const captures = await captureOf(doc);
  const findings: Finding[] = [];
  let judged = 0;
  for (const page of pages) {
    if (signal?.aborted) break;
    const capture = captures.find((c) => c.page === page.page);
    if (!capture) continue;
    const found = options.inspect(page, capture);
    if (found === undefined) continue;
    judged++;
    findings.push(...found);
  }
  if (judged === 0) return skip(options.noneJudged);
  return { findings, judged };
}
