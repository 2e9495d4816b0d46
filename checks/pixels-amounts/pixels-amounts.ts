import type { Finding } from "../../core/check-result.js";
import type { CodeTable } from "../../core/finding-levels.js";
import type { DocumentModel } from "../../document/model.js";
import type { TextRun } from "../../document/page-layout.js";
import type { PageCapture } from "../../document/pixels/capture.js";
import { layoutOf } from "../../document/pixels/ink-layout.js";
import type { PagePixels } from "../../document/pixels/page-pixels.js";
import { defineCheck, flaggedCodes } from "../check.js";
import { inspectCapturedPages, onPage, pixelFinding } from "../pixel-evidence.js";
import { type GlyphFeatures, glyphFeatures } from "../pixels-glyphs/glyph-features.js";
import { AMOUNT_THRESHOLDS, amountOutliers, amountsOnPage, amountTwins } from "./amounts.js";

/**
 * pixels.amounts: the amounts the OCR read on a page image, each against the page's other amounts and
 * against its own characters (amounts.ts). Amounts are what forgers edit, and the page-wide pixel checks
 * must stay quiet over thousands of characters; testing only the amounts lets a smaller departure count
 * under the same false-alarm bound. A method of its own (the amount's look and the paper around it, against
 * the other amounts), so its finding and another pixel check's, or the arithmetic's, about the same amount
 * are independent evidence (agent/score.ts). Needs the OCR's words: pages with a text layer are skipped.
 */

export const PIXELS_AMOUNTS_CHECK_ID = "pixels.amounts";

/** The words the OCR read on a page (none on a page with a text layer of its own). */
export function ocrRunsOf(doc: DocumentModel, page: number): TextRun[] {
  const p = (doc.pdf?.pages ?? doc.imagePages ?? []).find((x) => x.number === page);
  return p?.ocr && p.layout ? p.layout.runs : [];
}

export const CODES = {
  amount_glyph_copied: {
    level: "anomaly",
    kind: "pixels",
    means:
      "A character of an amount the OCR read matches a character of another amount pixel for pixel, which two printed characters captured apart never do: a digit copied in.",
  },
  amount_look_differs: {
    level: "anomaly",
    kind: "pixels",
    means:
      "An amount the OCR read that does not look printed and captured like the page's other amounts (sharpness, ink grain or colour, the paper's noise or level around it), or a character of it unlike the amount's others: edited on the picture.",
  },
} as const satisfies CodeTable;

/** One page's amounts, each against the page's other amounts and against its own characters. */
function inspectPage(doc: DocumentModel, page: PagePixels, capture: PageCapture): Finding[] | undefined {
  if (capture.underlying === "screenshot") return undefined;
  const runs = ocrRunsOf(doc, page.page);
  if (runs.length === 0) return undefined;
  const layout = layoutOf(page);
  const th = layout.textHeight;
  const glyphs = layout.glyphs.filter(
    (g) => g.line >= 0 && g.box[3] - g.box[1] >= th * 0.6 && g.box[3] - g.box[1] <= th * 2.2,
  );
  const amounts = amountsOnPage(
    page,
    layout,
    runs,
    glyphs.map((g) => g.id),
  );
  if (amounts.length === 0) return undefined;
  const feats = new Map<number, GlyphFeatures>();
  for (const a of amounts)
    for (const id of a.glyphs) {
      const f = glyphFeatures(page, layout, id);
      if (f) feats.set(id, f);
    }
  const findings: Finding[] = [];
  const twins = amountTwins(page, layout, amounts).slice(0, 4);
  for (const w of twins) {
    const g = layout.glyphs[w.glyph]!;
    findings.push(
      pixelFinding(page, capture, {
        code: "amount_glyph_copied",
        message: `A character of the amount ${w.amount.text}${onPage(page)} at (${g.box[0]}, ${g.box[1]}) is a near pixel-for-pixel copy of one in ${w.source === w.amount ? "the same amount" : `the amount ${w.source.text}`} (mean difference ${w.d1.toFixed(1)} grey levels, where the page's amount characters differ from their most similar twin by ${w.q05.toFixed(1)} at the 5th percentile): two printed characters captured apart never match like that; a digit copied in, or typed, does.`,
        box: w.amount.valueBox,
        severity: w.d1 <= 0.4 * w.q05 ? 4 : 3,
        method: "glyph_twin",
        evidence: {
          amount: w.amount.text,
          glyphBox: g.box,
          copyOf: layout.glyphs[w.sourceGlyph]!.box,
          meanDifference: Math.round(w.d1 * 100) / 100,
          nextNearest: Math.round(w.d2 * 100) / 100,
          amounts5thPercentile: Math.round(w.q05 * 100) / 100,
        },
      }),
    );
  }
  for (const o of amountOutliers(page, layout, amounts, feats).slice(0, 4)) {
    const line = o.glyph !== undefined ? AMOUNT_THRESHOLDS.glyphLogNfa : AMOUNT_THRESHOLDS.logNfa;
    const differs = Object.entries(o.z)
      .filter(([, v]) => Math.abs(v ?? 0) >= AMOUNT_THRESHOLDS.zEach)
      .map(([k, v]) => `${k} ${(v ?? 0) > 0 ? "+" : ""}${v}σ`);
    findings.push(
      pixelFinding(page, capture, {
        code: "amount_look_differs",
        message:
          o.glyph !== undefined
            ? `A character of the amount ${o.amount.text}${onPage(page)} does not look printed and captured like the amount's other characters (${differs.join(", ")}, in the spread of this page's amounts): a digit replaced or pasted in.`
            : `The amount ${o.amount.text}${onPage(page)} does not look printed and captured like the page's ${amounts.length - 1} other amounts (${differs.join(", ")}, in their spread): a value pasted or typed over the picture.`,
        box: o.amount.valueBox,
        severity: o.logNfa < line - 4 ? 4 : 3,
        logNfa: o.logNfa,
        evidence: {
          amount: o.amount.text,
          ...(o.glyph !== undefined ? { glyphBox: layout.glyphs[o.glyph]!.box } : {}),
          z: o.z,
          amountsCompared: amounts.length,
        },
      }),
    );
  }
  return findings;
}

export const pixelsAmountsCheck = defineCheck({
  id: PIXELS_AMOUNTS_CHECK_ID,
  codes: CODES,
  appliesTo: (doc) => doc.pdf !== undefined || doc.contentType.startsWith("image/"),
  inspect: (doc, ctx) =>
    inspectCapturedPages(doc, ctx.signal, {
      noPages: "The document has no image pages, so there are no amounts to compare.",
      noneJudged:
        "No page image has amounts read by OCR to compare (or its amounts are rendered, not captured).",
      inspect: (page, capture) => inspectPage(doc, page, capture),
    }),
  summary: ({ outcome, findings }) =>
    outcome === "pass"
      ? "The amounts look printed and captured like each other."
      : `Some amounts do not look printed and captured like the page's others: ${flaggedCodes(findings).join(", ")}.`,
});
