import type { Finding } from "../core/check-result.js";
import type { DocumentModel } from "../document/model.js";
import {
  type Box,
  boxArea,
  coverage,
  intersection,
  type PageLayout,
  type PaintedArea,
  type TextRun,
  unionAll,
} from "../document/page-layout.js";
import { defineCheck, flaggedCodes, skip } from "./check.js";

/**
 * layout.overlay: text a reader cannot see, or sees instead of something else. A filled box drawn over
 * text (a white rectangle hiding the original value, often with a new value printed on top), two
 * different strings drawn at the same spot, invisible text (render mode 3, fully transparent, or the
 * colour of what is behind it), text outside the page box and text too small to read. An invisible
 * text layer over a scanned image (OCR) is expected and not reported.
 */

export const LAYOUT_OVERLAY_CHECK_ID = "layout.overlay";

/** Texts quoted in one finding. */
const QUOTE_LIMIT = 5;
/** Two runs overlap when their intersection is this share of the smaller one. */
const OVERLAP_SHARE = 0.5;

const quote = (runs: readonly TextRun[]) => {
  const shown = runs.slice(0, QUOTE_LIMIT).map((r) => `"${clip(r.text)}"`);
  return runs.length > QUOTE_LIMIT
    ? `${shown.join(", ")} and ${runs.length - QUOTE_LIMIT} more`
    : shown.join(", ");
};
const clip = (s: string, n = 60) => (s.length > n ? `${s.slice(0, n - 1)}…` : s);

const isWhite = (fill: string | null) => fill !== null && /^#(f[a-f0-9]){3}$/i.test(fill);
const describeArea = (a: PaintedArea) =>
  a.kind === "image" ? "an image" : isWhite(a.fill) ? "a white box" : `a filled box (${a.fill ?? "pattern"})`;
/** Text that carries no value of its own (rules, leader dots, underscores). */
const meaningless = (s: string) => !/[\p{L}\p{N}]/u.test(s);

function coveredFindings(page: number, layout: PageLayout): Finding[] {
  const byArea = new Map<number, TextRun[]>();
  for (const r of layout.runs) {
    if (r.hidden !== "covered" || r.coveredBy === undefined || meaningless(r.text)) continue;
    const list = byArea.get(r.coveredBy) ?? [];
    list.push(r);
    byArea.set(r.coveredBy, list);
  }
  const findings: Finding[] = [];
  for (const [order, hidden] of byArea) {
    const area = layout.areas.find((a) => a.order === order);
    if (!area) continue;
    const replacements = layout.runs.filter(
      (r) => !r.hidden && r.order > area.order && !meaningless(r.text) && coverage(r.bbox, area.bbox) >= 0.5,
    );
    const what = describeArea(area);
    const box = area.bbox.map((v) => Math.round(v)) as Box;
    if (replacements.length > 0) {
      findings.push({
        code: "text_covered_and_replaced",
        message: `On page ${page}, ${what} is drawn over ${quote(hidden)} (${hidden[0]?.font}) and ${quote(replacements)} (${replacements[0]?.font}) is printed on top of it: the original value was hidden and replaced.`,
        page,
        bbox: box,
        evidence: {
          hidden: hidden.map((r) => r.text),
          shown: replacements.map((r) => r.text),
          hiddenFont: hidden[0]?.font,
          shownFont: replacements[0]?.font,
          cover: { kind: area.kind, fill: area.fill },
        },
        severity: area.kind === "image" ? 8 : 9,
      });
    } else {
      findings.push({
        code: "text_covered",
        message: `On page ${page}, ${what} is drawn over ${quote(hidden)}, so the text is still in the file but a reader cannot see it.`,
        page,
        bbox: box,
        evidence: { hidden: hidden.map((r) => r.text), cover: { kind: area.kind, fill: area.fill } },
        severity: isWhite(area.fill) ? 7 : 5,
      });
    }
  }
  return findings;
}

/** Invisible runs that sit on an image drawn before them: the text layer of a scan (OCR). */
function onImage(run: TextRun, layout: PageLayout): boolean {
  return layout.areas.some(
    (a) => a.kind === "image" && a.order < run.order && coverage(run.bbox, a.bbox) >= 0.5,
  );
}

const HIDDEN_KINDS: {
  reason: TextRun["hidden"];
  code: string;
  severity: number;
  why: string;
}[] = [
  {
    reason: "render_mode_invisible",
    code: "invisible_text",
    severity: 6,
    why: "is drawn in invisible render mode (3): software reading the text sees it, a person does not",
  },
  {
    reason: "transparent",
    code: "invisible_text",
    severity: 6,
    why: "is drawn fully transparent: software reading the text sees it, a person does not",
  },
  {
    reason: "same_colour_as_background",
    code: "text_same_colour_as_background",
    severity: 6,
    why: "is drawn in the colour of what is behind it (e.g. white on white), so a person cannot see it",
  },
  {
    reason: "outside_page",
    code: "text_outside_page",
    severity: 5,
    why: "is placed outside the visible page box, where no viewer or printer shows it",
  },
  {
    reason: "tiny",
    code: "text_tiny",
    severity: 4,
    why: "is drawn smaller than 1 point, too small for anyone to read",
  },
];

function hiddenFindings(page: number, layout: PageLayout): Finding[] {
  const findings: Finding[] = [];
  for (const kind of HIDDEN_KINDS) {
    let runs = layout.runs.filter((r) => r.hidden === kind.reason && !meaningless(r.text));
    if (kind.reason === "render_mode_invisible") runs = runs.filter((r) => !onImage(r, layout));
    if (runs.length === 0) continue;
    const existing = findings.find((f) => f.code === kind.code);
    if (existing) continue;
    const all =
      kind.code === "invisible_text"
        ? layout.runs.filter(
            (r) =>
              (r.hidden === "render_mode_invisible" || r.hidden === "transparent") &&
              !meaningless(r.text) &&
              !onImage(r, layout),
          )
        : runs;
    findings.push({
      code: kind.code,
      message: `On page ${page}, ${all.length === 1 ? "the text" : `${all.length} pieces of text including`} ${quote(all)} ${kind.why}.`,
      page,
      bbox: unionAll(all.map((r) => r.bbox)).map((v) => Math.round(v)) as Box,
      evidence: {
        texts: all.slice(0, 20).map((r) => r.text),
        count: all.length,
        fonts: [...new Set(all.map((r) => r.font))],
      },
      severity: kind.severity,
    });
  }
  return findings;
}

/** Visible runs with different text drawn over each other. */
function overlapFindings(page: number, layout: PageLayout): Finding[] {
  const runs = layout.runs.filter((r) => !r.hidden && !meaningless(r.text) && boxArea(r.bbox) > 0);
  const cell = 24;
  const grid = new Map<string, TextRun[]>();
  for (const r of runs) {
    for (let i = Math.floor(r.bbox[0] / cell); i <= Math.floor(r.bbox[2] / cell); i++) {
      for (let j = Math.floor(r.bbox[1] / cell); j <= Math.floor(r.bbox[3] / cell); j++) {
        const k = `${i},${j}`;
        const list = grid.get(k) ?? [];
        if (list.length < 200) list.push(r);
        grid.set(k, list);
      }
    }
  }
  const seen = new Set<string>();
  const findings: Finding[] = [];
  for (const list of grid.values()) {
    for (let a = 0; a < list.length; a++) {
      for (let b = a + 1; b < list.length; b++) {
        const x = list[a] as TextRun;
        const y = list[b] as TextRun;
        const key = x.order < y.order ? `${x.order}:${y.order}` : `${y.order}:${x.order}`;
        if (seen.has(key)) continue;
        seen.add(key);
        if (x.text === y.text) continue; // fake bold and shadows draw the same text twice
        const share = intersection(x.bbox, y.bbox) / Math.min(boxArea(x.bbox), boxArea(y.bbox));
        if (share < OVERLAP_SHARE) continue;
        const [under, over] = x.order < y.order ? [x, y] : [y, x];
        findings.push({
          code: "text_over_text",
          message: `On page ${page}, "${clip(over.text)}" (${over.font}) is printed on top of "${clip(under.text)}" (${under.font}) at the same spot: one value was written over another.`,
          page,
          bbox: unionAll([under.bbox, over.bbox]).map((v) => Math.round(v)) as Box,
          evidence: { under: under.text, over: over.text, underFont: under.font, overFont: over.font },
          severity: 8,
        });
        if (findings.length >= 20) return findings;
      }
    }
  }
  return findings;
}

export function overlayFindings(doc: DocumentModel): Finding[] {
  const findings: Finding[] = [];
  for (const page of doc.pdf?.pages ?? []) {
    if (!page.layout) continue;
    findings.push(
      ...coveredFindings(page.number, page.layout),
      ...overlapFindings(page.number, page.layout),
      ...hiddenFindings(page.number, page.layout),
    );
  }
  return findings;
}

export const layoutOverlayCheck = defineCheck({
  id: LAYOUT_OVERLAY_CHECK_ID,
  appliesTo: (doc) => doc.pdf !== undefined,
  inspect(doc) {
    const laidOut = (doc.pdf?.pages ?? []).filter((p) => p.layout);
    if (laidOut.length === 0) {
      return skip(
        doc.pdf
          ? "No page of the PDF could be read as drawing operations, so hidden or overlaid text cannot be looked for."
          : "layout.overlay reads the drawing of PDF pages; this document is an image.",
      );
    }
    const runs = laidOut.reduce((n, p) => n + (p.layout?.runs.length ?? 0), 0);
    const truncated = laidOut.filter((p) => p.layout?.truncated).map((p) => p.number);
    const partial = truncated.length ? ` (pages ${truncated.join(", ")} were read only in part)` : "";
    return { findings: overlayFindings(doc), pages: laidOut.length, runs, partial };
  },
  summary: ({ outcome, findings, pages, runs, partial }) =>
    outcome === "pass"
      ? `All ${runs} text runs on ${pages} page${pages > 1 ? "s" : ""} are visible and none is hidden under a box or drawn over other text${partial}.`
      : `Hidden or overlaid text found: ${flaggedCodes(findings, { withPage: true }).join(", ")}${partial}.`,
});
