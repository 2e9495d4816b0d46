import type { Box } from "../page-layout.js";
import { type NumberStyle, parseAmount, parseNumber } from "../values/amounts.js";
import { findDates, parseDateText, parseDayMonth } from "../values/dates.js";
import type { Cell } from "./lines.js";

/**
 * What a cell holds: a figure (an amount of money, a quantity, a percentage, a price per unit), a date,
 * or words. Figures keep the sign convention they were printed with, so a table whose column says
 * "Debit" can read "50.00" as money out and a signed "Amount" column can read "(50.00)", "50.00-",
 * "50.00 DR" and "-50.00" alike.
 */

export interface Figure {
  /** Signed value, in cents for money (value × 100 rounded; quantities and percentages alike). */
  cents: number;
  /** Signed value as printed. */
  value: number;
  decimals: number;
  text: string;
  /** A currency mark or exactly two decimals. */
  money: boolean;
  /** How a negative was printed. */
  negative?: "minus" | "parentheses" | "trailing_minus" | "debit";
  /** CR printed after the number. */
  credit?: boolean;
  currency?: string;
  /** "19 %". */
  percent?: boolean;
  /** "511 kWh", "3 Stk": the unit printed with a quantity. */
  unit?: string;
  /** "24,26 ct/kWh", "£0.45/day": a price per unit, in cents per unit. */
  perUnit?: boolean;
  /** Reader's frame (y up). */
  box: Box;
  page: number;
  /** 1 for PDF text; the OCR confidence of its words. */
  confidence: number;
}

export interface ReadCell extends Cell {
  figure?: Figure;
  /** The cell is a date, or starts with one ("03/01/2025 STANDING ORDER"): the date's text. */
  date?: string;
  /** The words after a leading date. */
  rest?: string;
  /** Looks like money but reads as no amount (an OCR misreading): the row's figures are incomplete. */
  unreadable?: boolean;
  /** The debit/credit mark ("D", "Cr") of the amount before it, read into that amount's sign: no word of a label. */
  signMark?: boolean;
}

/** Units a quantity is counted in (energy, volume, weight, time, pieces), in six languages. */
const UNIT =
  "kwh|mwh|m³|m3|l|kg|g|t|h|hrs?|hours?|std\\.?|stunden?|heures?|uur|horas?|ore|min|days?|tage?|jours?|dagen|d[ií]as|giorni|months?|monate?|mois|maanden|meses|mesi|stk\\.?|st\\.|stuks?|mnd\\.?|maand(?:en)?|st[üu]ck|pcs|pieces?|pi[èe]ces?|units?|unidades|uds?\\.?|unid\\.?|pezzi|pz\\.?|x";
const QUANTITY_CELL = new RegExp(`^(\\d[\\d.,\u00a0\u202f ]*)\\s*(${UNIT})$`, "i");
const RATE_CELL = new RegExp(
  `^([£$€]?\\s?\\d[\\d.,]*)\\s*(ct|cents?|c|¢|p|pence|€|eur|£|gbp|\\$|usd)?\\s*(?:/|per|pro|par)\\s*(?:${UNIT})$`,
  "i",
);
const PERCENT_CELL = /^([-−]?\d{1,3}(?:[.,]\d{1,4})?)\s?%$/;
/** A cell that is nothing but a money figure (digits, separators, a currency mark). */
const MONEY_LIKE =
  /^[-−(]?\s*(?:[£$€]|EUR|GBP|USD)\s*[\d.,'\u2019\u00a0\u202f ]*\d[\d.,'\u2019\u00a0\u202f ]*\)?$|^[-−(]?\s*[\d.,'\u2019\u00a0\u202f ]*\d[\d.,'\u2019\u00a0\u202f ]*\s*(?:[£$€]|EUR|GBP|USD)\)?$/;

const centsOf = (v: number) => {
  const c = Math.round(Math.abs(v) * 100 + 1e-9);
  return v < 0 ? -c : c;
};

/**
 * A date as statements also print them: a two-digit year ("03/03/25", "03.03.25") or a month name between
 * dashes or dots ("03-Mar-2025", "03.mars.25"), in any of the six languages.
 */
function shortYearDate(text: string, region: string): boolean {
  const t = text.trim();
  const numeric = /^(\d{1,2})([./-])(\d{1,2})\2(\d{2})$/.exec(t);
  if (numeric) return parseDayMonth(`${numeric[1]}${numeric[2]}${numeric[3]}`, region) !== undefined;
  const named = /^(\d{1,2})[-. ]([\p{L}]{3,9})\.?[-. ](\d{2}|\d{4})$/u.exec(t);
  return named !== null && parseDayMonth(`${named[1]} ${named[2]}`, region) !== undefined;
}

/** The figure a cell's text is, if it is one. */
export function figureOf(
  text: string,
  style: NumberStyle,
  at: { box: Box; page: number; confidence: number },
): Figure | undefined {
  // A separator glyph the font maps to no character ("5\u0000224,60": a narrow no-break space without a
  // ToUnicode entry) is still a separator. A gap drawn before a group separator ("13 .465,07", "−1 .028,00":
  // a re-distilled page spacing its glyphs) is no space of the number: a group of three digits follows it, then
  // the decimals or the end.
  const t = text
    .trim()
    .replace(/(?<=\d)[\u0000-\u001f\ufffd](?=\d)/g, "\u202f")
    .replace(/(?<=\d) +(?=[.,'\u2019]\d{3}(?:[.,'\u2019 ]\d{3})*(?:[.,]\d{1,2})?(?![\d.,]))/g, "")
    // A currency mark whose glyph a re-encoding mapped to another character ("¬6095.61": Ghostscript's
    // re-distil wrote the euro's WinAnsi code without its ToUnicode entry; a C1 control, "¤", U+FFFD, a private
    // use code) before an amount with its decimals: the amount, its mark unknown.
    .replace(
      /^[\u0080-\u009f\u00a4\u00ac\ufffd\ue000-\uf8ff]\s?(?=[-\u2212]?\d[\d.,'\u2019\u202f ]*[.,]\d{2}$)/u,
      "",
    )
    // The same mark printed after the amount ("5.744,88 ¬", where the page shows "5.744,88 €").
    .replace(
      /(?<=^[-\u2212]?\d[\d.,'\u2019\u202f ]*[.,]\d{2}[-\u2212]?)\s?[\u0080-\u009f\u00a4\u00ac\ufffd\ue000-\uf8ff]$/u,
      "",
    );
  if (!t || t.length > 40 || !/\d/.test(t)) return undefined;
  const pct = PERCENT_CELL.exec(t);
  if (pct?.[1]) {
    const n = parseNumber(pct[1].replace("−", "-"), style);
    if (!n) return undefined;
    return {
      cents: centsOf(n.value),
      value: n.value,
      decimals: n.decimals,
      text: t,
      money: false,
      percent: true,
      ...at,
    };
  }
  const rate = RATE_CELL.exec(t);
  if (rate?.[1]) {
    const n = parseNumber(rate[1].replace(/[£$€\s]/g, ""), style);
    if (n) {
      const unit = (rate[2] ?? "").toLowerCase();
      const inCents = /^(ct|cents?|c|¢|p|pence)$/.test(unit);
      const value = inCents ? n.value / 100 : n.value;
      return {
        cents: inCents ? n.value : n.value * 100,
        value,
        decimals: n.decimals + (inCents ? 2 : 0),
        text: t,
        money: true,
        perUnit: true,
        ...at,
      };
    }
  }
  const a =
    parseAmount(t, { style, loose: true }) ??
    signThenCurrency(t, style) ??
    markOutsideParentheses(t, style) ??
    letterMarked(t, style) ??
    categoryFirst(t, style);
  if (a) {
    const out: Figure = {
      cents: a.cents,
      value: a.value,
      decimals: a.decimals,
      text: t,
      money: a.currency !== undefined || a.decimals === 2,
      ...at,
    };
    if (a.negative) out.negative = a.negative;
    if (a.credit) out.credit = true;
    if (a.currency) out.currency = a.currency;
    return out;
  }
  const q = QUANTITY_CELL.exec(t);
  if (q?.[1] && q[2]) {
    const n = parseNumber(q[1], style);
    if (n && n.value >= 0 && n.value < 1e7)
      return {
        cents: centsOf(n.value),
        value: n.value,
        decimals: n.decimals,
        text: t,
        money: false,
        unit: q[2],
        ...at,
      };
  }
  return undefined;
}

/**
 * "2,796.48 CR GBP", "895,84 S EUR", "599,71- €": a sign suffix printed before the currency, as statements
 * that repeat the currency after every balance do; read as "2,796.48 GBP CR".
 */
function signThenCurrency(t: string, style: NumberStyle) {
  const m = /^(.*\d)\s*(\p{L}{1,3}|[-−])\s*(EUR|GBP|USD|CHF|[£$€])$/u.exec(t);
  if (!m) return undefined;
  const sign = m[2] === "−" ? "-" : (LETTER_MARK[m[2] as string] ?? m[2]);
  const a = parseAmount(`${m[1]} ${m[3]}${sign === "-" ? "" : " "}${sign}`, { style, loose: true });
  return a && (a.credit || a.negative) ? a : undefined;
}

/** A debit/credit mark of one letter after the amount ("164.72 D", "1'109.38 C"): DR and CR. */
// "A" is the Italian avere (credit) beside "D" for dare (debit); "S" the German Soll (debit), whose credit
// mark "H" (Haben, also the Spanish haber beside "D") is read as one only where the document marks its
// debits so (readCells: "7,50 H" is seven and a half hours elsewhere).
// "DB" (débito, Spanish and Portuguese statements: "466,36 DB" beside "152,84 CR") is a debit too.
const LETTER_MARK: Record<string, string> = { C: "CR", D: "DR", A: "CR", S: "DR", DB: "DR", Db: "DR" };

/**
 * "806.15 C", "164.72 D", "466,36 DB": an amount whose debit/credit mark is its initial (or "DB"), printed after
 * it in the same cell.
 */
function letterMarked(t: string, style: NumberStyle) {
  const m = /^(.*\d)\s(D[Bb]|[CDAS])$/.exec(t);
  if (!m?.[1] || !m[2]) return undefined;
  const a = parseAmount(`${m[1]} ${LETTER_MARK[m[2]]}`, { style, loose: true });
  return a && (a.credit || a.negative) ? a : undefined;
}

/**
 * "A EUR 15,36": a tax category letter drawn into the amount's cell (a receipt's "BTW" column set against its
 * amounts): the amount, when it carries its currency mark.
 */
function categoryFirst(t: string, style: NumberStyle) {
  const m = /^[A-Z]\s+((?:[£$€]|EUR|GBP|USD|CHF)\s?[-−(]?\d[\d.,'\u2019\u00a0\u202f ]*\)?)$/.exec(t);
  return m?.[1] ? parseAmount(m[1], { style, loose: true }) : undefined;
}

/** "€(827,47)", "$ (1,234.50)", "(827,47) €": a negative in parentheses with its currency mark outside them. */
function markOutsideParentheses(t: string, style: NumberStyle) {
  const m =
    /^((?:[£$€]|EUR|GBP|USD|CHF)\s?)\(([^()]*\d)\)$/.exec(t) ??
    /^\(([^()]*\d)\)(\s?(?:[£$€]|EUR|GBP|USD|CHF))$/.exec(t);
  if (!m?.[1] || !m[2]) return undefined;
  const a = parseAmount(`(${m[1]}${m[2]})`, { style, loose: true });
  return a?.negative === "parentheses" ? a : undefined;
}

const INDICATOR: Record<string, string> = {
  d: "DR",
  db: "DR",
  dr: "DR",
  c: "CR",
  cr: "CR",
  a: "CR",
  s: "DR",
};

/**
 * An amount printed without a sign whose debit/credit indicator stands in a column of its own right after it
 * ("439.86 | D", "4,606.52 | C" under "Sum | Dr/Cr"): read as "439.86 DR". Undefined when the next cell is no
 * indicator or the amount already has a sign.
 */
function signedBy(f: Figure, next: Cell | undefined, style: NumberStyle, haben = false): Figure | undefined {
  if (!f.money || f.negative || f.credit || !next || f.percent || f.perUnit) return undefined;
  const word = next.text.trim().toLowerCase();
  const mark = INDICATOR[word] ?? (haben && word === "h" ? "CR" : undefined);
  if (!mark) return undefined;
  const s = figureOf(`${f.text} ${mark}`, style, { box: f.box, page: f.page, confidence: f.confidence });
  return s && (s.negative || s.credit) ? { ...s, text: f.text } : undefined;
}

/**
 * Whether a cell is an amount with a debit mark of one letter after it ("1.234,56 S", "895,84 S EUR", "12,00 D"),
 * in its cell or in the next one (`next`, a column of its own: "96.59 | S").
 */
export const debitLetterMarked = (text: string, next?: string) =>
  /\d[.,]\d{2}\s[SD](?:\s*(?:EUR|CHF|GBP|USD|[€£$]))?$/.test(text.trim()) ||
  (/\d[.,]\d{2}$/.test(text.trim()) && (next?.trim() === "S" || next?.trim() === "D"));

/** "1.234,56 H", "895,84 H EUR": an amount marked Haben (credit), in a document that marks its debits "S" or "D". */
function habenMarked(text: string, style: NumberStyle, at: { box: Box; page: number; confidence: number }) {
  const m = /^(.*\d[.,]\d{2})\sH(\s*(?:EUR|CHF|GBP|USD|[€£$]))?$/.exec(text.trim());
  if (!m?.[1]) return undefined;
  const f = figureOf(`${m[1]} C${m[2] ?? ""}`, style, at);
  return f?.credit ? { ...f, text: text.trim() } : undefined;
}

/** Reads each cell of a line: figures, a date (or a leading date), and cells that should be figures but are not. */
export function readCells(
  cells: readonly Cell[],
  page: number,
  style: NumberStyle,
  region: string,
  /** The document marks its debits with a letter after the amount ("S", "D"): "H" after one is its credit. */
  haben = false,
): ReadCell[] {
  const marks = new Set<number>();
  return cells.map((c, i) => {
    const out: ReadCell = { ...c };
    if (marks.has(i)) {
      out.signMark = true;
      return out;
    }
    // A booking day without its year ("03.03.", "03/03" before the words of a row) is a date, not 3.03.
    const next = cells[i + 1];
    if (
      i === 0 &&
      parseDayMonth(c.text, region) &&
      (/\.$/.test(c.text.trim()) ||
        /^[\d./-]+$/.test(c.text.trim()) === false ||
        (next && /\p{L}/u.test(next.text)))
    ) {
      out.date = c.text.trim();
      return out;
    }
    const f =
      (haben ? habenMarked(c.text, style, { box: c.box, page, confidence: c.confidence }) : undefined) ??
      figureOf(c.text, style, { box: c.box, page, confidence: c.confidence });
    if (f) {
      const signed = signedBy(f, next, style, haben);
      out.figure = signed ?? f;
      if (signed) marks.add(i + 1);
      return out;
    }
    if (i <= 1) {
      if (parseDateText(c.text, region) || parseDayMonth(c.text, region) || shortYearDate(c.text, region)) {
        out.date = c.text.trim();
        return out;
      }
      const first = findDates(c.text, region)[0];
      if (first?.date && first.start === 0 && /^\s/.test(c.text.slice(first.end))) {
        out.date = c.text.slice(0, first.end);
        out.rest = c.text.slice(first.end).trim();
        return out;
      }
    }
    if (MONEY_LIKE.test(c.text.trim())) out.unreadable = true;
    return out;
  });
}
