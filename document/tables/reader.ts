import type { Box } from "../page-layout.js";
import { inferNumberStyle, type NumberStyle, numberStyleFor } from "../values/amounts.js";
import { debitLetterMarked, type Figure, type ReadCell, readCells } from "./cells.js";
import { type Line, linesOf, toReaderBox } from "./lines.js";
import type { PieceSource, TablePage } from "./pieces.js";
import {
  type ColumnRole,
  foldLigatures,
  headerRole,
  LABELS,
  NUMERIC_ROLES,
  normaliseHeader,
} from "./vocabulary.js";

/**
 * The table reader: finds the tables of a document from the geometry of its text, in any layout.
 *
 * 1. Lines by baseline, cells by the gaps between pieces (lines.ts); figures, dates and words per cell
 *    (cells.ts), in the number style the document's own figures show.
 * 2. Header lines: cells whose words name column roles (vocabulary.ts) in six languages, on one line or
 *    two. Below a header, the lines whose figures fall under its columns are the table's rows; lines of
 *    words between them continue the row above (multi-line descriptions); the table ends at the next
 *    header, a wide vertical gap, or a figure that falls under none of its columns.
 * 3. Tables without a recognised header: figures aligned on the same edge in at least three lines, in
 *    rows carrying a date or two or more figures; their columns have no role until arithmetic says.
 * 4. A table continues on the next page when that page's first table has the same columns (a repeated
 *    header, or the same figure edges): balances and sums carry over.
 *
 * Every table carries how well it was read (`structure`): whether a header named its columns, how well
 * its figures align, how cleanly its rows read, and how trustworthy the text itself is (file text, OCR,
 * plain text). The checks add how many of the rows' relations hold (`readingConfidence`).
 */

export type RowKind = "entry" | "opening" | "closing" | "carry" | "total";

export interface ReadLine extends Line {
  cells: ReadCell[];
  /** The table whose row (or header) this line is part of. */
  table?: number;
  header?: boolean;
}

export interface TableColumn {
  index: number;
  role: ColumnRole | "unknown";
  /** The header words, when a header named the column. */
  header?: string;
  left: number;
  right: number;
  /** Where its figures line up, and on which edge. */
  anchor: number;
  align: "right" | "left" | "center";
}

export interface TableRow {
  page: number;
  /** The line carrying the figures first, then the lines continuing its description. */
  lines: ReadLine[];
  kind: RowKind;
  /** The words of the row's own line (what says what the row is: "Subtotal", "Opening balance"). */
  label: string;
  /** The label with the lines that continue it (a multi-line description). */
  description: string;
  date?: string;
  /** Figures by column index. */
  figures: (Figure | undefined)[];
  /** Figures on the row that fall under no column. */
  strays: Figure[];
  /** A cell that should be a figure could not be read. */
  unreadable: boolean;
}

export interface StructureScore {
  /** 0-1: how far the text itself can be trusted (file text 1, OCR its word confidence, plain text 0.8). */
  source: number;
  /** 0-1: a header named the columns (1), some of them (0.7), none (0.4). */
  header: number;
  /** 0-1: share of the table's figures that line up on their column's edge. */
  columns: number;
  /** 0-1: share of rows read without an unreadable figure or a stray one. */
  rows: number;
  /** What lowered the scores, in words, for messages. */
  notes: string[];
}

export interface Table {
  id: number;
  pages: number[];
  columns: TableColumn[];
  /** The header line of each page the table is on, when it has one. */
  headers: ReadLine[];
  rows: TableRow[];
  structure: StructureScore;
}

export interface DocumentReading {
  style: NumberStyle;
  region: string;
  /** Every line of every page, pages in order, each page top to bottom. */
  lines: ReadLine[];
  tables: Table[];
  /** Per page: where its pieces came from and which way its y axis points. */
  pages: Map<number, { origin: TablePage["origin"]; source: PieceSource }>;
}

export interface ReadOptions {
  region: string;
  /** Overrides the style read from the figures. */
  style?: NumberStyle;
  /**
   * A digit a re-encoding drew for the group separator (a Ghostscript re-distil that lost the apostrophe's
   * mapping: "5’691.25" read "59691.25"): in such figures it is read as the separator (`separatorDigit`).
   */
  separatorDigit?: string;
  /**
   * A digit a re-encoding drew for the minus sign ("−403,97" read "2403,97", "−1 085,37" read "21 085,37"): a
   * money figure starting with it, the rest a figure grouped as the document groups, is read as negative.
   */
  minusDigit?: string;
}

/** A money figure without group separators: integer digits, the decimal mark and two decimals. */
const UNGROUPED = /(?<![\d.,'\u2019\u202f])(\d{5,7})([.,])(\d{2})(?![\d.,])/g;
const GROUPED = /\d[.,'\u2019\u00a0\u202f ]\d{3}[.,]\d{2}(?!\d)/;

/**
 * The digit a re-encoding drew for a document's group separator, when its figures say so: no figure shows a
 * separator, and every money figure of five to seven integer digits (three or more of them) has the same digit
 * where the thousands separator goes. Only a hypothesis: the arithmetic reads the document again with it and
 * keeps that reading only when more of its sums hold (checks/text-arithmetic).
 */
export function separatorDigit(reading: DocumentReading): string | undefined {
  const digits: string[] = [];
  for (const l of reading.lines)
    for (const c of l.cells) {
      if (!c.figure?.money) continue;
      if (GROUPED.test(c.text)) return undefined;
      for (const m of c.text.matchAll(UNGROUPED)) {
        const int = m[1] as string;
        if (int.length > 7) continue;
        digits.push(int[int.length - 4] as string);
      }
    }
  const d = digits[0];
  return digits.length >= 3 && digits.every((x) => x === d) ? d : undefined;
}

/**
 * The digit a re-encoding drew for a document's minus sign, when its figures say so: the document groups its
 * thousands ("4 853,81"), yet two or more money figures print four integer digits ungrouped, all of them
 * starting with the same digit, each a figure of three integer digits once that digit is taken off ("2403,97"
 * is "−403,97"). A hypothesis, like `separatorDigit`.
 */
export function minusDigit(reading: DocumentReading): string | undefined {
  const texts = reading.lines.flatMap((l) =>
    l.cells.filter((c) => c.figure?.money).map((c) => c.text.trim()),
  );
  if (!texts.some((t) => GROUPED.test(t))) return undefined;
  const misfits = texts.filter((t) => /^\d{4}[.,]\d{2}(?!\d)/.test(t));
  const d = misfits[0]?.[0];
  return misfits.length >= 2 && misfits.every((t) => t[0] === d) ? d : undefined;
}

function minusFor(text: string, d: string): string {
  const t = text.trim();
  if (t[0] !== d) return text;
  const rest = t.slice(1);
  const grouped = /^\d{1,3}(?:[ \u00a0\u202f.,'\u2019]\d{3})*[.,]\d{2}(?!\d)/.test(rest);
  return grouped ? `\u2212${rest}` : text;
}

function ungroupDigit(text: string, d: string): string {
  return text.replace(UNGROUPED, (all, int: string, mark: string, dec: string) =>
    int.length >= 5 && int[int.length - 4] === d
      ? `${int.slice(0, -4)}\u2019${int.slice(-3)}${mark}${dec}`
      : all,
  );
}

// ---------------------------------------------------------------------------------------------
// Entry point
// ---------------------------------------------------------------------------------------------

export function readTables(pages: readonly TablePage[], opts: ReadOptions): DocumentReading {
  const sep = opts.separatorDigit;
  const minus = opts.minusDigit;
  const reread = (t: string) => {
    const a = sep === undefined ? t : ungroupDigit(t, sep);
    return minus === undefined ? a : minusFor(a, minus);
  };
  const raw = pages.map((p) => ({
    page: p,
    lines: linesOf(p).map((l) =>
      sep === undefined && minus === undefined
        ? l
        : { ...l, cells: l.cells.map((c) => ({ ...c, text: reread(c.text) })) },
    ),
  }));
  const style =
    opts.style ??
    inferNumberStyle(
      raw.flatMap((r) => r.lines.flatMap((l) => l.cells.map((c) => c.text))),
      numberStyleFor(opts.region),
    );
  const reading: DocumentReading = { style, region: opts.region, lines: [], tables: [], pages: new Map() };
  // Debits marked with a letter after the amount ("S" for Soll, "D"): "H" after an amount is then Haben.
  const haben = raw.some((r) =>
    r.lines.some((l) => l.cells.some((c, i) => debitLetterMarked(c.text, l.cells[i + 1]?.text))),
  );
  let nextId = 1;
  const perPage: Table[][] = [];
  /** Per page: whether its top continued the table the page before ended with (continueTable). */
  const continuedPages: boolean[] = [];
  let open: Table | undefined;
  const headersSeen: SeenHeader[] = [];
  for (const { page, lines } of raw) {
    reading.pages.set(page.page, { origin: page.origin, source: page.source });
    const read: ReadLine[] = lines.map((l) => ({
      ...l,
      cells: readCells(l.cells, l.page, style, opts.region, haben),
    }));
    markIdentifierTails(read);
    if (page.source !== "plain_text") {
      const split = splitSideBySide(read);
      read.length = 0;
      read.push(...split);
    }
    const { tables, continued } = tablesOfPage(read, page.source, () => nextId++, open, headersSeen);
    // The table a page ends with may go on at the top of the next page.
    open = tables[tables.length - 1] ?? (continued ? open : undefined);
    perPage.push(tables);
    continuedPages.push(continued);
    reading.lines.push(...read);
  }
  reading.tables = linkAcrossPages(perPage, continuedPages);
  return reading;
}

/** A box of the reader's frame back in the page's own units (undefined for plain text: no real place). */
export function pageBox(reading: DocumentReading, page: number, box: Box | undefined): Box | undefined {
  const p = reading.pages.get(page);
  if (!box || !p || p.source === "plain_text") return undefined;
  const b = toReaderBox(box, p.origin);
  return [round1(b[0]), round1(b[1]), round1(b[2]), round1(b[3])];
}

const round1 = (n: number) => Math.round(n * 10) / 10;

// ---------------------------------------------------------------------------------------------
// Identifiers
// ---------------------------------------------------------------------------------------------

/**
 * An identifier's digits are never figures: a cell that is part of an IBAN, an account or a reference
 * (its label on the line or the line above, wrapped onto the next line) loses its figure.
 */
function markIdentifierTails(lines: ReadLine[]): void {
  let previousWasIdentifier = false;
  for (const line of lines) {
    const labelled =
      LABELS.identifier.test(foldLigatures(line.text)) ||
      /\b[A-Z]{2}\d{2}(?: ?[A-Z0-9]{4}){2,}/.test(line.text);
    const onlyDigitGroups = line.cells.every(
      (c) => /^[A-Z0-9 ]+$/.test(c.text) && !/[.,]\d{2}$/.test(c.text),
    );
    if (labelled || (previousWasIdentifier && onlyDigitGroups)) {
      for (const c of line.cells) {
        if (c.figure && !c.figure.money) delete c.figure;
        // "IBAN DE12 3456 ..." wrapped: "7890 12" is the identifier's tail, not two figures.
        else if (c.figure && previousWasIdentifier && onlyDigitGroups) delete c.figure;
      }
    }
    previousWasIdentifier = labelled;
  }
}

// ---------------------------------------------------------------------------------------------
// Two tables side by side
// ---------------------------------------------------------------------------------------------

/**
 * Two tables side by side ("Payments | Amount | Deductions | Amount" on a payslip, "Bezüge | Abzüge"):
 * a header whose words name a second column of descriptions after a column of figures. The lines under
 * it, down to the first line with a cell across the gutter, are cut at the second table's left edge and
 * read as the left table's lines, then the right's: each table its own rows, in reading order.
 */
function splitSideBySide(lines: ReadLine[]): ReadLine[] {
  const out: ReadLine[] = [];
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i] as ReadLine;
    const cut = sideBySideCut(line);
    if (cut === undefined) {
      out.push(line);
      continue;
    }
    // The region ends at a line across the gutter: a cell over it, a label on one side with its figure
    // on the other ("Net pay ... 1,730.00"), or a wide gap.
    const across = (l: ReadLine) => {
      if (l.cells.some((c) => c.box[2] > cut && c.box[0] < cut)) return true;
      const left = l.cells.filter((c) => c.box[2] <= cut);
      const right = l.cells.filter((c) => c.box[0] >= cut);
      return (
        left.length > 0 && left.every((c) => !c.figure) && right.length > 0 && right.every((c) => c.figure)
      );
    };
    let end = i + 1;
    while (
      end < lines.length &&
      !across(lines[end] as ReadLine) &&
      (lines[end - 1] as ReadLine).baseline - (lines[end] as ReadLine).baseline <= 3.5 * line.size
    )
      end++;
    const region = lines.slice(i, end);
    const part = (side: "left" | "right") =>
      region
        .map((l) => ({
          l,
          cells: l.cells.filter((c) => (side === "left" ? c.box[2] <= cut : c.box[0] >= cut)),
        }))
        .filter((x) => x.cells.length > 0)
        .map(({ l, cells }) => subLine(l, cells));
    out.push(...part("left"), ...part("right"));
    i = end - 1;
  }
  return out.map((l, index) => ({ ...l, index }));
}

function sideBySideCut(line: ReadLine): number | undefined {
  if (line.cells.some((c) => c.figure || c.date)) return undefined;
  const roles = line.cells.map((c) => headerRole(c.text));
  const firstNumeric = roles.findIndex((r) => r !== undefined && NUMERIC_ROLES.has(r));
  if (firstNumeric < 0) return undefined;
  const second = roles.findIndex((r, k) => k > firstNumeric && r === "description");
  if (second < 0 || !roles.slice(second + 1).some((r) => r !== undefined && NUMERIC_ROLES.has(r)))
    return undefined;
  const before = line.cells[second - 1] as ReadCell;
  const at = line.cells[second] as ReadCell;
  return (before.box[2] + at.box[0]) / 2;
}

function subLine(l: ReadLine, cells: ReadCell[]): ReadLine {
  const box: Box = [
    Math.min(...cells.map((c) => c.box[0])),
    Math.min(...cells.map((c) => c.box[1])),
    Math.max(...cells.map((c) => c.box[2])),
    Math.max(...cells.map((c) => c.box[3])),
  ];
  return { ...l, cells, box, text: cells.map((c) => c.text).join("  ") };
}

// ---------------------------------------------------------------------------------------------
// Headers
// ---------------------------------------------------------------------------------------------

interface HeaderCell {
  role: ColumnRole;
  text: string;
  left: number;
  right: number;
}

function headerCellsOf(line: ReadLine): HeaderCell[] | undefined {
  if (line.cells.some((c) => c.figure?.money || c.date)) return undefined;
  const cells: HeaderCell[] = [];
  let unnamed = 0;
  for (const c of line.cells) {
    const role = headerRole(c.text);
    if (role) cells.push({ role, text: c.text, left: c.box[0], right: c.box[2] });
    else {
      const two = mergedHeaderCell(c.text, c.box);
      if (two) cells.push(...two);
      else unnamed++;
    }
  }
  if (cells.length < 2 || unnamed > cells.length) return undefined;
  if (!cells.some((c) => NUMERIC_ROLES.has(c.role))) return undefined;
  return cells;
}

/** A header line read, with the columns it named. */
interface SeenHeader {
  cells: HeaderCell[];
  line: ReadLine;
}

/**
 * A line repeating a header seen before (docs/decisions.md "A repeated header starts a new section"): words
 * only, two or more cells, each the same words as a cell of that header and set over the same place (its
 * right or left edge within a character or so), one of them over a column of figures. Its columns are the
 * header's, each at the place the line now prints it (a column not repeated stays where it was).
 */
function repeatedHeader(line: ReadLine, seen: readonly SeenHeader[]): HeaderCell[] | undefined {
  if (line.cells.length < 2 || line.cells.some((c) => c.figure || c.date)) return undefined;
  const norm = (t: string) => foldLigatures(t).toLowerCase().replace(/\s+/g, " ").trim();
  for (let k = seen.length - 1; k >= 0; k--) {
    const s = seen[k] as SeenHeader;
    if (s.line === line) continue;
    const em = Math.max(4, s.line.size);
    const same = (c: ReadLine["cells"][number], h: ReadLine["cells"][number]) =>
      norm(c.text) === norm(h.text) &&
      (Math.abs(c.box[0] - h.box[0]) <= 1.5 * em || Math.abs(c.box[2] - h.box[2]) <= 1.5 * em);
    const matched = line.cells.map((c) => s.line.cells.find((h) => same(c, h)));
    if (matched.some((m) => m === undefined)) continue;
    const cells = s.cells.map((hc) => {
      const at = line.cells.find(
        (c) => norm(c.text) === norm(hc.text) || norm(c.text).split(" ").includes(norm(hc.text)),
      );
      return at ? { ...hc, left: at.box[0], right: at.box[2] } : { ...hc };
    });
    const repeatedNumeric = s.cells.some(
      (hc) => NUMERIC_ROLES.has(hc.role) && line.cells.some((c) => norm(c.text) === norm(hc.text)),
    );
    if (repeatedNumeric) return cells;
  }
  return undefined;
}

/**
 * Two header words drawn so close that they read as one cell ("Quantity Transaction details", "Aantal
 * Naam / Omschrijving", "F. contable Movimiento"): split where both parts name a column, each part given
 * its share of the cell's width.
 */
function mergedHeaderCell(text: string, box: readonly number[]): HeaderCell[] | undefined {
  // Two header words drawn with no space between them ("EinzelpreisSteuer", "QtyDescription"): split where a
  // lower-case letter meets an upper-case one, when both parts name a column.
  const glued = /^\p{L}+$/u.test(text.trim()) ? /(?<=\p{Ll})(?=\p{Lu})/u.exec(text.trim()) : null;
  const words = glued
    ? [text.trim().slice(0, glued.index), text.trim().slice(glued.index)]
    : text.trim().split(/\s+/);
  if (words.length < 2 || words.length > 6) return undefined;
  const left = box[0] as number;
  const right = box[2] as number;
  for (let k = 1; k < words.length; k++) {
    const a = words.slice(0, k).join(" ");
    const b = words.slice(k).join(" ");
    const ra = headerRole(a);
    const rb = headerRole(b);
    if (!ra || !rb || ra === rb) continue;
    const cut = left + ((right - left) * (a.length + 0.5)) / text.trim().length;
    return [
      { role: ra, text: a, left, right: cut },
      { role: rb, text: b, left: cut, right },
    ];
  }
  return undefined;
}

/**
 * A header set on two lines ("Unit" over "price", "Paid" over "out"): the cells joined by column. A word
 * broken where its narrow column ends ("Boekdatu" over "m") is joined without a space when only so it names
 * the column.
 */
function twoLineHeader(upper: ReadLine, lower: ReadLine): HeaderCell[] | undefined {
  if (upper.baseline - lower.baseline > 1.8 * Math.max(upper.size, lower.size)) return undefined;
  if ([...upper.cells, ...lower.cells].some((c) => c.figure?.money || c.date)) return undefined;
  // A header's words are no run of digits: a line of references or dates right above a header (the last row's
  // words a page break left above the header the next page repeats) is no upper line of it.
  // A year among a header's words ("Particulars (2024)", "2024" over a column of a comparative statement) is
  // one of them: only a word with four digits run together that is no year alone is refused.
  const notAYear = (w: string) => /\d{4}/.test(w) && !/^\(?(?:19|20)\d{2}\)?[:.,]?$/.test(w);
  if (upper.cells.some((c) => c.text.split(/\s+/).some(notAYear))) return undefined;
  const cols = lower.cells.map((c) => ({ text: c.text, joined: c.text, left: c.box[0], right: c.box[2] }));
  for (const u of upper.cells) {
    const under = cols.find((c) => Math.min(c.right, u.box[2]) - Math.max(c.left, u.box[0]) > 0);
    if (under) {
      const broken = /\p{L}$/u.test(u.text.trim()) && /^\p{Ll}/u.test(under.text.trim());
      under.joined = broken ? `${u.text.trim()}${under.text.trim()}` : `${u.text} ${under.text}`;
      under.text = `${u.text} ${under.text}`;
      under.left = Math.min(under.left, u.box[0]);
      under.right = Math.max(under.right, u.box[2]);
    } else cols.push({ text: u.text, joined: u.text, left: u.box[0], right: u.box[2] });
  }
  const cells: HeaderCell[] = [];
  let unnamed = 0;
  for (const { joined, ...c } of cols) {
    const spaced = headerRole(c.text);
    const role = spaced ?? headerRole(joined);
    if (role) cells.push({ role, ...c, ...(spaced ? {} : { text: joined }) });
    else unnamed++;
  }
  if (cells.length < 2 || unnamed > cells.length || !cells.some((c) => NUMERIC_ROLES.has(c.role)))
    return undefined;
  return cells.sort((a, b) => a.left - b.left);
}

/**
 * A line of words only set right under a header's last line (within 1.8 of its size), each of its cells under
 * a cell of the header's lines: the header's own words wrapped onto a line of their own.
 */
function headerTail(header: readonly ReadLine[], line: ReadLine): boolean {
  const last = header[header.length - 1] as ReadLine;
  if (header.length >= 3 || line.cells.length === 0) return false;
  if (last.baseline - line.baseline > 1.8 * Math.max(last.size, line.size)) return false;
  if (line.cells.some((c) => c.figure || c.date || !/\p{L}/u.test(c.text))) return false;
  const above = header.flatMap((h) => h.cells);
  return line.cells.every((c) =>
    above.some((a) => Math.min(a.box[2], c.box[2]) - Math.max(a.box[0], c.box[0]) > 0),
  );
}

// ---------------------------------------------------------------------------------------------
// Tables of one page
// ---------------------------------------------------------------------------------------------

const figuresOf = (line: ReadLine) => line.cells.filter((c) => c.figure);

const SOURCE_TRUST: Record<PieceSource, number> = { pdf_text: 1, ocr_words: 1, plain_text: 0.8 };

function tablesOfPage(
  lines: ReadLine[],
  source: PieceSource,
  id: () => number,
  open: Table | undefined,
  seen: SeenHeader[] = [],
): { tables: Table[]; continued: boolean } {
  const tables: Table[] = [];
  const claimed = new Set<number>();
  const repeats = (line: ReadLine) => repeatedHeader(line, seen) !== undefined;
  const continued = open !== undefined && continueTable(lines, open, source, claimed, repeats);
  // Plain text has no positions to put a header's columns at (an empty cell leaves no gap): its tables
  // are read from the order of their figures only.
  for (let i = 0; i < lines.length && source !== "plain_text"; i++) {
    if (claimed.has(i)) continue;
    const line = lines[i] as ReadLine;
    let header = headerCellsOf(line);
    let headerLines = [line];
    const next = lines[i + 1];
    if (next && !claimed.has(i + 1)) {
      const two = twoLineHeader(line, next);
      if (two && two.length > (header?.length ?? 0)) {
        header = two;
        headerLines = [line, next];
      }
    }
    // A header seen before, set again (the deductions under the earnings, a second account): a new table
    // under the same columns, though the words repeated alone may name too few columns to be a header.
    if (!header) header = repeatedHeader(line, seen);
    if (!header) continue;
    // A header on two lines is seen by its lower line: a heading above it ("Competenze" over "Operazione |
    // Quantità | Importo") is read as its upper line, and the header repeated under the next heading
    // ("Ritenute", then "Operazione | Importo") repeats the lower line's words only.
    seen.push({ cells: header, line: headerLines[headerLines.length - 1] as ReadLine });
    // Words right under the header, each under one of its cells (the rest of a header word its narrow
    // column wrapped, "(EUR)" under "Saldo"), are the header's too: no row, and no line that ends the table.
    for (let k = i + headerLines.length; k < lines.length && !claimed.has(k); k++) {
      const tail = lines[k] as ReadLine;
      if (!headerTail(headerLines, tail)) break;
      headerLines = [...headerLines, tail];
    }
    const start = i + headerLines.length;
    const table = bodyUnderHeader(lines, start, header, headerLines, source, claimed, id, repeats);
    if (!table) continue;
    tables.push(table);
  }
  tables.push(...headerlessTables(lines, source, claimed, id));
  return { tables: tables.sort((a, b) => firstLineIndex(a) - firstLineIndex(b)), continued };
}

const firstLineIndex = (t: Table) => t.headers[0]?.index ?? t.rows[0]?.lines[0]?.index ?? 0;

interface Draft {
  columns: TableColumn[];
  rows: TableRow[];
}

function columnFromHeader(h: HeaderCell, index: number): TableColumn {
  return {
    index,
    role: h.role,
    header: h.text,
    left: h.left,
    right: h.right,
    anchor: h.right,
    align: "right",
  };
}

/** The column a figure falls under: most horizontal overlap, else the nearest within two ems. */
function columnFor(columns: readonly TableColumn[], f: Figure, em: number): TableColumn | undefined {
  let best: TableColumn | undefined;
  let bestScore = -Infinity;
  for (const c of columns) {
    const overlap = Math.min(c.right, f.box[2]) - Math.max(c.left, f.box[0]);
    const distance = overlap > 0 ? 0 : Math.min(Math.abs(c.left - f.box[2]), Math.abs(f.box[0] - c.right));
    const score = overlap > 0 ? overlap : -distance;
    if (score > bestScore) {
      bestScore = score;
      best = c;
    }
  }
  if (!best || bestScore < -2 * em) return undefined;
  return best;
}

/**
 * What a row is by its words: an opening or closing balance (brought / carried forward included), a
 * bare carry ("Übertrag", "riporto": which end of a page it stands at says which), a total, or an entry.
 */
export function rowKindOf(text: string): RowKind {
  const label = foldLigatures(text);
  if (LABELS.opening.test(label)) return "opening";
  if (LABELS.closing.test(label)) return "closing";
  if (LABELS.carry.test(label)) return "carry";
  if (LABELS.totalish.test(label) || LABELS.totalIn.test(label) || LABELS.totalOut.test(label))
    return "total";
  return "entry";
}

function labelOf(line: ReadLine, used: ReadonlySet<ReadCell>): { label: string; date?: string } {
  const words: string[] = [];
  let date: string | undefined;
  for (const c of line.cells) {
    if (used.has(c) || c.signMark) continue;
    if (c.date && date === undefined && words.length === 0) {
      date = c.date;
      if (c.rest) words.push(c.rest);
      continue;
    }
    words.push(c.figure && !c.figure.money ? c.text : c.text);
  }
  return { label: foldLigatures(words.join(" ")).replace(/\s+/g, " ").trim(), ...(date ? { date } : {}) };
}

interface Body {
  rows: TableRow[];
  /** Line indexes the rows took (their own and their continuation lines). */
  taken: number[];
}

/**
 * The rows under a set of columns, from line `start`: lines whose figures fall under the numeric
 * columns, words between them continuing the row above; stops at a header, a wide gap, or a figure
 * under no column. `top` is the baseline the first row is measured from (the header's), or undefined.
 */
function readBody(
  lines: ReadLine[],
  start: number,
  columns: TableColumn[],
  top: number | undefined,
  em: number,
  claimed: Set<number>,
  /** The boxes of the header's words, named or not (a column of words the vocabulary does not know). */
  headerWords: readonly Box[] = [],
  /** Whether a line repeats a header seen before (it starts a new section, never a row). */
  repeats?: (line: ReadLine) => boolean,
): Body {
  const left = Math.min(...columns.map((c) => c.left));
  const rightEdge = Math.max(...columns.map((c) => c.right));
  const rows: TableRow[] = [];
  const taken: number[] = [];
  let pending: ReadLine[] = [];
  let lastBaseline = top ?? (lines[start]?.baseline ?? 0) + 1.5 * em;
  const gaps: number[] = [];
  // Where the rows read so far begin: a description column the header did not name still holds the
  // lines continuing it. The header's words count from the start: a column the vocabulary does not name
  // ("Txn date") is the table's, so a row's date wrapped onto a line of its own under it ("19 May" over
  // "2025 | …") continues the table on a page whose first row starts further right ("Balance brought forward").
  let rowsLeft = Math.min(left, ...headerWords.filter((b) => b[0] < left).map((b) => b[0]));
  // Where the rows' labels begin (a totals block may set its labels under the figures' columns).
  const labelLefts: number[] = [];
  for (let k = start; k < lines.length; k++) {
    if (claimed.has(k)) break;
    const line = lines[k] as ReadLine;
    if (headerCellsOf(line) || repeats?.(line)) break;
    const gap = lastBaseline - line.baseline;
    const pitch = gaps.length ? median(gaps) : 1.5 * em;
    const figs = figuresOf(line).filter((c) => c.box[2] > left - em && c.box[0] < rightEdge + 4 * em);
    const placed = figs.map((c) => ({ c, col: columnFor(columns, c.figure as Figure, em) }));
    const inNumeric = placed.filter((p) => p.col && isNumericColumn(p.col));
    // A number that is not money under a column of words ("Ref 123456"), or left of every column of figures
    // (a reference wrapped under a description column the header did not name), is a word of the row.
    const wordsEnd = Math.min(...columns.filter(isNumericColumn).map((c) => c.left)) - em;
    const outside = placed.filter(
      (p) => !inNumeric.includes(p) && ((p.c.figure as Figure).money || (!p.col && p.c.box[2] >= wordsEnd)),
    );
    if (inNumeric.length > 0) {
      const kind = rowKindOf(line.text);
      const allowed = kind === "entry" ? 3.2 * pitch : 5 * pitch;
      if (gap > allowed + em) break;
      // An opening balance under transactions of the same page is no row of theirs: a summary box under the
      // table ("Ancien solde / Total des crédits / Total débit / Solde final") whose labels start where the
      // rows' do. A balance brought forward ("Report", "Übertrag") is one of the table's.
      if (
        kind === "opening" &&
        !LABELS.carry.test(foldLigatures(line.text)) &&
        rows.some((r) => r.kind === "entry" && r.page === line.page)
      )
        break;
      // Figures under a column of words (a number inside a description) are words of the row.
      const used = new Set(inNumeric.map((p) => p.c));
      const figures: (Figure | undefined)[] = columns.map(() => undefined);
      const strays: Figure[] = [];
      for (const p of inNumeric) {
        const col = p.col as TableColumn;
        const f = p.c.figure as Figure;
        const held = figures[col.index];
        if (held === undefined) figures[col.index] = f;
        else strays.push(f);
      }
      for (const p of outside) strays.push(p.c.figure as Figure);
      const { label, date } = labelOf(line, used);
      const row: TableRow = {
        page: line.page,
        lines: [line],
        kind: rowKindOf(label || line.text),
        label,
        description: label,
        ...(date ? { date } : {}),
        figures,
        strays,
        unreadable: line.cells.some((c) => c.unreadable),
      };
      // Words between rows continue the row above, unless they carry the date of the row below (a
      // transaction printed date first, figures on its last line); words after a total belong to no row.
      const prev = rows[rows.length - 1];
      for (const p of pending) {
        const pd = p.cells[0]?.date;
        if (pd && !row.date) {
          row.date = pd;
          row.description = `${p.cells[0]?.rest ?? ""} ${p.cells
            .slice(1)
            .map((c) => c.text)
            .join(" ")} ${row.description}`.trim();
          row.lines.push(p);
        } else if (prev && prev.kind === "entry") {
          prev.description = `${prev.description} ${p.text.replace(/\s+/g, " ")}`.trim();
          prev.lines.push(p);
        } else continue;
        taken.push(p.index);
      }
      pending = [];
      const labelCell = line.cells.find((c) => !c.figure?.money && !c.date && /\p{L}/u.test(c.text));
      if (labelCell) labelLefts.push(labelCell.box[0]);
      rows.push(row);
      taken.push(k);
      rowsLeft = Math.min(rowsLeft, line.cells[0]?.box[0] ?? rowsLeft);
      if (rows.length > 1) gaps.push(gap);
      lastBaseline = line.baseline;
      continue;
    }
    if (outside.length > 0) break;
    // Words only: a continuation of the row above when close and inside the table.
    if (gap > 2.4 * pitch + 0.5 * em || pending.length >= 4) break;
    if (rows.length > 0 && setApart(line, columns, em, labelLefts, headerWords)) break;
    if ((line.cells[0]?.box[0] ?? 0) < rowsLeft - 2 * em) break;
    if ((line.cells[line.cells.length - 1]?.box[2] ?? 0) > rightEdge + 4 * em) break;
    pending.push(line);
    lastBaseline = line.baseline;
  }
  return { rows, taken };
}

/**
 * A line of words set apart from the rows' descriptions ends a table (docs/decisions.md "A table ends where
 * words are set apart from its descriptions"): a description goes on under the description column, so a line
 * that starts nearer the figures than the descriptions ("Account summary" over a box beside the amounts), or
 * that spreads words over two or more of the figures' columns (the header of another table whose words are
 * not known: "Sales tax  Basis  Sales tax  Amount"), is none of its rows — unless it starts where the label of
 * a row read starts (a note among totals whose labels sit under the figures' columns).
 */
export function setApart(
  line: ReadLine,
  columns: readonly TableColumn[],
  em: number,
  labelLefts: readonly number[] = [],
  headerWords: readonly Box[] = [],
): boolean {
  if (line.cells.some((c) => c.figure?.money)) return false;
  const desc = columns.find((c) => c.role === "description");
  const numeric = columns.filter((c) => isNumericColumn(c) && (!desc || c.left > desc.left));
  if (numeric.length === 0) return false;
  const start = line.cells[0]?.box[0] ?? 0;
  // Aligned with the label of a row read (a note among totals whose labels sit under the figures): a row's.
  const aligned = labelLefts.some((x) => Math.abs(x - start) <= em);
  const figuresFrom = Math.min(...numeric.map((c) => c.left));
  // Under a header word left of the figures (a column of words the vocabulary does not name, "Billing period"):
  // the rest of a row's cell wrapped onto a line of its own.
  const first = line.cells[0]?.box;
  const underWords =
    first !== undefined &&
    headerWords.some((b) => b[2] <= figuresFrom && Math.min(b[2], first[2]) - Math.max(b[0], first[0]) > 0);
  if (desc && !aligned && !underWords) {
    if (start > Math.max((desc.left + figuresFrom) / 2, desc.left + 6 * em)) return true;
  }
  if (line.cells.length < 3) return false;
  const over = numeric.filter((c) =>
    line.cells.some((x) => x.box[2] > c.left - em && x.box[0] < c.right + em),
  );
  return over.length >= 2;
}

const isNumericColumn = (c: TableColumn) => NUMERIC_ROLES.has(c.role as ColumnRole) || c.role === "unknown";

function claim(lines: ReadLine[], taken: number[], table: Table, claimed: Set<number>): void {
  for (const k of taken) {
    claimed.add(k);
    const l = lines[k];
    if (l) l.table = table.id;
  }
}

function bodyUnderHeader(
  lines: ReadLine[],
  start: number,
  header: HeaderCell[],
  headerLines: ReadLine[],
  source: PieceSource,
  claimed: Set<number>,
  id: () => number,
  repeats?: (line: ReadLine) => boolean,
): Table | undefined {
  const hl = headerLines[headerLines.length - 1] as ReadLine;
  const em = Math.max(4, hl.size);
  const columns = header.map(columnFromHeader);
  const numeric = columns.filter((c) => NUMERIC_ROLES.has(c.role as ColumnRole));
  const words = headerLines.flatMap((h) => h.cells.map((c) => c.box));
  const { rows, taken } = readBody(lines, start, columns, hl.baseline, em, claimed, words, repeats);
  const entries = rows.filter((r) => r.kind === "entry");
  if (entries.length === 0 || rows.length < 2) {
    if (!(rows.length === 1 && entries.length === 1 && numeric.length >= 2)) return undefined;
  }
  const table: Table = {
    id: id(),
    pages: [hl.page],
    columns,
    headers: [hl],
    rows,
    structure: { source: 1, header: 1, columns: 1, rows: 1, notes: [] },
  };
  refineColumns(table, em);
  amountsUnderQuantity(table);
  taxBaseUnderBase(table);
  table.structure = structureOf(table, source, true);
  for (const h of headerLines) {
    h.header = true;
    h.table = table.id;
    claimed.add(h.index);
  }
  claim(lines, taken, table, claimed);
  return table;
}

/**
 * The top of a page continuing the table the previous page ended with, when that page repeats no
 * header: from the first line whose figures line up with the table's columns, read under its columns.
 */
function continueTable(
  lines: ReadLine[],
  open: Table,
  source: PieceSource,
  claimed: Set<number>,
  repeats?: (line: ReadLine) => boolean,
): boolean {
  const em = Math.max(4, open.headers[0]?.size ?? open.rows[0]?.lines[0]?.size ?? 8);
  const tol = Math.max(1.5, 0.45 * em);
  const numeric = open.columns.filter((c) => isNumericColumn(c) && open.rows.some((r) => r.figures[c.index]));
  const lined = (line: ReadLine) => {
    const figs = figuresOf(line).filter((c) => c.figure?.money);
    return (
      figs.length > 0 &&
      figs.every((c) => numeric.some((col) => Math.abs(edge(c.box, col.align) - col.anchor) <= tol))
    );
  };
  let start = -1;
  for (let k = 0; k < lines.length && k < 12; k++) {
    const line = lines[k] as ReadLine;
    if (headerCellsOf(line)) return false;
    if (lined(line)) {
      start = k;
      break;
    }
    // Figures before the table's rows belong to some other block: the table does not continue.
    if (figuresOf(line).some((c) => c.figure?.money)) return false;
  }
  if (start < 0) return false;
  const words = open.headers.flatMap((h) => h.cells.map((c) => c.box));
  const { rows, taken } = readBody(lines, start, open.columns, undefined, em, claimed, words, repeats);
  if (rows.length === 0) return false;
  // A statement's summary box at the top of a later page ("Saldo inicial / Suma haber / Suma debe / Saldo
  // final"), its figures on the ledger's columns, after the ledger closed on its closing balance: an opening
  // balance with totals or a closing one and no dated transaction is the box, not the ledger going on (its
  // opening was checked as a balance brought forward). A box that opens another account's rows, the ledger
  // above still open, stays read as it was.
  const kinds = new Set(rows.map((r) => r.kind));
  if (
    open.rows[open.rows.length - 1]?.kind === "closing" &&
    rows.every((r) => r.date === undefined) &&
    kinds.has("opening") &&
    (kinds.has("closing") || kinds.has("total"))
  )
    return false;
  const page = rows[0]?.page as number;
  open.rows.push(...rows);
  if (!open.pages.includes(page)) open.pages.push(page);
  const before = open.structure;
  refineColumns(open, em);
  const after = structureOf(open, source, open.headers.length > 0);
  open.structure = { ...after, source: Math.min(before.source, after.source) };
  claim(lines, taken, open, claimed);
  return true;
}

/**
 * A column headed by a word that names a quantity and an amount alike ("Cantidad", "Quantità"), whose figures
 * are money — signed, or with a currency mark, two decimals each — in a table with no other amount column
 * and a balance column, or of such figures only: the amounts (docs/decisions.md "Amounts under a quantity's
 * word"). A statement of "Concepto / Cantidad / Saldo" is read as a ledger, not as quantities beside balances.
 */
function amountsUnderQuantity(table: Table): void {
  const MONEY_ROLES = new Set(["amount", "line_total", "debit", "credit"]);
  if (table.columns.some((c) => MONEY_ROLES.has(c.role))) return;
  const balance = table.columns.some((c) => c.role === "balance");
  for (const col of table.columns) {
    if (col.role !== "quantity") continue;
    const figs = table.rows.map((r) => r.figures[col.index]).filter((f): f is Figure => f !== undefined);
    if (figs.length < 2 || figs.some((f) => f.decimals !== 2 || f.percent)) continue;
    const marked = figs.filter((f) => f.currency !== undefined || f.cents < 0).length;
    if (marked === 0 || (!balance && marked < figs.length)) continue;
    col.role = "amount";
    return;
  }
}

/**
 * A tax breakdown's base under a word that names a base of any rate ("BTW | Basis | BTW", "Taux | Base | TVA"):
 * read as a quantity elsewhere (a payslip's "Base | Taux | Montant"), it is the taxable amount in a table whose
 * rows each print a rate and a tax amount in money beside it — its figures money, two decimals each.
 */
function taxBaseUnderBase(table: Table): void {
  if (table.columns.some((c) => c.role === "tax_base")) return;
  const tax = table.columns.find(
    (c) =>
      c.role === "tax_amount" &&
      table.rows.some((r) => r.figures[c.index]?.money && !r.figures[c.index]?.percent),
  );
  if (!tax) return;
  const entries = table.rows.filter((r) => r.kind === "entry" && !r.unreadable);
  if (entries.length === 0 || !entries.every((r) => r.figures.some((f) => f?.percent))) return;
  for (const col of table.columns) {
    if (
      col.role !== "quantity" ||
      !/^(?:base|basis|grundlage|assiette)$/.test(normaliseHeader(col.header ?? ""))
    )
      continue;
    const figs = entries.map((r) => r.figures[col.index]);
    if (figs.some((f) => f === undefined || f.decimals !== 2 || f.percent)) continue;
    col.role = "tax_base";
    return;
  }
}

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)] as number;
}

/**
 * Each column's anchor and alignment from its figures: the edge (right, left or centre) on which most
 * of them line up.
 */
function refineColumns(table: Table, em: number): void {
  const tol = Math.max(1.5, 0.45 * em);
  for (const col of table.columns) {
    const figs = table.rows.map((r) => r.figures[col.index]).filter((f): f is Figure => f !== undefined);
    if (figs.length === 0) continue;
    const best = (["right", "left", "center"] as const)
      .map((align) => {
        const xs = figs.map((f) => edge(f.box, align));
        const m = median(xs);
        return { align, anchor: m, hits: xs.filter((x) => Math.abs(x - m) <= tol).length };
      })
      .sort((a, b) => b.hits - a.hits)[0] as { align: TableColumn["align"]; anchor: number; hits: number };
    col.align = best.align;
    col.anchor = best.anchor;
    col.left = Math.min(col.left, ...figs.map((f) => f.box[0]));
    col.right = Math.max(col.right, ...figs.map((f) => f.box[2]));
  }
}

const edge = (b: Box, align: TableColumn["align"]) =>
  align === "right" ? b[2] : align === "left" ? b[0] : (b[0] + b[2]) / 2;

function structureOf(table: Table, source: PieceSource, headed: boolean): StructureScore {
  const notes: string[] = [];
  const em = Math.max(4, table.headers[0]?.size ?? table.rows[0]?.lines[0]?.size ?? 8);
  const tol = Math.max(1.5, 0.45 * em);
  let figures = 0;
  let aligned = 0;
  for (const r of table.rows) {
    for (const [i, f] of r.figures.entries()) {
      if (!f) continue;
      figures++;
      const col = table.columns[i] as TableColumn;
      if (source === "plain_text" || Math.abs(edge(f.box, col.align) - col.anchor) <= tol) aligned++;
    }
  }
  const columns = figures ? aligned / figures : 0;
  if (columns < 0.9)
    notes.push(`${Math.round(100 * (1 - columns))} % of its figures off their column's edge`);
  const clean = table.rows.filter((r) => !r.unreadable && r.strays.length === 0).length;
  const rows = table.rows.length ? clean / table.rows.length : 0;
  if (rows < 0.95)
    notes.push(`${table.rows.length - clean} of ${table.rows.length} rows with unreadable or stray figures`);
  const usedNumeric = table.columns.filter(
    (c) => table.rows.some((r) => r.figures[c.index]) && c.role !== "unknown",
  ).length;
  const unknown = table.columns.filter(
    (c) => c.role === "unknown" && table.rows.some((r) => r.figures[c.index]),
  ).length;
  let header = 0.4;
  if (headed) header = unknown === 0 ? 1 : usedNumeric > unknown ? 0.7 : 0.5;
  if (!headed) notes.push("no header names its columns");
  else if (unknown > 0) notes.push(`${unknown} column${unknown > 1 ? "s" : ""} without a header`);
  let src = SOURCE_TRUST[source];
  if (source === "ocr_words") {
    const confs = table.rows.flatMap((r) =>
      r.figures.filter((f): f is Figure => !!f).map((f) => f.confidence),
    );
    src = confs.length ? confs.reduce((a, b) => a + b, 0) / confs.length : 0.5;
    notes.push(`read by OCR (mean confidence ${src.toFixed(2)})`);
  }
  if (source === "plain_text") notes.push("read from plain text without positions");
  return { source: src, header, columns, rows, notes };
}

// ---------------------------------------------------------------------------------------------
// Tables without a header
// ---------------------------------------------------------------------------------------------

interface Cluster {
  anchor: number;
  members: { line: number; cell: ReadCell }[];
}

/** Figures grouped by the x of their right edge (numbers are right-aligned in nearly every layout). */
function clusterRightEdges(items: { line: number; cell: ReadCell }[], tol: number): Cluster[] {
  const sorted = [...items].sort((a, b) => a.cell.box[2] - b.cell.box[2]);
  const clusters: Cluster[] = [];
  for (const it of sorted) {
    const x = it.cell.box[2];
    const c = clusters[clusters.length - 1];
    if (c && x - c.anchor <= tol) {
      c.members.push(it);
      c.anchor = (c.anchor * (c.members.length - 1) + x) / c.members.length;
    } else clusters.push({ anchor: x, members: [it] });
  }
  return clusters;
}

/** Plain text has no positions: a line's figures are placed by their order from the right. */
function plainTextEdges(lines: ReadLine[]): void {
  for (const l of lines) {
    const figs = figuresOf(l);
    figs.forEach((c, i) => {
      const fromRight = figs.length - 1 - i;
      const x = 10_000 - 100 * fromRight;
      c.box = [x - 50, c.box[1], x, c.box[3]];
      if (c.figure) c.figure.box = c.box;
    });
  }
}

function headerlessTables(
  lines: ReadLine[],
  source: PieceSource,
  claimed: Set<number>,
  id: () => number,
): Table[] {
  const free = lines.filter((l) => !claimed.has(l.index));
  if (source === "plain_text") plainTextEdges(free);
  const items = free.flatMap((l) => figuresOf(l).map((cell) => ({ line: l.index, cell })));
  if (items.length < 6) return [];
  const em = median(free.map((l) => l.size)) || 8;
  const clusters = clusterRightEdges(items, Math.max(1.5, 0.45 * em)).filter((c) => c.members.length >= 3);
  const onCluster = new Map<ReadCell, Cluster>();
  for (const c of clusters) for (const m of c.members) onCluster.set(m.cell, c);
  const candidate = (l: ReadLine) => {
    const figs = figuresOf(l).filter((c) => onCluster.has(c));
    const dated = l.cells[0]?.date !== undefined;
    return figs.length >= 2 || (dated && figs.length >= 1);
  };
  const tables: Table[] = [];
  let run: ReadLine[] = [];
  let pending: ReadLine[] = [];
  const flush = () => {
    const t = run.length >= 3 ? tableFromRun(run, onCluster, source, id) : undefined;
    if (t) {
      tables.push(t);
      for (const r of t.rows) for (const l of r.lines) claimed.add(l.index);
    }
    run = [];
    pending = [];
  };
  for (const l of free) {
    const prev = run[run.length - 1];
    const last = pending[pending.length - 1] ?? prev;
    if (candidate(l)) {
      if (last && last.baseline - l.baseline > 3.5 * Math.max(last.size, l.size)) flush();
      for (const p of pending) run.push(p);
      pending = [];
      run.push(l);
    } else if (run.length > 0 && figuresOf(l).length === 0 && pending.length < 3) {
      pending.push(l);
    } else if (run.length > 0 && figuresOf(l).some((c) => onCluster.has(c)) && pending.length === 0) {
      // A total or balance row under the table (one figure on a column edge).
      run.push(l);
      flush();
    } else flush();
  }
  flush();
  return tables;
}

function tableFromRun(
  run: ReadLine[],
  onCluster: Map<ReadCell, Cluster>,
  source: PieceSource,
  id: () => number,
): Table | undefined {
  const used = [
    ...new Set(run.flatMap((l) => figuresOf(l).map((c) => onCluster.get(c))).filter(Boolean)),
  ] as Cluster[];
  used.sort((a, b) => a.anchor - b.anchor);
  const columns: TableColumn[] = used.map((c, index) => ({
    index,
    role: "unknown",
    left: Math.min(...c.members.map((m) => m.cell.box[0])),
    right: Math.max(...c.members.map((m) => m.cell.box[2])),
    anchor: c.anchor,
    align: "right",
  }));
  const rows: TableRow[] = [];
  let pending: ReadLine[] = [];
  for (const l of run) {
    const figs = figuresOf(l);
    if (figs.length === 0) {
      pending.push(l);
      continue;
    }
    const figures: (Figure | undefined)[] = columns.map(() => undefined);
    const strays: Figure[] = [];
    const usedCells = new Set<ReadCell>();
    for (const c of figs) {
      const cl = onCluster.get(c);
      const idx = cl ? used.indexOf(cl) : -1;
      if (idx >= 0 && figures[idx] === undefined) {
        figures[idx] = c.figure;
        usedCells.add(c);
      } else if (c.figure?.money) strays.push(c.figure);
    }
    const { label, date } = labelOf(l, usedCells);
    const prev = rows[rows.length - 1];
    if (prev?.kind === "entry")
      for (const p of pending) {
        prev.description = `${prev.description} ${p.text}`.trim();
        prev.lines.push(p);
      }
    pending = [];
    rows.push({
      page: l.page,
      lines: [l],
      kind: rowKindOf(label || l.text),
      label,
      description: label,
      ...(date ? { date } : {}),
      figures,
      strays,
      unreadable: l.cells.some((c) => c.unreadable),
    });
  }
  if (rows.filter((r) => r.kind === "entry").length < 2) return undefined;
  const table: Table = {
    id: id(),
    pages: [run[0]?.page ?? 1],
    columns,
    headers: [],
    rows,
    structure: { source: 1, header: 0.4, columns: 1, rows: 1, notes: [] },
  };
  table.structure = structureOf(table, source, false);
  for (const r of rows) for (const l of r.lines) l.table = table.id;
  return table;
}

// ---------------------------------------------------------------------------------------------
// Across pages
// ---------------------------------------------------------------------------------------------

/**
 * Is `next` (the first table of the next page) the continuation of `prev` (the last table of its page)?
 * Returns, for each of `next`'s columns, the column of `prev` it continues, or undefined. Two headers
 * continue each other when they name the same columns; a page without a header continues the table
 * above when every one of its figure columns lines up with one of that table's (a page without any
 * credit has one column fewer).
 */
function continuation(prev: Table, next: Table): number[] | undefined {
  const used = (t: Table, c: TableColumn) => t.rows.some((r) => r.figures[c.index]);
  if (prev.headers.length > 0 && next.headers.length > 0) {
    const roles = (t: Table) =>
      t.columns.filter((c) => NUMERIC_ROLES.has(c.role as ColumnRole)).map((c) => c.role);
    if (roles(prev).join() !== roles(next).join()) return undefined;
    const map: number[] = [];
    for (const c of next.columns) {
      const same = prev.columns.filter((p) => p.role === c.role);
      const k = next.columns.filter((x) => x.role === c.role).indexOf(c);
      const target = same[k];
      if (!target) return undefined;
      map[c.index] = target.index;
    }
    return map;
  }
  const map: number[] = [];
  let matched = 0;
  for (const c of next.columns) {
    if (!used(next, c)) continue;
    const target = prev.columns.find(
      (p) =>
        (NUMERIC_ROLES.has(p.role as ColumnRole) || p.role === "unknown") &&
        Math.abs(edge([c.left, 0, c.right, 0], p.align) - p.anchor) <= 3,
    );
    if (!target || map.includes(target.index)) return undefined;
    map[c.index] = target.index;
    matched++;
  }
  return matched > 0 ? map : undefined;
}

/**
 * Joins each page's first table to the table the page before ended with, when it continues it. A page
 * whose rows all went into the open table at its top (`continued`, no table of its own) keeps that table
 * open for the next page: a three-page statement whose second page continued the first is still one
 * ledger on the third.
 */
function linkAcrossPages(perPage: Table[][], continued: readonly boolean[] = []): Table[] {
  const out: Table[] = [];
  let open: Table | undefined;
  for (const [pageIndex, tables] of perPage.entries()) {
    tables.forEach((t, i) => {
      const map = i === 0 && open ? continuation(open, t) : undefined;
      if (open && map) {
        const into = open;
        into.pages.push(...t.pages.filter((p) => !into.pages.includes(p)));
        into.headers.push(...t.headers);
        for (const r of t.rows) {
          const figures: (Figure | undefined)[] = into.columns.map(() => undefined);
          r.figures.forEach((f, k) => {
            const target = map[k];
            if (f && target !== undefined) figures[target] = f;
            else if (f) r.strays.push(f);
          });
          r.figures = figures;
          into.rows.push(r);
          for (const l of r.lines) l.table = into.id;
        }
        for (const h of t.headers) h.table = into.id;
        into.structure = mergeStructure(into.structure, {
          ...t.structure,
          header: Math.max(t.structure.header, into.structure.header),
        });
        return;
      }
      out.push(t);
      open = t;
    });
    if (tables.length === 0 && !continued[pageIndex]) open = undefined;
  }
  return out;
}

function mergeStructure(a: StructureScore, b: StructureScore): StructureScore {
  return {
    source: Math.min(a.source, b.source),
    header: Math.min(a.header, b.header),
    columns: (a.columns + b.columns) / 2,
    rows: (a.rows + b.rows) / 2,
    notes: [...new Set([...a.notes, ...b.notes])],
  };
}

// ---------------------------------------------------------------------------------------------
// Confidence
// ---------------------------------------------------------------------------------------------

/** At or above this, a reading is confident: a mismatch found on it is proof; below, a note. */
export const CONFIDENT = 0.75;

/**
 * How sure a reading is, 0-1: the text's own trust times a blend of how the table was identified
 * (header, alignment, clean rows: 60 %) and how many of the relations its rows should satisfy do (40 %,
 * Laplace-smoothed: two of three is 0.6, twenty-nine of thirty 0.94, none of one 0.33). A table a header
 * names, read from the file's text with its figures aligned, is confident once one relation besides
 * the broken one holds; one without a header needs most of a longer chain to hold; plain text and OCR
 * are discounted by their own trust.
 */
export function readingConfidence(structure: StructureScore, held: number, checked: number): number {
  const chain = (held + 1) / (checked + 2);
  const identified = 0.4 * structure.header + 0.4 * structure.columns + 0.2 * structure.rows;
  return round2(structure.source * (0.6 * identified + 0.4 * chain));
}

const round2 = (n: number) => Math.round(n * 100) / 100;
