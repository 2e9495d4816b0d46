import type { Finding } from "../../core/check-result.js";
import type { CodeTable } from "../../core/finding-levels.js";
import type { BoxTuple } from "../../core/page-geometry.js";
import type { ImageClass, PageCapture } from "../../document/pixels/capture.js";
import { grow, layoutOf } from "../../document/pixels/ink-layout.js";
import { readJpeg } from "../../document/pixels/jpeg-markers.js";
import { logNfa } from "../../document/pixels/nfa.js";
import type { PagePixels } from "../../document/pixels/page-pixels.js";
import { defineCheck, flaggedCodes } from "../check.js";
import { inspectCapturedPages, onPage, pixelFinding } from "../pixel-evidence.js";
import { countIn, dqAnalyse } from "./double-quantisation.js";
import { gridVotes } from "./grid-votes.js";

/**
 * pixels.compression: the local compression history of the text-bearing regions of a page image.
 * - jpeg_grid_foreign: a region whose pixels vote for a JPEG grid other than the page's (ZERO, with its
 *   a-contrario NFA < 1; grid-votes.ts) — a piece of another JPEG pasted in off the page's 8 × 8 grid;
 * - double_compression_absent: a word whose blocks lack the first compression's lattice that the rest of
 *   the page's text carries (double-quantisation.ts), judged against the page's off-lattice rate
 *   (NFA = words × binomial tail) — something painted between the capture's save and the last save.
 * Only for pictures whose pixels are a JPEG's own decoded grid (an image file, or a page that is one
 * DCTDecode image); thresholds per capture class in COMPRESSION_THRESHOLDS.
 */

export const PIXELS_COMPRESSION_CHECK_ID = "pixels.compression";

/** Text-region pixels the grid votes read per page at most (each costs an 8 × 8 DCT). */
export const GRID_PIXEL_BUDGET = 150_000;

/**
 * Text-region pixels the double-compression test reads per page at most. It costs one 8 × 8 DCT per block
 * (the grid votes one per pixel), so it reads every text line of a page up to this bound: a word on a line
 * the grid votes' sample skipped was never tested (a spliced amount on a photographed payslip).
 */
export const DQ_PIXEL_BUDGET = 3_000_000;

/**
 * The page's own off-lattice rate above which the double-compression test does not run (the lattice is too
 * weak to be a first save to compare with). It depends on the last save's step: where the lowest AC steps
 * are 1 (IJG quality ≥ 94, the forger's editor at 95-97), the rounding of the decoded pixels to grey levels
 * alone moves a coefficient by a whole step, so a genuine aligned double compression leaves 17-21 % of the
 * text's coefficients off the lattice (the simulated scans 70-90 → 95/97); with steps ≥ 2 it leaves 4-7 %.
 * The real receipts (all last saved with steps of 1, resampled after their first save) sit at 36-59 %.
 */
export const DQ_MAX_PAGE_OFF_RATE = { unitStep: 0.25, coarserStep: 0.15 } as const;

/** The gate of the page's off-lattice rate for a last-save luminance table (natural order). */
export function dqMaxPageOffRate(q2table: readonly number[]): number {
  return Math.max(q2table[1] ?? 0, q2table[8] ?? 0) <= 1
    ? DQ_MAX_PAGE_OFF_RATE.unitStep
    : DQ_MAX_PAGE_OFF_RATE.coarserStep;
}

export interface CompressionThresholds {
  /** log10 NFA of a foreign-grid region, at most (ZERO's own is 0). */
  gridLogNfa: number;
  /** log10 NFA of a word lacking the double-compression lattice, at most. */
  dqLogNfa: number;
  /** Informative coefficients a word needs for the lattice test. */
  dqMinCoefficients: number;
}

export const COMPRESSION_THRESHOLDS: Record<ImageClass, CompressionThresholds | null> = {
  flatbed_scan: { gridLogNfa: -2, dqLogNfa: -8, dqMinCoefficients: 30 },
  camera_photo: { gridLogNfa: -2, dqLogNfa: -8, dqMinCoefficients: 30 },
  scanning_app: { gridLogNfa: -2, dqLogNfa: -10, dqMinCoefficients: 40 },
  messenger: { gridLogNfa: -3, dqLogNfa: -10, dqMinCoefficients: 40 },
  // A lossless screenshot has no JPEG history to read.
  screenshot: null,
};

/** Boxes of the text lines (grown a little), at most `maxPixels` of them: every k-th line over the bound. */
export function textRegions(page: PagePixels, maxPixels: number): BoxTuple[] {
  const layout = layoutOf(page);
  const m = Math.max(4, Math.round(layout.textHeight * 0.4));
  const boxes = layout.lines.map((l) => grow(l.box, m, page.width, page.height));
  const area = boxes.reduce((s, b) => s + (b[2] - b[0]) * (b[3] - b[1]), 0);
  if (area <= maxPixels) return boxes;
  // Over the budget: every k-th line, spread over the page.
  const k = Math.ceil(area / maxPixels);
  return boxes.filter((_, i) => i % k === 0);
}

export function compressionFindings(
  page: PagePixels,
  capture: PageCapture,
  signal?: AbortSignal,
  budgets: { grid: number; dq: number } = { grid: GRID_PIXEL_BUDGET, dq: DQ_PIXEL_BUDGET },
): Finding[] {
  const t = COMPRESSION_THRESHOLDS[capture.underlying];
  if (!t || !page.jpeg) return [];
  const findings: Finding[] = [];
  const layout = layoutOf(page);
  const regions = textRegions(page, budgets.grid);
  const votes = gridVotes(page.grey, page.width, page.height, regions, signal);
  for (const r of votes.foreign) {
    if (r.logNfa > t.gridLogNfa) continue;
    findings.push(
      pixelFinding(page, capture, {
        code: "jpeg_grid_foreign",
        message: `A ${r.box[2] - r.box[0]} × ${r.box[3] - r.box[1]} px region${onPage(page)} carries its own JPEG grid (origin ${r.grid % 8}, ${Math.floor(r.grid / 8)}) where the page's is ${votes.main >= 0 ? `${votes.main % 8}, ${Math.floor(votes.main / 8)}` : "absent"}: it was compressed apart from the rest of the picture — pasted in from another JPEG.`,
        box: r.box,
        severity: r.logNfa < t.gridLogNfa - 4 ? 4 : 3,
        logNfa: r.logNfa,
        evidence: { grid: [r.grid % 8, Math.floor(r.grid / 8)], mainGrid: votes.main, votes: r.votes },
      }),
    );
    if (findings.length >= 4) break;
  }
  // Aligned double compression: the picture's own grid and last luminance table.
  let info: ReturnType<typeof readJpeg> | undefined;
  try {
    info = readJpeg(page.jpeg);
  } catch {
    info = undefined;
  }
  const table = info?.tables.get(info.frame?.components[0]?.table ?? 0);
  if (!table || !info?.frame) return findings;
  // The decoded pixels keep the file's grid unless they were auto-oriented (rotated): then use ZERO's.
  const gx = votes.main >= 0 ? votes.main % 8 : 0;
  const gy = votes.main >= 0 ? Math.floor(votes.main / 8) : 0;
  const bw = Math.floor((page.width - gx) / 8);
  const bh = Math.floor((page.height - gy) / 8);
  const text = new Uint8Array(bw * bh);
  for (const r of textRegions(page, budgets.dq))
    for (let y = Math.max(0, Math.floor((r[1] - gy) / 8)); y < Math.min(bh, Math.ceil((r[3] - gy) / 8)); y++)
      for (
        let x = Math.max(0, Math.floor((r[0] - gx) / 8));
        x < Math.min(bw, Math.ceil((r[2] - gx) / 8));
        x++
      )
        text[y * bw + x] = 1;
  const dq = dqAnalyse(page.grey, page.width, page.height, table, gx, gy, (x, y) => text[y * bw + x] === 1);
  // A weak lattice (much of the page's own text off it) is no first save to compare with: real scans
  // resampled after their first save have none, and their regions differ for innocent reasons. What
  // "weak" means depends on the last save's step (dqMaxPageOffRate).
  if (!dq || dq.model.blocks < 100 || dq.model.offRate > dqMaxPageOffRate(table)) return findings;
  const p = Math.min(0.5, Math.max(0.01, dq.model.offRate));
  const words = layout.words.filter((w) => w.glyphs.length >= 2);
  const tests = Math.max(1, words.length);
  const hits: { box: BoxTuple; n: number; off: number; l: number }[] = [];
  for (const w of words) {
    const box = grow(w.box, 2, page.width, page.height);
    const c = countIn(dq.blocks, box);
    if (c.n < t.dqMinCoefficients) continue;
    const l = logNfa(tests, c.n, c.off, p);
    if (l <= t.dqLogNfa) hits.push({ box: w.box, n: c.n, off: c.off, l });
  }
  hits.sort((a, b) => a.l - b.l);
  for (const h of hits.slice(0, 4)) {
    findings.push(
      pixelFinding(page, capture, {
        code: "double_compression_absent",
        message: `A word${onPage(page)} at (${h.box[0]}, ${h.box[1]}) lacks the traces of the earlier JPEG save that the rest of the page's text carries (${h.off} of ${h.n} coefficients off the first save's lattice, against ${(p * 100).toFixed(0)} % on the page): it was painted after the capture was first saved.`,
        box: h.box,
        severity: h.l < t.dqLogNfa - 4 ? 4 : 3,
        logNfa: h.l,
        evidence: {
          offLattice: h.off,
          coefficients: h.n,
          pageOffRate: Math.round(p * 1000) / 1000,
          firstQuantisation: dq.model.freqs.slice(0, 6).map((f) => [f.k, f.q1, f.q2]),
        },
      }),
    );
  }
  return findings;
}

export const CODES = {
  jpeg_grid_foreign: {
    level: "anomaly",
    kind: "pixels",
    means:
      "A region carries its own JPEG grid, unlike the page (ZERO, NFA-controlled): pasted in from another JPEG.",
  },
  double_compression_absent: {
    level: "anomaly",
    kind: "pixels",
    means:
      "A word lacks the first JPEG save's traces that the rest of the page's text carries: painted after the capture was saved.",
  },
} as const satisfies CodeTable;

export const pixelsCompressionCheck = defineCheck({
  id: PIXELS_COMPRESSION_CHECK_ID,
  codes: CODES,
  pixelsOnly: true,
  appliesTo: (doc) => doc.pdf !== undefined || doc.contentType === "image/jpeg",
  inspect: (doc, ctx) =>
    inspectCapturedPages(doc, ctx.signal, {
      pages: (page) => page.jpeg !== undefined,
      noPages: "No page image is a JPEG's own pixels, so there is no compression history to read.",
      noneJudged: "The JPEG pages are screenshots: no capture's compression history to compare.",
      inspect: (page, capture) =>
        COMPRESSION_THRESHOLDS[capture.underlying]
          ? compressionFindings(page, capture, ctx.signal)
          : undefined,
    }),
  summary: ({ outcome, findings }) =>
    outcome === "pass"
      ? "The compression history of the text is the same across the page image."
      : `Part of the page image was compressed apart from the rest: ${flaggedCodes(findings).join(", ")}.`,
});
