import type { Box } from "../../document/page-layout.js";
import type { Line } from "../../document/text-lines.js";
import {
  type NumberStyle,
  type ParsedAmount,
  parseAmount,
  parseNumber,
} from "../../document/values/amounts.js";
import { findDates, parseDateText } from "../../document/values/dates.js";

/**
 * Rows of figures for the arithmetic check: each text line split into its label (the words), a leading
 * date, a quantity (a plain number, or one with a unit such as "511 kWh"), a rate per unit ("24,26
 * ct/kWh", "£0.45/day") and the money amounts printed as cells of their own, left to right. The labels
 * that carry meaning (opening balance, subtotal, VAT, discount, net pay, ...) are matched here in
 * English, German and French, with the common Dutch, Spanish and Italian words.
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
  /** A plain number printed before the amounts (or "3 x ..." in the label, or "511 kWh"). */
  quantity?: number;
  /** A price per unit printed as such ("24,26 ct/kWh"), in cents, with its printed decimals. */
  rate?: { cents: number; decimals: number; text: string };
  amounts: RowAmount[];
  /** A cell that looks like money but cannot be read (an OCR misreading): the row's figures are incomplete. */
  unreadable?: boolean;
}

/** Units a quantity is counted in (energy, volume, weight, time, pieces), in the languages above. */
const UNIT =
  "kwh|mwh|m³|m3|l|kg|g|t|h|hrs?|hours?|std\\.?|stunden?|heures?|uur|horas?|ore|min|days?|tage?|jours?|dagen|d[ií]as|giorni|months?|monate?|mois|maanden|meses|mesi|stk\\.?|st[üu]ck|pcs|pieces?|pi[èe]ces?|units?|unidades|pezzi|x";
const QUANTITY_CELL = new RegExp(`^(\\d[\\d.,\u00a0\u202f ]*)\\s*(?:${UNIT})$`, "i");
const RATE_CELL = new RegExp(
  `^([£$€]?\\s?\\d[\\d.,]*)\\s*(ct|cents?|c|¢|p|pence|€|eur|£|gbp|\\$|usd)?\\s*(?:/|per|pro|par)\\s*(?:${UNIT})$`,
  "i",
);
/** A cell that is nothing but a money figure (digits, separators, a currency mark): unreadable when no amount parses. */
const MONEY_LIKE =
  /^[-−(]?\s*(?:[£$€]|EUR|GBP|USD)\s*[\d.,'\u00a0\u202f ]*\d[\d.,'\u00a0\u202f ]*\)?$|^[-−(]?\s*[\d.,'\u00a0\u202f ]*\d[\d.,'\u00a0\u202f ]*\s*(?:[£$€]|EUR|GBP|USD)\)?$/;

/** A date at the start of a cell followed by text ("03/01/2025 STANDING ORDER RENT"). */
function leadingDate(text: string, region: string): { date: string; rest: string } | undefined {
  const first = findDates(text, region)[0];
  if (!first || first.start !== 0 || !first.date) return undefined;
  const rest = text.slice(first.end);
  if (!/^\s/.test(rest)) return undefined;
  return { date: text.slice(0, first.end), rest: rest.trim() };
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
    let rate: Row["rate"];
    let unreadable = false;
    line.cells.forEach((cell, i) => {
      const a = parseAmount(cell.text, { style });
      if (a) {
        amounts.push(amountOf(a, cell.bbox));
        return;
      }
      if (i === 0) {
        if (parseDateText(cell.text, region)) {
          date = cell.text;
          return;
        }
        const lead = leadingDate(cell.text, region);
        if (lead) {
          date = lead.date;
          labels.push(lead.rest);
          return;
        }
      }
      const r = RATE_CELL.exec(cell.text.trim());
      if (r?.[1] && amounts.length === 0) {
        const n = parseNumber(r[1].replace(/[£$€\s]/g, ""), style);
        if (n) {
          const unit = (r[2] ?? "").toLowerCase();
          const inCents = /^(ct|cents?|c|¢|p|pence)$/.test(unit);
          rate = {
            cents: inCents ? n.value : n.value * 100,
            decimals: n.decimals + (inCents ? 0 : 2),
            text: cell.text,
          };
          return;
        }
      }
      const q = QUANTITY_CELL.exec(cell.text.trim());
      const n = amounts.length === 0 && i > 0 ? parseNumber(q?.[1] ?? cell.text, style) : null;
      if (n && n.value > 0 && n.value < 1e6) {
        quantity = n.value;
        return;
      }
      if (MONEY_LIKE.test(cell.text.trim())) unreadable = true;
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
      ...(rate ? { rate } : {}),
      amounts,
      ...(unreadable ? { unreadable } : {}),
    };
  });
}

export const LABELS = {
  opening:
    /\b(opening balance|balance brought forward|brought forward|beginning balance|starting balance|previous statement balance|anfangssaldo|alter kontostand|saldo vortrag|kontostand alt|solde pr[ée]c[ée]dent|ancien solde|solde initial|solde d'ouverture|solde au d[ée]but|beginsaldo|saldo iniziale|saldo inicial|saldo anterior)\b/i,
  closing:
    /\b(closing balance|ending balance|new balance|balance carried forward|carried forward|endsaldo|neuer kontostand|schlusssaldo|kontostand neu|nouveau solde|solde final|solde de cl[ôo]ture|solde au \d|eindsaldo|saldo finale|saldo final)\b/i,
  totalIn:
    /\b(total (money in|deposits|credits|paid in|receipts)|deposits and (other )?(additions|credits)|summe haben|summe gutschriften|summe eingänge|total des cr[ée]dits|total cr[ée]dits|total des versements)\b/i,
  totalOut:
    /\b(total (money out|withdrawals|debits|paid out|payments)|withdrawals and (other )?(subtractions|debits)|summe soll|summe lastschriften|summe belastungen|summe ausgänge|total des d[ée]bits|total d[ée]bits)\b/i,
  subtotal:
    /\b(sub-?total|zwischensumme|nettobetrag|summe netto|rechnungssumme netto|net amount|total (excl\.?|before) (vat|tax)|total ht|montant ht|sous-total|sous total|subtotaal|totaal excl\w*|imponibile|base imponible)\b/i,
  totalish:
    /\b(sub-?total|total|totals|summe|gesamt\w*|zwischensumme|nettobetrag|rechnungssumme\w*|amount due|balance due|zu zahlen\w*|rechnungsbetrag|endbetrag|gross pay|gross earnings|gesamtbrutto|salaire brut|sous-total|montant (ttc|ht|total)|net [àa] payer|[àa] payer|totaal|importe total|totale)\b/i,
  tax: /\b(vat|tax|ust\.?|mwst\.?|umsatzsteuer|mehrwertsteuer|gst|hst|tva|btw|iva)\b/i,
  /** A row stating the base a tax is computed on, not the tax. */
  taxBase: /(basis|base|bemessungsgrundlage|grundlage|\bht\b|\bexcl|\bnet amount|\bnetto\b|imponib)/i,
  taxIncluded: /\b(incl\.?|included|including|inkl\.?|enthalten\w*|dont|inclus\w*|inbegrepen|incluido)\b/i,
  /** Discounts and surcharges: amounts a block adds or subtracts, never tax lines even with a rate. */
  discount:
    /\b(rabatt\w*|nachlass|sondernachlass|abschlag|skonto|discount|remise|rabais|escompte|r[ée]duction|korting|descuento|sconto|reduction)\b/i,
  gross: /\b(gross|brutto|gesamtbrutto|brut|salaire brut|bruto|lordo)\b/i,
  deductionsTotal:
    /\b(total deductions|deductions|summe abzüge|abzüge|gesetzliche abzüge|total des retenues|retenues|total des cotisations|inhoudingen|deducciones|trattenute)\b/i,
  net: /\b(net pay|net salary|net wages|take[- ]home pay|auszahlungsbetrag|nettoverdienst|nettolohn|netto lfd|net pay ytd|netto|net [àa] payer|net pay[ée]|salaire net|neto|netto in busta)\b/i,
  ytd: /\b(ytd|year to date|lfd\.? jahr|jahressumme\w*|kumuliert|cumul\w*|annuel)\b/i,
  minus: /^(minus|less|abzüglich|abzgl\.?|deduct|moins|[-−])\b/i,
  /**
   * The amount a document asks to be paid (or pays out), printed again in a summary box or a payment
   * slip: every copy must agree.
   */
  payable:
    /\b(amount due|total due|balance due|amount payable|total to pay|rechnungsbetrag|zahlbetrag|zu zahlen\w*|offener betrag|auszahlungsbetrag|net pay|net [àa] payer|montant (ttc )?[àa] payer|total ttc|montant ttc|totaal te betalen|importe a pagar|totale da pagare)\b/i,
} as const;

export const isStatementLabel = (label: string) =>
  LABELS.opening.test(label) ||
  LABELS.closing.test(label) ||
  LABELS.totalIn.test(label) ||
  LABELS.totalOut.test(label);

/** Words that may stand beside a tax word and its rate in a tax row ("plus 20% VAT", "zzgl. 19 % USt."). */
const TAX_FILLER =
  /\b(zzgl\.?|zuzüglich|plus|add|at|on|of|von|auf|sur|de|du|la|le|davon|enthaltene|incl\.?|inkl\.?|including|dont|y compris|total|summe|gesamt)\b|[@+():.]/gi;

/**
 * A row printing a tax at a rate: the tax word comes before the rate, or nothing but filler words stands
 * beside them (a line item that carries a tax category column, "Frachtbetrag 19% VAT(S)", is no tax row);
 * it is not the base the tax is computed on, and not a discount.
 */
export function isTaxRow(label: string): boolean {
  const rate = /\d+(?:[.,]\d+)?\s?%/.exec(label);
  const tax = LABELS.tax.exec(label);
  if (!rate || !tax) return false;
  if (LABELS.discount.test(label) || LABELS.taxBase.test(label)) return false;
  if (tax.index < rate.index) return true;
  const rest = label.replace(rate[0], " ").replace(LABELS.tax, " ").replace(TAX_FILLER, " ");
  return rest.trim() === "";
}
