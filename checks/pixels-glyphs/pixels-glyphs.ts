import type { Finding } from "../../core/check-result.js";
import type { CodeTable } from "../../core/finding-levels.js";
import type { BoxTuple } from "../../core/page-geometry.js";
import type { ImageClass, PageCapture } from "../../document/pixels/capture.js";
import { layoutOf } from "../../document/pixels/ink-layout.js";
import { logGaussTail } from "../../document/pixels/nfa.js";
import type { PagePixels } from "../../document/pixels/page-pixels.js";
import { defineCheck, flaggedCodes } from "../check.js";
import { inspectCapturedPages, onPage, pixelFinding } from "../pixel-evidence.js";
import { type GlyphFeatures, glyphFeatures, nearestTwins, renderedTwins } from "./glyph-features.js";

/**
 * pixels.glyphs: the characters themselves, found as ink components on the page image
 * (document/pixels/ink-layout.ts):
 * - glyph_identical: two characters whose pixels match (within the recompression's error) — a printed page
 *   captured twice never gives two identical "7"s (print grain, sampling phase and sensor noise differ),
 *   a copy-move does;
 * - glyph_style_differs: a character whose sharpness, ink darkness, stroke, grain or ink colour differs from
 *   the other characters of its line, measured in the page's own spread (robust z-scores) and reported
 *   a-contrario (NFA over every character and feature tested).
 * The boxes are the character's word (the value) on the page image. Thresholds per capture class in
 * GLYPH_THRESHOLDS (docs/decisions.md).
 */

export const PIXELS_GLYPHS_CHECK_ID = "pixels.glyphs";

export interface GlyphThresholds {
  /** A glyph's nearest twin at most this share of the page's 5th percentile of nearest-twin differences… */
  identicalRatio: number;
  /** …and of its own next nearest. */
  identicalNext: number;
  /** Glyph ink pixels at least, for the identity test (small marks match by chance). */
  identicalMinArea: number;
  /** log10 NFA below which a style outlier is reported. */
  styleLogNfa: number;
  /** Features that must stand out together (|z| ≥ zEach each). */
  styleFeatures: number;
  zEach: number;
}

export const GLYPH_THRESHOLDS: Record<ImageClass, GlyphThresholds | null> = {
  flatbed_scan: {
    identicalRatio: 0.5,
    identicalNext: 0.5,
    identicalMinArea: 40,
    styleLogNfa: -3,
    styleFeatures: 2,
    zEach: 3.5,
  },
  camera_photo: {
    identicalRatio: 0.5,
    identicalNext: 0.5,
    identicalMinArea: 40,
    styleLogNfa: -3,
    styleFeatures: 2,
    zEach: 3.5,
  },
  scanning_app: {
    identicalRatio: 0.45,
    identicalNext: 0.5,
    identicalMinArea: 60,
    styleLogNfa: -3,
    styleFeatures: 2,
    zEach: 4,
  },
  messenger: {
    identicalRatio: 0.5,
    identicalNext: 0.5,
    identicalMinArea: 50,
    styleLogNfa: -3,
    styleFeatures: 2,
    zEach: 4,
  },
  // A screenshot renders every "7" of a font identically: nothing to compare.
  screenshot: null,
};

const FEATURES = ["sharpness", "grain", "chromaR", "chromaB"] as const;
type Feature = (typeof FEATURES)[number];

/** The least spread a feature is given (a page of pure-grey ink has no chroma spread at all). */
const SCALE_FLOOR: Record<Feature, number> = { sharpness: 0.03, grain: 1, chromaR: 2, chromaB: 2 };

function value(f: GlyphFeatures, k: Feature): number {
  switch (k) {
    case "chromaR":
      return f.chroma[0];
    case "chromaB":
      return f.chroma[1];
    default:
      return f[k];
  }
}

function median(v: number[]): number {
  const s = [...v].sort((a, b) => a - b);
  return s.length ? s[Math.floor(s.length / 2)]! : 0;
}

function inspectPage(page: PagePixels, capture: PageCapture, signal?: AbortSignal): Finding[] {
  const t = GLYPH_THRESHOLDS[capture.underlying];
  if (!t) return [];
  const layout = layoutOf(page);
  const th = layout.textHeight;
  const glyphs = layout.glyphs.filter(
    (g) => g.line >= 0 && g.box[3] - g.box[1] >= th * 0.6 && g.box[3] - g.box[1] <= th * 2.2,
  );
  const feats = new Map<number, GlyphFeatures>();
  for (const g of glyphs) {
    const f = glyphFeatures(page, layout, g.id);
    if (f) feats.set(g.id, f);
  }
  const findings: Finding[] = [];
  const wordBox = (gid: number): BoxTuple => {
    const g = layout.glyphs[gid]!;
    return g.word >= 0 ? layout.words[g.word]!.box : g.box;
  };

  // 1. Identical characters: a glyph whose nearest same-sized glyph is far nearer than any glyph's
  // nearest usually is (the page's own median) and than its next nearest.
  const candidates = glyphs.filter((g) => g.area >= t.identicalMinArea && feats.has(g.id));
  const nearest = nearestTwins(
    page,
    layout,
    candidates.map((g) => g.id),
    { maxCompared: 80, signal },
  );
  // The page's own spread of nearest-twin differences: a copy is far below its 5th percentile.
  const d1s = nearest.map((n) => n.d1).sort((a, b) => a - b);
  const q05 = d1s[Math.floor(d1s.length * 0.05)] ?? 0;
  const m1 = median(d1s);
  const reported = new Set<number>();
  // A page exported straight to JPEG repeats its glyphs exactly: no copy can be told from them there.
  const rendered = renderedTwins(page, layout, nearest);
  for (const n of nearest.sort((x, y) => x.d1 - y.d1)) {
    if (nearest.length < 20 || rendered) break;
    if (n.d1 > t.identicalRatio * q05 || n.d1 > t.identicalNext * n.d2) continue;
    if (reported.has(n.id) || reported.has(n.other)) continue;
    reported.add(n.id);
    reported.add(n.other);
    const a = layout.glyphs[n.id]!;
    const b = layout.glyphs[n.other]!;
    for (const [g, other] of [
      [a, b],
      [b, a],
    ] as const) {
      findings.push(
        pixelFinding(page, capture, {
          code: "glyph_identical",
          message: `A character${onPage(page)} at (${g.box[0]}, ${g.box[1]}) is a near pixel-for-pixel copy of the one at (${other.box[0]}, ${other.box[1]}) (mean difference ${n.d1.toFixed(1)} grey levels, where this page's characters differ from their most similar twin by ${m1.toFixed(1)} in the median and ${q05.toFixed(1)} at the 5th percentile): two printed characters captured apart never match like that; a character copied and pasted does.`,
          box: wordBox(g.id),
          severity: 4,
          method: "glyph_twin",
          evidence: {
            glyphBox: g.box,
            copyOf: other.box,
            meanDifference: Math.round(n.d1 * 100) / 100,
            pageMedian: Math.round(m1 * 100) / 100,
            page5thPercentile: Math.round(q05 * 100) / 100,
          },
        }),
      );
    }
    if (findings.length >= 6) break;
  }

  // 2. A character unlike the rest of its line.
  const residuals = new Map<Feature, number[]>();
  const lineMedian = new Map<number, Map<Feature, number>>();
  for (const line of layout.lines) {
    const ids = line.glyphs.filter((id) => feats.has(id));
    if (ids.length < 4) continue;
    const m = new Map<Feature, number>();
    for (const k of FEATURES) {
      const med = median(ids.map((id) => value(feats.get(id)!, k)));
      m.set(k, med);
      const r = residuals.get(k) ?? [];
      for (const id of ids) r.push(value(feats.get(id)!, k) - med);
      residuals.set(k, r);
    }
    lineMedian.set(line.id, m);
  }
  const scale = new Map<Feature, number>();
  for (const k of FEATURES) {
    const r = residuals.get(k) ?? [];
    scale.set(k, Math.max(SCALE_FLOOR[k], 1.4826 * median(r.map(Math.abs))));
  }
  const tested = [...feats.keys()].filter((id) => lineMedian.has(layout.glyphs[id]!.line));
  const tests = Math.max(1, tested.length * FEATURES.length);
  const flagged: { id: number; logNfa: number; z: Record<string, number> }[] = [];
  for (const id of tested) {
    const f = feats.get(id)!;
    const m = lineMedian.get(layout.glyphs[id]!.line)!;
    const z: Record<string, number> = {};
    const strong: number[] = [];
    for (const k of FEATURES) {
      const v = (value(f, k) - m.get(k)!) / scale.get(k)!;
      z[k] = Math.round(v * 10) / 10;
      if (Math.abs(v) >= t.zEach) strong.push(Math.abs(v));
    }
    if (strong.length < t.styleFeatures) continue;
    strong.sort((a, b) => b - a);
    // The features are not independent: count the second strongest only (a conservative joint tail).
    const logNfa = Math.log10(tests) + logGaussTail(strong[t.styleFeatures - 1]!) * t.styleFeatures;
    if (logNfa < t.styleLogNfa) flagged.push({ id, logNfa, z });
  }
  flagged.sort((a, b) => a.logNfa - b.logNfa);
  const byWord = new Set<number>();
  for (const fl of flagged.slice(0, 8)) {
    const g = layout.glyphs[fl.id]!;
    if (byWord.has(g.word)) continue;
    byWord.add(g.word);
    const differs = Object.entries(fl.z)
      .filter(([, v]) => Math.abs(v) >= t.zEach)
      .map(([k, v]) => `${k} ${v > 0 ? "+" : ""}${v}σ`);
    findings.push(
      pixelFinding(page, capture, {
        code: "glyph_style_differs",
        message: `A character${onPage(page)} at (${g.box[0]}, ${g.box[1]}) does not look printed and captured like the rest of its line (${differs.join(", ")} against the line, in the page's own spread): a character typed or pasted onto the picture.`,
        box: wordBox(fl.id),
        severity: fl.logNfa < t.styleLogNfa - 4 ? 4 : 3,
        logNfa: fl.logNfa,
        evidence: { glyphBox: g.box, z: fl.z },
      }),
    );
  }
  return findings;
}

export const CODES = {
  glyph_identical: {
    level: "anomaly",
    kind: "pixels",
    means:
      "Two characters match pixel for pixel, which two printed characters captured apart never do: a copy-move.",
  },
  glyph_style_differs: {
    level: "anomaly",
    kind: "pixels",
    means:
      "A character's sharpness, ink grain or ink colour differs from the rest of its line: typed or pasted onto the picture.",
  },
} as const satisfies CodeTable;

export const pixelsGlyphsCheck = defineCheck({
  id: PIXELS_GLYPHS_CHECK_ID,
  codes: CODES,
  pixelsOnly: true,
  appliesTo: (doc) => doc.pdf !== undefined || doc.contentType.startsWith("image/"),
  inspect: (doc, ctx) =>
    inspectCapturedPages(doc, ctx.signal, {
      noPages: "The document has no image pages, so there are no printed characters to compare.",
      noneJudged: "The page images are screenshots: their characters are rendered, not captured.",
      inspect: (page, capture) =>
        GLYPH_THRESHOLDS[capture.underlying] ? inspectPage(page, capture, ctx.signal) : undefined,
    }),
  summary: ({ outcome, findings }) =>
    outcome === "pass"
      ? "The characters look printed and captured alike."
      : `Some characters do not look printed and captured like the others: ${flaggedCodes(findings).join(", ")}.`,
});
