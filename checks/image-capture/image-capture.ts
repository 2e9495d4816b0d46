import type { Finding } from "../../core/check-result.js";
import { type CAPTURE_CLASSES, type PageCapture, captureOf } from "../../document/pixels/capture.js";
import { pagePixels } from "../../document/pixels/page-pixels.js";
import type { CodeTable } from "../../core/finding-levels.js";
import { defineCheck, skip, unreadable } from "../check.js";

/**
 * image.capture: how each image document or image-only PDF page was captured (camera photo, flatbed/ADF
 * scan, scanning app, screenshot, messenger re-encode, picture pasted into a PDF), from the JPEG's tables
 * and markers, EXIF, resolution, paper noise and light (document/pixels/capture.ts). It reports the class
 * as a discovered fact (`capture_<class>`) and as one severity-0 finding per page whose evidence lists the
 * signals; the pixel checks read the same classification to decide what applies and at which thresholds.
 * It never scores.
 */

export const IMAGE_CAPTURE_CHECK_ID = "image.capture";

const LABEL: Record<(typeof CAPTURE_CLASSES)[number], string> = {
  camera_photo: "a camera photo",
  flatbed_scan: "a flatbed or sheet-fed scan",
  scanning_app: "a scanning app's output",
  screenshot: "a screenshot",
  messenger: "a picture re-encoded by a messenger",
  pasted_image: "a picture placed into a PDF",
};

export function captureFinding(c: PageCapture, pdf: boolean): Finding {
  const what =
    c.class === "pasted_image" ? `${LABEL.pasted_image} (itself ${LABEL[c.underlying]})` : LABEL[c.class];
  return {
    code: "capture_class",
    message: `${pdf ? `Page ${c.page} is` : "The image is"} ${what}: ${c.signals.join("; ")}.`,
    page: c.page,
    severity: 0,
    evidence: {
      kind: "capture",
      class: c.class,
      underlying: c.underlying,
      confidence: c.confidence,
      widthPx: c.width,
      heightPx: c.height,
      ...(c.dpi ? { dpi: c.dpi } : {}),
      ...(c.jpeg?.quality
        ? {
            jpegQuality: c.jpeg.quality.quality,
            standardTables: c.jpeg.quality.standard,
            subsampling: c.jpeg.subsampling,
          }
        : {}),
      paperNoiseSigma: c.noise.sigma,
      flatPaperShare: Math.round(c.noise.flatRate * 100) / 100,
      binarised: c.binarised,
      ...(c.camera ? { camera: c.camera } : {}),
    },
  };
}

export const CODES = {
  capture_class: {
    level: "note",
    kind: "capture",
    means:
      "How the page image was captured (camera photo, scan, scanning app, screenshot, messenger, picture in a PDF); never scores.",
  },
} as const satisfies CodeTable;

export const imageCaptureCheck = defineCheck({
  id: IMAGE_CAPTURE_CHECK_ID,
  codes: CODES,
  pixelsOnly: true,
  appliesTo: (doc) => doc.pdf !== undefined || doc.contentType.startsWith("image/"),
  async inspect(doc) {
    const { pages, problems } = await pagePixels(doc);
    if (pages.length === 0) {
      if (problems.length) return unreadable(`The page images cannot be read: ${problems.join("; ")}.`);
      return skip("The document has no image pages, so there is no capture to classify.");
    }
    const captures = await captureOf(doc);
    const findings = captures.map((c) => captureFinding(c, doc.pdf !== undefined));
    const discovered = [...new Set(captures.map((c) => `capture_${c.class}`))];
    return { findings, discovered, captures };
  },
  summary: ({ captures }) => {
    const classes = [...new Set(captures.map((c) => LABEL[c.class]))];
    return `The ${captures.length > 1 ? `${captures.length} page images are` : "page image is"} ${classes.join(" and ")}.`;
  },
});
