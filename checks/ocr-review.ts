import type { CheckResult, Finding } from "../core/check-result.js";
import type { BoxTuple } from "../core/page-geometry.js";
import type { DocumentModel, PdfPage } from "../document/model.js";
import type { TextRun } from "../document/page-layout.js";
import { type Line, layoutLines } from "../document/text-lines.js";
import { findAmounts, numberStyleFor } from "../document/values/amounts.js";
import { judge } from "./check.js";

/**
 * The OCR-uncertainty rule, in one place for every text check (docs/decisions.md, "OCR"): the check step
 * passes the findings of the checks that read printed text through here when some pages were read by OCR.
 *
 * 1. Every finding on an OCR'd page states the OCR's confidence in the values it uses: the words under its
 *    box and the words that print the values its evidence names (evidence.ocr, and a sentence).
 * 2. A finding an OCR error can explain — a value read with low confidence, a difference that equals an
 *    amount printed elsewhere on the page (a row the OCR skipped), a gap above its line where a line is
 *    missing, or printed and expected figures one misread character apart (a digit, a lost decimal
 *    point) — has its region read again at twice the resolution (`reread`), and the checks that found it
 *    run again on the page as re-read (`rerun`):
 *    - gone on the sharper reading: it was the OCR's mistake, and it is dropped;
 *    - still there, its values now read confidently and nothing left that an OCR error explains: it stands;
 *    - otherwise it becomes a note ("could not be verified on the scan"), never proof.
 * 3. A finding whose values cannot be found among the OCR'd words cannot be verified either: a note.
 *
 * Checks know nothing of this: they read the model's text as always, and the rule works on what findings
 * carry (page, bbox, evidence values).
 */

export const OCR_REVIEW = {
  /** A value read with at least this confidence (0-100) counts as read. */
  confident: 85,
  /** Regions read again per document at most. */
  maxRereads: 12,
  /** Resolution of a re-read, as a multiple of the page's reading. */
  rereadFactor: 2,
  /** A gap above a line larger than this many typical line pitches means a line may be missing. */
  gapPitches: 1.7,
  /** Severity a finding that cannot be verified on the scan keeps (a note). */
  noteSeverity: 1,
  /**
   * An arithmetic mismatch its table's reading left a note (severity 2: the reading is below the check's
   * confident line) becomes an anomaly of this severity when every figure it uses was read confidently and
   * nothing an OCR error explains is left: it decides nothing alone, but it corroborates another kind of
   * evidence about the same value (a pixel finding on the accused amount). docs/decisions.md.
   */
  confirmedNoteSeverity: 3,
  /** …provided the table's reading confidence (evidence.readingConfidence, 0-1) is at least this. */
  confirmedNoteMinReading: 0.5,
  /**
   * A value read under the confident line on the first pass and again on the sharper re-reading, with the
   * same text both times, is confirmed by the re-reading (`readAlikeTwice`) when each reading's confidence
   * is at least `agreedMin` and each of its digits, as tesseract read it, at least `agreedCharMin`. Two
   * readings at two resolutions that agree character for character on a value each read fairly surely are
   * evidence of what is printed; a misread digit usually reads differently at twice the resolution, or its
   * own confidence is low. A finding confirmed only so counts as an anomaly at most (`agreedSeverity`): it
   * decides nothing alone, but corroborates another kind of evidence about the same value.
   */
  agreedMin: 80,
  agreedCharMin: 70,
  agreedSeverity: 3,
  /**
   * A word of the re-reading at no place the first pass read a word is added to the page only when read with at
   * least this confidence (a row the first pass skipped reads well at twice the resolution; the block reading's
   * fragments of rules and stamps, "LOJ.&87" or a lone "7" at 0-40 %, would join a row and break it).
   */
  mergeLoneMin: 60,
} as const;

/** The checks whose findings rest on the printed text the OCR read. */
export const TEXT_CHECK_IDS: ReadonlySet<string> = new Set([
  "text.arithmetic",
  "text.identifiers",
  "qr.codes",
]);

export interface OcrReviewDeps {
  /** Reads a box of an OCR'd page again, sharper; undefined when it cannot. */
  reread(page: number, bbox: BoxTuple, factor: number): Promise<TextRun[] | undefined>;
  /** Runs the given checks on another model (the page as re-read). */
  rerun(checkIds: readonly string[], doc: DocumentModel): Promise<CheckResult[]>;
}

export type Explanation =
  | "low_confidence"
  | "difference_printed"
  | "line_gap"
  | "line_skipped"
  | "one_character"
  | "not_located";

export interface ValueReading {
  text: string;
  confidence: number;
}

export interface OcrAssessment {
  /** Lowest confidence among the values used (0-100); undefined when none was located. */
  confidence?: number;
  values: ValueReading[];
  explanations: Explanation[];
  /**
   * Set when the values under the confident line were read alike on the first pass and on the sharper
   * re-reading (`readAlikeTwice`): confirmed by the agreement, not by the confidence.
   */
  readAlike?: boolean;
}

const pagesOf = (doc: DocumentModel): PdfPage[] => doc.pdf?.pages ?? doc.imagePages ?? [];
const ocrPage = (doc: DocumentModel, n: number | undefined) =>
  n === undefined ? undefined : pagesOf(doc).find((p) => p.number === n && p.ocr && p.layout);

const overlaps = (a: readonly number[], b: readonly number[]) =>
  Math.min(a[2]!, b[2]!) > Math.max(a[0]!, b[0]!) && Math.min(a[3]!, b[3]!) > Math.max(a[1]!, b[1]!);

/** Digits of a text (what an OCR misread changes). */
const digitsOf = (s: string) => s.replace(/\D/g, "");

/** The strings a finding's evidence names that carry figures (amounts, dates, identifiers). */
function evidenceValues(f: Finding): string[] {
  const out: string[] = [];
  for (const [k, v] of Object.entries(f.evidence ?? {})) {
    if (k === "ocr" || k === "row") continue;
    for (const s of Array.isArray(v) ? v : [v]) {
      if (typeof s !== "string" && typeof s !== "number") continue;
      const text = String(s);
      if (/\d/.test(text) && text.length <= 60) out.push(text);
    }
  }
  return out;
}

/** Words of the page that print one of the values (same digits), or that lie under the finding's box. */
function usedRuns(page: PdfPage, f: Finding): TextRun[] {
  const runs = (page.layout?.runs ?? []).filter((r) => r.confidence !== undefined);
  const used = new Set<TextRun>();
  if (f.bbox) for (const r of runs) if (overlaps(r.bbox, f.bbox) && /\d/.test(r.text)) used.add(r);
  for (const v of evidenceValues(f)) {
    const d = digitsOf(v);
    if (d.length < 2) continue;
    // Values the finding computed (an expected figure) are printed nowhere; printed ones are found.
    for (const r of runs) if (digitsOf(r.text) === d) used.add(r);
  }
  return [...used];
}

/** Typical distance between consecutive lines of a page. */
function pitchOf(lines: readonly Line[]): number | undefined {
  const ys = lines.map((l) => l.y).filter((y): y is number => y !== undefined);
  const gaps = ys
    .slice(1)
    .map((y, i) => Math.abs(y - ys[i]!))
    .filter((g) => g > 0)
    .sort((a, b) => a - b);
  return gaps.length >= 3 ? gaps[Math.floor(gaps.length / 2)] : undefined;
}

/** The finding's line is a table row with a larger gap above it than the rows around it: a line missing. */
function lineGapAbove(page: PdfPage, f: Finding): boolean {
  if (!f.bbox || !page.layout) return false;
  const lines = layoutLines(page.number, page.layout.runs, page.layout.units);
  const pitch = pitchOf(lines);
  if (!pitch) return false;
  const mid = (f.bbox[1]! + f.bbox[3]!) / 2;
  const i = lines.findIndex(
    (l) => l.y !== undefined && l.cells.some((c) => c.bbox && c.bbox[1] <= mid && c.bbox[3] >= mid),
  );
  if (i <= 0) return false;
  const gap = Math.abs((lines[i]!.y as number) - (lines[i - 1]!.y as number));
  return gap > OCR_REVIEW.gapPitches * pitch && /\d/.test(lines[i - 1]!.text) && /\d/.test(lines[i]!.text);
}

/**
 * Lines the finding's figures skip: the nearest line above the finding's own that prints one of its
 * values (a previous balance, the rows it adds up) is not the line just above it, and lines with amounts
 * lie between — rows the check did not read (a date or label the OCR misread drops a row out of a ledger).
 */
function linesSkipped(page: PdfPage, f: Finding): boolean {
  if (!f.bbox || !page.layout) return false;
  const lines = layoutLines(page.number, page.layout.runs, page.layout.units);
  const mid = (f.bbox[1]! + f.bbox[3]!) / 2;
  const own = lines.findIndex((l) => l.cells.some((c) => c.bbox && c.bbox[1] <= mid && c.bbox[3] >= mid));
  if (own <= 0) return false;
  const values = new Set(
    evidenceValues(f)
      .map(digitsOf)
      .filter((d) => d.length >= 3),
  );
  let source = -1;
  for (let i = own - 1; i >= 0; i--) {
    if (
      lines[i]!.cells.some(
        (c) => values.has(digitsOf(c.text)) || c.runs.some((r) => values.has(digitsOf(r.text))),
      )
    ) {
      source = i;
      break;
    }
  }
  if (source < 0 || source === own - 1) return false;
  return lines.slice(source + 1, own).some((l) => /\d[.,]\d{2}\b/.test(l.text));
}

/** Amounts in cents named by the evidence. */
function evidenceAmounts(f: Finding, region: string): number[] {
  const style = numberStyleFor(region);
  return evidenceValues(f).flatMap((v) => findAmounts(v, { style, loose: true }).map((a) => a.cents));
}

/** The differences a mismatch names: its `difference`, or each printed figure against its expected one. */
function differencesOf(f: Finding, region: string): number[] {
  const e = f.evidence ?? {};
  const cents = (v: unknown) =>
    typeof v === "string" || typeof v === "number"
      ? findAmounts(String(v), { style: numberStyleFor(region), loose: true })[0]?.cents
      : undefined;
  const out: number[] = [];
  for (const [k, v] of Object.entries(e)) {
    if (/difference/i.test(k)) {
      const c = cents(v);
      if (c) out.push(Math.abs(c));
    }
    const m = /^printed(.*)$/.exec(k);
    if (m) {
      const expected = e[`expected${m[1]}`];
      const a = cents(v);
      const b = cents(expected);
      if (a !== undefined && b !== undefined && a !== b) out.push(Math.abs(a - b));
    }
  }
  return out;
}

/** Two figures one misread character apart: one digit changed, added or lost, or a lost decimal point. */
function oneCharacterApart(a: string, b: string): boolean {
  const x = digitsOf(a);
  const y = digitsOf(b);
  if (!x || !y || x === y) return x === y && a !== b;
  if (x.length === y.length) {
    let diff = 0;
    for (let i = 0; i < x.length; i++) if (x[i] !== y[i]) diff++;
    return diff === 1;
  }
  const [s, l] = x.length < y.length ? [x, y] : [y, x];
  if (l.length - s.length !== 1) return false;
  for (let i = 0; i < l.length; i++) if (l.slice(0, i) + l.slice(i + 1) === s) return true;
  return false;
}

/** What an OCR error could explain about a finding on an OCR'd page, and how surely its values were read. */
export function assess(doc: DocumentModel, page: PdfPage, f: Finding): OcrAssessment {
  const runs = usedRuns(page, f);
  const values = runs.map((r) => ({ text: r.text, confidence: r.confidence as number }));
  const confidence = values.length ? Math.min(...values.map((v) => v.confidence)) : undefined;
  const explanations: Explanation[] = [];
  if (confidence === undefined) explanations.push("not_located");
  else if (confidence < OCR_REVIEW.confident) explanations.push("low_confidence");
  // A difference that is itself printed as an amount on the page: the row that makes it may be unread
  // (or read into the wrong row). The difference is the evidence's own, or printed − expected.
  const differences = differencesOf(f, doc.region);
  if (differences.length) {
    const style = numberStyleFor(doc.region);
    const named = new Set(evidenceAmounts(f, doc.region).map(Math.abs));
    const cells = layoutLines(page.number, page.layout?.runs ?? [], page.layout?.units).flatMap(
      (l) => l.cells,
    );
    const printed = new Set(
      cells.flatMap((c) => findAmounts(c.text, { style }).map((a) => Math.abs(a.cents))),
    );
    if (differences.some((d) => printed.has(d) && !named.has(d))) explanations.push("difference_printed");
  }
  if (lineGapAbove(page, f)) explanations.push("line_gap");
  if (linesSkipped(page, f)) explanations.push("line_skipped");
  const texts = evidenceValues(f);
  if (texts.some((a, i) => texts.slice(i + 1).some((b) => oneCharacterApart(a, b))))
    explanations.push("one_character");
  return { confidence, values: values.slice(0, 8), explanations };
}

/** The region read again for a finding: its line across the page, with two lines above and one below. */
function rereadBox(page: PdfPage, f: Finding): BoxTuple | undefined {
  const layout = page.layout;
  if (!layout) return undefined;
  const box = layout.box;
  const lines = layoutLines(page.number, layout.runs, layout.units);
  const pitch = pitchOf(lines) ?? Math.abs(box[3] - box[1]) / 40;
  let y0: number;
  let y1: number;
  if (f.bbox) {
    y0 = Math.min(f.bbox[1]!, f.bbox[3]!);
    y1 = Math.max(f.bbox[1]!, f.bbox[3]!);
  } else {
    const runs = usedRuns(page, f);
    if (runs.length === 0) return undefined;
    y0 = Math.min(...runs.map((r) => r.bbox[1]));
    y1 = Math.max(...runs.map((r) => r.bbox[3]));
  }
  // "Above" is smaller y in pixels (y down) and larger y in points (y up).
  const up = layout.units === "px" ? -1 : 1;
  const above = 2.6 * pitch;
  const below = 1.3 * pitch;
  const lo = up === 1 ? y0 - below : y0 - above;
  const hi = up === 1 ? y1 + above : y1 + below;
  return [box[0], Math.max(Math.min(box[1], box[3]), lo), box[2], Math.min(Math.max(box[1], box[3]), hi)];
}

const union = (a: BoxTuple, b: BoxTuple): BoxTuple => [
  Math.min(a[0], b[0]),
  Math.min(a[1], b[1]),
  Math.max(a[2], b[2]),
  Math.max(a[3], b[3]),
];

/** A date as printed ("01/06/2025", "01.06.25"): the re-reading of a block garbles these ("0106/2025"). */
const DATE_SHAPED = /\d{1,4}\s?[/.-]\s?\d{1,2}\s?[/.-]\s?\d{2,4}/;
/** An amount as printed: decimals or a thousands group, or a currency sign or code beside digits. */
const amountShaped = (t: string) =>
  /\d/.test(t) && (/\d[.,]\d{2,3}(?!\d)/.test(t) || /[£$€¥₹]|\b(?:EUR|USD|GBP|CHF|JPY)\b/.test(t));

/** Two word boxes share at least a third of the smaller one's area. */
function sameWordPlace(a: readonly number[], b: readonly number[]): boolean {
  const w =
    Math.min(Math.max(a[0]!, a[2]!), Math.max(b[0]!, b[2]!)) -
    Math.max(Math.min(a[0]!, a[2]!), Math.min(b[0]!, b[2]!));
  const h =
    Math.min(Math.max(a[1]!, a[3]!), Math.max(b[1]!, b[3]!)) -
    Math.max(Math.min(a[1]!, a[3]!), Math.min(b[1]!, b[3]!));
  if (w <= 0 || h <= 0) return false;
  const area = (x: readonly number[]) => Math.abs((x[2]! - x[0]!) * (x[3]! - x[1]!));
  return w * h >= Math.min(area(a), area(b)) / 3;
}

const minConfidence = (runs: readonly TextRun[]) => Math.min(...runs.map((r) => r.confidence ?? 0));

/**
 * The words of a region as the page reads after its re-reading (`withReread`). The re-reading reads the region
 * as one block at twice the resolution: its figures are sharper, but it garbles what the page's own layout
 * analysis read well (on the development captures "01/06/2025" → "0106/2025", "Balance" → "Ralanca"), and a
 * garbled date or header drops the row or the table from the check, so the mismatch under review vanished
 * unexamined. So the two readings are merged word by word (words at the same place grouped):
 * - a group with an amount in either reading (and no date in the first): the re-reading's words, on the first
 *   pass's line (its baseline and size): the figures are what the re-reading is for;
 * - other words (dates, labels, small numbers): the re-reading's only when it read them more surely than the
 *   first pass (a misread date the sharper reading reads well), else the first pass's;
 * - a word only the first pass has: kept (a word the re-reading lost); a word only the re-reading has: added
 *   when read fairly surely (`OCR_REVIEW.mergeLoneMin`: a row the first pass skipped is restored).
 */
export function mergedReading(first: readonly TextRun[], again: readonly TextRun[]): TextRun[] {
  const group = new Map<TextRun, number>();
  const parent: number[] = [];
  const find = (i: number): number => {
    while (parent[i] !== i) i = parent[i]!;
    return i;
  };
  const all = [...first, ...again];
  all.forEach((_, i) => {
    parent[i] = i;
  });
  for (let i = 0; i < first.length; i++)
    for (let j = 0; j < again.length; j++)
      if (sameWordPlace(first[i]!.bbox, again[j]!.bbox)) parent[find(i)] = find(first.length + j);
  all.forEach((r, i) => {
    group.set(r, find(i));
  });
  const out: TextRun[] = [];
  for (const g of new Set(all.map((r) => group.get(r)!))) {
    const a = first.filter((r) => group.get(r) === g);
    const b = again.filter((r) => group.get(r) === g);
    if (a.length === 0) {
      // A word only the re-reading has: a row the first pass skipped, when read fairly surely.
      out.push(...b.filter((r) => (r.confidence ?? 0) >= OCR_REVIEW.mergeLoneMin));
      continue;
    }
    if (b.length === 0) {
      out.push(...a);
      continue;
    }
    const figure = !a.some((r) => DATE_SHAPED.test(r.text)) && [...a, ...b].some((r) => amountShaped(r.text));
    if (!figure && minConfidence(b) <= minConfidence(a)) {
      out.push(...a);
      continue;
    }
    // The re-reading's words on the first pass's line, so the row is rebuilt as it was.
    const line = a[0]!;
    out.push(...b.map((r) => ({ ...r, y: line.y, size: line.size })));
  }
  return out;
}

/** The page with the runs inside `box` merged with a re-reading of it (`mergedReading`). */
function withReread(page: PdfPage, box: BoxTuple, runs: TextRun[]): PdfPage {
  const layout = page.layout!;
  const centreIn = (r: TextRun) => {
    const cx = (r.bbox[0] + r.bbox[2]) / 2;
    const cy = (r.bbox[1] + r.bbox[3]) / 2;
    return cx >= box[0] && cx <= box[2] && cy >= box[1] && cy <= box[3];
  };
  const kept = layout.runs.filter((r) => !centreIn(r));
  const order = kept.length;
  const region = mergedReading(layout.runs.filter(centreIn), runs.filter(centreIn));
  const merged = [...kept, ...region.map((r, i) => ({ ...r, order: order + i }))];
  const lines = layoutLines(page.number, merged, layout.units);
  return { ...page, text: lines.map((l) => l.text).join("\n"), layout: { ...layout, runs: merged } };
}

/** A copy of the model with some pages replaced (fresh caches: a new object). */
function withPages(doc: DocumentModel, pages: Map<number, PdfPage>): DocumentModel {
  const swap = (list: PdfPage[]) => list.map((p) => pages.get(p.number) ?? p);
  return {
    ...doc,
    ...(doc.pdf ? { pdf: { ...doc.pdf, pages: swap(doc.pdf.pages) } } : {}),
    ...(doc.imagePages ? { imagePages: swap(doc.imagePages) } : {}),
  };
}

const sameFinding = (a: Finding, b: Finding) =>
  a.code === b.code &&
  a.page === b.page &&
  (a.bbox && b.bbox ? overlaps(a.bbox, b.bbox) : JSON.stringify(a.evidence) === JSON.stringify(b.evidence));

const percent = (c: number | undefined) => (c === undefined ? "unknown" : `${Math.round(c)} %`);

const centreInside = (inner: readonly number[], outer: readonly number[]) => {
  const cx = (inner[0]! + inner[2]!) / 2;
  const cy = (inner[1]! + inner[3]!) / 2;
  return (
    cx >= Math.min(outer[0]!, outer[2]!) &&
    cx <= Math.max(outer[0]!, outer[2]!) &&
    cy >= Math.min(outer[1]!, outer[3]!) &&
    cy <= Math.max(outer[1]!, outer[3]!)
  );
};

/** Every digit of a word, as tesseract read it, at least `min` (true when the word has no characters). */
const digitsSure = (r: TextRun, min: number) =>
  (r.chars ?? []).every((c) => !/\d/.test(c.text) || c.confidence >= min);

/**
 * The values of a finding on the re-read page that are under the confident line were each read with the
 * same text on the first pass, at the same place, both readings and their digits fairly sure
 * (OCR_REVIEW.agreedMin, agreedCharMin): the re-reading confirms them.
 */
export function readAlikeTwice(first: PdfPage, again: PdfPage, f: Finding): boolean {
  const unsure = usedRuns(again, f).filter((r) => (r.confidence as number) < OCR_REVIEW.confident);
  if (unsure.length === 0) return false;
  const firstRuns = (first.layout?.runs ?? []).filter((r) => r.confidence !== undefined);
  return unsure.every((r) => {
    if ((r.confidence as number) < OCR_REVIEW.agreedMin || !digitsSure(r, OCR_REVIEW.agreedCharMin))
      return false;
    const twin = firstRuns.find(
      (o) =>
        o.text.trim() === r.text.trim() && (centreInside(o.bbox, r.bbox) || centreInside(r.bbox, o.bbox)),
    );
    return (
      twin !== undefined &&
      (twin.confidence as number) >= OCR_REVIEW.agreedMin &&
      digitsSure(twin, OCR_REVIEW.agreedCharMin)
    );
  });
}

/**
 * A doubtful finding the re-run no longer reports was refuted only if the re-reading read its figures otherwise
 * (the OCR's misreading corrected) or could restore a row (a gap, a skipped line, a difference printed
 * elsewhere). When its only doubts were figures one character apart or a low confidence, and the sharper
 * re-reading read every figure it uses alike (same text, same place, each reading and digit fairly sure), the
 * re-run did not settle it: a re-reading that garbles a date or a column header drops the row or the table
 * from the check, and the mismatch vanishes unexamined.
 */
export function unsettledOnReread(a: OcrAssessment, first: PdfPage, again: PdfPage, f: Finding): boolean {
  if (a.explanations.some((e) => e !== "one_character" && e !== "low_confidence")) return false;
  const used = usedRuns(first, f);
  if (used.length === 0) return false;
  const sure = (r: TextRun) =>
    (r.confidence as number) >= OCR_REVIEW.agreedMin && digitsSure(r, OCR_REVIEW.agreedCharMin);
  const againRuns = (again.layout?.runs ?? []).filter((r) => r.confidence !== undefined);
  return used.every((r) => {
    if (!sure(r)) return false;
    const twin = againRuns.find(
      (o) =>
        o.text.trim() === r.text.trim() && (centreInside(o.bbox, r.bbox) || centreInside(r.bbox, o.bbox)),
    );
    return twin !== undefined && sure(twin);
  });
}

/**
 * An arithmetic note whose figures the OCR read confidently: an anomaly (OCR_REVIEW.confirmedNoteSeverity),
 * so that a pixel finding of another check on the accused value can corroborate it.
 */
export function raisedSeverity(checkId: string, f: Finding, a: OcrAssessment): number | undefined {
  if (checkId !== "text.arithmetic" || (f.severity ?? 0) !== 2) return undefined;
  const reading = f.evidence?.readingConfidence;
  if (typeof reading !== "number" || reading < OCR_REVIEW.confirmedNoteMinReading) return undefined;
  if (a.confidence === undefined || a.explanations.length) return undefined;
  if (a.confidence < OCR_REVIEW.confident && !a.readAlike) return undefined;
  return OCR_REVIEW.confirmedNoteSeverity;
}

function stated(f: Finding, a: OcrAssessment, reread: boolean, checkId = ""): Finding {
  const values = a.values.map((v) => `${v.text} (${percent(v.confidence)})`).join(", ");
  const raised = raisedSeverity(checkId, f, a);
  // Confirmed by two readings that agree, not by their confidence: an anomaly at most.
  const capped = a.readAlike ? Math.min(raised ?? f.severity ?? 0, OCR_REVIEW.agreedSeverity) : raised;
  return {
    ...f,
    ...(capped !== undefined ? { severity: capped } : {}),
    message: `${f.message} Read by OCR from the scan${values ? `: ${values}` : ""}${reread ? ", confirmed on a sharper re-reading" : ""}.${a.readAlike ? " Some of its figures were read under the confident line, but the first reading and the sharper re-reading read them alike, so it counts as an anomaly: it decides nothing alone, but corroborates another kind of evidence about the same value." : raised !== undefined ? " Every figure it uses was read confidently, so it counts as an anomaly: it decides nothing alone, but corroborates another kind of evidence about the same value." : ""}`,
    evidence: {
      ...f.evidence,
      ocr: {
        confidence: a.confidence ?? null,
        values: a.values,
        verified: true,
        reread,
        ...(a.readAlike ? { readAlike: true } : {}),
      },
    },
  };
}

const EXPLAINED: Record<Explanation, string> = {
  low_confidence: "a value the OCR read with low confidence",
  difference_printed:
    "a difference equal to an amount printed elsewhere on the page (a row the OCR may have skipped)",
  line_gap: "a gap above the line where a line may be missing from the reading",
  line_skipped:
    "rows between the figures it compares that the reading did not use (a misread date or label drops a row)",
  one_character: "figures one misread character apart",
  not_located: "values not found among the words the OCR read",
};

function unverified(f: Finding, a: OcrAssessment, reread: boolean): Finding {
  return {
    ...f,
    message: `Could not be verified on the scan: ${f.message.replace(/\.$/, "")} — an OCR error can explain it (${a.explanations.map((e) => EXPLAINED[e]).join("; ")}; OCR confidence ${percent(a.confidence)})${reread ? ", and a sharper re-reading did not settle it" : ""}. A note, not evidence.`,
    severity: Math.min(f.severity ?? 0, OCR_REVIEW.noteSeverity),
    evidence: {
      ...f.evidence,
      ocr: {
        confidence: a.confidence ?? null,
        values: a.values,
        verified: false,
        reread,
        explanations: a.explanations,
        originalSeverity: f.severity ?? 0,
      },
    },
  };
}

/** A check result with its findings replaced and its outcome and severity judged again. */
function rejudged(r: CheckResult, findings: Finding[], notes: number): CheckResult {
  const { outcome, severity } = judge(findings);
  const summary =
    outcome === "flag" || r.outcome !== "flag"
      ? r.summary
      : `What ${r.checkId} found on the scan rests on OCR readings it could not verify (${notes} note${notes === 1 ? "" : "s"}): nothing counts against the document.`;
  return {
    ...r,
    outcome: r.outcome === "flag" || r.outcome === "pass" ? outcome : r.outcome,
    severity,
    summary,
    findings,
  };
}

export interface OcrReviewReport {
  results: CheckResult[];
  /** Findings dropped because the sharper reading did not show them. */
  dropped: Finding[];
  /** Findings turned into notes. */
  unverified: number;
  /** Findings confirmed (kept at their severity). */
  confirmed: number;
  rereads: number;
}

/** Applies the OCR-uncertainty rule to the check results of a document with OCR'd pages. */
export async function reviewOcrFindings(
  doc: DocumentModel,
  results: readonly CheckResult[],
  deps: OcrReviewDeps,
): Promise<OcrReviewReport> {
  const report: OcrReviewReport = {
    results: [...results],
    dropped: [],
    unverified: 0,
    confirmed: 0,
    rereads: 0,
  };
  if (!pagesOf(doc).some((p) => p.ocr && p.layout)) return report;
  const subject = (f: Finding) => (f.severity ?? 0) >= 2 && ocrPage(doc, f.page) !== undefined;

  // 1. Assess every finding of the text checks on OCR'd pages.
  const doubtful: { checkId: string; f: Finding; a: OcrAssessment }[] = [];
  for (const r of results) {
    if (!TEXT_CHECK_IDS.has(r.checkId)) continue;
    for (const f of r.findings) {
      if (!subject(f)) continue;
      const a = assess(doc, ocrPage(doc, f.page)!, f);
      if (a.explanations.length) doubtful.push({ checkId: r.checkId, f, a });
    }
  }

  // 2. Read the doubtful regions again, sharper, and run their checks on the page as re-read.
  let reread: DocumentModel | undefined;
  let rerun = new Map<string, CheckResult>();
  if (doubtful.length) {
    const boxes = new Map<number, BoxTuple[]>();
    for (const { f } of doubtful) {
      const page = ocrPage(doc, f.page)!;
      const box = rereadBox(page, f);
      if (!box) continue;
      const list = boxes.get(page.number) ?? [];
      const i = list.findIndex((b) => overlaps(b, box));
      if (i >= 0) list[i] = union(list[i]!, box);
      else list.push(box);
      boxes.set(page.number, list);
    }
    const replaced = new Map<number, PdfPage>();
    for (const [n, list] of boxes) {
      let page = ocrPage(doc, n)!;
      for (const box of list) {
        if (report.rereads >= OCR_REVIEW.maxRereads) break;
        const runs = await deps.reread(n, box, OCR_REVIEW.rereadFactor);
        report.rereads++;
        if (!runs || runs.length === 0) continue;
        page = withReread(page, box, runs);
        replaced.set(n, page);
      }
    }
    if (replaced.size) {
      reread = withPages(doc, replaced);
      const ids = [...new Set(doubtful.map((d) => d.checkId))];
      rerun = new Map((await deps.rerun(ids, reread)).map((r) => [r.checkId, r]));
    }
  }

  // 3. Decide each finding: stands (confidence stated), dropped, or a note.
  report.results = results.map((r) => {
    if (!TEXT_CHECK_IDS.has(r.checkId)) return r;
    const again = rerun.get(r.checkId);
    const basis = again && again.outcome !== "error" ? again : r;
    const model = basis === again ? (reread as DocumentModel) : doc;
    // Doubtful findings the re-run no longer reports: dropped, unless the re-reading read their figures alike.
    const unsettled: Finding[] = [];
    if (basis === again) {
      for (const f of r.findings) {
        const d = doubtful.find((x) => x.f === f);
        if (!subject(f) || !d || again.findings.some((g) => sameFinding(f, g))) continue;
        const first = ocrPage(doc, f.page);
        const second = ocrPage(reread as DocumentModel, f.page);
        if (first && second && unsettledOnReread(d.a, first, second, f)) unsettled.push(f);
        else report.dropped.push(f);
      }
    }
    let notes = 0;
    let changed = basis !== r;
    const findings = basis.findings.map((f) => {
      const page = ocrPage(model, f.page);
      if ((f.severity ?? 0) < 2 || !page) return f;
      const wasReread =
        basis === again && doubtful.some((d) => d.checkId === r.checkId && sameFinding(d.f, f));
      const a = assess(model, page, f);
      // On a sharper re-reading that still shows it, figures one character apart or a difference printed
      // elsewhere are what the document says (a replaced digit reads so), not the OCR's doing.
      if (wasReread)
        a.explanations = a.explanations.filter((e) => e !== "one_character" && e !== "difference_printed");
      // Values under the confident line that the first pass read alike: confirmed by the agreement.
      const first = ocrPage(doc, f.page);
      if (
        wasReread &&
        first &&
        a.explanations.length === 1 &&
        a.explanations[0] === "low_confidence" &&
        readAlikeTwice(first, page, f)
      ) {
        a.explanations = [];
        a.readAlike = true;
      }
      changed = true;
      if (a.explanations.length === 0) {
        report.confirmed++;
        return stated(f, a, wasReread, r.checkId);
      }
      notes++;
      report.unverified++;
      return unverified(f, a, wasReread);
    });
    for (const f of unsettled) {
      const a = assess(doc, ocrPage(doc, f.page)!, f);
      a.explanations = [];
      a.readAlike = true;
      report.confirmed++;
      findings.push(stated(f, a, true, r.checkId));
      changed = true;
    }
    return changed ? rejudged(basis, findings, notes) : r;
  });
  return report;
}
