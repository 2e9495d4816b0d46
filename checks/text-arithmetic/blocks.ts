import type { Box } from "../../document/page-layout.js";
import type { Figure } from "../../document/tables/cells.js";
import type { ReadLine, StructureScore, Table, TableRow } from "../../document/tables/reader.js";
import {
  foldLigatures,
  headerRole,
  isStatementLabel,
  isTaxRow,
  LABELS,
} from "../../document/tables/vocabulary.js";
import { parseAmount, parseNumber } from "../../document/values/amounts.js";
import { type Ctx, confidenceOf, type Mismatch, money, report, SLACK, SUPPORT_NEEDED } from "./findings.js";
import { like } from "./ledger.js";

/**
 * Labelled totals, in blocks of label + amount rows (an items table's line totals, a summary box, a
 * payslip's earnings): a total must be the sum of the amounts above it (any tail of them, since a block
 * may begin with unrelated figures); a total that matched becomes the running subtotal, so subtotal
 * lines, totals repeated under one another and a grand total over subtotals read right, and a total
 * never counts itself. Each row contributes the figure of its table's amount column, not whatever is
 * printed last on its line (a year-to-date column, a quantity). A label set above its value (a summary
 * box stacking them) is joined to it. Net pay and tax rates have their own rules; the amount due printed
 * in several places must agree.
 */

export interface BlockRow {
  page: number;
  line: ReadLine;
  label: string;
  /** The figure the row contributes. */
  figure?: Figure;
  /** Its money figures, left to right. */
  figures: Figure[];
  unreadable: boolean;
  date?: string;
  table?: Table;
  row?: TableRow;
}

interface Term {
  row: BlockRow;
  cents: number;
  unknown?: boolean;
}

/** The column a table's rows sum in: its line totals, else its amounts, else the rightmost money column. */
function sumColumn(table: Table): number | undefined {
  const has = (i: number) => table.rows.some((r) => r.figures[i]?.money);
  const named = ["line_total", "amount", "credit", "unknown"] as const;
  for (const role of named) {
    const cols = table.columns.filter((c) => c.role === role && has(c.index));
    const c = cols[cols.length - 1];
    if (c) return c.index;
  }
  return undefined;
}

/** The document's lines as block rows, in reading order. */
export function blockRows(ctx: Ctx, ledgerTables: ReadonlySet<number>): BlockRow[] {
  const tables = new Map(ctx.reading.tables.map((t) => [t.id, t]));
  const anchors = new Map<ReadLine, { table: Table; row: TableRow }>();
  for (const t of ctx.reading.tables)
    for (const r of t.rows) anchors.set(r.lines[0] as ReadLine, { table: t, row: r });
  const out: BlockRow[] = [];
  const lines = ctx.reading.lines;
  const ytd = ytdColumns(lines);
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i] as ReadLine;
    const anchor = anchors.get(line);
    if (line.table !== undefined && !anchor && !line.header) continue; // a continuation line
    if (anchor && ledgerTables.has(anchor.table.id)) continue;
    if (anchor) {
      const { table, row } = anchor;
      const sc = sumColumn(tables.get(table.id) as Table);
      // A unit price is never what the row adds: a row whose amount is missing (wrapped onto the next
      // line, unreadable) contributes no figure rather than its price.
      const all = row.figures.filter(
        (f, i): f is Figure => f?.money === true && !f.perUnit && table.columns[i]?.role !== "unit_price",
      );
      // A year-to-date figure is never what the row adds while the row prints the period's amount: in a column
      // the header names so, or under a year-to-date header word the reader did not take for the table's
      // (docs/decisions.md "A year-to-date column beside the period's amounts"). The period's amount may be a
      // figure under a column of words the header named ("Pay | Deductions | YTD", the side words no amounts).
      const ytdCol = (f: Figure) =>
        table.columns[row.figures.indexOf(f)]?.role === "ytd" || ytd.under(f, line);
      const period = all.filter((f) => !ytdCol(f));
      const strays = row.strays.filter((f) => f.money && !f.perUnit && !f.percent && !ytd.under(f, line));
      const figures =
        period.length > 0 || all.length === 0 ? all : strays.length > 0 ? [...strays, ...all] : all;
      const chosen = (sc !== undefined ? row.figures[sc] : undefined) ?? figures[figures.length - 1];
      const inPeriod =
        chosen && ytdCol(chosen)
          ? (period[period.length - 1] ?? strays[strays.length - 1] ?? chosen)
          : chosen;
      // Nor is a figure under a quantity column (hours, a base) while the row prints an amount right of it
      // ("Überstunden | 10.50 | 33.61 | 352.91 | 2823.28" under "Std. | Faktor | Bezüge | lfd. Jahr", the rate's
      // header no column the reader took): the amount is the row's, in a column or not. (A figure under a word
      // such as "Base" with only a price left of it is the line's amount: it stays.)
      const measure = (f: Figure) => table.columns[row.figures.indexOf(f)]?.role === "quantity";
      const after = inPeriod && measure(inPeriod) ? inPeriod.box[2] : undefined;
      const amountsAfter =
        after === undefined
          ? []
          : [...period, ...strays]
              .filter((f) => !measure(f) && f.box[0] > after)
              .sort((a, b) => a.box[0] - b.box[0]);
      const figure = amountsAfter[amountsAfter.length - 1] ?? inPeriod;
      out.push({
        page: line.page,
        line,
        label: [row.label, ...row.figures.filter((f) => f?.percent).map((f) => f?.text)].join(" ").trim(),
        ...(figure?.money ? { figure } : {}),
        figures,
        unreadable: row.unreadable,
        ...(row.date ? { date: row.date } : {}),
        table,
        row,
      });
      continue;
    }
    const figures = line.cells
      .map((c) => c.figure)
      .filter((f): f is Figure => f?.money === true && !f.perUnit && !f.percent);
    const label = foldLigatures(
      line.cells
        .filter((c) => !c.figure || !c.figure.money || c.figure.perUnit)
        .map((c) => c.rest ?? c.text)
        .join(" "),
    )
      .replace(/\s+/g, " ")
      .trim();
    const date = line.cells[0]?.date;
    const unreadable = line.cells.some((c) => c.unreadable);
    // The period's amount, not the year-to-date figure beside it (a YTD column the reader read in no table).
    const period = figures.filter((f) => !ytd.under(f, line));
    const own = period.length > 0 && period.length < figures.length ? period[period.length - 1] : undefined;
    const next = lines[i + 1];
    // Labels side by side over their values ("TOTAL HT  TOTAL TVA  TOTAL TTC" / "100,00  10,00  110,00"):
    // one row per label, left to right.
    const across = next ? acrossPairs(line, next) : undefined;
    if (across) {
      for (const [labelCell, f] of across)
        out.push({
          page: line.page,
          line: next as ReadLine,
          label: labelCell,
          figure: f,
          figures: [f],
          unreadable: false,
        });
      i++;
      continue;
    }
    // A label stacked over its value ("Total" / "1,234.00" in a summary box): one row.
    if (figures.length === 0 && !unreadable && label && next && next.table === undefined && !line.header) {
      const nextFigs = next.cells.filter((c) => c.figure?.money);
      const words = next.cells.filter((c) => !c.figure);
      const close = line.baseline - next.baseline <= 1.8 * Math.max(line.size, next.size);
      const under =
        nextFigs.length === 1 &&
        nextFigs[0] &&
        line.cells.some((c) => overlapsOrRightOf(c.box, nextFigs[0]?.box));
      if (close && under && words.length === 0 && next.source !== "plain_text" && line.cells.length === 1) {
        out.push({
          page: line.page,
          line: next,
          label,
          figure: nextFigs[0]?.figure as Figure,
          figures: [nextFigs[0]?.figure as Figure],
          unreadable: false,
        });
        i++;
        continue;
      }
    }
    out.push({
      page: line.page,
      line,
      label,
      ...(figures.length ? { figure: own ?? figures[figures.length - 1] } : {}),
      figures,
      unreadable,
      ...(date ? { date } : {}),
    });
  }
  return out;
}

/**
 * The year-to-date columns of each page: the cells of a header line (words only, two cells or more) that name
 * a year-to-date column ("YTD", "T/m periode", "Cumul annuel", "Progressivo"), until the next header line of the
 * page names none. A money figure under such a cell (overlapping it across) is the year's figure, not the
 * period's.
 */
function ytdColumns(lines: readonly ReadLine[]): { under: (f: Figure, line: ReadLine) => boolean } {
  const at = new Map<ReadLine, readonly Box[]>();
  let current: Box[] = [];
  let page: number | undefined;
  for (const line of lines) {
    if (line.page !== page) {
      page = line.page;
      current = [];
    }
    at.set(line, current);
    if (line.cells.length < 2 || line.cells.some((c) => c.figure?.money || c.date)) continue;
    const roles = line.cells.map((c) => headerRole(c.text));
    if (roles.includes("ytd")) current = line.cells.filter((_, k) => roles[k] === "ytd").map((c) => c.box);
    else if (line.header || roles.filter((r) => r !== undefined).length >= 2) current = [];
  }
  return {
    under: (f, line) =>
      (at.get(line) ?? []).some((b) => Math.min(b[2], f.box[2]) - Math.max(b[0], f.box[0]) > 0),
  };
}

/** Labels in one line over as many amounts in the next, each amount under its label. */
function acrossPairs(line: ReadLine, next: ReadLine): [string, Figure][] | undefined {
  if (line.table !== undefined || next.table !== undefined || line.header || next.source === "plain_text")
    return undefined;
  if (line.cells.length < 2 || line.cells.some((c) => c.figure || c.date)) return undefined;
  if (next.cells.length !== line.cells.length || next.cells.some((c) => !c.figure?.money)) return undefined;
  if (line.baseline - next.baseline > 2.5 * Math.max(line.size, next.size)) return undefined;
  const pairs: [string, Figure][] = [];
  for (const [k, c] of line.cells.entries()) {
    const f = next.cells[k]?.figure as Figure;
    const em = Math.max(line.size, next.size);
    const centre = (f.box[0] + f.box[2]) / 2;
    if (centre < c.box[0] - em || centre > c.box[2] + em) return undefined;
    pairs.push([foldLigatures(c.text), f]);
  }
  return pairs;
}

function overlapsOrRightOf(
  a: [number, number, number, number],
  b: [number, number, number, number] | undefined,
) {
  if (!b) return false;
  return Math.min(a[2], b[2]) - Math.max(a[0], b[0]) > 0;
}

const money2 = (f: Figure | undefined) => f?.money === true;

export interface Deferred {
  /** A sum of a block: counts only once some other sum of the document was seen to add up. */
  needsSupport?: boolean;
  mismatch: Omit<Mismatch, "confidence" | "support">;
  structure: StructureScore;
  figures: Figure[];
  /** The rows the relation reads its expectation from (a total's terms, net pay's gross and deductions). */
  terms: BlockRow[];
  /** A tax's base (a total above it, or the base printed in its own row). */
  base?: Figure;
  /** Printed minus expected, in cents (a sum's or net pay's). */
  difference?: number;
}

/**
 * A relation among block rows that held: a total and the rows it was found to sum (none when it summed
 * rows elsewhere), a tax on its base, net pay on its gross and deductions.
 */
export interface HeldSum {
  kind: "sum" | "tax" | "net";
  total: BlockRow;
  terms: BlockRow[];
}

const LABEL_BLOCK = "a block read from its labels";

/**
 * The structure of a relation among rows: their table's, or a block's read from its labels; its
 * columns score is how many of the terms line up on one edge (the value judged is left out: a value
 * drawn in again by an editor often sits off its column, which is no doubt about the reading).
 */
function blockStructure(ctx: Ctx, total: BlockRow, terms: BlockRow[]): StructureScore {
  if (total.table && terms.every((t) => t.table === total.table)) return total.table.structure;
  const source = ctx.reading.pages.get(total.page)?.source;
  const tol = Math.max(1.5, 0.45 * total.line.size);
  const edges = terms.map((t) => t.figure?.box[2]).filter((x): x is number => x !== undefined);
  const aligned =
    source === "plain_text" || edges.length < 2
      ? 1
      : Math.max(...edges.map((e) => edges.filter((x) => Math.abs(x - e) <= tol).length)) / edges.length;
  const notes = [LABEL_BLOCK];
  if (aligned < 1) notes.push("its amounts not in one column");
  if (source === "plain_text") notes.push("read from plain text without positions");
  return {
    source:
      source === "plain_text" ? 0.8 : Math.min(1, ...[total, ...terms].map((t) => t.figure?.confidence ?? 1)),
    header: 0.7,
    columns: aligned,
    rows: 1,
    notes,
  };
}

/**
 * Blocks of label + amount rows between headings: a labelled total must equal the sum of the amounts
 * above it. Returns the mismatches, weighed once every other relation of the document is known.
 */
export function checkBlocks(
  ctx: Ctx,
  rows: BlockRow[],
  items: ReadonlySet<ReadLine>,
  hasLedger: boolean,
  held: HeldSum[] = [],
): Deferred[] {
  const deferred: Deferred[] = [];
  // Several tax rates: each applies to part of the items, so a tax is checked only on a base it prints.
  const rates = new Set(
    rows
      .filter((r) => isTaxRow(r.label))
      .map((r) => /(\d+(?:[.,]\d+)?)\s?%/.exec(r.label)?.[1]?.replace(",", "."))
      .filter(Boolean),
  );
  let terms: Term[] = [];
  // Totals that matched since the block began: a grand total may be their sum (subtotal lines).
  let subtotals: BlockRow[] = [];
  // Blocks of this page closed by a heading (an earnings table above a deductions table), and the
  // amounts above the run of totals the current total is in: a summary under several tables ("Total
  // gross / Total deductions / Net pay") sums each of them, not only the rows right above it.
  let closed: Term[][] = [];
  let runBase: Term[] | undefined;
  // The totals of the current run printed so far (surcharges, discounts under the items' sum).
  let run: BlockRow[] = [];
  const seen: BlockRow[] = [];
  let page = rows[0]?.page;
  let table: Table | undefined;
  let lastPage: Term[] = [];
  let lastRow: { table: Table; row: BlockRow } | undefined;
  for (const r of rows) {
    // The block of a table's rows is open while no total or carried sum ended it: the header the table repeats
    // at the top of a page is then no heading, and lines of no table between its pages (a page's footer) do not
    // end it.
    const open =
      lastRow !== undefined && lastRow.row.row?.kind === "entry" && !isTotalRow(lastRow.row)
        ? lastRow.table
        : undefined;
    if (r.line.header && open !== undefined && r.line.table === open.id) continue;
    // A new page starts a new block, unless the table of the rows above continues on it (past lines of no table
    // too, while its block is open).
    if (r.page !== page) {
      page = r.page;
      if (!(r.table && r.table === table) && !(r.table !== undefined && r.table === open)) {
        // The amounts of the page before, when plain amounts: an items table continued on this page under a
        // header set a little differently is read as another table, and the total under it sums both.
        lastPage = terms.length > 0 && !terms.some((t) => t.unknown || isTotalRow(t.row)) ? terms : [];
        terms = [];
        subtotals = [];
        closed = [];
        runBase = undefined;
      }
    }
    table = r.table;
    if (r.table && r.row) lastRow = { table: r.table, row: r };
    // A sum carried from one page of an items table to the next ("Übertrag", "carried forward"): a total
    // of the rows above it, and the first term of the rows below.
    const carried = r.row !== undefined && r.row.kind !== "entry" && LABELS.carry.test(r.label);
    const boundary =
      (r.figures.length === 0 && !r.unreadable) ||
      (r.date !== undefined && r.figures.length >= 2) ||
      // A statement's summary lines ("Total payments", "Opening balance") are no block sums; in a table of
      // a document without a ledger ("Total payments" of a payslip's earnings) they are.
      (isStatementLabel(r.label) && !carried && (hasLedger || !r.row));
    if (boundary) {
      // A heading starts a new block; a line of words with digits between the amounts ("3 x 11,71",
      // "Ref. 4471") continues the description above it.
      // A line that shows an amount the reader could not take ("599,71- €") leaves the block unknown.
      if (
        r.figures.length === 0 &&
        /\d[.,]\d{2}\s?[-−]|[-−]\s?\d+[.,]\d{2}\b|[£$€]\s?\d|\d[.,]\d{2}\s?[£$€]/.test(r.label)
      ) {
        terms.push({ row: r, cents: 0, unknown: true });
        continue;
      }
      if (r.figures.length === 0 && r.label && !r.row && !/\d/.test(r.label)) {
        if (terms.length && !terms.some((t) => t.unknown)) closed.push(terms);
        terms = [];
        runBase = undefined;
      }
      continue;
    }
    if (r.unreadable || !r.figure) {
      // A figure of this block could not be read: nothing above the next total can be added up.
      terms.push({ row: r, cents: 0, unknown: true });
      continue;
    }
    // A measure printed alone among the amounts ("Total weight (kg) 12.50", "Total hours 162.50"): no
    // money. A row with a quantity, a rate and an amount ("Heures supplémentaires 6,00 36,00 216,00") is.
    if (LABELS.measure.test(r.label) && r.figures.length === 1 && !r.figure.currency) continue;
    const v = r.figure.cents;
    seen.push(r);
    // A net line right under a payslip's deductions total ("Gross pay / Total deductions / Net amount") is its
    // net pay, whatever the same words mean on an invoice (docs/decisions.md "Net right under the deductions").
    const prev = seen[seen.length - 2];
    const underDeductions =
      /\bnet\b|\bnetto\b|\bneto\b/i.test(r.label) &&
      prev !== undefined &&
      prev.page === r.page &&
      LABELS.deductionsTotal.test(prev.label) &&
      !LABELS.gross.test(prev.label);
    if (
      (underDeductions || (LABELS.net.test(r.label) && !LABELS.subtotal.test(r.label))) &&
      !LABELS.gross.test(r.label)
    ) {
      const before = ctx.verified;
      const d = checkNet(ctx, r, seen);
      if (d) deferred.push(d);
      // Net pay that held read the totals above it (the gross, the deductions), not their rows.
      if (ctx.verified > before)
        held.push({
          kind: "net",
          total: r,
          terms: seen.slice(0, -1).filter((x) => isTotalRow(x) || LABELS.deductionsTotal.test(x.label)),
        });
      continue;
    }
    if (LABELS.change.test(r.label) && !LABELS.totalish.test(r.label)) checkChange(ctx, r, seen);
    if (isTaxRow(r.label)) {
      const before = ctx.verified;
      const d = checkTaxRate(ctx, r, terms, seen, rates, items, rows);
      if (d) deferred.push(d);
      // A tax that held read its base: a total above it, or the one amount above it.
      if (ctx.verified > before) {
        const base =
          [...terms].reverse().find((t) => isTotalRow(t.row)) ?? (terms.length === 1 ? terms[0] : undefined);
        held.push({ kind: "tax", total: r, terms: base ? [base.row] : [] });
      }
    }
    // "Of which VAT 20%", "in diesem Beitrag enthaltene Versicherungsteuer (35,13 €)": a part of an amount
    // above, printed for information; never added again.
    if (LABELS.taxIncluded.test(r.label) && LABELS.anyTax.test(r.label) && !LABELS.totalish.test(r.label))
      continue;
    // A line printed for information ("Vakantietoeslag reservering", "Holiday pay accrued"): never a term.
    if (LABELS.memo.test(r.label) && !LABELS.totalish.test(r.label)) continue;
    // A payslip's taxable pay ("Taxable wages", "Steuerbrutto", "Net imposable"): gross less the pre-tax
    // deductions, printed between the deductions as the base of the taxes under it; never a term.
    if (LABELS.wageBase.test(r.label) && !LABELS.totalish.test(r.label)) continue;
    // In a table of money out and money in columns (a statement without a balance column), an amount out is
    // taken off: a balance carried at the page's foot ("À reporter") is the opening plus the page's moves.
    const out =
      r.table !== undefined &&
      r.row !== undefined &&
      r.table.columns.some((c) => c.role === "credit") &&
      r.table.columns[r.row.figures.indexOf(r.figure)]?.role === "debit";
    const subtracted =
      (out || LABELS.minus.test(r.label) || LABELS.discount.test(r.label) || LABELS.paid.test(r.label)) &&
      v > 0;
    const signedV = subtracted ? -v : v;
    const isTotal =
      carried ||
      // A gross pay line ("Brutto", "Lordo", "Total earnings") totals the earnings.
      // A subtotal in any of its words ("Imponibile", "Base imponible", "Subtotaal") is one too; not a
      // "net amount", which on a payslip is gross minus deductions (its own rule).
      ((LABELS.totalish.test(r.label) ||
        (LABELS.subtotal.test(r.label) && !/\bnet\b|netto|\bneto\b/i.test(r.label)) ||
        r.row?.kind === "carry" ||
        (LABELS.gross.test(r.label) && !LABELS.net.test(r.label))) &&
        (!LABELS.taxIncluded.test(r.label) || totalIncludingTax(r.label)) &&
        !LABELS.discount.test(r.label));
    if (!isTotal) {
      terms.push({ row: r, cents: signedV });
      runBase = undefined;
      continue;
    }
    // The first total of a run keeps the amounts above it for the totals printed under it.
    if (runBase === undefined) {
      runBase = terms.filter((t) => !t.unknown);
      run = [];
    }
    const runBefore = run;
    run = [...run, r];
    if (terms.some((t) => t.unknown)) {
      terms = [{ row: r, cents: v }];
      subtotals = [r];
      continue;
    }
    // The total is compared with every tail of the amounts above it (the total itself never among
    // them), and with every tail of two or more totals above it (a grand total over subtotals).
    const tails: number[] = [];
    let sum = 0;
    for (let i = terms.length - 1; i >= 0; i--) {
      sum += (terms[i] as Term).cents;
      tails.push(sum);
    }
    const grand: number[] = [];
    sum = 0;
    for (let i = subtotals.length - 1; i >= 0; i--) {
      sum += (subtotals[i] as BlockRow).figure?.cents ?? 0;
      if (i < subtotals.length - 1) grand.push(sum);
    }
    const near = (t: number) => Math.abs(Math.abs(t) - Math.abs(v)) <= SLACK;
    const byTerms = tails.some(near);
    const byTotals = !byTerms && grand.some(near);
    // Another block of the page (a table above under its own heading), or the amounts above the run
    // of totals, that this total is the sum of: it totals them, and the rows right above are not its.
    // Each block also as its two sides when it mixes signs (earnings and deductions in one column): a
    // gross total sums the positive amounts, a deductions total the negative ones.
    const candidates = [
      ...sides(terms),
      ...columnsApart(terms),
      ...(runBase && runBase !== terms ? [runBase, ...sides(runBase), ...columnsApart(runBase)] : []),
      ...closed.flatMap((b) => [b, ...sides(b), ...columnsApart(b)]),
      // The deductions of a payslip under several headings ("Pre-tax deductions / Taxes / Post-tax
      // deductions"): the blocks closed by those headings and the rows since, together.
      ...unions(closed, terms),
      ...(lastPage.length > 0 && terms.length > 0 && !terms.some((t) => t.unknown || isTotalRow(t.row))
        ? [[...lastPage, ...terms]]
        : []),
    ];
    // A grand total under a run of totals ("Positionssumme / Zuschläge / Abschläge / Rechnungssumme"):
    // the amounts above the run plus the run's totals.
    const runSum = runBefore.reduce((a, x) => a + (x.figure?.cents ?? 0), 0);
    const byRun =
      runBefore.length > 0 && runBase !== undefined && tailsOf(runBase).some((t) => near(t + runSum));
    const sameTable =
      subtotals.length >= 2 && r.table !== undefined && subtotals.every((x) => x.table === r.table);
    // A deductions total under a gross total that summed another block ("Lordo / Totale trattenute" under the
    // earnings and the deductions tables): the amounts above the run are its terms, never the gross above it.
    const deductionsInRun =
      terms.length === 1 &&
      runBefore.length > 0 &&
      LABELS.deductionsTotal.test(r.label) &&
      !LABELS.gross.test(r.label) &&
      runBase !== undefined &&
      runBase.length >= 2 &&
      !runBase.some((t) => t.unknown);
    // Its blocks: none another total of the document already summed (the earnings under the gross).
    const summed = new Set(held.flatMap((h) => h.terms));
    const unsummed = deductionsInRun
      ? candidates.filter((b) => b.length >= 2 && !b.some((t) => t.unknown || summed.has(t.row)))
      : [];
    const judged =
      terms.length >= 2 || (terms.length === 1 && sameTable) || (deductionsInRun && unsummed.length > 0);
    const byOtherBlock =
      !byTerms &&
      !byTotals &&
      (byRun ||
        candidates.some((block) => tailsOf(block).some(near)) ||
        // A total printed before its terms ("Total due / Net / VAT"), or the total of a quantity column
        // ("Total hours" under an hours column): it totals those, not the amounts above it.
        (judged &&
          (sumsRowsBelow(rows, rows.indexOf(r)) ||
            totalsAColumn(ctx, r, terms) ||
            netOfGrossLines(
              rows,
              rows.indexOf(r),
              terms.reduce((a, t) => a + t.cents, 0),
            ) ||
            convertedTotal(ctx, rows, rows.indexOf(r)))));
    if (byOtherBlock) {
      ctx.checked++;
      ctx.verified++;
      ctx.confirmed.add(r.figure);
      const other = byRun
        ? [...(runBase ?? []), ...runBefore.map((x) => ({ row: x, cents: 0 }))]
        : candidates.find((block) => tailsOf(block).some(near));
      held.push({ kind: "sum", total: r, terms: (other ?? []).map((t) => t.row) });
      subtotals = [...subtotals, r];
      terms = [{ row: r, cents: v }];
      continue;
    }
    if (byTerms || byTotals || judged) ctx.checked++;
    if (byTerms || byTotals) {
      ctx.verified++;
      ctx.confirmed.add(r.figure);
      const k = byTerms ? tails.findIndex(near) : grand.findIndex(near);
      held.push({
        kind: "sum",
        total: r,
        terms: byTerms
          ? terms.slice(terms.length - 1 - k).map((t) => t.row)
          : subtotals.slice(subtotals.length - 2 - k),
      });
      subtotals = byTotals ? [r] : [...subtotals, r];
    } else if (judged) {
      const overSubtotals = terms.length === 1 && sameTable;
      // Under several blocks (a summary under the earnings and deductions tables), the total is read as
      // the sum of the block it is nearest to: an edited line moves a sum a little, not to another table's.
      const sumOf = (block: Term[]) => block.reduce((a, t) => a + t.cents, 0);
      const block = overSubtotals
        ? undefined
        : // A deductions total in a run is never the sum of the gross above it.
          (deductionsInRun ? unsummed : [terms, ...candidates]).reduce((a, b) =>
            Math.abs(Math.abs(sumOf(b)) - Math.abs(v)) < Math.abs(Math.abs(sumOf(a)) - Math.abs(v)) ? b : a,
          );
      const expected = overSubtotals ? (grand[grand.length - 1] as number) : sumOf(block as Term[]);
      const sub = LABELS.subtotal.test(r.label) || carried;
      const termRows = overSubtotals ? subtotals : (block as Term[]).map((t) => t.row);
      const skipped = skippedFigure(rows, rows.indexOf(r), termRows, v - expected);
      deferred.push({
        needsSupport: true,
        mismatch: {
          code: sub ? "subtotal_mismatch" : "total_mismatch",
          page: r.page,
          at: r.figure,
          message: `On page ${r.page}, "${r.label}" is ${r.figure.text}, but the ${termRows.length} ${overSubtotals ? "subtotals" : "amounts"} above it (${termRows
            .slice(-6)
            .map((t) => t.figure?.text)
            .join(
              ", ",
            )}${termRows.length > 6 ? ", ..." : ""}) add up to ${money(ctx, expected)} (a difference of ${money(ctx, v - expected)}).`,
          printed: r.figure.text,
          expected: like(r.figure, expected, ctx.style),
          evidence: {
            label: r.label,
            terms: termRows.map((t) => t.figure?.text),
            lineItems: termRows.filter((t) => items.has(t.line)).length,
          },
          proof: 9,
          ...(skipped
            ? {
                doubt: `The difference is the amount of "${skipped.label}" (${skipped.figure?.text}) printed above it, which the reading did not count: a line read as no term, so this is an anomaly, not proof.`,
              }
            : {}),
        },
        structure: blockStructure(ctx, r, termRows),
        figures: [r.figure, ...termRows.map((t) => t.figure).filter((f): f is Figure => !!f)],
        terms: termRows,
        difference: Math.abs(v) - Math.abs(expected),
      });
      subtotals = [...subtotals, r];
    } else subtotals = [...subtotals, r];
    terms = [{ row: r, cents: v }];
  }
  return deferred;
}

/**
 * A payslip's totals printed in a box above its tables ("Brutto / Summe Abzüge / Nettoverdienst" over the
 * earnings and the deductions): each total of the box against the blocks under it, split by their headings
 * (docs/decisions.md "A totals box above the tables"). A box total that some block below adds up to holds;
 * when the box has a gross and a deductions total, there are exactly two blocks and one total holds on its
 * block, the other total is judged against the other block (a mismatch that needs support as any sum's).
 */
export function checkTotalsAbove(
  ctx: Ctx,
  rows: readonly BlockRow[],
  held: HeldSum[],
  deferred: Deferred[],
): void {
  const pages = [...new Set(rows.map((r) => r.page))];
  for (const page of pages) {
    const on = rows.filter((r) => r.page === page);
    // The box: the first money lines of the page, each a gross, deductions or net total.
    const first = on.findIndex((r) => r.figure?.money);
    const box: BlockRow[] = [];
    let k = first;
    for (; k >= 0 && k < on.length; k++) {
      const r = on[k] as BlockRow;
      if (!r.figure?.money || r.unreadable || r.table !== undefined) break;
      // A net line right under the deductions total is the net pay ("Net amount"; docs/decisions.md "Net right
      // under the deductions"), as in checkBlocks.
      const prev = box[box.length - 1];
      const netUnderDeductions =
        /\bnet\b|\bnetto\b|\bneto\b/i.test(r.label) &&
        prev !== undefined &&
        LABELS.deductionsTotal.test(prev.label) &&
        !isGross(prev);
      if (
        !(
          isGross(r) ||
          LABELS.deductionsTotal.test(r.label) ||
          LABELS.net.test(r.label) ||
          netUnderDeductions
        )
      )
        break;
      if (LABELS.ytd.test(r.label)) break;
      box.push(r);
    }
    const gross = box.find(isGross);
    const deductions = box.find((r) => LABELS.deductionsTotal.test(r.label) && !isGross(r));
    if (!gross && !deductions) continue;
    // The blocks under it: amounts under a heading, up to the next heading; a block with a total of its own
    // is summed by the rule of blocks, not here.
    const blocks: BlockRow[][] = [];
    let current: BlockRow[] | undefined;
    let own = false;
    for (; k >= 0 && k < on.length; k++) {
      const r = on[k] as BlockRow;
      if (r.figures.length === 0 && !r.unreadable) {
        if (r.label && !/\d/.test(r.label) && !r.row) {
          if (current?.length) blocks.push(current);
          current = [];
        }
        continue;
      }
      if (!current) break;
      if (r.unreadable || !r.figure) {
        own = true;
        break;
      }
      if (isTotalRow(r) || LABELS.deductionsTotal.test(r.label) || LABELS.net.test(r.label)) {
        own = true;
        break;
      }
      if (LABELS.memo.test(r.label) || LABELS.wageBase.test(r.label)) continue;
      current.push(r);
    }
    // The last block's table going on over the next pages (a deductions table whose last rows print on page 2):
    // its entries there are the block's too, past the header the table repeats and the lines of no table
    // between its pages (a page's footer).
    const last = current?.[current.length - 1];
    if (!own && k >= on.length && last?.table !== undefined && current) {
      for (const r of rows) {
        if (r.page <= page) continue;
        if (r.table !== last.table) {
          if (r.figures.length === 0 || (r.table === undefined && !r.figure?.money)) continue;
          break;
        }
        if (r.figures.length === 0 && !r.unreadable) continue;
        if (r.unreadable || !r.figure || isTotalRow(r) || LABELS.deductionsTotal.test(r.label)) {
          own = true;
          break;
        }
        if (LABELS.net.test(r.label)) {
          own = true;
          break;
        }
        if (LABELS.memo.test(r.label) || LABELS.wageBase.test(r.label)) continue;
        current.push(r);
      }
    }
    if (own) continue;
    if (current?.length) blocks.push(current);
    // Earnings and deductions side by side under one header row ("Details | Units | Earnings | Deductions"),
    // each row's amount in its side's column: two blocks, one per column.
    blocks.splice(0, blocks.length, ...blocks.flatMap(sidesApart));
    if (blocks.length === 0) continue;
    const sumOf = (b: readonly BlockRow[]) => b.reduce((a, r) => a + Math.abs(r.figure?.cents ?? 0), 0);
    const matches = (t: BlockRow, b: readonly BlockRow[]) =>
      Math.abs(sumOf(b) - Math.abs(t.figure?.cents ?? Number.NaN)) <= SLACK;
    const totals = [gross, deductions].filter((t): t is BlockRow => t !== undefined);
    const matched = new Map<BlockRow, BlockRow[]>();
    for (const t of totals) {
      const b = blocks.find((x) => matches(t, x) && ![...matched.values()].includes(x));
      if (!b) continue;
      ctx.checked++;
      ctx.verified++;
      ctx.confirmed.add(t.figure as Figure);
      held.push({ kind: "sum", total: t, terms: b });
      matched.set(t, b);
    }
    if (!gross || !deductions || blocks.length !== 2 || matched.size !== 1) continue;
    const [t, other] = matched.has(gross)
      ? [deductions, blocks.find((b) => b !== matched.get(gross))]
      : [gross, blocks.find((b) => b !== matched.get(deductions))];
    if (!other || !t.figure) continue;
    // The box lists the gross before the deductions, as the blocks below come: the earnings first.
    if (blocks.indexOf(other) !== (t === gross ? 0 : 1)) continue;
    const expected = sumOf(other);
    const v = Math.abs(t.figure.cents);
    ctx.checked++;
    deferred.push({
      needsSupport: true,
      mismatch: {
        code: "total_mismatch",
        page: t.page,
        at: t.figure,
        message: `On page ${t.page}, "${t.label}" is ${t.figure.text}, but the ${other.length} amounts of the block it totals below (${other
          .slice(-6)
          .map((x) => x.figure?.text)
          .join(
            ", ",
          )}${other.length > 6 ? ", ..." : ""}) add up to ${money(ctx, expected)} (a difference of ${money(ctx, v - expected)}).`,
        printed: t.figure.text,
        expected: like(t.figure, t.figure.cents < 0 ? -expected : expected, ctx.style),
        evidence: { label: t.label, terms: other.map((x) => x.figure?.text), box: "above" },
        proof: 9,
      },
      structure: blockStructure(ctx, t, other),
      figures: [t.figure, ...other.map((x) => x.figure).filter((f): f is Figure => !!f)],
      terms: other,
      difference: v - expected,
    });
  }
}

/**
 * A payslip's block whose amounts stand in two columns, the first column's rows all above the second's (the
 * earnings and the deductions under one header row that names them side by side): the two columns apart.
 */
function sidesApart(block: BlockRow[]): BlockRow[][] {
  const parts = columnsApart(block.map((row) => ({ row, cents: row.figure?.cents ?? 0 })));
  return parts.length === 2 ? parts.map((p) => p.map((t) => t.row)) : [block];
}

const isGross = (r: BlockRow) => LABELS.gross.test(r.label) && !LABELS.net.test(r.label);

/**
 * A money line printed above a total in its page's block, which the sum did not take, whose amount is the
 * difference (docs/decisions.md "A difference that is a line not counted"): a line the reading took for no
 * term ("Netto" above "Totaal incl. btw" read as a net pay, a label it does not know), not an edit.
 */
function skippedFigure(
  rows: readonly BlockRow[],
  i: number,
  terms: readonly BlockRow[],
  difference: number,
): BlockRow | undefined {
  const r = rows[i];
  if (!r || Math.abs(difference) <= SLACK) return undefined;
  const taken = new Set(terms);
  // Up from the total to the total or heading above its block: lines of an earlier block are no candidates.
  for (let k = i - 1; k >= 0 && k >= i - 12; k--) {
    const x = rows[k] as BlockRow;
    if (x.page !== r.page) break;
    if (x.figures.length === 0 && !x.unreadable && x.label && !/\d/.test(x.label)) break;
    if (taken.has(x)) continue;
    if (isTotalRow(x)) break;
    if (!x.figure?.money) continue;
    if (Math.abs(Math.abs(x.figure.cents) - Math.abs(difference)) <= SLACK) return x;
  }
  return undefined;
}

/**
 * Whether the 2-4 amounts right below row `i` (its page, up to a line without one), a tax among them, add up
 * to its figure: the amount due printed first, its net and tax under it.
 */
function sumsRowsBelow(rows: readonly BlockRow[], i: number): boolean {
  const r = rows[i];
  if (!r?.figure) return false;
  let sum = 0;
  let tax = false;
  for (let k = i + 1, n = 0; k < rows.length && n < 4; k++, n++) {
    const x = rows[k] as BlockRow;
    if (x.page !== r.page || !x.figure || x.unreadable || x.date !== undefined) return false;
    sum += Math.abs(x.figure.cents);
    tax ||= isTaxRow(x.label);
    if (n >= 1 && tax && Math.abs(sum - Math.abs(r.figure.cents)) <= SLACK) return true;
  }
  return false;
}

/**
 * Whether a total's figure is the sum of a column of a table on its page other than the one its block adds:
 * a quantity column ("Total hours" under an hours column), or another money column of the table its terms
 * come from, when that table prints several (a net subtotal under a table of net and gross line amounts).
 * A single money column is never tried whole: its entries may include lines that are no terms (a
 * payslip's net pay beside the deductions adds up to the gross).
 */
function totalsAColumn(ctx: Ctx, r: BlockRow, terms: readonly Term[]): boolean {
  const target = Math.abs(r.figure?.cents ?? Number.NaN);
  const own = new Set(terms.map((t) => t.row.table).filter((t): t is Table => t !== undefined));
  for (const t of ctx.reading.tables) {
    if (!t.rows.some((x) => x.page === r.page)) continue;
    const entries = t.rows.filter((x) => x.kind === "entry" && x.lines[0] !== r.line && !x.unreadable);
    const moneyCols = t.columns.filter(
      (c) =>
        c.role !== "unit_price" &&
        c.role !== "balance" &&
        entries.filter((x) => x.figures[c.index]?.money && !x.figures[c.index]?.perUnit).length >= 2,
    );
    for (const c of t.columns) {
      const money = moneyCols.includes(c);
      if (c.role !== "quantity" && !(money && own.has(t) && moneyCols.length >= 2)) continue;
      const figs = entries
        .map((x) => x.figures[c.index])
        .filter((f): f is Figure => f !== undefined && !f.percent);
      if (figs.length < 2) continue;
      if (Math.abs(figs.reduce((a, f) => a + Math.abs(f.cents), 0) - target) <= SLACK) return true;
    }
  }
  return false;
}

/**
 * A total converted into another currency ("Total USD 72.00 / Exchange rate 0.9215 / Total EUR 66.35"): the
 * total above it times the rate printed in its label or on a line between them, or divided by it.
 */
function convertedTotal(ctx: Ctx, rows: readonly BlockRow[], i: number): boolean {
  const r = rows[i];
  if (!r?.figure) return false;
  const rateOf = (label: string) => {
    const m =
      /\b(?:exchange rate|conversion rate|rate|fx|wechselkurs|umrechnungskurs|kurs|taux(?: de change)?|wisselkoers|koers|tipo de cambio|tasa de cambio|cambio|tasso(?: di cambio)?)\b[^\d]{0,12}(\d+(?:[.,]\d+)?)/i.exec(
        label,
      );
    const v = m?.[1] ? parseNumber(m[1], ctx.style)?.value : undefined;
    return v !== undefined && v > 0 && v !== 1 ? v : undefined;
  };
  const rates = [rateOf(r.label)];
  for (let k = i - 1; k >= 0 && k >= i - 4; k--) {
    const x = rows[k] as BlockRow;
    if (x.page !== r.page) break;
    rates.push(rateOf(x.label));
    if (!x.figure || !LABELS.totalish.test(x.label)) continue;
    const above = Math.abs(x.figure.cents);
    const v = Math.abs(r.figure.cents);
    for (const rate of rates) {
      if (rate === undefined) continue;
      if (Math.abs(above * rate - v) <= SLACK + 1 || Math.abs(above / rate - v) <= SLACK + 1) return true;
    }
  }
  return false;
}

/**
 * A net subtotal under gross line amounts ("Subtotal 70.00 / VAT 20% 14.00" under lines of 24.00 and
 * 60.00): the subtotal plus the tax rows right under it is the sum of the lines.
 */
function netOfGrossLines(rows: readonly BlockRow[], i: number, linesSum: number): boolean {
  const r = rows[i];
  if (!r?.figure || !LABELS.subtotal.test(r.label)) return false;
  let sum = Math.abs(r.figure.cents);
  for (let k = i + 1; k < rows.length && k <= i + 3; k++) {
    const x = rows[k] as BlockRow;
    if (x.page !== r.page || !x.figure || !(isTaxRow(x.label) || LABELS.anyTax.test(x.label))) break;
    if (LABELS.totalish.test(x.label) && !LABELS.anyTax.test(x.label)) break;
    sum += Math.abs(x.figure.cents);
    if (Math.abs(sum - Math.abs(linesSum)) <= SLACK) return true;
  }
  return false;
}

/**
 * "Total incl. VAT", "Totaal incl. btw", "Gesamtbetrag inkl. MwSt.": a total that includes the tax (the
 * gross total of a receipt), not the tax included in it ("incl. VAT 21%", "davon MwSt."): the total word
 * comes first and no rate is printed.
 */
function totalIncludingTax(label: string): boolean {
  const total = LABELS.totalish.exec(label);
  const incl = LABELS.taxIncluded.exec(label);
  return total !== null && incl !== null && total.index < incl.index && !/%/.test(label);
}

/** A block's positive and negative amounts apart, when it has both. */
function sides(block: Term[]): Term[][] {
  const pos = block.filter((t) => t.cents > 0);
  const neg = block.filter((t) => t.cents < 0);
  return pos.length && neg.length ? [pos, neg] : [];
}

/**
 * A block's amounts as two columns set side by side, when it has them: earnings and deductions in two
 * columns of one table under headers the vocabulary does not know ("Bezüge | Gesetzliche Abzüge"), the rows
 * of the first column all above those of the second. Each column is a block of its own (its total sums it);
 * a block whose amounts share one right edge, or whose columns interleave, has none.
 */
function columnsApart(block: Term[]): Term[][] {
  const known = block.filter((t) => !t.unknown && t.row.figure !== undefined);
  if (known.length < 2 || known.length !== block.length) return [];
  const edge = (t: Term) => (t.row.figure as Figure).box[2];
  const tol = (t: Term) => Math.max(1.5, 0.45 * t.row.line.size);
  const groups: Term[][] = [];
  for (const t of known) {
    const last = groups[groups.length - 1];
    const head = last?.[0];
    if (last && head && Math.abs(edge(head) - edge(t)) <= tol(t)) last.push(t);
    else groups.push([t]);
  }
  if (groups.length !== 2) return [];
  const [a, b] = groups as [Term[], Term[]];
  // Two columns, not one ragged one: the second column's edge a few characters right of the first's.
  const gap = Math.abs(edge(b[0] as Term) - edge(a[0] as Term));
  return gap >= 3 * (a[0] as Term).row.line.size ? [a, b] : [];
}

/**
 * The last two or more blocks closed by headings, each with the amounts since the last heading: the rows of
 * one total set under several headings. Only blocks of plain amounts (no total among them).
 */
function unions(closed: readonly Term[][], terms: readonly Term[]): Term[][] {
  const out: Term[][] = [];
  let acc: Term[] = terms.some((t) => t.unknown) ? [] : [...terms];
  if (acc.length === 0) return out;
  for (let k = closed.length - 1; k >= 0 && out.length < 4; k--) {
    const b = closed[k] as Term[];
    if (b.some((t) => t.unknown || isTotalRow(t.row))) break;
    acc = [...b, ...acc];
    out.push(acc);
  }
  return out;
}

/**
 * Whether the rows a sum's mismatch accuses were read without doubt, so that a total taking the sum's own
 * figure may stand for them (docs/decisions.md "Support comes from the side the mismatch accuses"): every
 * row is a labelled line of PDF text whose amount is one run printed like the others (the same marks before
 * and after the digits, the same decimals) on one edge of a column; and no single row explains the
 * difference (it equals one amount, a line counted that is no term, or twice one, a sign not read; or it is
 * a whole thousand, a digit group lost). A figure misread, a sign or a line of another kind read as a term:
 * each leaves one of these traces; a line edited in the issuer's source leaves none.
 */
function rowsReadWithoutDoubt(ctx: Ctx, d: Deferred): boolean {
  const rows = d.terms;
  const diff = Math.abs(d.difference ?? Number.NaN);
  if (rows.length === 0 || !Number.isFinite(diff)) return false;
  const figs = rows.map((t) => t.figure);
  if (figs.some((f) => !f?.money || f.confidence < 1)) return false;
  if (rows.some((t) => t.unreadable || !/\p{L}/u.test(t.label))) return false;
  const shape = (f: Figure) => {
    const t = f.text.trim();
    const first = t.search(/\d/);
    const last = t.length - 1 - [...t].reverse().findIndex((c) => /\d/.test(c));
    return `${t.slice(0, first).replace(/\s+/g, "")}|${t.slice(last + 1).replace(/\s+/g, "")}|${f.decimals}`;
  };
  const shapes = new Set((figs as Figure[]).map(shape));
  if (shapes.size > 1) return false;
  const size = Math.max(...rows.map((t) => t.line.size));
  const tol = Math.max(1.5, 0.45 * size);
  const aligned = (edge: 0 | 2) => {
    const xs = (figs as Figure[]).map((f) => f.box[edge]);
    return Math.max(...xs) - Math.min(...xs) <= tol;
  };
  if (rows.length > 1 && !aligned(2) && !aligned(0)) return false;
  const near = (a: number, b: number) => Math.abs(a - b) <= SLACK;
  if ((figs as Figure[]).some((f) => near(diff, Math.abs(f.cents)) || near(diff, 2 * Math.abs(f.cents))))
    return false;
  if (diff >= 100_000 && diff % 100_000 === 0) return false;
  // Another figure of a row read as its amount (the unit price, a column beside it).
  if (
    rows.some((t) =>
      t.figures.some(
        (g) => g !== t.figure && near(diff, Math.abs(Math.abs(g.cents) - Math.abs(t.figure?.cents ?? 0))),
      ),
    )
  )
    return false;
  return ctx.reading.pages.get(d.mismatch.page)?.source !== "plain_text";
}

/** A line entry (no total, no tax) of one of the tables. */
const isEntryOf = (r: BlockRow, tables: ReadonlySet<number>) =>
  r.table !== undefined &&
  tables.has(r.table.id) &&
  r.row?.kind === "entry" &&
  !isTotalRow(r) &&
  !isTaxRow(r.label);

const isTotalRow = (r: BlockRow) =>
  LABELS.totalish.test(r.label) || LABELS.subtotal.test(r.label) || LABELS.gross.test(r.label);

/** The sums of every tail of a block's amounts (the last one, the last two, ...). */
function tailsOf(block: Term[]): number[] {
  const out: number[] = [];
  let sum = 0;
  for (let i = block.length - 1; i >= 0; i--) {
    sum += (block[i] as Term).cents;
    out.push(sum);
  }
  return out;
}

/**
 * A receipt's change: the amount tendered (the row above) minus the total before it. It only confirms
 * the reading when it holds (several tenders, a tip or a rounding make it something else, so a
 * difference says nothing).
 */
function checkChange(ctx: Ctx, change: BlockRow, seen: BlockRow[]): void {
  const tendered = seen[seen.length - 2];
  const total = [...seen.slice(0, -2)]
    .reverse()
    .find((x) => LABELS.totalish.test(x.label) && !LABELS.subtotal.test(x.label));
  if (!tendered?.figure || !total?.figure || !change.figure || LABELS.totalish.test(tendered.label)) return;
  const given = Math.abs(tendered.figure.cents) - Math.abs(total.figure.cents);
  if (given <= 0 || Math.abs(given - Math.abs(change.figure.cents)) > SLACK) return;
  ctx.checked++;
  ctx.verified++;
  ctx.confirmed.add(total.figure);
}

function sameYtd(a: string, b: string) {
  return LABELS.ytd.test(a) === LABELS.ytd.test(b);
}

/** Gross − deductions = net, with the latest gross and deductions total above the net row. */
function checkNet(ctx: Ctx, net: BlockRow, seen: BlockRow[]): Deferred | undefined {
  const before = seen.slice(0, -1).reverse();
  const gross = before.find(
    (r) => LABELS.gross.test(r.label) && !LABELS.net.test(r.label) && sameYtd(r.label, net.label),
  );
  const deductions = before.find(
    (r) =>
      LABELS.deductionsTotal.test(r.label) &&
      sameYtd(r.label, net.label) &&
      (!gross || seen.indexOf(r) > seen.indexOf(gross)),
  );
  if (!gross?.figure || !deductions?.figure || !net.figure) return undefined;
  const expected = gross.figure.cents - Math.abs(deductions.figure.cents);
  const printed = net.figure.cents;
  // Deductions totalled in parts ("Steuerrechtliche Abzüge" and "SV-rechtliche Abzüge"): gross minus all
  // the deductions totals printed since the gross.
  const parts = seen.filter(
    (r) =>
      r !== net &&
      LABELS.deductionsTotal.test(r.label) &&
      sameYtd(r.label, net.label) &&
      seen.indexOf(r) > seen.indexOf(gross) &&
      seen.indexOf(r) < seen.indexOf(net),
  );
  const byParts =
    parts.length >= 2
      ? gross.figure.cents - parts.reduce((a, r) => a + Math.abs(r.figure?.cents ?? 0), 0)
      : undefined;
  ctx.checked++;
  if (
    Math.abs(expected - printed) <= SLACK ||
    (byParts !== undefined && Math.abs(byParts - printed) <= SLACK)
  ) {
    ctx.verified++;
    ctx.confirmed.add(net.figure);
    return undefined;
  }
  // Pay outside gross and deductions: expenses reimbursed, printed between the deductions and the net; a
  // benefit in kind, an earning taxed in the gross but never paid. A difference that is one such line is
  // the line, not an edit (it says nothing either way). A deduction is never such a line.
  const i = (r: BlockRow) => seen.indexOf(r);
  const outside = seen.filter(
    (r) =>
      r.figure?.money &&
      sameYtd(r.label, net.label) &&
      ((i(r) > i(deductions) && i(r) < i(net)) || i(r) < i(gross)),
  );
  const gaps = [expected, ...(byParts !== undefined ? [byParts] : [])].map((e) => Math.abs(printed - e));
  if (outside.some((r) => gaps.some((gap) => Math.abs(Math.abs(r.figure?.cents ?? 0) - gap) <= SLACK)))
    return undefined;
  return {
    mismatch: {
      code: "net_pay_mismatch",
      page: net.page,
      at: net.figure,
      message: `On page ${net.page}, "${net.label}" is ${net.figure.text}, but ${gross.label} ${gross.figure.text} minus ${deductions.label} ${deductions.figure.text} is ${money(ctx, expected)} (a difference of ${money(ctx, printed - expected)}).`,
      printed: net.figure.text,
      expected: like(net.figure, expected, ctx.style),
      evidence: { gross: gross.figure.text, deductions: deductions.figure.text },
      proof: 9,
    },
    structure: blockStructure(ctx, net, [gross, deductions]),
    figures: [net.figure, gross.figure, deductions.figure],
    terms: [gross, deductions, ...parts],
    difference: printed - expected,
  };
}

/**
 * Whether some of the amounts add up to `target` (within `slack`): the base of a tax charged on part of
 * the items. Bounded: at most 40 amounts and 200,000 partial sums.
 */
function subsetSums(values: number[], target: number, slack: number): boolean {
  if (values.length > 40) return false;
  let sums = new Set<number>([0]);
  for (const v of values) {
    const next = new Set(sums);
    for (const s of sums) {
      const t = s + v;
      if (Math.abs(t - target) <= slack) return true;
      if (t <= target + slack) next.add(t);
    }
    sums = next;
    if (sums.size > 200_000) return false;
  }
  return false;
}

/**
 * "VAT 20%" = 20 % of the subtotal above; "VAT included at 20%" = 20/120 of the total above; "VAT 7% on
 * 129,43  9,06" = 7 % of the base printed in its own row. With several rates and no base in the row the
 * tax is on part of the items, which the rows do not say: not checked. With one rate, a tax that is not
 * the rate of the subtotal may still be the rate of some of the items (exempt lines): read as a partial
 * base, not as a mismatch; a mismatch on a base nobody printed is weighed as such.
 */
function checkTaxRate(
  ctx: Ctx,
  r: BlockRow,
  terms: Term[],
  seen: BlockRow[],
  rates: Set<string | undefined>,
  items: ReadonlySet<ReadLine>,
  all: BlockRow[],
): Deferred | undefined {
  const m = /(\d+(?:[.,]\d+)?)\s?%/.exec(r.label);
  const rate = m?.[1] ? parseNumber(m[1], ctx.style)?.value : undefined;
  if (rate === undefined || rate <= 0 || rate >= 100 || !r.figure) return undefined;
  const included = LABELS.taxIncluded.test(r.label);
  const own = r.figures.length >= 2 ? (r.figures[r.figures.length - 2] as Figure) : baseInLabel(ctx, r);
  if (!own && rates.size > 1) return undefined;
  const baseRow = own
    ? undefined
    : included
      ? [...seen.slice(0, -1)].reverse().find((x) => LABELS.totalish.test(x.label))
      : // The base is a subtotal above the tax, never the amount due (a summary printed before the lines).
        ([...terms]
          .reverse()
          .find((t) => LABELS.totalish.test(t.row.label) && !LABELS.payable.test(t.row.label))?.row ??
        (terms.length === 1 ? terms[0]?.row : undefined));
  const base = own ?? baseRow?.figure;
  if (!base || !money2(base) || (baseRow?.unreadable ?? false)) return undefined;
  const b = base.cents;
  const expected = included ? (b * rate) / (100 + rate) : (b * rate) / 100;
  const printed = r.figure.cents;
  // The line items the base may sum: a tax rounded on each line and added differs from the rate of the
  // total by up to half a cent a line.
  const lineAmounts = all
    .filter(
      (x) =>
        items.has(x.line) ||
        (x.row?.kind === "entry" && x.table && x.table === (baseRow ?? r).table && !isTaxRow(x.label)),
    )
    .map((x) => x.figure?.cents)
    .filter((c): c is number => c !== undefined && c > 0);
  const rounding = Math.max(SLACK + 1, Math.ceil(lineAmounts.length / 2));
  ctx.checked++;
  if (Math.abs(Math.round(expected) - printed) <= rounding) {
    ctx.verified++;
    return undefined;
  }
  if (baseRow && !included) {
    // The base adjusted by what is printed between it and the tax (shipping, a discount, a fee): each row
    // added, taken off or not taxed.
    const between = seen.slice(seen.indexOf(baseRow) + 1, -1).filter((x) => x.figure?.money);
    if (seen.includes(baseRow) && between.length > 0 && between.length <= 3) {
      let bases = [b];
      for (const x of between) {
        const v = Math.abs(x.figure?.cents ?? 0);
        bases = bases.flatMap((y) => [y, y + v, y - v]);
      }
      if (bases.some((y) => y > 0 && Math.abs(Math.round((y * rate) / 100) - printed) <= SLACK + 1)) {
        ctx.verified++;
        return undefined;
      }
    }
  }
  // The tax printed again beside its rate and its own base (a breakdown by rate under the totals, "23% |
  // 8,645.23 | 1,988.40"): its base is that one, which the rows above need not show (a partial base, less a
  // discount).
  if (!own && !included && printedWithItsBase(ctx, r, rate)) {
    ctx.verified++;
    return undefined;
  }
  if (!own && !included) {
    // A partial base: the tax is the rate of some of the line items (the others exempt or at another rate
    // the document does not print as a tax row).
    const implied = (printed * 100) / rate;
    if (implied < b && subsetSums(lineAmounts, implied, Math.ceil((100 * 1.5) / rate) + 1)) {
      ctx.verified++;
      return undefined;
    }
  }
  const structure = own
    ? blockStructure(ctx, r, [])
    : {
        ...blockStructure(ctx, r, baseRow ? [baseRow] : []),
        header: 0.5,
        notes: ["the tax's base is not printed beside it"],
      };
  return {
    mismatch: {
      code: "tax_amount_mismatch",
      page: r.page,
      at: r.figure,
      message: `On page ${r.page}, "${r.label}" is ${r.figure.text}, but ${formatRate(rate)} % ${included ? "contained in" : "of"} ${base.text} is ${money(ctx, Math.round(expected))}.`,
      printed: r.figure.text,
      expected: like(r.figure, Math.round(expected), ctx.style),
      evidence: { label: r.label, rate: formatRate(rate), base: base.text },
      proof: 8,
    },
    structure,
    figures: [r.figure, base],
    terms: baseRow ? [baseRow] : [],
    base,
  };
}

/** Whether a tax row's amount is printed on another line beside its rate and a money figure it is that rate of. */
function printedWithItsBase(ctx: Ctx, r: BlockRow, rate: number): boolean {
  const tax = r.figure?.cents;
  if (tax === undefined) return false;
  return ctx.reading.lines.some((l) => {
    if (l === r.line) return false;
    const figs = l.cells.map((c) => c.figure).filter((f): f is Figure => f !== undefined);
    if (!figs.some((f) => f.percent && Math.abs(f.value - rate) < 1e-6)) return false;
    const own = figs.find((f) => f.money && !f.percent && f.cents === tax);
    return (
      own !== undefined &&
      figs.some(
        (f) =>
          f !== own &&
          f.money &&
          !f.percent &&
          Math.abs(Math.round((f.cents * rate) / 100) - tax) <= SLACK + 1,
      )
    );
  });
}

/**
 * The base a tax row prints inside its label, after its rate: "USt. 8.1% (197.24)", "VAT 20% on 150.00",
 * "TVA 5,5 % sur 1 200,00 €" — the tax's own base (a partial one, where some lines are exempt).
 */
function baseInLabel(ctx: Ctx, r: BlockRow): Figure | undefined {
  const m =
    /%\s*(?:\(\s*|(?:on|of|auf|von|sur|de|su|sobre|op|over)\s+)((?:[£$€]|EUR|GBP|USD|CHF)?\s?\d[\d.,'\u2019\u00a0\u202f ]*\d\s?(?:[£$€]|EUR|GBP|USD|CHF)?)\s*\)?\s*$/i.exec(
      r.label,
    );
  if (!m?.[1] || !r.figure) return undefined;
  const a = parseAmount(m[1].trim(), { style: ctx.style, loose: true });
  if (!a || a.cents <= 0 || a.decimals !== 2) return undefined;
  return {
    ...r.figure,
    cents: a.cents,
    value: a.value,
    decimals: a.decimals,
    text: m[1].trim(),
    money: true,
  };
}

/** A rate as people write it: 19, 7.5, 0.5 (never exponent notation). */
const formatRate = (rate: number) => String(Number(rate.toFixed(4)));

/**
 * The amount due (or net pay) printed in more than one place under the same label must be the same: an
 * edit of one copy leaves the others behind.
 */
export function checkRepeatedTotals(ctx: Ctx, rows: BlockRow[]): Deferred[] {
  const byLabel = new Map<string, BlockRow[]>();
  for (const r of rows) {
    if (!r.figure || r.unreadable || !LABELS.payable.test(r.label) || LABELS.ytd.test(r.label)) continue;
    const key = r.label
      .toLowerCase()
      .replace(/[^\p{L}\p{N}%]+/gu, " ")
      .trim();
    byLabel.set(key, [...(byLabel.get(key) ?? []), r]);
  }
  const out: Deferred[] = [];
  for (const [, copies] of byLabel) {
    if (copies.length < 2) continue;
    const values = new Set(copies.map((r) => r.figure?.cents));
    ctx.checked++;
    if (values.size === 1) {
      ctx.verified++;
      continue;
    }
    // The copy to trust: one a relation confirmed (net pay = gross − deductions), else the value most
    // copies print, else the first.
    const count = (v: number | undefined) => copies.filter((c) => c.figure?.cents === v).length;
    const first =
      copies.find((c) => c.figure && ctx.confirmed.has(c.figure)) ??
      [...copies].sort((a, b) => count(b.figure?.cents) - count(a.figure?.cents))[0] ??
      (copies[0] as BlockRow);
    const odd = copies.find((r) => r.figure?.cents !== first.figure?.cents) as BlockRow;
    const oddFigure = odd.figure as Figure;
    const firstFigure = first.figure as Figure;
    // Which copy is the amount due is clear only when each copy prints one amount.
    const ambiguous = copies.some((c) => c.figures.length > 1);
    const structure = blockStructure(ctx, odd, [first]);
    out.push({
      mismatch: {
        code: "total_repeated_mismatch",
        page: odd.page,
        at: oddFigure,
        message: `"${first.label}" is printed ${copies.length} times with different amounts: ${copies.map((r) => `${r.figure?.text} on page ${r.page}`).join(", ")}; one copy was changed and the others were not.`,
        printed: oddFigure.text,
        expected: firstFigure.text,
        evidence: {
          label: first.label,
          copies: copies.map((r) => ({ page: r.page, amount: r.figure?.text })),
        },
        proof: 9,
      },
      structure: ambiguous
        ? { ...structure, columns: 0.5, notes: [...structure.notes, "rows with several amounts"] }
        : structure,
      figures: copies.map((c) => c.figure as Figure),
      terms: copies.filter((c) => c !== odd),
    });
  }
  return out;
}

/**
 * Reports the block mismatches, weighed by their reading and by the relations of the whole document
 * that held: a mismatching total on a document none of whose figures added up anywhere else is a note.
 */
export function reportDeferred(
  ctx: Ctx,
  deferred: Deferred[],
  held: readonly HeldSum[] = [],
  rows: readonly BlockRow[] = [],
): void {
  // Relations under a total that hold on the sum of its terms, not on the figure printed.
  const fromExpected = new Map(deferred.map((d) => [d, followsFromExpected(ctx, rows, d)]));
  for (const n of fromExpected.values()) {
    ctx.checked += n;
    ctx.verified += n;
  }
  for (const d of deferred) {
    const expectedHolds = fromExpected.get(d) ?? 0;
    // A mismatching total counts only once the document's figures were seen to add up somewhere else:
    // otherwise the rows above it are not what it sums (a score sheet, a report), and it is left unjudged.
    if (d.needsSupport && ctx.verified === 0) {
      ctx.checked--;
      continue;
    }
    // A reading in doubt (a line not counted explains the difference) verifies nothing.
    const support = d.mismatch.doubt ? 0 : blockSupport(ctx, d, held) + expectedHolds;
    const structure = verifiedBlock(ctx, d, support)
      ? { ...d.structure, header: 1, notes: d.structure.notes.filter((n) => n !== LABEL_BLOCK) }
      : d.structure;
    let confidence = confidenceOf(structure, ctx.verified, ctx.checked, d.figures);
    const notes = [...structure.notes];
    if (ctx.verified === 0) {
      confidence = Math.min(confidence, 0.6);
      notes.push("no other sum of the document adds up");
    }
    report(ctx, { ...d.mismatch, confidence, notes, support });
  }
}

/**
 * A total that is not the sum of its terms, whose figures printed under it were computed from that sum and not
 * from the total printed: the tax it includes (or adds) at the rate in its label, the change given on the
 * amount tendered. Each such relation that holds on the sum of the terms, and fails on the total printed, says
 * the rows were read right and the total is the figure out of line (an edited receipt total: its tax and its
 * change still agree with its items). On a genuine document those figures agree with the total printed, so
 * they never hold on another value. The number of them.
 */
function followsFromExpected(ctx: Ctx, rows: readonly BlockRow[], d: Deferred): number {
  const code = d.mismatch.code;
  if ((code !== "total_mismatch" && code !== "subtotal_mismatch") || d.difference === undefined) return 0;
  const at = rows.findIndex((r) => r.figure !== undefined && r.figure === d.mismatch.at);
  const total = rows[at];
  if (at < 0 || !total?.figure) return 0;
  const printed = Math.abs(total.figure.cents);
  const expected = printed - d.difference;
  if (expected <= 0 || Math.abs(printed - expected) <= SLACK) return 0;
  const near = (a: number, b: number) => Math.abs(a - b) <= SLACK;
  let n = 0;
  const after = rows.slice(at + 1, at + 5).filter((r) => r.page === total.page && r.figure);
  for (const [k, r] of after.entries()) {
    const v = Math.abs(r.figure?.cents ?? 0);
    if (LABELS.totalish.test(r.label) && !LABELS.taxIncluded.test(r.label)) break;
    const rate = isTaxRow(r.label) ? /(\d+(?:[.,]\d+)?)\s?%/.exec(r.label)?.[1] : undefined;
    const pct = rate ? parseNumber(rate, ctx.style)?.value : undefined;
    if (pct !== undefined && pct > 0 && pct < 100) {
      const of = (base: number) =>
        LABELS.taxIncluded.test(r.label) ? (base * pct) / (100 + pct) : (base * pct) / 100;
      if (near(v, of(expected)) && !near(v, of(printed))) n++;
      continue;
    }
    const tendered = after[k - 1];
    if (LABELS.change.test(r.label) && tendered?.figure && !LABELS.change.test(tendered.label)) {
      const given = Math.abs(tendered.figure.cents);
      if (near(v, given - expected) && !near(v, given - printed)) n++;
    }
  }
  return n;
}

/**
 * A block of labelled totals read as surely as a table under a header (docs/decisions.md "A block that
 * verified itself"): its own relations held (`support`), and it is whole and plain: every row a label of
 * words and one money figure read from the file's text, no figure unreadable or stray, the amounts on one
 * edge. Its labels did what a header does: they said what each figure is, and the arithmetic agreed.
 */
function verifiedBlock(ctx: Ctx, d: Deferred, support: number): boolean {
  const s = d.structure;
  if (support < SUPPORT_NEEDED || s.header >= 1 || s.source < 1 || s.columns < 1) return false;
  if (!s.notes.includes(LABEL_BLOCK) || d.terms.length < 2) return false;
  if (ctx.reading.pages.get(d.mismatch.page)?.source !== "pdf_text") return false;
  // Whole: the block begins under a line of words (its heading, the box's title) or at the top of its page,
  // not in the middle of other amounts (the tail of a longer block, the rows after a table read apart).
  const first = d.terms[0] as BlockRow;
  const at = ctx.reading.lines.indexOf(first.line);
  const before = ctx.reading.lines[at - 1];
  if (at < 0 || (before && before.page === first.page && before.cells.some((c) => c.figure?.money)))
    return false;
  return d.terms.every(
    (t) =>
      !t.unreadable &&
      t.figure !== undefined &&
      t.figures.length === 1 &&
      t.figures[0] === t.figure &&
      t.figure.confidence >= 1 &&
      /\p{L}/u.test(t.label),
  );
}

/**
 * The relations of a mismatch's own block that held under the same reading (docs/decisions.md "A mismatch
 * is proof only on a reading that verified itself", "Support comes from the side the mismatch accuses"):
 * - its terms are line items whose quantity × price held, or rows of a table whose products held;
 * - another relation that held was read over some of the same rows (a page subtotal over the same lines, a
 *   subtotal that is one of this total's terms and summed its own lines, a tax on a base that is a term);
 * - for net pay, another net pay of its page that held (the period's beside the year to date); for the
 *   amount due printed several times, a copy some relation confirmed;
 * - for a tax, only its base confirmed by a relation of its own (the base is a sum that held): the rate is
 *   printed in its label, the base must be read right too.
 * Another total that takes this total's figure among its terms (total = this subtotal + tax, a tax on it,
 * the change tendered on it) is no support: it confirms the figure printed, not the reading of the rows the
 * mismatch says it does not add up to (a line misread or missed leaves the subtotal and everything under it
 * consistent). A relation elsewhere in the document (another table, another page's block) is none either.
 */
function blockSupport(ctx: Ctx, d: Deferred, held: readonly HeldSum[]): number {
  const terms = new Set(d.terms);
  const code = d.mismatch.code;
  if (code === "total_repeated_mismatch")
    return d.terms.filter((t) => t.figure && ctx.confirmed.has(t.figure)).length;
  if (code === "tax_amount_mismatch") {
    const base = d.base;
    if (!base) return 0;
    // The base figure itself, or the same amount printed as a total whose own terms added up.
    return held.filter(
      (h) =>
        h.kind === "sum" &&
        h.terms.length > 0 &&
        (h.total.figure === base ||
          (h.total.page === d.mismatch.page && h.total.figure?.cents === base.cents)),
    ).length;
  }
  let n = 0;
  for (const t of d.terms) if (ctx.heldLines.has(t.line)) n++;
  const tables = new Set(d.terms.map((t) => t.table?.id).filter((id): id is number => id !== undefined));
  for (const id of tables) n += ctx.heldProducts.get(id) ?? 0;
  // The first term is the sum carried from the page before ("Saldo riportato"): the carried total that the
  // rows of the page before were seen to add up to.
  const first = d.terms[0];
  for (const t of first ? [first] : [])
    if (
      t.figure &&
      held.some(
        (h) =>
          h.kind === "sum" &&
          h.total.page === t.page - 1 &&
          LABELS.carry.test(h.total.label) &&
          h.total.figure?.cents === t.figure?.cents,
      )
    )
      n++;
  // The total's own figure taken by another relation that held (total = this subtotal + tax, a tax on it,
  // net pay on it as gross, the change tendered on it): it confirms the figure printed, not the rows. It
  // counts only when those rows were read without doubt and no single one of them explains the difference.
  const own = d.mismatch.at;
  const taken =
    own !== undefined &&
    (ctx.confirmed.has(own) ||
      held.some(
        (h) => ![h.total, ...h.terms].some((t) => terms.has(t)) && h.terms.some((t) => t.figure === own),
      ));
  if (taken && rowsReadWithoutDoubt(ctx, d)) n++;
  for (const h of held) {
    // A relation over some of the same rows (a subtotal among the terms that summed its own lines, a tax on
    // a term), never one that only took this total's figure as one of its own terms.
    const rows = [h.total, ...h.terms];
    if (rows.some((t) => terms.has(t))) n++;
    // Another sum of line entries of the same table (the deductions beside the earnings, an earlier section
    // of the items): the column the terms are read from, read right over other rows.
    else if (
      h.kind === "sum" &&
      h.terms.some((t) => isEntryOf(t, tables)) &&
      !h.terms.some((t) => t.figure !== undefined && t.figure === d.mismatch.at)
    )
      n++;
    // Another net pay (the current period's beside the year to date) of its page that held.
    else if (code === "net_pay_mismatch" && h.kind === "net" && h.total.page === d.mismatch.page) n++;
  }
  return n;
}
