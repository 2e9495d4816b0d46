import type { Finding } from "../../core/check-result.js";
import type { CodeTable } from "../../core/finding-levels.js";
import type { DocumentModel } from "../../document/model.js";
import { documentLines } from "../../document/text-lines.js";
import { formatCents, type NumberStyle, numberStyleFor, parseNumber } from "../../document/values/amounts.js";
import { defineCheck, skip } from "../check.js";
import { isStatementLabel, isTaxRow, LABELS, type Row, type RowAmount, rowsOf } from "./arithmetic-rows.js";

/**
 * text.arithmetic: the sums a genuine document gets right because software computed them. Bank
 * statements: each running balance (previous balance ± the row's amount), balances carried between
 * pages, the closing balance, and the summary (opening + money in − money out = closing, with the
 * totals matching the rows). Invoices, receipts and bills: quantity × unit price (or × a rate per unit,
 * "511 kWh × 24,26 ct/kWh") = line amount, the lines add up to the subtotal (discounts subtracted),
 * subtotal + tax = total, the tax matches its printed rate on its own base, and the amount due printed
 * in several places is the same everywhere. Payslips: the earnings add up to gross pay, the deductions
 * to their total, and gross − deductions = net pay. Any other labelled total must be the sum of the
 * amounts listed above it, once the document has shown that its figures do add up somewhere.
 *
 * Real layouts this reads rather than misjudges: English, German and French labels and number formats; a
 * unit price printed rounded (20 × 2,77 = 55,46 when the price is 2,773); a tax on part of the items
 * (several rates: each on its own base, checked only where the base is printed); discount and surcharge
 * rows with a rate ("Abschlag Sondernachlass 7%"); a tax base row ("Steuerbasisbetrag USt. 19%"); line
 * items carrying a tax category column; a row whose amount cannot be read (OCR), which leaves its block
 * unchecked; and tables whose columns are not quantity × price (line-item checks count only when most
 * product rows of the document agree).
 */

export const TEXT_ARITHMETIC_CHECK_ID = "text.arithmetic";

/** Rounding slack, in cents. */
const SLACK = 1;

interface Ctx {
  style: NumberStyle;
  currency?: string;
  findings: Finding[];
  /** Relations that held (each confirms the rows were read correctly). */
  verified: number;
  /** Relations that were checked. */
  checked: number;
}

const money = (ctx: Ctx, cents: number) => formatCents(cents, ctx.style, ctx.currency);
const last = (r: Row) => r.amounts[r.amounts.length - 1] as RowAmount;
const rowName = (r: Row) =>
  `${r.date ? `the row dated ${r.date}` : "the row"}${r.label ? ` "${r.label.slice(0, 60)}"` : ""}`;
const lineBox = (r: Row, a?: RowAmount) => a?.bbox ?? r.line.cells[r.line.cells.length - 1]?.bbox;

function finding(ctx: Ctx, f: Finding) {
  ctx.findings.push(f);
}

// ---------------------------------------------------------------------------------------------
// Bank statements
// ---------------------------------------------------------------------------------------------

interface Ledger {
  rows: Row[];
  credits: number;
  debits: number;
  lastBalance?: number;
  opening?: number;
  reconciled: number;
  broken: number;
}

/** Running balances: every dated row with an amount and a balance, in reading order. */
function checkStatement(rows: Row[], ctx: Ctx): Ledger | undefined {
  const txRows = rows.filter((r) => r.date && r.amounts.length >= 2 && !isStatementLabel(r.label));
  if (txRows.length < 3) return undefined;
  const signedMode = txRows.some((r) => r.amounts.slice(0, -1).some((a) => a.signed));
  const ledger: Ledger = { rows: txRows, credits: 0, debits: 0, reconciled: 0, broken: 0 };
  const pending: Finding[] = [];
  let prev: number | undefined;
  let since = 0;
  let closingChecked = false;
  for (const r of rows) {
    const isTx = txRows.includes(r);
    if (!isTx && r.amounts.length === 1 && LABELS.opening.test(r.label)) {
      const v = last(r).cents;
      ledger.opening ??= v;
      if (prev !== undefined && since > 0 && Math.abs(v - prev) > SLACK) {
        pending.push({
          code: "balance_carried_mismatch",
          message: `On page ${r.line.page}, the balance brought forward is ${money(ctx, v)}, but the previous row's balance was ${money(ctx, prev)}.`,
          page: r.line.page,
          bbox: lineBox(r, last(r)),
          evidence: { printed: last(r).text, expected: money(ctx, prev) },
          severity: 9,
        });
      }
      prev = v;
      since = 0;
      continue;
    }
    if (!isTx && r.amounts.length === 1 && LABELS.closing.test(r.label) && since > 0 && prev !== undefined) {
      const v = last(r).cents;
      ctx.checked++;
      closingChecked = true;
      if (Math.abs(v - prev) > SLACK) {
        ledger.broken++;
        pending.push({
          code: "closing_balance_mismatch",
          message: `On page ${r.line.page}, the closing balance is ${money(ctx, v)}, but the last transaction leaves ${money(ctx, prev)} (a difference of ${money(ctx, v - prev)}).`,
          page: r.line.page,
          bbox: lineBox(r, last(r)),
          evidence: { printed: last(r).text, expected: money(ctx, prev), difference: money(ctx, v - prev) },
          severity: 9,
        });
      } else ctx.verified++;
      continue;
    }
    if (!isTx) continue;
    const balance = last(r).cents;
    const moves = r.amounts.slice(0, -1);
    since++;
    if (prev === undefined) {
      prev = balance;
      ledger.lastBalance = balance;
      continue;
    }
    const delta = balance - prev;
    const options = signedMode
      ? [moves.reduce((s, a) => s + a.cents, 0)]
      : signedSums(moves.map((a) => Math.abs(a.cents)));
    ctx.checked++;
    const hit = options.find((o) => Math.abs(o - delta) <= SLACK);
    if (hit !== undefined) {
      ledger.reconciled++;
      ctx.verified++;
      if (hit > 0) ledger.credits += hit;
      else ledger.debits -= hit;
    } else {
      ledger.broken++;
      const best = options.reduce((a, b) => (Math.abs(b - delta) < Math.abs(a - delta) ? b : a));
      const expected = prev + best;
      const amountText = moves.map((a) => a.text).join(" / ");
      pending.push({
        code: "running_balance_mismatch",
        message: `On page ${r.line.page}, ${rowName(r)} shows a balance of ${last(r).text}, but the previous balance ${money(ctx, prev)} ${best < 0 ? "minus" : "plus"} ${amountText} gives ${money(ctx, expected)} (a difference of ${money(ctx, balance - expected)}).`,
        page: r.line.page,
        bbox: lineBox(r, last(r)),
        evidence: {
          row: r.line.text.slice(0, 200),
          previousBalance: money(ctx, prev),
          amount: amountText,
          printedBalance: last(r).text,
          expectedBalance: money(ctx, expected),
        },
        severity: 9,
      });
    }
    prev = balance;
    ledger.lastBalance = balance;
  }
  // Trust the ledger only when it mostly reconciles: otherwise the columns were misread.
  if (ledger.reconciled >= 2 && ledger.broken <= ledger.reconciled) ctx.findings.push(...pending);
  else {
    ctx.checked -= ledger.reconciled + ledger.broken;
    ctx.verified -= ledger.reconciled;
    return undefined;
  }
  if (!closingChecked) {
    const closing = rows.find((r) => r.amounts.length === 1 && LABELS.closing.test(r.label));
    if (closing && ledger.lastBalance !== undefined) {
      const v = last(closing).cents;
      ctx.checked++;
      if (Math.abs(v - ledger.lastBalance) > SLACK) {
        finding(ctx, {
          code: "closing_balance_mismatch",
          message: `On page ${closing.line.page}, the closing balance is ${money(ctx, v)}, but the last transaction leaves ${money(ctx, ledger.lastBalance)}.`,
          page: closing.line.page,
          bbox: lineBox(closing, last(closing)),
          evidence: { printed: last(closing).text, expected: money(ctx, ledger.lastBalance) },
          severity: 9,
        });
      } else ctx.verified++;
    }
  }
  return ledger;
}

/** Every way of adding the amounts with + or − (at most 3 amounts: 8 combinations). */
function signedSums(values: number[]): number[] {
  const vs = values.slice(0, 3);
  const out: number[] = [];
  for (let mask = 0; mask < 1 << vs.length; mask++) {
    out.push(vs.reduce((s, v, i) => s + (mask & (1 << i) ? -v : v), 0));
  }
  return out;
}

/** Opening + money in − money out = closing, and the totals against the rows. */
function checkStatementSummary(rows: Row[], ledger: Ledger | undefined, ctx: Ctx) {
  const pick = (re: RegExp) => rows.find((r) => r.amounts.length === 1 && re.test(r.label) && !r.date);
  const opening = pick(LABELS.opening);
  const closing = pick(LABELS.closing);
  const totalIn = pick(LABELS.totalIn);
  const totalOut = pick(LABELS.totalOut);
  if (opening && closing && totalIn && totalOut) {
    const [o, c, i, out] = [
      last(opening).cents,
      last(closing).cents,
      last(totalIn).cents,
      Math.abs(last(totalOut).cents),
    ];
    const expected = o + Math.abs(i) - out;
    ctx.checked++;
    if (Math.abs(expected - c) > SLACK) {
      finding(ctx, {
        code: "statement_summary_mismatch",
        message: `On page ${closing.line.page}, the opening balance ${last(opening).text} plus ${last(totalIn).text} in minus ${last(totalOut).text} out gives ${money(ctx, expected)}, but the closing balance printed is ${last(closing).text}.`,
        page: closing.line.page,
        bbox: lineBox(closing, last(closing)),
        evidence: {
          opening: last(opening).text,
          moneyIn: last(totalIn).text,
          moneyOut: last(totalOut).text,
          expected: money(ctx, expected),
          printed: last(closing).text,
        },
        severity: 9,
      });
    } else ctx.verified++;
  }
  if (!ledger || ledger.broken > 0) return;
  for (const [row, sum, what] of [
    [totalIn, ledger.credits, "money in"],
    [totalOut, ledger.debits, "money out"],
  ] as const) {
    if (!row) continue;
    ctx.checked++;
    if (Math.abs(Math.abs(last(row).cents) - sum) > SLACK) {
      finding(ctx, {
        code: "statement_totals_mismatch",
        message: `On page ${row.line.page}, the total ${what} is ${last(row).text}, but the ${ledger.rows.length} transactions listed add up to ${money(ctx, sum)}.`,
        page: row.line.page,
        bbox: lineBox(row, last(row)),
        evidence: { printed: last(row).text, sumOfRows: money(ctx, sum), rows: ledger.rows.length },
        severity: 8,
      });
    } else ctx.verified++;
  }
}

// ---------------------------------------------------------------------------------------------
// Line items, totals, tax
// ---------------------------------------------------------------------------------------------

/** "420 kWh x 27.50p/kWh" or "30 days x £0.45" in a label: quantity × rate in cents. */
function labelProduct(label: string, style: NumberStyle): number | undefined {
  const m = /(\d[\d.,]*)\s*(?:[A-Za-zäöü]+\s*)?[x×]\s*([£$€]?\s?\d[\d.,]*)\s*(p|ct|cents?|€|EUR)?\b/i.exec(
    label,
  );
  if (!m?.[1] || !m[2]) return undefined;
  const qty = parseNumber(m[1], style)?.value;
  const rateText = m[2].replace(/[£$€\s]/g, "");
  const rate = parseNumber(rateText, style)?.value;
  if (qty === undefined || rate === undefined) return undefined;
  const unit = (m[3] ?? "").toLowerCase();
  const centsPerUnit = unit === "p" || unit.startsWith("ct") || unit.startsWith("cent") ? rate : rate * 100;
  return qty * centsPerUnit;
}

/** How far a product may be off when its price is printed rounded to `decimals` (in cents) per unit. */
const roundingSlack = (qty: number, decimals: number) =>
  Math.max(SLACK, Math.ceil(Math.abs(qty) * 0.5 * 10 ** (2 - decimals)) + SLACK);

function checkLineItems(rows: Row[], ctx: Ctx): Set<Row> {
  const items = new Set<Row>();
  const pending: Finding[] = [];
  let agreed = 0;
  for (const r of rows) {
    if (r.date || r.unreadable) continue;
    let expected: number | undefined;
    let how = "";
    let slack = SLACK;
    if (r.quantity !== undefined && r.rate && r.amounts.length === 1) {
      expected = r.quantity * r.rate.cents;
      how = `${r.quantity} × ${r.rate.text}`;
      slack = roundingSlack(r.quantity, r.rate.decimals);
    } else if (r.quantity !== undefined && r.amounts.length >= 2) {
      const unit = r.amounts[r.amounts.length - 2] as RowAmount;
      expected = r.quantity * unit.cents;
      how = `${r.quantity} × ${unit.text}`;
      const decimals = (unit.text.split(/[.,]/).pop() ?? "").replace(/\D/g, "").length;
      slack = roundingSlack(r.quantity, decimals);
    } else if (r.amounts.length === 3 && r.quantity === undefined) {
      // Hours × rate = amount, printed as three figures: counts when it holds, says nothing otherwise
      // (three figures may as well be three columns of another kind).
      const [a, b, c] = r.amounts as [RowAmount, RowAmount, RowAmount];
      if (Math.abs(Math.round((a.cents * b.cents) / 100) - c.cents) <= roundingSlack(a.cents / 100, 2)) {
        ctx.checked++;
        ctx.verified++;
        agreed++;
        items.add(r);
      }
      continue;
    } else if (r.amounts.length === 1) {
      const p = labelProduct(r.label, ctx.style);
      if (p === undefined) continue;
      expected = p;
      how = r.label.replace(/^.*?(\d[\d.,]*\s*(?:[A-Za-zäöü]+\s*)?[x×].*)$/, "$1");
      slack = SLACK + 1;
    } else continue;
    const printed = last(r).cents;
    ctx.checked++;
    items.add(r);
    if (Math.abs(Math.round(expected) - printed) <= slack) {
      ctx.verified++;
      agreed++;
      continue;
    }
    pending.push({
      code: "line_item_mismatch",
      message: `On page ${r.line.page}, ${rowName(r)}: ${how} is ${money(ctx, Math.round(expected))}, but the line amount printed is ${last(r).text}.`,
      page: r.line.page,
      bbox: lineBox(r, last(r)),
      evidence: {
        row: r.line.text.slice(0, 200),
        computation: how,
        expected: money(ctx, Math.round(expected)),
        printed: last(r).text,
      },
      severity: 8,
    });
  }
  // Trust the products only when most of them hold: otherwise the columns were not quantity × price.
  if (agreed >= Math.max(1, pending.length)) ctx.findings.push(...pending);
  else ctx.checked -= pending.length;
  return items;
}

interface BlockTerm {
  row: Row;
  cents: number;
  /** A row whose figure could not be read. */
  unknown?: boolean;
}

/**
 * Blocks of label + amount rows between headings: a labelled total must equal the sum of the amounts
 * above it (any tail of them, since a block may begin with unrelated figures); a total that matched
 * becomes the running subtotal. Net pay and tax rates have their own rules.
 */
function checkBlocks(rows: Row[], ctx: Ctx, items: Set<Row>): Finding[] {
  const deferred: Finding[] = [];
  // Several tax rates: each applies to part of the items, so a tax is checked only on a base it prints.
  const rates = new Set(
    rows
      .filter((r) => isTaxRow(r.label))
      .map((r) => /(\d+(?:[.,]\d+)?)\s?%/.exec(r.label)?.[1]?.replace(",", "."))
      .filter(Boolean),
  );
  let terms: BlockTerm[] = [];
  const seen: Row[] = [];
  let page = rows[0]?.line.page;
  for (const r of rows) {
    if (r.line.page !== page) {
      page = r.line.page;
      terms = [];
    }
    const boundary =
      (r.amounts.length === 0 && !r.unreadable) ||
      (r.date !== undefined && r.amounts.length >= 2) ||
      isStatementLabel(r.label);
    if (boundary) {
      if (r.amounts.length === 0 && r.label) terms = [];
      continue;
    }
    if (r.unreadable) {
      // A figure of this block could not be read: nothing above the next total can be added up.
      terms.push({ row: r, cents: 0, unknown: true });
      continue;
    }
    const v = last(r).cents;
    seen.push(r);
    if (LABELS.net.test(r.label) && !LABELS.gross.test(r.label) && !LABELS.subtotal.test(r.label)) {
      checkNet(r, seen, ctx);
      continue;
    }
    if (isTaxRow(r.label)) checkTaxRate(r, terms, seen, ctx, rates);
    const subtracted = (LABELS.minus.test(r.label) || LABELS.discount.test(r.label)) && v > 0;
    const signedV = subtracted ? -v : v;
    if (
      LABELS.totalish.test(r.label) &&
      !LABELS.taxIncluded.test(r.label) &&
      !LABELS.discount.test(r.label)
    ) {
      if (terms.some((t) => t.unknown) || r.unreadable) {
        terms = [{ row: r, cents: v }];
        continue;
      }
      if (terms.length >= 1) {
        const tails: number[] = [];
        let s = 0;
        for (let i = terms.length - 1; i >= 0; i--) {
          s += (terms[i] as BlockTerm).cents;
          tails.push(s);
        }
        // A total may be printed without its sign ("Total tax overpaid").
        const ok = tails.some((t) => Math.abs(Math.abs(t) - Math.abs(v)) <= SLACK);
        if (terms.length >= 2 || ok) ctx.checked++;
        if (ok) ctx.verified++;
        else if (terms.length >= 2) {
          const expected = tails[tails.length - 1] as number;
          const sub = LABELS.subtotal.test(r.label);
          deferred.push({
            code: sub ? "subtotal_mismatch" : "total_mismatch",
            message: `On page ${r.line.page}, "${r.label}" is ${last(r).text}, but the ${terms.length} amounts above it (${terms
              .slice(-6)
              .map((t) => last(t.row).text)
              .join(
                ", ",
              )}${terms.length > 6 ? ", ..." : ""}) add up to ${money(ctx, expected)} (a difference of ${money(ctx, v - expected)}).`,
            page: r.line.page,
            bbox: lineBox(r, last(r)),
            evidence: {
              label: r.label,
              printed: last(r).text,
              expected: money(ctx, expected),
              terms: terms.map((t) => last(t.row).text),
              lineItems: terms.filter((t) => items.has(t.row)).length,
            },
            severity: 9,
          });
        }
      }
      terms = [{ row: r, cents: v }];
      continue;
    }
    terms.push({ row: r, cents: signedV });
  }
  return deferred;
}

function sameYtd(a: string, b: string) {
  return LABELS.ytd.test(a) === LABELS.ytd.test(b);
}

/** Gross − deductions = net, with the latest gross and deductions total above the net row. */
function checkNet(net: Row, seen: Row[], ctx: Ctx) {
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
  if (!gross || !deductions) return;
  const expected = last(gross).cents - Math.abs(last(deductions).cents);
  const printed = last(net).cents;
  ctx.checked++;
  if (Math.abs(expected - printed) <= SLACK) {
    ctx.verified++;
    return;
  }
  finding(ctx, {
    code: "net_pay_mismatch",
    message: `On page ${net.line.page}, "${net.label}" is ${last(net).text}, but ${gross.label} ${last(gross).text} minus ${deductions.label} ${last(deductions).text} is ${money(ctx, expected)} (a difference of ${money(ctx, printed - expected)}).`,
    page: net.line.page,
    bbox: lineBox(net, last(net)),
    evidence: {
      gross: last(gross).text,
      deductions: last(deductions).text,
      expected: money(ctx, expected),
      printed: last(net).text,
    },
    severity: 9,
  });
}

/**
 * "VAT 20%" = 20 % of the subtotal above; "VAT included at 20%" = 20/120 of the total above; "VAT 7% on
 * 129,43  9,06" = 7 % of the base printed in its own row. With several rates and no base in the row the
 * tax is on part of the items, which the rows do not say: not checked.
 */
function checkTaxRate(r: Row, terms: BlockTerm[], seen: Row[], ctx: Ctx, rates: Set<string | undefined>) {
  const m = /(\d+(?:[.,]\d+)?)\s?%/.exec(r.label);
  const rate = m?.[1] ? parseNumber(m[1], ctx.style)?.value : undefined;
  if (rate === undefined || rate <= 0 || rate >= 100) return;
  const included = LABELS.taxIncluded.test(r.label);
  const own = r.amounts.length >= 2 ? (r.amounts[r.amounts.length - 2] as RowAmount) : undefined;
  if (!own && rates.size > 1) return;
  const baseRow = own
    ? undefined
    : included
      ? [...seen.slice(0, -1)].reverse().find((x) => LABELS.totalish.test(x.label))
      : // The base is a subtotal above the tax, never the amount due (a summary printed before the lines).
        ([...terms]
          .reverse()
          .find((t) => LABELS.totalish.test(t.row.label) && !LABELS.payable.test(t.row.label))?.row ??
        (terms.length === 1 ? terms[0]?.row : undefined));
  const base = own ?? (baseRow ? last(baseRow) : undefined);
  if (!base || (baseRow?.unreadable ?? false)) return;
  const b = base.cents;
  const expected = included ? (b * rate) / (100 + rate) : (b * rate) / 100;
  const printed = last(r).cents;
  ctx.checked++;
  if (Math.abs(Math.round(expected) - printed) <= SLACK + 1) {
    ctx.verified++;
    return;
  }
  finding(ctx, {
    code: "tax_amount_mismatch",
    message: `On page ${r.line.page}, "${r.label}" is ${last(r).text}, but ${formatRate(rate)} % ${included ? "contained in" : "of"} ${base.text} is ${money(ctx, Math.round(expected))}.`,
    page: r.line.page,
    bbox: lineBox(r, last(r)),
    evidence: {
      label: r.label,
      rate: formatRate(rate),
      base: base.text,
      expected: money(ctx, Math.round(expected)),
      printed: last(r).text,
    },
    severity: 7,
  });
}

/** A rate as people write it: 19, 7.5, 0.5 (never exponent notation). */
const formatRate = (rate: number) => String(Number(rate.toFixed(4)));

/**
 * The amount due (or net pay) printed in more than one place under the same label must be the same: an
 * edit of one copy leaves the others behind.
 */
function checkRepeatedTotals(rows: Row[], ctx: Ctx) {
  const byLabel = new Map<string, Row[]>();
  for (const r of rows) {
    if (r.amounts.length === 0 || r.unreadable || !LABELS.payable.test(r.label) || LABELS.ytd.test(r.label))
      continue;
    const key = r.label
      .toLowerCase()
      .replace(/[^\p{L}\p{N}%]+/gu, " ")
      .trim();
    byLabel.set(key, [...(byLabel.get(key) ?? []), r]);
  }
  for (const [, copies] of byLabel) {
    if (copies.length < 2) continue;
    const values = new Set(copies.map((r) => last(r).cents));
    ctx.checked++;
    if (values.size === 1) {
      ctx.verified++;
      continue;
    }
    const [first, ...others] = copies as [Row, ...Row[]];
    const odd = others.find((r) => last(r).cents !== last(first).cents) as Row;
    finding(ctx, {
      code: "total_repeated_mismatch",
      message: `"${first.label}" is printed ${copies.length} times with different amounts: ${copies.map((r) => `${last(r).text} on page ${r.line.page}`).join(", ")}; one copy was changed and the others were not.`,
      page: odd.line.page,
      bbox: lineBox(odd, last(odd)),
      evidence: {
        label: first.label,
        printed: copies.map((r) => ({ page: r.line.page, amount: last(r).text })),
      },
      severity: 9,
    });
  }
}

export interface ArithmeticReport {
  findings: Finding[];
  checked: number;
  verified: number;
  statementRows: number;
}

export function arithmeticFindings(doc: DocumentModel): ArithmeticReport {
  const style = numberStyleFor(doc.region);
  const rows = rowsOf(documentLines(doc), style, doc.region);
  const ctx: Ctx = { style, findings: [], verified: 0, checked: 0 };
  const currencies = rows.flatMap((r) => r.amounts.map((a) => /[£$€]|EUR|GBP|USD/.exec(a.text)?.[0]));
  const first = currencies.find(Boolean);
  if (first)
    ctx.currency =
      first === "£" || first === "GBP" ? "GBP" : first === "$" || first === "USD" ? "USD" : "EUR";
  const ledger = checkStatement(rows, ctx);
  checkStatementSummary(rows, ledger, ctx);
  const items = checkLineItems(rows, ctx);
  checkRepeatedTotals(rows, ctx);
  const blockFindings = checkBlocks(rows, ctx, items);
  // A mismatching total counts only once the document's figures were seen to add up somewhere else.
  if (ctx.verified > 0) ctx.findings.push(...blockFindings);
  return {
    findings: ctx.findings,
    checked: ctx.checked,
    verified: ctx.verified,
    statementRows: ledger?.rows.length ?? 0,
  };
}

/** Every finding code this check reports: its highest level, its kind of evidence, what it means. */
export const CODES = {
  balance_carried_mismatch: {
    level: "proof",
    kind: "arithmetic",
    means: "A balance carried to the next page differs from the one brought forward.",
  },
  closing_balance_mismatch: {
    level: "proof",
    kind: "arithmetic",
    means: "The closing balance is not the opening balance plus the transactions.",
  },
  running_balance_mismatch: {
    level: "proof",
    kind: "arithmetic",
    means: "A running balance is not the previous balance plus the row's amount.",
  },
  statement_summary_mismatch: {
    level: "proof",
    kind: "arithmetic",
    means: "The statement's summary does not agree with its transactions.",
  },
  statement_totals_mismatch: {
    level: "proof",
    kind: "arithmetic",
    means: "The statement's totals of debits or credits do not add up.",
  },
  line_item_mismatch: {
    level: "proof",
    kind: "arithmetic",
    means: "A line's amount is not its quantity times its unit price.",
  },
  net_pay_mismatch: {
    level: "proof",
    kind: "arithmetic",
    means: "Net pay is not gross pay minus the deductions.",
  },
  tax_amount_mismatch: {
    level: "proof",
    kind: "arithmetic",
    means: "The tax printed is not the rate applied to its base.",
  },
  total_repeated_mismatch: {
    level: "proof",
    kind: "arithmetic",
    means: "A total printed twice reads differently.",
  },
  subtotal_mismatch: {
    level: "proof",
    kind: "arithmetic",
    means: "A subtotal is not the sum of its lines.",
  },
  total_mismatch: {
    level: "proof",
    kind: "arithmetic",
    means: "A total is not the sum of its parts.",
  },
} as const satisfies CodeTable;

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
    return outcome === "pass"
      ? `All ${checked} sums checked${ledger} add up.`
      : `${findings.length} of ${checked} sums checked do not add up: ${[...new Set(findings.map((f) => `${f.code} on page ${f.page}`))].join(", ")}.`;
  },
});
