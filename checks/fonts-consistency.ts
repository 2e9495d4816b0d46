import type { Finding } from "../core/check-result.js";
import type { CodeTable } from "../core/finding-levels.js";
import type { DocumentModel } from "../document/model.js";
import { type Box, type TextRun, unionAll } from "../document/page-layout.js";
import { type Cell, documentLines, type Line } from "../document/text-lines.js";
import { numberStyleFor, parseAmount } from "../document/values/amounts.js";
import { parseDateText } from "../document/values/dates.js";
import { defineCheck, flaggedCodes, skip } from "./check.js";

/**
 * fonts.consistency: every text run's font and size, judged against the document's own typography rather
 * than against an ideal. Finds a value (amount, date, account number) set in a face the document uses
 * nowhere else while its column and row use another (one amount in Times in a column of Liberation Sans
 * amounts), a value typed into a line in such a face, the same font embedded twice on one page under
 * different subset prefixes when the second copy draws a value in a line of the first (what an editor adds
 * when it saves an edit), and a few values whose font comes from elsewhere than the rest of the page.
 *
 * What real producers do and is therefore not a finding: pictographs, bullets and currency signs taken
 * from a fallback, symbol or emoji font; maths fonts in formulas; a second face the document uses on many
 * lines (monospace identifiers beside proportional labels, inline code in a manual, Latin digits in CJK
 * text, bold labels); a bold or larger total whose whole row is set that way; a font embedded once per
 * header, footer or text object by the generator.
 */

export const FONTS_CONSISTENCY_CHECK_ID = "fonts.consistency";

/** A column needs this many other values before one odd value in it means anything. */
const MIN_COLUMN_PEERS = 4;
/** The column's usual font must be this common among the other values. */
const COLUMN_MAJORITY = 0.7;
/** Cells whose right (or left) edges are this close share a column. */
const COLUMN_TOLERANCE = 2;
/** Sizes this close are the same size. */
const SIZE_TOLERANCE = 0.6;

const SUBSET = /^[A-Z]{6}\+/;
/**
 * A family the document uses on this many lines is part of its typography: a value set in it is the
 * document's own pattern, not a retyping. An editor's font draws the one or two values that were changed.
 */
const ESTABLISHED_LINES = 3;

/**
 * Fonts whose glyphs are symbols whatever Unicode they map to: dingbats, emoji, symbol and maths fonts.
 * Producers take pictographs, bullets, arrows and formula symbols from them inside ordinary text.
 */
const SYMBOL_FONT =
  /dingbat|wingding|webding|symbol|emoji|zapf|marlett|fontawesome|material.?icons|mt.?extra|math|^(cm(mi|sy|ex|bsy|mib)|msam|msbm|eufm|eurm|stmary|wasy|rsfs|txsy|pxsy|txex|pxex)\d*$/i;

/** Text that carries no letter or digit (pictographs, bullets, arrows, currency signs, punctuation). */
const meaningless = (s: string) => !/[\p{L}\p{N}]/u.test(s);

export interface FontFace {
  family: string;
  bold: boolean;
  italic: boolean;
}

const faces = new Map<string, FontFace>();

/** "ABCDEF+Arial-BoldItalicMT" → { family: "Arial", bold: true, italic: true }. */
export function fontFace(name: string): FontFace {
  let face = faces.get(name);
  if (!face) {
    face = readFontFace(name);
    if (faces.size < 10_000) faces.set(name, face);
  }
  return face;
}

function readFontFace(name: string): FontFace {
  const bare = name.replace(SUBSET, "");
  const [head = bare, ...rest] = bare.split(/[-,]/);
  const style = rest.join("-").toLowerCase();
  const lower = bare.toLowerCase();
  const family = head
    .replace(/(PSMT|MT|PS)$/, "")
    .replace(/(Bold|Italic|Oblique|Regular)+$/i, "")
    .trim();
  return {
    family: family || head,
    bold: /bold|black|heavy|semibold|demi/.test(style) || /bold/.test(lower),
    italic: /italic|oblique/.test(style) || /italic|oblique/.test(lower),
  };
}

const faceLabel = (f: FontFace) => `${f.family}${f.bold ? " Bold" : ""}${f.italic ? " Italic" : ""}`;
const sameFace = (a: FontFace, b: FontFace) =>
  a.family === b.family && a.bold === b.bold && a.italic === b.italic;

type ValueKind = "amount" | "date" | "number";

function valueKind(text: string, region: string): ValueKind | null {
  if (parseAmount(text, { style: numberStyleFor(region) })) return "amount";
  if (parseDateText(text, region)) return "date";
  const digits = text.replace(/\D/g, "").length;
  if (digits >= 3 && /^[A-Z]{0,2}[\d\s./-]+$/.test(text.trim())) return "number";
  return null;
}

interface ValueCell {
  cell: Cell;
  line: Line;
  kind: ValueKind;
  face: FontFace;
  size: number;
  bbox: Box;
}

/** How widely the document uses each font family: distinct lines with readable text in it. */
export function familyLines(lines: readonly Line[]): Map<string, number> {
  const seen = new Map<string, Set<string>>();
  for (const line of lines) {
    for (const cell of line.cells) {
      for (const r of cell.runs) {
        if (meaningless(r.text)) continue;
        const f = fontFace(r.font).family;
        let s = seen.get(f);
        if (!s) {
          s = new Set();
          seen.set(f, s);
        }
        s.add(`${line.page}:${line.index}`);
      }
    }
  }
  return new Map([...seen].map(([f, s]) => [f, s.size]));
}

/** The run that carries most of a cell's text decides its face. */
function dominantRun(cell: Cell): TextRun {
  return cell.runs.reduce((a, b) => (b.text.length > a.text.length ? b : a));
}

function groupByEdge(cells: ValueCell[], edge: (c: ValueCell) => number): ValueCell[][] {
  const sorted = [...cells].sort((a, b) => edge(a) - edge(b));
  const groups: ValueCell[][] = [];
  for (const c of sorted) {
    const g = groups[groups.length - 1];
    if (g && edge(c) - edge(g[g.length - 1] as ValueCell) <= COLUMN_TOLERANCE) g.push(c);
    else groups.push([c]);
  }
  return groups;
}

/** A value in a font family used for almost nothing else in the document, on a row set in another family. */
function rareFontFindings(
  values: ValueCell[],
  usage: Map<string, number>,
  reported: Set<ValueCell>,
): Finding[] {
  const findings: Finding[] = [];
  for (const v of values) {
    if (reported.has(v)) continue;
    if ((usage.get(v.face.family) ?? 0) >= ESTABLISHED_LINES || SYMBOL_FONT.test(v.face.family)) continue;
    const rowOthers = v.line.cells.filter((c) => c !== v.cell && c.runs.length > 0);
    if (rowOthers.length < 2) continue;
    const rowFamilies = new Set(rowOthers.map((c) => fontFace(dominantRun(c).font).family));
    if (rowFamilies.size !== 1 || rowFamilies.has(v.face.family)) continue;
    const [rowFamily] = [...rowFamilies];
    findings.push({
      code: "value_font_differs",
      message: `On page ${v.line.page}, the ${v.kind} "${v.cell.text}" is set in ${faceLabel(v.face)} ${v.size} pt, a font used for almost nothing else in the document, while the rest of its row uses ${rowFamily}: the value was probably typed in afterwards.`,
      page: v.line.page,
      bbox: v.bbox,
      evidence: {
        value: v.cell.text,
        font: dominantRun(v.cell).font,
        size: v.size,
        rowFont: rowFamily,
        linesInFont: usage.get(v.face.family),
      },
      severity: 7,
    });
  }
  return findings;
}

function columnFindings(values: ValueCell[], usage: Map<string, number>): Finding[] {
  // Each value joins the bigger of its right-aligned and left-aligned columns.
  const right = groupByEdge(values, (c) => c.bbox[2]);
  const left = groupByEdge(values, (c) => c.bbox[0]);
  const columnOf = new Map<ValueCell, ValueCell[]>();
  for (const g of [...right, ...left]) {
    for (const c of g) if ((columnOf.get(c)?.length ?? 0) < g.length) columnOf.set(c, g);
  }
  // Font counts per column and kind, computed once; each value's peers are its column minus itself.
  type Count = { n: number; face: FontFace; size: number };
  const tallies = new Map<ValueCell[], Map<ValueKind, { total: number; counts: Map<string, Count> }>>();
  const keyOf = (c: ValueCell) => `${faceLabel(c.face)}@${Math.round(c.size * 2) / 2}`;
  const tally = (group: ValueCell[]) => {
    let t = tallies.get(group);
    if (!t) {
      t = new Map();
      for (const c of group) {
        const k = t.get(c.kind) ?? { total: 0, counts: new Map<string, Count>() };
        const e = k.counts.get(keyOf(c)) ?? { n: 0, face: c.face, size: c.size };
        e.n++;
        k.total++;
        k.counts.set(keyOf(c), e);
        t.set(c.kind, k);
      }
      tallies.set(group, t);
    }
    return t;
  };
  const findings: Finding[] = [];
  for (const v of values) {
    const group = columnOf.get(v);
    const kind = group ? tally(group).get(v.kind) : undefined;
    if (!kind) continue;
    const peers = kind.total - 1;
    if (peers < MIN_COLUMN_PEERS) continue;
    const own = keyOf(v);
    let usual: Count | undefined;
    let usualN = 0;
    for (const [k, e] of kind.counts) {
      const n = k === own ? e.n - 1 : e.n;
      if (n > usualN) {
        usual = e;
        usualN = n;
      }
    }
    if (!usual || usualN / peers < COLUMN_MAJORITY) continue;
    // A family the document uses on many lines is its own typography, not an editor's font.
    const foreign =
      usual.face.family !== v.face.family &&
      (usage.get(v.face.family) ?? 0) < ESTABLISHED_LINES &&
      !SYMBOL_FONT.test(v.face.family);
    const sizeDiffers = Math.abs(usual.size - v.size) > SIZE_TOLERANCE;
    const styleDiffers = !sameFace({ ...usual.face, family: v.face.family }, v.face);
    if (!foreign && !sizeDiffers && !styleDiffers) continue;
    // The value's own row: other cells of the line that are set like it make it a styled row (a bold total).
    const rowOthers = v.line.cells.filter((c) => c !== v.cell && c.runs.length > 0);
    const rowFaces = rowOthers.map((c) => ({
      face: fontFace(dominantRun(c).font),
      size: dominantRun(c).size,
    }));
    const rowAgrees = rowFaces.some(
      (r) => sameFace(r.face, v.face) && Math.abs(r.size - v.size) <= SIZE_TOLERANCE,
    );
    if (rowAgrees) continue;
    if (!foreign) {
      // Same family (or one the document uses widely): a weight, slant or size its row shares is the
      // row's emphasis (a bold, larger total row with a bold label in another family), not a retyping.
      const rowEmphasis = rowFaces.some(
        (r) =>
          r.face.bold === v.face.bold &&
          r.face.italic === v.face.italic &&
          (!sizeDiffers || Math.abs(r.size - v.size) <= Math.max(SIZE_TOLERANCE, 0.2 * v.size)),
      );
      if (rowEmphasis || rowFaces.length === 0) continue;
    }
    const rowFont = rowFaces[0] ? `${faceLabel(rowFaces[0].face)} ${rowFaces[0].size} pt` : undefined;
    // A face used nowhere else in the document is the trace of a retyping; a size or weight unlike the
    // column's in a family the document uses is only worth a look.
    const severity = foreign ? 7 : sizeDiffers ? 3 : 2;
    findings.push({
      code: "value_font_differs",
      message: `On page ${v.line.page}, the ${v.kind} "${v.cell.text}" is set in ${faceLabel(v.face)} ${v.size} pt while the ${peers} other ${v.kind}s in its column use ${faceLabel(usual.face)} ${usual.size} pt${rowFont ? ` and the rest of its row uses ${rowFont}` : ""}: the value was probably typed in afterwards.`,
      page: v.line.page,
      bbox: v.bbox,
      evidence: {
        value: v.cell.text,
        font: dominantRun(v.cell).font,
        size: v.size,
        columnFont: faceLabel(usual.face),
        columnSize: usual.size,
        columnValues: peers,
        ...(rowFont ? { rowFont } : {}),
      },
      severity,
    });
  }
  return findings;
}

/** The runs' text as a reader sees it: a space only where the runs are apart. */
function joinRuns(runs: readonly TextRun[]): string {
  let out = "";
  for (let i = 0; i < runs.length; i++) {
    const r = runs[i] as TextRun;
    const prev = runs[i - 1];
    if (prev && r.bbox[0] - prev.bbox[2] > 0.12 * Math.max(r.size, prev.size)) out += " ";
    out += r.text;
  }
  return out;
}

/**
 * A cell whose text mixes font families where the odd part is in a face the document uses almost nowhere
 * else: part of a line was retyped. Symbols from fallback fonts and faces of the document's own
 * typography are not reported.
 */
function mixedCellFindings(lines: Line[], region: string, usage: Map<string, number>): Finding[] {
  const findings: Finding[] = [];
  for (const line of lines) {
    for (const cell of line.cells) {
      const families = new Map<string, TextRun[]>();
      for (const r of cell.runs) {
        const f = fontFace(r.font).family;
        families.set(f, [...(families.get(f) ?? []), r]);
      }
      if (families.size < 2) continue;
      const ranked = [...families.entries()].sort(
        (a, b) => b[1].reduce((n, r) => n + r.text.length, 0) - a[1].reduce((n, r) => n + r.text.length, 0),
      );
      const [main, ...odd] = ranked;
      if (!main) continue;
      for (const [family, runs] of odd) {
        const text = joinRuns(runs);
        if (meaningless(text) || SYMBOL_FONT.test(family)) continue;
        if ((usage.get(family) ?? 0) >= ESTABLISHED_LINES) continue;
        const isValue = runs.some((r) => valueKind(r.text, region) !== null);
        findings.push({
          code: "cell_mixed_fonts",
          message: `On page ${line.page}, "${cell.text}" is one piece of text, but "${text}" in it is set in ${family}, a font the document uses on ${usage.get(family) ?? 0} line${usage.get(family) === 1 ? "" : "s"} only, while the rest uses ${main[0]}: that part was typed in separately.`,
          page: line.page,
          bbox: unionAll(runs.map((r) => r.bbox)),
          evidence: {
            text: cell.text,
            odd: text,
            oddFont: runs[0]?.font,
            mainFont: main[1][0]?.font,
            linesInFont: usage.get(family) ?? 0,
          },
          // A value in a foreign face is the trace of a retyped value; words are only worth a look.
          severity: isValue ? 7 : 3,
        });
      }
    }
  }
  return findings;
}

/**
 * The same font under two subset prefixes on one page where the second copy draws a value on a line of the
 * first (an editor re-embeds the font it edits with), and values set in fonts of another origin.
 * Generators that embed a font once per header, footer or text object draw whole lines with each copy.
 */
function originFindings(page: number, runs: readonly TextRun[], region: string, lines: Line[]): Finding[] {
  const findings: Finding[] = [];
  const prefixes = new Map<string, Map<string, TextRun[]>>();
  for (const r of runs) {
    const m = SUBSET.exec(r.font);
    if (!m) continue;
    const bare = r.font.slice(7);
    const byPrefix = prefixes.get(bare) ?? new Map<string, TextRun[]>();
    byPrefix.set(m[0], [...(byPrefix.get(m[0]) ?? []), r]);
    prefixes.set(bare, byPrefix);
  }
  const lineOf = new Map<TextRun, Line>();
  for (const l of lines) for (const c of l.cells) for (const r of c.runs) lineOf.set(r, l);
  for (const [bare, byPrefix] of prefixes) {
    if (byPrefix.size < 2) continue;
    const ranked = [...byPrefix.entries()].sort((a, b) => b[1].length - a[1].length);
    const [main, ...others] = ranked;
    if (!main) continue;
    const mainRuns = new Set(main[1]);
    const oddRuns = others
      .flatMap(([, rs]) => rs)
      .filter((r) => {
        const line = lineOf.get(r);
        if (!line || valueKind(r.text, region) === null) return false;
        return line.cells.some((c) => c.runs.some((x) => mainRuns.has(x)));
      });
    if (oddRuns.length === 0) continue;
    const names = ranked.map(([p]) => `${p}${bare}`);
    findings.push({
      code: "font_embedded_twice",
      message: `On page ${page}, the font ${bare} is embedded ${byPrefix.size} times (${names.join(", ")}), and the second copy draws ${oddRuns
        .slice(0, 5)
        .map((r) => `"${r.text}"`)
        .join(
          ", ",
        )} on a line set with the first: that value was added by a second program, typically an editor.`,
      page,
      bbox: unionAll(oddRuns.map((r) => r.bbox)),
      evidence: { font: bare, subsets: names, texts: oddRuns.slice(0, 20).map((r) => r.text) },
      severity: 6,
    });
  }
  // Origin: embedded subset, embedded whole, or not embedded at all.
  const origin = (r: TextRun) =>
    SUBSET.test(r.font) ? "embedded subset" : r.fontEmbedded ? "embedded" : "not embedded";
  const visible = runs.filter((r) => !r.hidden);
  const byOrigin = new Map<string, TextRun[]>();
  for (const r of visible) byOrigin.set(origin(r), [...(byOrigin.get(origin(r)) ?? []), r]);
  if (byOrigin.size >= 2 && visible.length >= 10) {
    const ranked = [...byOrigin.entries()].sort((a, b) => b[1].length - a[1].length);
    const [main, ...rest] = ranked;
    for (const [kind, rs] of rest) {
      if (!main || rs.length > Math.max(3, visible.length * 0.1)) continue;
      const values = rs.filter((r) => valueKind(r.text, region) !== null);
      if (values.length === 0) continue;
      findings.push({
        code: "font_origin_mixed",
        message: `On page ${page}, ${values
          .slice(0, 5)
          .map((r) => `"${r.text}" (${r.font})`)
          .join(
            ", ",
          )} ${values.length === 1 ? "is" : "are"} set in a font that is ${kind}, while the other ${main[1].length} text runs use fonts that are ${main[0]}: those values came from another program.`,
        page,
        bbox: values[0]?.bbox,
        evidence: {
          values: values.map((r) => r.text),
          fonts: [...new Set(rs.map((r) => r.font))],
          pageFontOrigin: main[0],
        },
        // A font left out (not embedded) among embedded ones is what an editor's added text looks like; a
        // font embedded whole among subsets (or the reverse) is how producers treat some faces anyway (FOP
        // embeds what it cannot subset, Ghostscript draws bitmap faces as Type 3): a note, which corroborates
        // nothing.
        severity: kind === "not embedded" || main[0] === "not embedded" ? 3 : 2,
      });
    }
  }
  return findings;
}

export function fontFindings(doc: DocumentModel): Finding[] {
  const findings: Finding[] = [];
  const values: ValueCell[] = [];
  // OCR'd pages have words, not fonts: nothing to compare there.
  const ocrPages = new Set((doc.pdf?.pages ?? []).filter((p) => p.ocr).map((p) => p.number));
  const allLines = documentLines(doc).filter(
    (l) => !ocrPages.has(l.page) && l.cells.some((c) => c.runs.length > 0),
  );
  for (const line of allLines) {
    for (const cell of line.cells) {
      if (!cell.bbox || cell.runs.length === 0) continue;
      const kind = valueKind(cell.text, doc.region);
      if (!kind) continue;
      const run = dominantRun(cell);
      values.push({ cell, line, kind, face: fontFace(run.font), size: run.size, bbox: cell.bbox });
    }
  }
  for (const page of doc.pdf?.pages ?? []) {
    if (page.layout && !page.ocr) {
      const lines = allLines.filter((l) => l.page === page.number);
      findings.push(...originFindings(page.number, page.layout.runs, doc.region, lines));
    }
  }
  const usage = familyLines(allLines);
  // Columns are matched per page width: pages of one document share their column positions.
  const byColumn = columnFindings(values, usage);
  const reported = new Set(
    values.filter((v) => byColumn.some((f) => f.page === v.line.page && f.bbox === v.bbox)),
  );
  findings.push(
    ...byColumn,
    ...rareFontFindings(values, usage, reported),
    ...mixedCellFindings(allLines, doc.region, usage),
  );
  return findings;
}

/** Every finding code this check reports: its highest level, its kind of evidence, what it means. */
export const CODES = {
  value_font_differs: {
    level: "anomaly",
    kind: "appearance",
    means: "A value is set in another face, size or weight than its column or row.",
  },
  cell_mixed_fonts: {
    level: "anomaly",
    kind: "appearance",
    means: "Part of one piece of text is set in a face the document uses almost nowhere else.",
  },
  font_embedded_twice: {
    level: "specific",
    kind: "structure",
    means:
      "One font is embedded twice on a page and the second copy draws a value: a second program wrote it.",
  },
  font_origin_mixed: {
    level: "anomaly",
    kind: "structure",
    means: "A value is drawn with a font of another origin (not embedded among embedded subsets).",
  },
} as const satisfies CodeTable;

export const fontsConsistencyCheck = defineCheck({
  id: FONTS_CONSISTENCY_CHECK_ID,
  codes: CODES,
  appliesTo: (doc) => doc.pdf !== undefined,
  inspect(doc) {
    const laidOut = (doc.pdf?.pages ?? []).filter((p) => !p.ocr && p.layout && p.layout.runs.length > 0);
    if (laidOut.length === 0) {
      return skip(
        doc.pdf
          ? "The PDF draws no text with fonts (scanned or unreadable pages), so there are no fonts to compare."
          : "fonts.consistency compares the fonts of a PDF's text; this document is an image.",
      );
    }
    const fonts = new Set(laidOut.flatMap((p) => p.layout?.runs.map((r) => r.font) ?? []));
    return { findings: fontFindings(doc), fonts };
  },
  summary: ({ outcome, findings, fonts }) =>
    outcome === "pass"
      ? `The ${fonts.size} font${fonts.size > 1 ? "s" : ""} (${[...fonts].slice(0, 6).join(", ")}) are used consistently: no value is set unlike its column or row and no font is embedded twice on a page.`
      : `Fonts are inconsistent: ${flaggedCodes(findings, { withPage: true }).join(", ")}.`,
});
