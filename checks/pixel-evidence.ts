import type { Finding } from "../core/check-result.js";
import type { BoxTuple } from "../core/page-geometry.js";
import type { PageCapture } from "../document/pixels/capture.js";
import type { PagePixels } from "../document/pixels/page-pixels.js";

/**
 * What every pixel check's finding carries (docs/api.md, "Pixel findings"): the page, the box on the page
 * image in the page's units (image pixels, origin top left, for an image document; PDF points for a PDF
 * page), the box in the image's own pixels, the capture class the thresholds came from, and how unlikely
 * the observation is on an untouched capture (log10 NFA). Pixel evidence alone is an anomaly: severity
 * ≤ 4 (HELPERS: it becomes decisive only with a second method or the arithmetic about the same value).
 */
export const PIXEL_SEVERITY_MAX = 4;

export function pixelFinding(
  page: PagePixels,
  capture: PageCapture | undefined,
  f: {
    code: string;
    message: string;
    box: BoxTuple;
    severity: number;
    logNfa?: number;
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
      ...(f.logNfa !== undefined ? { log10Nfa: Math.round(f.logNfa * 10) / 10 } : {}),
      ...f.evidence,
    },
  };
}

/** "on page 2" for a PDF, "" for an image document. */
export function onPage(page: PagePixels): string {
  return page.source === "image-file" ? "" : ` on page ${page.page}`;
}
