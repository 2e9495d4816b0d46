import type { Figure } from "../../document/tables/cells.js";
import type { Table, TableColumn, TableRow } from "../../document/tables/reader.js";
import { LABELS } from "../../document/tables/vocabulary.js";
import { type Ctx, confidenceOf, money, report, SLACK } from "./findings.js";
import { broughtForward, labelledFigures, like } from "./ledger.js";

/**
 * Statements that print amounts but no running balance: only the balance opened, carried to the next page and
 * brought forward, in the amounts' own column ("Opening balance 2,247.50 / … / Balance c/f 1,708.79 / Brought
 * forward 1,708.79 / …"). Each page verifies itself: the balance it starts from plus the signed amounts of its
 * rows is the balance it carries (or closes with, or, for the last page of a table that prints no closing row,
 * the closing balance of a summary box whose opening is the table's). A balance brought forward is the one
 * carried before it. (docs/decisions.md "Carried balances without running balances".)
 *
 * Read only where the amounts carry their own sign (a minus, parentheses, CR/DR: one column for money in and
 * out), in a table with no balance column that was not read as a ledger. A mismatch is proof only when another
 * page's relation of the same table holds under the same reading (findings.ts `report`).
 */

interface Segment {
  kind: "segment";
  /** The row whose balance starts the segment (an opening or brought-forward row, or the last carried one). */
  from: TableRow;
  start: number;
  sum: number;
  rows: number;
  /** The row that carries or closes the balance; undefined for a summary box's closing. */
  to?: TableRow;
  end: Figure;
  endLabel: string;
  holds: boolean;
  page: number;
}

interface Handover {
  kind: "handover";
  row: TableRow;
  carried: number;
  brought: Figure;
  holds: boolean;
}

type Relation = Segment | Handover;

export interface CarriedReading {
  table: Table;
  relations: Relation[];
  held: number;
}

const isBalanceStart = (row: TableRow) =>
  row.kind === "opening" || (row.kind === "carry" && !LABELS.closing.test(row.label));

/** The one column holding every balance row's figure and the rows' amounts; undefined when it is not one column. */
function amountColumn(table: Table): TableColumn | undefined {
  if (table.columns.some((c) => c.role === "balance")) return undefined;
  const starts = table.rows.filter((r) => r.kind !== "entry" && r.kind !== "total");
  const cols = new Set<number>();
  for (const r of starts) {
    const figs = r.figures.map((f, i) => (f?.money ? i : -1)).filter((i) => i >= 0);
    if (figs.length !== 1) return undefined;
    cols.add(figs[0] as number);
  }
  if (cols.size !== 1) return undefined;
  const col = table.columns[[...cols][0] as number];
  if (!col || (col.role !== "amount" && col.role !== "unknown")) return undefined;
  // Money in and out in one column: the amounts carry their sign, and no other column holds money.
  const entries = table.rows.filter((r) => r.kind === "entry");
  const amounts = entries.map((r) => r.figures[col.index]).filter((f): f is Figure => f?.money === true);
  if (amounts.length < 2 || !amounts.some((f) => f.negative !== undefined || f.credit === true))
    return undefined;
  if (entries.some((r) => r.figures.some((f, i) => i !== col.index && f?.money && !f.percent)))
    return undefined;
  return col;
}

const signed = (f: Figure) => (f.credit ? Math.abs(f.cents) : f.cents);

/**
 * Whether an entry row is a balance carried at the foot of its page: the table goes on on a later page, the
 * row is its page's last, it has no date while most of the table's entries have one, and its figure is the
 * balance the rows above it reach (`reached`, in cents).
 */
function carriedAtFoot(table: Table, row: TableRow, f: Figure, reached: number): boolean {
  if (row.date || Math.abs(signed(f) - reached) > SLACK) return false;
  const i = table.rows.indexOf(row);
  const next = table.rows[i + 1];
  if (!next || next.page === row.page) return false;
  const entries = table.rows.filter((r) => r.kind === "entry");
  return entries.filter((r) => r.date).length >= 0.8 * entries.length;
}

/** A run of amounts summed from a balance, not yet carried or closed. */
interface OpenRun {
  from: TableRow;
  start: number;
  sum: number;
  rows: number;
  doubt: boolean;
}

/** The segment an open run makes when `row` carries or closes its balance as `end`. */
const segmentTo = (open: OpenRun, row: TableRow, end: Figure, holds: boolean): Segment => ({
  kind: "segment",
  from: open.from,
  start: open.start,
  sum: open.sum,
  rows: open.rows,
  to: row,
  end,
  endLabel: row.label,
  holds,
  page: row.page,
});

/** Every table read as balances carried over its amounts. */
export function readCarried(ctx: Ctx, ledgerTables: ReadonlySet<number>): CarriedReading[] {
  const out: CarriedReading[] = [];
  for (const table of ctx.reading.tables) {
    if (ledgerTables.has(table.id)) continue;
    const col = amountColumn(table);
    if (!col) continue;
    const relations: Relation[] = [];
    let open: OpenRun | undefined;
    let carried: number | undefined;
    for (const row of table.rows) {
      const f = row.figures[col.index];
      if (row.kind === "total") {
        open = undefined;
        continue;
      }
      if (row.kind === "entry") {
        // Rows outside a segment (under a balance row not read as one): the chain of carried balances is lost.
        if (!open) {
          if (f?.money) carried = undefined;
          continue;
        }
        if (row.unreadable || row.strays.some((s) => s.money)) open.doubt = true;
        // An undated row at the foot of a page, among dated rows, whose figure is the balance the page's rows
        // reach is that balance carried to the next page under words the vocabulary does not know ("Saldo a
        // cuenta nueva"): summed as one more amount, it doubled the balance brought forward on the next page.
        if (f?.money && open.rows > 0 && carriedAtFoot(table, row, f, open.start + open.sum)) {
          relations.push(segmentTo(open, row, f, true));
          carried = f.cents;
          open = undefined;
          continue;
        }
        if (f?.money) {
          open.sum += signed(f);
          open.rows++;
        }
        continue;
      }
      // An opening balance after the rows is no balance brought forward: a summary box under the table (opening,
      // totals in and out, closing) that the reader took for more rows ends it.
      if (
        open &&
        open.rows > 0 &&
        row.kind === "opening" &&
        !LABELS.carry.test(row.label) &&
        !broughtForward(table, table.rows.indexOf(row))
      ) {
        open = undefined;
        break;
      }
      if (!f) continue;
      if (open && open.rows > 0) {
        if (!open.doubt)
          relations.push(segmentTo(open, row, f, Math.abs(open.start + open.sum - f.cents) <= SLACK));
        carried = f.cents;
        open = undefined;
        // A brought-forward balance that ends the rows before it (no carried row printed) starts the next.
        if (row.kind === "opening") open = { from: row, start: f.cents, sum: 0, rows: 0, doubt: false };
        continue;
      }
      // A balance carried ("Übertrag", "c/f") starts the rows after it only at the top of a page.
      const topOfPage = table.rows[table.rows.indexOf(row) - 1]?.page !== row.page;
      if (!isBalanceStart(row) || (row.kind === "carry" && !topOfPage)) continue;
      if (carried !== undefined)
        relations.push({
          kind: "handover",
          row,
          carried,
          brought: f,
          holds: Math.abs(carried - f.cents) <= SLACK,
        });
      carried = undefined;
      open = { from: row, start: f.cents, sum: 0, rows: 0, doubt: false };
    }
    // The last page of a table that prints no closing row: a summary box's closing, when its opening is the
    // table's own (the box is this account's).
    if (open && open.rows > 0 && !open.doubt) {
      const labelled = labelledFigures(ctx).filter(
        (l) => l.line.table !== table.id && !l.line.cells[0]?.date && !LABELS.carry.test(l.label),
      );
      const closings = labelled.filter((l) => LABELS.closing.test(l.label));
      const openings = labelled.filter((l) => LABELS.opening.test(l.label));
      const first = table.rows.find((r) => r.kind === "opening")?.figures[col.index];
      const closing = closings[0];
      if (
        closing &&
        closings.length === 1 &&
        openings.length === 1 &&
        first &&
        Math.abs((openings[0]?.figure.cents ?? Number.NaN) - first.cents) <= SLACK
      )
        relations.push({
          kind: "segment",
          from: open.from,
          start: open.start,
          sum: open.sum,
          rows: open.rows,
          end: closing.figure,
          endLabel: closing.label,
          holds: Math.abs(open.start + open.sum - closing.figure.cents) <= SLACK,
          page: closing.line.page,
        });
    }
    const segments = relations.filter((r) => r.kind === "segment");
    const held = segments.filter((r) => r.holds).length;
    // Trust the reading only when it mostly reconciles: otherwise the column or its signs were misread.
    if (segments.length === 0 || held < segments.length - held) continue;
    out.push({ table, relations, held });
  }
  return out;
}

/** Checks each table of carried balances and reports what does not add up. */
export function checkCarried(ctx: Ctx, ledgerTables: ReadonlySet<number>): void {
  const read = readCarried(ctx, ledgerTables);
  for (const { table, relations, held } of read) {
    const checked = relations.length;
    const heldAll = relations.filter((r) => r.holds).length;
    ctx.checked += checked;
    ctx.verified += heldAll;
    ctx.statementRows += table.rows.filter((r) => r.kind === "entry").length;
    for (const r of relations) {
      if (r.holds) continue;
      if (r.kind === "handover") {
        report(ctx, {
          code: "balance_carried_mismatch",
          page: r.row.page,
          at: r.brought,
          message: `On page ${r.row.page}, the balance brought forward is ${r.brought.text}, but the balance carried before it was ${money(ctx, r.carried)}.`,
          printed: r.brought.text,
          expected: like(r.brought, r.carried, ctx.style),
          evidence: {
            row: r.row.lines[0]?.text.slice(0, 200),
            difference: money(ctx, r.brought.cents - r.carried),
          },
          proof: 9,
          confidence: confidenceOf(table.structure, heldAll, checked, [r.brought]),
          notes: table.structure.notes,
          // Other pages of the table that add up under the same reading.
          support: held,
          unsupported: "table (no page's rows add up to the balance it carries)",
        });
        continue;
      }
      const expected = r.start + r.sum;
      const carriedRow = r.to !== undefined && (r.to.kind === "carry" || LABELS.carry.test(r.endLabel));
      report(ctx, {
        code: carriedRow ? "balance_carried_mismatch" : "closing_balance_mismatch",
        page: r.page,
        at: r.end,
        message: `On page ${r.page}, the balance ${r.from.label ? `"${r.from.label}" ` : ""}${money(ctx, r.start)} plus the ${r.rows} amounts listed after it gives ${money(ctx, expected)}, but ${r.endLabel ? `"${r.endLabel}"` : "the balance"} prints ${r.end.text} (a difference of ${money(ctx, r.end.cents - expected)}).`,
        printed: r.end.text,
        expected: like(r.end, expected, ctx.style),
        evidence: {
          startBalance: money(ctx, r.start),
          amounts: r.rows,
          sumOfAmounts: money(ctx, r.sum),
          difference: money(ctx, r.end.cents - expected),
        },
        proof: 9,
        confidence: confidenceOf(table.structure, heldAll, checked, [r.end]),
        notes: table.structure.notes,
        // Another page of the same table whose rows add up to the balance it carries: the column, its signs
        // and its balance rows were read right.
        support: held,
        unsupported: "table (no other page's rows add up to the balance it carries)",
      });
    }
  }
}
