import type { Box } from "../../document/page-layout.js";
import type { Line } from "../../document/text-lines.js";
import {
  type NumberStyle,
  type ParsedAmount,
  parseAmount,
  parseNumber,
} from "../../document/values/amounts.js";
import { parseDateText } from "../../document/values/dates.js";

/**
 * Rows of figures for the arithmetic check: each text line split into its label (the words), a leading
 * date, a quantity, and the money amounts printed as cells of their own, left to right. The labels
 * that carry meaning (opening balance, subtotal, VAT, net pay, ...) are matched here in English and
 * German.
 */

export interface RowAmount {
  cents: number;
  text: string;
  /** Right edge of the amount's cell, when the layout is known. */
  right?: number;
  bbox?: Box;
  /** Printed with an explicit minus, parentheses, trailing minus or DR. */
  signed: boolean;
}

export interface Row {
  line: Line;
  label: string;
  date?: string;
  /** A plain number printed before the amounts (or "3 x ..." in the label). */
  quantity?: number;
  amounts: RowAmount[];
}

function amountOf(a: ParsedAmount, bbox?: Box): RowAmount {
  return {
    cents: a.cents,
    text: a.raw,
    ...(bbox ? { bbox, right: bbox[2] } : {}),
    signed: a.negative !== undefined,
  };
}

export function rowsOf(lines: readonly Line[], style: NumberStyle, region: string): Row[] {
  return lines.map((line) => {
    const labels: string[] = [];
    const amounts: RowAmount[] = [];
    let date: string | undefined;
    let quantity: number | undefined;
    line.cells.forEach((cell, i) => {
      const a = parseAmount(cell.text, { style });
      if (a) {
        amounts.push(amountOf(a, cell.bbox));
        return;
      }
      if (i === 0 && parseDateText(cell.text, region)) {
        date = cell.text;
        return;
      }
      const n = amounts.length === 0 && i > 0 ? parseNumber(cell.text, style) : null;
      if (n && n.value > 0 && n.value < 1e6) {
        quantity = n.value;
        return;
      }
      labels.push(cell.text);
    });
    const label = labels.join(" ").replace(/\s+/g, " ").trim();
    if (quantity === undefined) {
      const q = /^(\d+(?:[.,]\d+)?)\s*[x×]\s+\S/.exec(label);
      if (q?.[1]) quantity = parseNumber(q[1], style)?.value;
    }
    return {
      line,
      label,
      ...(date ? { date } : {}),
      ...(quantity !== undefined ? { quantity } : {}),
      amounts,
    };
  });
}

export const LABELS = {
  opening:
    /\b(opening balance|balance brought forward|brought forward|beginning balance|starting balance|previous statement balance|anfangssaldo|alter kontostand|saldo vortrag|kontostand alt)\b/i,
  closing:
    /\b(closing balance|ending balance|new balance|balance carried forward|carried forward|endsaldo|neuer kontostand|schlusssaldo|kontostand neu)\b/i,
  totalIn:
    /\b(total (money in|deposits|credits|paid in|receipts)|deposits and (other )?(additions|credits)|summe haben|summe gutschriften|summe eingänge)\b/i,
  totalOut:
    /\b(total (money out|withdrawals|debits|paid out|payments)|withdrawals and (other )?(subtractions|debits)|summe soll|summe lastschriften|summe belastungen|summe ausgänge)\b/i,
  subtotal:
    /\b(sub-?total|zwischensumme|nettobetrag|summe netto|net amount|total (excl\.?|before) (vat|tax))\b/i,
  totalish:
    /\b(sub-?total|total|totals|summe|gesamt\w*|zwischensumme|amount due|balance due|zu zahlen\w*|rechnungsbetrag|endbetrag|gross pay|gross earnings|gesamtbrutto)\b/i,
  tax: /\b(vat|tax|ust\.?|mwst\.?|umsatzsteuer|mehrwertsteuer|gst|hst)\b/i,
  taxIncluded: /\b(incl\.?|included|including|inkl\.?|enthalten\w*)\b/i,
  gross: /\b(gross|brutto|gesamtbrutto)\b/i,
  deductionsTotal: /\b(total deductions|deductions|summe abzüge|abzüge|gesetzliche abzüge)\b/i,
  net: /\b(net pay|net salary|net wages|take[- ]home pay|auszahlungsbetrag|nettoverdienst|nettolohn|netto lfd|net pay ytd|netto)\b/i,
  ytd: /\b(ytd|year to date|lfd\.? jahr|jahressumme\w*|kumuliert)\b/i,
  minus: /^(minus|less|abzüglich|abzgl\.?|deduct)\b/i,
} as const;

export const isStatementLabel = (label: string) =>
  LABELS.opening.test(label) ||
  LABELS.closing.test(label) ||
  LABELS.totalIn.test(label) ||
  LABELS.totalOut.test(label);
