import type { Finding } from "../core/check-result.js";
import type { CodeTable } from "../core/finding-levels.js";
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
 * a value with a new value printed in its place (a white rectangle hiding the original), one value printed
 * over another on the same baseline, text hidden in the colour of what is behind it with other text drawn
 * in its place, invisible text (render mode 3, fully transparent), text outside the page box and text too
 * small to read.
 *
 * What producers do and is therefore not reported (or only noted): an invisible text layer over a scanned
 * image (OCR); a halo or shadow drawn under the same text; a production slug hidden at the same place on
 * every page or in the margin; a panel drawn over a whole region of text (layered design); table cells
 * whose text boxes touch or whose clipped overflow runs under the next column.
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
/** Two runs drawn on one baseline, at about the same size. */
const sameLine = (a: TextRun, b: TextRun) =>
  Math.abs(a.y - b.y) <= 0.3 * Math.max(a.size, b.size) &&
  Math.min(a.size, b.size) >= 0.7 * Math.max(a.size, b.size);
/** Horizontal overlap of two runs as a share of the narrower and of the wider one. */
function xOverlap(a: TextRun, b: TextRun): { narrow: number; wide: number } {
  const w = Math.min(a.bbox[2], b.bbox[2]) - Math.max(a.bbox[0], b.bbox[0]);
  const wa = a.bbox[2] - a.bbox[0];
  const wb = b.bbox[2] - b.bbox[0];
  if (w <= 0 || wa <= 0 || wb <= 0) return { narrow: 0, wide: 0 };
  return { narrow: w / Math.min(wa, wb), wide: w / Math.max(wa, wb) };
}
/** `b` is drawn where `a` was: same baseline, most of both widths shared. */
const inPlaceOf = (a: TextRun, b: TextRun) => {
  if (!sameLine(a, b)) return false;
  const o = xOverlap(a, b);
  return o.narrow >= 0.6 && o.wide >= 0.4;
};
const norm = (s: string) => s.replace(/\s+/g, "");
const alnum = (s: string) => s.replace(/[^\p{L}\p{N}]+/gu, "");
/**
 * Runs of one baseline merged into one (text joined, boxes united): producers that place glyphs one by one
 * draw a value as several runs.
 */
function lineGroups(runs: readonly TextRun[]): TextRun[] {
  const groups: TextRun[][] = [];
  for (const r of [...runs].sort((a, b) => a.bbox[0] - b.bbox[0])) {
    const g = groups.find((x) => sameLine(x[0] as TextRun, r));
    if (g) g.push(r);
    else groups.push([r]);
  }
  return groups.map((g) => ({
    ...(g[0] as TextRun),
    text: g.map((r) => r.text).join(""),
    bbox: unionAll(g.map((r) => r.bbox)),
  }));
}
/** Covers above this many runs hide a region of the page (a panel in a layered design), not a value. */
const REGION_RUNS = 6;

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
    const onTop = layout.runs.filter(
      (r) => !r.hidden && r.order > area.order && !meaningless(r.text) && coverage(r.bbox, area.bbox) >= 0.5,
    );
    // Replaced: different text printed where hidden text was. The same text drawn again (an annotation's
    // appearance, a redraw) replaces nothing.
    const lines = lineGroups(hidden);
    const hiddenTexts = new Set([...hidden, ...lines].map((r) => norm(r.text)));
    const replacements = onTop.filter(
      (r) => !hiddenTexts.has(norm(r.text)) && lines.some((h) => inPlaceOf(h, r)),
    );
    if (replacements.length === 0 && onTop.some((r) => hiddenTexts.has(norm(r.text)))) continue;
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
      // A box over one value hides it; a panel over a whole region is a layered design.
      const region = hidden.length > REGION_RUNS;
      findings.push({
        code: "text_covered",
        message: `On page ${page}, ${what} is drawn over ${quote(hidden)}, so the text is still in the file but a reader cannot see it${region ? " (a whole region, as layered designs do)" : ""}.`,
        page,
        bbox: box,
        evidence: {
          hidden: hidden.slice(0, 20).map((r) => r.text),
          count: hidden.length,
          cover: { kind: area.kind, fill: area.fill },
        },
        severity: region ? 1 : isWhite(area.fill) ? 4 : 3,
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
    severity: 3,
    why: "is placed outside the visible page box, where no viewer or printer shows it",
  },
  {
    reason: "tiny",
    code: "text_tiny",
    severity: 4,
    why: "is drawn smaller than 1 point, too small for anyone to read",
  },
];

/** Where hidden runs sit on the page, to recognise a slug repeated at the same place on every page. */
export type HiddenPlaces = Map<string, Set<number>>;
const placeKey = (r: TextRun) => `${Math.round(r.x / 4)}:${Math.round(r.y / 4)}`;

/** Hidden runs of each page by position, over the whole document. */
export function hiddenPlaces(pages: { number: number; layout?: PageLayout }[]): HiddenPlaces {
  const places: HiddenPlaces = new Map();
  for (const p of pages) {
    for (const r of p.layout?.runs ?? []) {
      if (r.hidden !== "same_colour_as_background" && r.hidden !== "render_mode_invisible") continue;
      const k = placeKey(r);
      places.set(k, (places.get(k) ?? new Set()).add(p.number));
    }
  }
  return places;
}

function hiddenFindings(
  page: number,
  layout: PageLayout,
  places: HiddenPlaces,
  pageCount: number,
): Finding[] {
  const findings: Finding[] = [];
  const visible = layout.runs.filter((r) => !r.hidden && !meaningless(r.text));
  const content = visible.length ? unionAll(visible.map((r) => r.bbox)) : undefined;
  for (const kind of HIDDEN_KINDS) {
    let runs = layout.runs.filter((r) => r.hidden === kind.reason && !meaningless(r.text));
    if (kind.reason === "render_mode_invisible") runs = runs.filter((r) => !onImage(r, layout));
    if (kind.reason === "same_colour_as_background") {
      // A halo or shadow: the same text drawn visibly at the same place.
      runs = runs.filter(
        (r) =>
          !visible.some(
            (v) => norm(v.text).includes(norm(r.text)) && sameLine(r, v) && xOverlap(r, v).narrow >= 0.6,
          ),
      );
    }
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
    // Hidden text with other text printed in its place: the original value was hidden and replaced.
    const replacedBy = visible.filter((v) =>
      all.some((h) => norm(h.text) !== norm(v.text) && inPlaceOf(h, v)),
    );
    // A production slug: hidden at the same place on most pages, or in the margin outside the content.
    const slug =
      replacedBy.length === 0 &&
      (kind.reason === "same_colour_as_background" || kind.reason === "render_mode_invisible") &&
      ((pageCount >= 2 &&
        all.every((r) => (places.get(placeKey(r))?.size ?? 0) >= Math.max(2, pageCount / 2))) ||
        (content !== undefined && all.every((r) => coverage(r.bbox, content) < 0.5)));
    findings.push({
      code: kind.code,
      message: `On page ${page}, ${all.length === 1 ? "the text" : `${all.length} pieces of text including`} ${quote(all)} ${kind.why}${
        replacedBy.length
          ? `, and ${quote(replacedBy)} is printed in its place: the original was hidden and replaced`
          : slug
            ? " (at the same place on every page or in the margin, as production slugs are)"
            : ""
      }.`,
      page,
      bbox: unionAll(all.map((r) => r.bbox)).map((v) => Math.round(v)) as Box,
      evidence: {
        texts: all.slice(0, 20).map((r) => r.text),
        count: all.length,
        fonts: [...new Set(all.map((r) => r.font))],
        ...(replacedBy.length ? { shownInstead: replacedBy.slice(0, 10).map((r) => r.text) } : {}),
      },
      severity: replacedBy.length ? 8 : slug ? 1 : kind.severity,
    });
  }
  return findings;
}

/**
 * Visible runs with different text drawn in each other's place: on one baseline, at about one size, over
 * most of both widths (a value printed over another). Fake bold and split duplicates (one text inside
 * the other), touching cells, and a clipped cell's overflow under the next column do not qualify.
 */
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
        // Fake bold, shadows and the same text split into other runs; single glyphs placed one by one.
        const tx = alnum(x.text);
        const ty = alnum(y.text);
        if (tx.length < 2 || ty.length < 2 || tx.includes(ty) || ty.includes(tx)) continue;
        if (!inPlaceOf(x, y)) continue;
        const [under, over] = x.order < y.order ? [x, y] : [y, x];
        const values = /\d/.test(under.text) && /\d/.test(over.text);
        findings.push({
          code: "text_over_text",
          message: `On page ${page}, "${clip(over.text)}" (${over.font}) is printed on top of "${clip(under.text)}" (${under.font}) on the same line at the same spot: one ${values ? "value" : "text"} was written over another.`,
          page,
          bbox: unionAll([under.bbox, over.bbox]).map((v) => Math.round(v)) as Box,
          evidence: { under: under.text, over: over.text, underFont: under.font, overFont: over.font },
          severity: values ? 8 : 5,
        });
        if (findings.length >= 20) return findings;
      }
    }
  }
  return findings;
}

export function overlayFindings(doc: DocumentModel): Finding[] {
  const findings: Finding[] = [];
  const pages = doc.pdf?.pages ?? [];
  const places = hiddenPlaces(pages);
  for (const page of pages) {
    if (!page.layout) continue;
    findings.push(
      ...coveredFindings(page.number, page.layout),
      ...overlapFindings(page.number, page.layout),
      ...hiddenFindings(page.number, page.layout, places, pages.length),
    );
  }
  return findings;
}

/** Every finding code this check reports: its highest level, its kind of evidence, what it means. */
export const CODES = {
  text_covered_and_replaced: {
    level: "proof",
    kind: "structure",
    means: "A box hides printed text and other text is printed on top of it.",
  },
  text_covered: {
    level: "anomaly",
    kind: "structure",
    means: "A box hides printed text.",
  },
  invisible_text: {
    level: "proof",
    kind: "structure",
    means:
      "Text is drawn invisibly (render mode 3 or transparent); proof when other text is printed in its place.",
  },
  text_same_colour_as_background: {
    level: "proof",
    kind: "structure",
    means: "Text is drawn in the colour of what is behind it; proof when other text is printed in its place.",
  },
  text_outside_page: {
    level: "anomaly",
    kind: "structure",
    means: "Text sits outside the visible page.",
  },
  text_tiny: {
    level: "anomaly",
    kind: "structure",
    means: "Text is drawn smaller than one point.",
  },
  text_over_text: {
    level: "proof",
    kind: "structure",
    means: "Two different texts are printed on the same place.",
  },
} as const satisfies CodeTable;

export const layoutOverlayCheck = defineCheck({
  id: LAYOUT_OVERLAY_CHECK_ID,
  codes: CODES,
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
