import type { BoxTuple } from "../../core/page-geometry.js";
import type { TextRun } from "../../document/page-layout.js";
import type { InkLayout } from "../../document/pixels/ink-layout.js";
import { logGaussTail } from "../../document/pixels/nfa.js";
import type { PagePixels } from "../../document/pixels/page-pixels.js";
import { type GlyphFeatures, nearestTwins, renderedTwins } from "../pixels-glyphs/glyph-features.js";

/**
 * The amounts of a page, looked at one by one (issue 21, "targeted pixel evidence"): amounts are what a
 * forger edits, and an edit of one digit is too small for the page-wide tests, which must stay quiet over
 * thousands of characters. Here the tests are restricted to the characters of the amounts the OCR read
 * (a few dozen to a few hundred), so the same a-contrario false-alarm bound (NFA) allows a smaller
 * departure to count:
 * - a digit unlike the other characters of its own amount (a digit replaced or copied in): its features
 *   against the median of its amount's other characters, in the page's own spread of such residuals;
 * - an amount unlike the page's other amounts (a value pasted or typed over a box): the amount's median
 *   features and the noise and level of the paper around it, against the other amounts of the page.
 * A bold total is consistent within itself, and the whole-amount test leaves out stroke and darkness.
 */

export type AmountFeature = "sharpness" | "grain" | "chromaR" | "chromaB" | "paperSigma" | "paperLevel";

export interface AmountThresholds {
  /** log10 NFA below which a whole amount unlike the page's others is reported. */
  logNfa: number;
  /** log10 NFA below which a character unlike its amount's others is reported. */
  glyphLogNfa: number;
  /** Features that must stand out together, each by at least zEach (robust z). */
  features: number;
  zEach: number;
  /** Amounts on the page needed for the whole-amount test. */
  minAmounts: number;
}

/**
 * Calibrated on the development captures (bench/amounts-calibrate.ts, docs/decisions.md): on their genuine
 * pages no whole amount reached log10 NFA −1 and no character −3.4 (a noisy amount of a scanning-app
 * payslip); the white boxes and splices the whole-amount test finds sit at −3.5 to −8.
 */
export const AMOUNT_THRESHOLDS: AmountThresholds = {
  logNfa: -3,
  glyphLogNfa: -5,
  features: 2,
  zEach: 3,
  minAmounts: 6,
};

const GLYPH_FEATURES: AmountFeature[] = ["sharpness", "grain", "chromaR", "chromaB", "paperSigma"];
const AMOUNT_FEATURES: AmountFeature[] = [
  "sharpness",
  "grain",
  "chromaR",
  "chromaB",
  "paperSigma",
  "paperLevel",
];
const FLOOR: Record<AmountFeature, number> = {
  sharpness: 0.03,
  grain: 1,
  chromaR: 2,
  chromaB: 2,
  paperSigma: 0.4,
  paperLevel: 2,
};

/** An amount as printed: a figure with two decimals and at least three digits. */
export function isAmountText(text: string): boolean {
  const t = text.trim();
  if (!/\d[.,]\d{2}(?!\d)/.test(t)) return false;
  return (
    t.replace(/\D/g, "").length >= 3 && /^[^A-Za-z]*[\d.,' ]+[^A-Za-z]*$/.test(t.replace(/[A-Z]{3}/g, ""))
  );
}

export interface AmountOnPage {
  text: string;
  /** The run's box in page units. */
  bbox: BoxTuple;
  /** Glyph ids inside it, left to right. */
  glyphs: number[];
  /** Their union, in pixels. */
  box: BoxTuple;
  /**
   * The value as printed, in pixels: the amount with a currency sign or code the OCR read as a word of its
   * own beside it ("40.371,20 €", "EUR 1,200.00"). What a finding about the amount boxes: an edit of the value
   * takes its sign along, and a finding of another check on the sign is about the same value.
   */
  valueBox: BoxTuple;
}

/** A word that is only a currency sign or code. */
const CURRENCY_WORD = /^(?:[€$£¥₹₩₽₺]|EUR|USD|GBP|CHF|CAD|AUD|JPY|SEK|NOK|DKK|PLN|CZK|Fr\.?|kr\.?|zł)$/;

/** The amounts among a page's OCR runs, with the ink glyphs each covers. */
export function amountsOnPage(
  page: PagePixels,
  layout: InkLayout,
  runs: readonly TextRun[],
  glyphIds: readonly number[],
): AmountOnPage[] {
  const centres = glyphIds.map((id) => {
    const b = page.toPageBox(layout.glyphs[id]!.box);
    return { id, x: (b[0] + b[2]) / 2, y: (b[1] + b[3]) / 2 };
  });
  const out: AmountOnPage[] = [];
  const unionOf = (boxes: readonly BoxTuple[]): BoxTuple => [
    Math.min(...boxes.map((b) => b[0])),
    Math.min(...boxes.map((b) => b[1])),
    Math.max(...boxes.map((b) => b[2])),
    Math.max(...boxes.map((b) => b[3])),
  ];
  const inRun = (r: TextRun) => {
    const x0 = Math.min(r.bbox[0], r.bbox[2]);
    const x1 = Math.max(r.bbox[0], r.bbox[2]);
    const y0 = Math.min(r.bbox[1], r.bbox[3]);
    const y1 = Math.max(r.bbox[1], r.bbox[3]);
    return centres.filter((c) => c.x >= x0 && c.x <= x1 && c.y >= y0 && c.y <= y1);
  };
  // A currency word on the amount's line, at most one text height from it, left or right.
  const currencyBeside = (r: TextRun): BoxTuple[] => {
    const h = Math.abs(r.bbox[3] - r.bbox[1]);
    const ax0 = Math.min(r.bbox[0], r.bbox[2]);
    const ax1 = Math.max(r.bbox[0], r.bbox[2]);
    const ay0 = Math.min(r.bbox[1], r.bbox[3]);
    const ay1 = Math.max(r.bbox[1], r.bbox[3]);
    for (const c of runs) {
      if (c === r || !CURRENCY_WORD.test(c.text.trim())) continue;
      const cx0 = Math.min(c.bbox[0], c.bbox[2]);
      const cx1 = Math.max(c.bbox[0], c.bbox[2]);
      const cy0 = Math.min(c.bbox[1], c.bbox[3]);
      const cy1 = Math.max(c.bbox[1], c.bbox[3]);
      const sameLine = Math.min(ay1, cy1) - Math.max(ay0, cy0) >= 0.5 * Math.min(h, cy1 - cy0);
      const gap = Math.max(cx0 - ax1, ax0 - cx1);
      if (!sameLine || gap > h) continue;
      const ink = inRun(c).map((g) => layout.glyphs[g.id]!.box);
      if (ink.length > 0) return ink;
    }
    return [];
  };
  for (const r of runs) {
    if (!isAmountText(r.text)) continue;
    const x0 = Math.min(r.bbox[0], r.bbox[2]);
    const x1 = Math.max(r.bbox[0], r.bbox[2]);
    const y0 = Math.min(r.bbox[1], r.bbox[3]);
    const y1 = Math.max(r.bbox[1], r.bbox[3]);
    const inside = centres.filter((c) => c.x >= x0 && c.x <= x1 && c.y >= y0 && c.y <= y1);
    if (inside.length < 3) continue;
    const ids = inside.map((c) => c.id).sort((a, b) => layout.glyphs[a]!.box[0] - layout.glyphs[b]!.box[0]);
    const boxes = ids.map((id) => layout.glyphs[id]!.box);
    const box = unionOf(boxes);
    out.push({
      text: r.text.trim(),
      bbox: [x0, y0, x1, y1],
      glyphs: ids,
      box,
      valueBox: unionOf([box, ...currencyBeside(r)]),
    });
  }
  return out;
}

/** Noise and level of the paper in a box grown by `m` pixels, away from ink (σ and mean of the grey). */
export function paperAround(
  page: PagePixels,
  layout: InkLayout,
  box: BoxTuple,
  m: number,
): { sigma: number; level: number } | undefined {
  const { width, height, grey } = page;
  const x0 = Math.max(1, box[0] - m);
  const y0 = Math.max(1, box[1] - m);
  const x1 = Math.min(width - 1, box[2] + m);
  const y1 = Math.min(height - 1, box[3] + m);
  let n = 0;
  let s = 0;
  let s2 = 0;
  for (let y = y0; y < y1; y++)
    for (let x = x0; x < x1; x++) {
      const p = y * width + x;
      if (
        layout.ink[p] ||
        layout.ink[p - 1] ||
        layout.ink[p + 1] ||
        layout.ink[p - width] ||
        layout.ink[p + width]
      )
        continue;
      // High-pass: the pixel against its horizontal neighbours (slow light gradients cancel).
      const v = grey[p]! - (grey[p - 1]! + grey[p + 1]!) / 2;
      n++;
      s += grey[p]!;
      s2 += v * v;
    }
  if (n < 12) return undefined;
  return { sigma: Math.sqrt(s2 / n), level: s / n };
}

const median = (v: readonly number[]) => {
  const s = [...v].sort((a, b) => a - b);
  return s.length ? s[Math.floor(s.length / 2)]! : 0;
};

export interface AmountOutlier {
  amount: AmountOnPage;
  /** The glyph that differs (the whole amount when undefined). */
  glyph?: number;
  logNfa: number;
  z: Partial<Record<AmountFeature, number>>;
}

type Vec = Partial<Record<AmountFeature, number>>;

function glyphVector(
  page: PagePixels,
  layout: InkLayout,
  f: GlyphFeatures | undefined,
  id: number,
): Vec | undefined {
  if (!f) return undefined;
  const paper = paperAround(page, layout, layout.glyphs[id]!.box, 2);
  return {
    sharpness: f.sharpness,
    grain: f.grain,
    chromaR: f.chroma[0],
    chromaB: f.chroma[1],
    ...(paper ? { paperSigma: paper.sigma } : {}),
  };
}

/** Scored outliers: the strongest `features`-th |z| counted `features` times, and the number of tests. */
function judge(
  z: Vec,
  keys: readonly AmountFeature[],
  tests: number,
  t: AmountThresholds,
  line: number,
): number | undefined {
  const strong = keys
    .map((k) => Math.abs(z[k] ?? 0))
    .filter((v) => v >= t.zEach)
    .sort((a, b) => b - a);
  if (strong.length < t.features) return undefined;
  const logNfa = Math.log10(Math.max(1, tests)) + logGaussTail(strong[t.features - 1]!) * t.features;
  return logNfa < line ? logNfa : undefined;
}

/** The amounts of a page whose characters, or whose whole look, differ from the page's other amounts. */
export function amountOutliers(
  page: PagePixels,
  layout: InkLayout,
  amounts: readonly AmountOnPage[],
  feats: ReadonlyMap<number, GlyphFeatures>,
  t: AmountThresholds = AMOUNT_THRESHOLDS,
): AmountOutlier[] {
  const out: AmountOutlier[] = [];
  // 1. A character against the other characters of its amount.
  const vectors = new Map<number, Vec>();
  for (const a of amounts)
    for (const id of a.glyphs) {
      const v = glyphVector(page, layout, feats.get(id), id);
      if (v) vectors.set(id, v);
    }
  const residuals: { amount: AmountOnPage; id: number; r: Vec }[] = [];
  for (const a of amounts) {
    const ids = a.glyphs.filter((id) => vectors.has(id));
    if (ids.length < 3) continue;
    for (const id of ids) {
      const others = ids.filter((o) => o !== id).map((o) => vectors.get(o)!);
      const r: Vec = {};
      for (const k of GLYPH_FEATURES) {
        const own = vectors.get(id)![k];
        const ref = others.map((o) => o[k]).filter((x): x is number => x !== undefined);
        if (own !== undefined && ref.length >= 2) r[k] = own - median(ref);
      }
      residuals.push({ amount: a, id, r });
    }
  }
  if (residuals.length >= 12) {
    const scale = new Map<AmountFeature, number>();
    for (const k of GLYPH_FEATURES) {
      const abs = residuals.map((x) => x.r[k]).filter((x): x is number => x !== undefined);
      scale.set(k, Math.max(FLOOR[k], 1.4826 * median(abs.map(Math.abs))));
    }
    const tests = residuals.length * GLYPH_FEATURES.length;
    for (const x of residuals) {
      const z: Vec = {};
      for (const k of GLYPH_FEATURES) if (x.r[k] !== undefined) z[k] = round1(x.r[k]! / scale.get(k)!);
      const logNfa = judge(z, GLYPH_FEATURES, tests, t, t.glyphLogNfa);
      if (logNfa !== undefined) out.push({ amount: x.amount, glyph: x.id, logNfa, z });
    }
  }
  // 2. An amount against the page's other amounts.
  if (amounts.length >= t.minAmounts) {
    const whole: { amount: AmountOnPage; v: Vec }[] = [];
    for (const a of amounts) {
      const vs = a.glyphs.map((id) => vectors.get(id)).filter((v): v is Vec => v !== undefined);
      if (vs.length < 2) continue;
      const paper = paperAround(page, layout, a.box, Math.max(3, Math.round(layout.textHeight * 0.4)));
      const v: Vec = {};
      for (const k of ["sharpness", "grain", "chromaR", "chromaB"] as const)
        v[k] = median(vs.map((x) => x[k]!).filter((x) => x !== undefined));
      if (paper) {
        v.paperSigma = paper.sigma;
        v.paperLevel = paper.level;
      }
      whole.push({ amount: a, v });
    }
    if (whole.length >= t.minAmounts) {
      const tests = whole.length * AMOUNT_FEATURES.length;
      const centre = new Map<AmountFeature, number>();
      const scale = new Map<AmountFeature, number>();
      for (const k of AMOUNT_FEATURES) {
        const vals = whole.map((w) => w.v[k]).filter((x): x is number => x !== undefined);
        const m = median(vals);
        centre.set(k, m);
        scale.set(k, Math.max(FLOOR[k], 1.4826 * median(vals.map((x) => Math.abs(x - m)))));
      }
      for (const w of whole) {
        const z: Vec = {};
        for (const k of AMOUNT_FEATURES)
          if (w.v[k] !== undefined) z[k] = round1((w.v[k]! - centre.get(k)!) / scale.get(k)!);
        const logNfa = judge(z, AMOUNT_FEATURES, tests, t, t.logNfa);
        if (logNfa !== undefined) out.push({ amount: w.amount, logNfa, z });
      }
    }
  }
  // One outlier per amount: the strongest.
  const best = new Map<AmountOnPage, AmountOutlier>();
  for (const o of out) {
    const b = best.get(o.amount);
    if (!b || o.logNfa < b.logNfa) best.set(o.amount, o);
  }
  return [...best.values()].sort((a, b) => a.logNfa - b.logNfa);
}

const round1 = (v: number) => Math.round(v * 10) / 10;

export interface AmountTwin {
  amount: AmountOnPage;
  glyph: number;
  /** The amount and glyph it copies. */
  source: AmountOnPage;
  sourceGlyph: number;
  /** Mean grey difference to its twin, to its next nearest, and the page's 5th percentile of nearest twins. */
  d1: number;
  d2: number;
  q05: number;
}

export interface TwinThresholds {
  /** A twin at most this share of the amounts' 5th percentile of nearest-twin differences… */
  ratio: number;
  /** …and of its own next nearest. */
  next: number;
  /** Amount characters compared at least (the percentile needs them). */
  minGlyphs: number;
  /**
   * Characters whose ink areas differ by more than this share are not compared. A pasted character's ink is
   * cut from its new surroundings: the paper the editor filled in around it changes the local paper level the
   * ink is found against, so its ink area can differ from its source's by a third (a copied "0" on a scanning
   * app's page: 44 px of ink against its source's 59, at a mean grey difference of 3.3 where the page's twins
   * differ by 9). The grey patches are what is compared; the area only keeps the search short.
   */
  areaTolerance: number;
}

/**
 * Calibrated on the development captures (bench/amounts-calibrate.ts): the nearest genuine twins sat at
 * ≥ 0.77 of the 5th percentile and ≥ 0.62 of their next nearest; digits copied from another amount at
 * 0.36-0.55 and 0.18-0.29, digits typed in one font at 0.27 and 0.05.
 */
export const TWIN_THRESHOLDS: TwinThresholds = { ratio: 0.6, next: 0.5, minGlyphs: 20, areaTolerance: 0.35 };

/**
 * Characters of the amounts that match another amount's character pixel for pixel: two printed digits
 * captured apart never do (print grain, sampling phase and sensor noise differ), a digit copied from another
 * amount does. Only the amounts' characters are compared, against each other.
 */
export function amountTwins(
  page: PagePixels,
  layout: InkLayout,
  amounts: readonly AmountOnPage[],
  t: TwinThresholds = TWIN_THRESHOLDS,
): AmountTwin[] {
  const owner = new Map<number, AmountOnPage>();
  for (const a of amounts) for (const id of a.glyphs) owner.set(id, a);
  const ids = [...owner.keys()].filter((id) => layout.glyphs[id]!.area >= 30);
  if (ids.length < t.minGlyphs) return [];
  const nearest = nearestTwins(page, layout, ids, { areaTolerance: t.areaTolerance });
  // A page exported straight to JPEG repeats its digits exactly (glyph-features.ts, renderedTwins).
  if (nearest.length < t.minGlyphs || renderedTwins(page, layout, nearest)) return [];
  const d1s = nearest.map((n) => n.d1).sort((a, b) => a - b);
  const q05 = d1s[Math.floor(d1s.length * 0.05)] ?? 0;
  const out: AmountTwin[] = [];
  const seen = new Set<number>();
  for (const n of [...nearest].sort((x, y) => x.d1 - y.d1)) {
    if (n.d1 > t.ratio * q05 || n.d1 > t.next * n.d2) continue;
    if (seen.has(n.id)) continue;
    seen.add(n.id);
    seen.add(n.other);
    const a = owner.get(n.id)!;
    const b = owner.get(n.other)!;
    out.push({ amount: a, glyph: n.id, source: b, sourceGlyph: n.other, d1: n.d1, d2: n.d2, q05 });
    out.push({ amount: b, glyph: n.other, source: a, sourceGlyph: n.id, d1: n.d1, d2: n.d2, q05 });
  }
  return out;
}
