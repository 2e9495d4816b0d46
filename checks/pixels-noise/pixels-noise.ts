import type { Finding } from "../../core/check-result.js";
import type { ImageClass, PageCapture } from "../../document/pixels/capture.js";
import { layoutOf } from "../../document/pixels/ink-layout.js";
import { CELL, type cellMap, cellMapOf } from "../../document/pixels/noise.js";
import type { PagePixels } from "../../document/pixels/page-pixels.js";
import type { CodeTable } from "../../core/finding-levels.js";
import { defineCheck, flaggedCodes } from "../check.js";
import { inspectCapturedPages, onPage, pixelFinding } from "../pixel-evidence.js";
import { clusters } from "./clusters.js";

/**
 * pixels.noise: the paper's noise, per 8 × 8 cell (document/pixels/noise.ts), against the page's own:
 * - flat_region: a rectangle of perfectly flat paper in a page whose paper is noisy — a box painted over
 *   the page (a white box) after it was captured; judged a-contrario against the page's rate of flat
 *   cells, and only when it is a rectangle that stops sharply (glare and blown-out light are soft blobs);
 * - noise_level_differs: a region whose paper is markedly quieter or noisier than the page's (a region
 *   pasted from another capture, or repainted), against the page's own 10th/90th percentiles of σ.
 * Applies to captures whose paper carries noise (not to screenshots, renders or whitened backgrounds);
 * the thresholds per capture class are in NOISE_THRESHOLDS (calibrated on the development captures,
 * docs/decisions.md).
 */

export const PIXELS_NOISE_CHECK_ID = "pixels.noise";

export interface NoiseThresholds {
  /** The flat-region test runs only when at most this share of the page's paper is flat. */
  maxFlatRate: number;
  /** log10 NFA below which a flat rectangle is reported. */
  flatLogNfa: number;
  /** Marked/joined cells over the rectangle's area, at least. */
  minFill: number;
  /** Flat share of the ring around the rectangle, at most. */
  maxRing: number;
  /** Flat cells of a rectangle, at least. */
  minFlatCells: number;
  /** log10 NFA below which a noise-level region is reported; null disables the test. */
  levelLogNfa: number | null;
  /** Page σ below which the noise-level test does not run. */
  minSigma: number;
}

export const NOISE_THRESHOLDS: Record<ImageClass, NoiseThresholds | null> = {
  flatbed_scan: {
    maxFlatRate: 0.35,
    flatLogNfa: -3,
    minFill: 0.85,
    maxRing: 0.35,
    minFlatCells: 10,
    levelLogNfa: -6,
    minSigma: 1,
  },
  camera_photo: {
    maxFlatRate: 0.35,
    flatLogNfa: -3,
    minFill: 0.85,
    maxRing: 0.35,
    minFlatCells: 10,
    levelLogNfa: -11,
    minSigma: 1,
  },
  scanning_app: {
    maxFlatRate: 0.3,
    flatLogNfa: -4,
    minFill: 0.85,
    maxRing: 0.3,
    minFlatCells: 12,
    levelLogNfa: -8,
    minSigma: 1,
  },
  messenger: {
    maxFlatRate: 0.3,
    flatLogNfa: -4,
    minFill: 0.85,
    maxRing: 0.3,
    minFlatCells: 12,
    levelLogNfa: -8,
    minSigma: 1.2,
  },
  // A screenshot's paper is flat everywhere: there is no noise to compare.
  screenshot: null,
};

function inspectPage(page: PagePixels, capture: PageCapture): Finding[] {
  const t = NOISE_THRESHOLDS[capture.underlying];
  if (!t || page.source === "pdf-render") return [];
  const layout = layoutOf(page);
  const map = cellMapOf(page, layout);
  const findings: Finding[] = [];
  const n = map.cw * map.ch;
  const flatRate = capture.noise.flatRate;
  // Only the paper among the text counts: values are edited there, and a photo's table or a page's
  // empty margins say nothing about them.
  const area = textArea(layout, map.cw, map.ch);
  if (flatRate <= t.maxFlatRate && capture.noise.cells > 200) {
    const marked = new Uint8Array(n);
    const counted = new Uint8Array(n);
    for (let i = 0; i < n; i++) {
      if (!map.paper[i] || !area[i]) continue;
      counted[i] = 1;
      if (map.flat[i]) marked[i] = 1;
    }
    const p = Math.max(0.002, flatRate);
    for (const c of clusters(map, marked, counted, p, t.minFlatCells)) {
      if (c.logNfa >= t.flatLogNfa) break;
      if (c.fill < t.minFill || c.ringRate > t.maxRing) continue;
      // A box touching the picture's edge is a margin or the scanner lid, not a box on the page.
      const [x0, y0, x1, y1] = c.box;
      if (x0 <= 8 || y0 <= 8 || x1 >= page.width - 8 || y1 >= page.height - 8) continue;
      const level = meanIn(page.grey, page.width, c.box);
      findings.push(
        pixelFinding(page, capture, {
          code: "flat_region",
          message: `A perfectly flat ${x1 - x0} × ${y1 - y0} px rectangle${onPage(page)} (grey ${level.toFixed(0)}) sits in paper that is noisy everywhere else (${(flatRate * 100).toFixed(1)} % of the page's paper cells are flat, ${c.k} of ${c.n} here): a box painted over the page after it was captured, as a white box hiding a value leaves.`,
          box: c.box,
          severity: c.logNfa < t.flatLogNfa - 6 ? 4 : 3,
          logNfa: c.logNfa,
          evidence: {
            flatCells: c.k,
            paperCells: c.n,
            pageFlatRate: round3(flatRate),
            grey: Math.round(level),
          },
        }),
      );
      if (findings.length >= 5) break;
    }
  }
  if (t.levelLogNfa !== null && capture.noise.sigma >= t.minSigma) {
    const sig: number[] = [];
    for (let i = 0; i < n; i++)
      if (map.paper[i] && area[i] && map.mean[i]! < 250 && map.mean[i]! > 5) sig.push(map.sigma[i]!);
    if (sig.length > 200) {
      sig.sort((a, b) => a - b);
      const lo = sig[Math.floor(sig.length * 0.1)]!;
      const hi = sig[Math.floor(sig.length * 0.9)]!;
      const counted = new Uint8Array(n);
      const low = new Uint8Array(n);
      const high = new Uint8Array(n);
      for (let i = 0; i < n; i++) {
        if (!map.paper[i] || !area[i] || map.mean[i]! >= 250 || map.mean[i]! <= 5) continue;
        counted[i] = 1;
        if (map.sigma[i]! < lo) low[i] = 1;
        if (map.sigma[i]! > hi) high[i] = 1;
      }
      for (const [marks, quieter] of [
        [low, true],
        [high, false],
      ] as const) {
        for (const c of clusters(map, marks, counted, 0.1, 8)) {
          if (c.logNfa >= t.levelLogNfa) break;
          if (findings.some((f) => overlapsBox(f.evidence?.pixelBox as number[], c.box))) continue;
          const inside = medianSigma(map, c.cells, counted);
          findings.push(
            pixelFinding(page, capture, {
              code: "noise_level_differs",
              message: `The paper in a ${c.box[2] - c.box[0]} × ${c.box[3] - c.box[1]} px region${onPage(page)} is ${quieter ? "quieter" : "noisier"} than the rest of the page (noise σ ${inside.toFixed(1)} against ${capture.noise.sigma.toFixed(1)}; ${c.k} of its ${c.n} paper cells beyond the page's ${quieter ? "10th" : "90th"} percentile): a region pasted from another capture or repainted.`,
              box: c.box,
              severity: c.logNfa < t.levelLogNfa - 6 ? 4 : 3,
              logNfa: c.logNfa,
              evidence: {
                sigmaInside: round3(inside),
                sigmaPage: capture.noise.sigma,
                marked: c.k,
                paperCells: c.n,
              },
            }),
          );
          if (findings.length >= 6) break;
        }
      }
    }
  }
  return findings;
}

/** Cells within 1.5 text heights of a text line. */
function textArea(layout: ReturnType<typeof layoutOf>, cw: number, ch: number): Uint8Array {
  const area = new Uint8Array(cw * ch);
  const m = layout.textHeight * 1.5;
  for (const line of layout.lines) {
    const x0 = Math.max(0, Math.floor((line.box[0] - m) / CELL));
    const y0 = Math.max(0, Math.floor((line.box[1] - m) / CELL));
    const x1 = Math.min(cw, Math.ceil((line.box[2] + m) / CELL));
    const y1 = Math.min(ch, Math.ceil((line.box[3] + m) / CELL));
    for (let y = y0; y < y1; y++) for (let x = x0; x < x1; x++) area[y * cw + x] = 1;
  }
  return area;
}

function overlapsBox(a: number[] | undefined, b: number[]): boolean {
  if (!a) return false;
  return a[0]! < b[2]! && b[0]! < a[2]! && a[1]! < b[3]! && b[1]! < a[3]!;
}

function meanIn(grey: Uint8Array, width: number, b: readonly number[]): number {
  let s = 0;
  let n = 0;
  for (let y = b[1]!; y < b[3]!; y += 2)
    for (let x = b[0]!; x < b[2]!; x += 2) {
      s += grey[y * width + x]!;
      n++;
    }
  return n ? s / n : 0;
}

function medianSigma(map: ReturnType<typeof cellMap>, cells: readonly number[], counted: Uint8Array): number {
  const v: number[] = [];
  for (let y = cells[1]!; y < cells[3]!; y++)
    for (let x = cells[0]!; x < cells[2]!; x++) {
      const i = y * map.cw + x;
      if (counted[i]) v.push(map.sigma[i]!);
    }
  v.sort((a, b) => a - b);
  return v[Math.floor(v.length / 2)] ?? 0;
}

const round3 = (v: number) => Math.round(v * 1000) / 1000;

export const CODES = {
  flat_region: {
    level: "anomaly",
    kind: "pixels",
    means:
      "A perfectly flat rectangle in paper that is noisy everywhere else: a box painted over the captured page.",
  },
  noise_level_differs: {
    level: "anomaly",
    kind: "pixels",
    means:
      "A region whose paper is markedly quieter or noisier than the page's: pasted from another capture or repainted.",
  },
} as const satisfies CodeTable;

export const pixelsNoiseCheck = defineCheck({
  id: PIXELS_NOISE_CHECK_ID,
  codes: CODES,
  pixelsOnly: true,
  appliesTo: (doc) => doc.pdf !== undefined || doc.contentType.startsWith("image/"),
  inspect: (doc, ctx) =>
    inspectCapturedPages(doc, ctx.signal, {
      noPages: "The document has no image pages, so there is no paper noise to compare.",
      noneJudged: "No page image carries paper noise to compare (screenshots and rendered pages have none).",
      inspect: (page, capture) =>
        NOISE_THRESHOLDS[capture.underlying] && page.source !== "pdf-render"
          ? inspectPage(page, capture)
          : undefined,
    }),
  summary: ({ outcome, findings, judged }) =>
    outcome === "pass"
      ? `The paper's noise is consistent across ${judged > 1 ? `the ${judged} page images` : "the page image"}.`
      : `The paper's noise is inconsistent: ${flaggedCodes(findings).join(", ")}.`,
});
