import type { Finding } from "../../core/check-result.js";
import type { DocumentModel } from "../../document/model.js";
import { documentTables, documentTablesWith } from "../../document/tables/document-tables.js";
import { type DocumentReading, minusDigit, separatorDigit } from "../../document/tables/reader.js";
import { defineCheck, skip } from "../check.js";
import {
  blockRows,
  checkBlocks,
  checkRepeatedTotals,
  checkTotalsAbove,
  type HeldSum,
  reportDeferred,
} from "./blocks.js";
import { checkCarried } from "./carried.js";
import { type Ctx, TEXT_ARITHMETIC_CODES } from "./findings.js";
import { checkLineItems } from "./items.js";
import { checkLedgers, checkStatementSummary, readLedgers } from "./ledger.js";

export { TEXT_ARITHMETIC_CODES };

/**
 * text.arithmetic: the sums a genuine document gets right because software computed them, read from the
 * tables of the page geometry (document/tables/): whatever the layout, a table is found by its header
 * words and the alignment of its figures, its columns get roles (date, description, debit, credit,
 * amount, balance, quantity, unit price, line total, tax), and its rows are checked:
 *
 * - ledgers (ledger.ts): each running balance, balances carried between pages, the closing balance, the
 *   totals of the money in and out columns, and a summary box above or below (opening + in − out =
 *   closing, its totals against the rows);
 * - line items (items.ts): quantity × unit price = line amount;
 * - blocks (blocks.ts): labelled totals against the amounts above them (subtotals, grand totals over
 *   subtotals, carried totals), subtotal + tax = total, the tax against its rate on its base (printed, or
 *   the subtotal, or part of the items), gross − deductions = net pay, the amount due printed in several
 *   places.
 *
 * Every relation that holds confirms the reading; a mismatch is weighed by how sure the reading is
 * (findings.ts): proof (8-9) on a confident reading, a note (2) that says so on an uncertain one.
 */

export const TEXT_ARITHMETIC_CHECK_ID = "text.arithmetic";

export interface ArithmeticReport {
  findings: Finding[];
  checked: number;
  verified: number;
  statementRows: number;
}

function currencyOf(ctx: Ctx): string | undefined {
  for (const l of ctx.reading.lines)
    for (const c of l.cells) {
      const cur = c.figure?.currency;
      if (cur === "GBP" || cur === "USD" || cur === "EUR") return cur;
    }
  return undefined;
}

export function arithmeticFindings(doc: DocumentModel): ArithmeticReport {
  const reading = documentTables(doc);
  const report = arithmeticOfReading(reading);
  // Figures whose group separator or minus sign a re-encoding drew as a digit ("5’691.25" read "59691.25",
  // "−403,97" read "2403,97"): read again with that digit as the separator or the sign, and kept only when
  // more sums hold and no more fail (docs/decisions.md "A separator or a minus read as a digit").
  if (report.checked === report.verified) return report;
  let best = report;
  for (const opts of [{ separatorDigit: separatorDigit(reading) }, { minusDigit: minusDigit(reading) }]) {
    if (Object.values(opts).every((v) => v === undefined)) continue;
    const again = arithmeticOfReading(documentTablesWith(doc, opts));
    if (again.verified > best.verified && again.checked - again.verified <= best.checked - best.verified)
      best = again;
  }
  return best;
}

/** The arithmetic of a document's tables, however they were read (file text, OCR words, plain text). */
export function arithmeticOfReading(reading: DocumentReading): ArithmeticReport {
  const ctx: Ctx = {
    reading,
    style: reading.style,
    findings: [],
    verified: 0,
    checked: 0,
    statementRows: 0,
    confirmed: new Set(),
    heldLines: new Set(),
    heldProducts: new Map(),
  };
  const currency = currencyOf(ctx);
  if (currency) ctx.currency = currency;
  const ledgers = readLedgers(ctx);
  checkLedgers(ctx, ledgers);
  checkStatementSummary(ctx, ledgers);
  const ledgerTables = new Set(ledgers.map((l) => l.table.id));
  // Statements with amounts but no running balance: the balances carried between pages (carried.ts). Their
  // tables stay open to the block rules, which read a balance carried as a running sum where it is one.
  checkCarried(ctx, ledgerTables);
  const items = checkLineItems(ctx, ledgerTables);
  const rows = blockRows(ctx, ledgerTables);
  const held: HeldSum[] = [];
  const sums = checkBlocks(ctx, rows, items, ledgers.length > 0, held);
  if (ledgers.length === 0) checkTotalsAbove(ctx, rows, held, sums);
  const deferred = [...checkRepeatedTotals(ctx, rows), ...sums];
  reportDeferred(ctx, deferred, held, rows);
  return {
    findings: ctx.findings,
    checked: ctx.checked,
    verified: ctx.verified,
    statementRows: ctx.statementRows,
  };
}

/** Every finding code this check reports: its highest level, its kind of evidence, what it means. */
export const CODES = TEXT_ARITHMETIC_CODES;

export const textArithmeticCheck = defineCheck({
  id: TEXT_ARITHMETIC_CHECK_ID,
  codes: CODES,
  appliesTo: (doc) => doc.pdf !== undefined || (doc.imagePages?.length ?? 0) > 0,
  inspect(doc) {
    const report = arithmeticFindings(doc);
    if (report.checked === 0) {
      return skip(
        "No running balances, line items or labelled totals were found whose arithmetic could be checked.",
      );
    }
    return report;
  },
  summary({ outcome, findings, checked, statementRows }) {
    const ledger = statementRows ? ` including ${statementRows} running balances` : "";
    const proofs = findings.filter((f) => (f.severity ?? 0) >= 8).length;
    const notes = findings.length - proofs;
    const weighed =
      notes === 0
        ? ""
        : proofs === 0
          ? " (on readings too uncertain or not verified by their own table or block: no proof)"
          : ` (${notes} of them on uncertain or unverified readings: no proof)`;
    return outcome === "pass"
      ? `All ${checked} sums checked${ledger} add up.`
      : `${findings.length} of ${checked} sums checked do not add up${weighed}: ${[...new Set(findings.map((f) => `${f.code} on page ${f.page}`))].join(", ")}.`;
  },
});
