/**
 * Locale-aware reading of printed numbers and money amounts: 1,234.56 / 1.234,56 / 1 234,56 / 1'234.56
 * (also with the typographic apostrophe U+2019, 1’234.56),
 * currency symbols and codes before or after (€, £, $, EUR, GBP, USD, ...), negatives with a leading
 * minus, in parentheses, with a trailing minus or marked DR (CR marks a credit). Amounts are kept as
 * integer cents so sums compare exactly.
 *
 * Two readings, chosen by an option: the default reads what a document means by its figures (the
 * region's style, a currency mark or two decimals, no units); `tolerant` asks only "is this value
 * printed anywhere?" (see AmountOptions).
 */

/** Which character a region writes as the decimal separator. */
export type NumberStyle = "dot_decimal" | "comma_decimal";

/** Regions that write 1.234,56 (the rest of the world mostly writes 1,234.56). */
const COMMA_DECIMAL_REGIONS = new Set([
  "DE",
  "AT",
  "FR",
  "ES",
  "IT",
  "NL",
  "BE",
  "PT",
  "DK",
  "SE",
  "NO",
  "FI",
  "PL",
  "CZ",
  "SK",
  "HU",
  "RO",
  "GR",
  "TR",
  "RU",
  "UA",
  "BR",
  "AR",
  "CL",
  "CO",
  "ID",
  "VN",
  "HR",
  "SI",
  "LU",
]);

export function numberStyleFor(region: string): NumberStyle {
  return COMMA_DECIMAL_REGIONS.has(region.toUpperCase()) ? "comma_decimal" : "dot_decimal";
}

export interface ParsedNumber {
  /** Signed value. */
  value: number;
  /** Digits after the decimal separator (0 for a whole number). */
  decimals: number;
  /** The decimal separator the text used, when it had one. */
  decimalSeparator?: "." | ",";
  /** A thousands separator the text used. */
  groupSeparator?: string;
}

export interface ParsedAmount extends ParsedNumber {
  /** Signed value in cents (rounded half away from zero). */
  cents: number;
  /** ISO code when a symbol or code was printed. */
  currency?: string;
  /** How a negative was written. */
  negative?: "minus" | "parentheses" | "trailing_minus" | "debit";
  /** CR printed after the number. */
  credit?: boolean;
  /** The text as matched. */
  raw: string;
  /** Offsets of `raw` in the text searched. */
  start: number;
  end: number;
}

const SYMBOLS: Record<string, string> = {
  "€": "EUR",
  "£": "GBP",
  $: "USD",
  US$: "USD",
  "¥": "JPY",
  "₹": "INR",
  CHF: "CHF",
  "Fr.": "CHF",
  kr: "SEK",
  zł: "PLN",
};
const CODES = ["EUR", "GBP", "USD", "CHF", "JPY", "CAD", "AUD", "SEK", "NOK", "DKK", "PLN", "CZK", "INR"];

const MINUS = /^[-\u2212\u2013]$/;

/**
 * A plain number (no currency, no sign marks) such as "1,234.56", "1.234,56", "1 234,56" or "12".
 * `style` settles "1,234" and "1.234" (a thousands group or three decimals); default dot_decimal.
 */
export function parseNumber(text: string, style: NumberStyle = "dot_decimal"): ParsedNumber | null {
  let s = text.trim();
  let sign = 1;
  if (s.length > 1 && (MINUS.test(s[0] as string) || s[0] === "+")) {
    if (s[0] !== "+") sign = -1;
    s = s.slice(1).trimStart();
  }
  if (!/^\d/.test(s) || !/\d$/.test(s)) return null;
  if (!/^[\d.,'\u2019\u00a0\u202f\u2009 ]+$/.test(s)) return null;
  const seps = [...s.matchAll(/[.,'\u2019\u00a0\u202f\u2009 ]/g)].map((m) => ({
    ch: m[0],
    at: m.index ?? 0,
  }));
  if (seps.length === 0) return { value: sign * Number(s), decimals: 0 };
  // Two separators in a row ("1,,234" or "1. 234") are no number.
  for (let i = 1; i < seps.length; i++) if ((seps[i]?.at ?? 0) - (seps[i - 1]?.at ?? 0) < 2) return null;

  const last = seps[seps.length - 1] as { ch: string; at: number };
  const tail = s.length - last.at - 1;
  const kinds = new Set(seps.map((x) => x.ch));
  let decimalAt = -1;
  if (last.ch === "." || last.ch === ",") {
    const sameKind = seps.filter((x) => x.ch === last.ch).length;
    if (kinds.size > 1) {
      // "1,234.56" / "1.234,56" / "1 234,56": the last one is the decimal point, unless it groups.
      if (sameKind === 1) decimalAt = last.at;
    } else if (sameKind === 1) {
      if (tail !== 3) decimalAt = last.at;
      else decimalAt = (last.ch === ",") === (style === "comma_decimal") ? last.at : -1;
    }
  }
  const intPart = decimalAt >= 0 ? s.slice(0, decimalAt) : s;
  const fracPart = decimalAt >= 0 ? s.slice(decimalAt + 1) : "";
  if (/[^\d]/.test(fracPart)) return null;
  // The integer part: a first group of 1-3 digits, then groups of exactly 3 with one separator kind.
  const groupSeps = new Set([...intPart.matchAll(/[.,'\u2019\u00a0\u202f\u2009 ]/g)].map((m) => m[0]));
  if (groupSeps.size > 1) return null;
  const groupSeparator = [...groupSeps][0];
  if (groupSeparator !== undefined) {
    const groups = intPart.split(groupSeparator);
    if (!/^\d{1,3}$/.test(groups[0] as string) || groups.slice(1).some((g) => !/^\d{3}$/.test(g)))
      return null;
    if (decimalAt >= 0 && groupSeparator === s[decimalAt]) return null;
  }
  const digits = intPart.replace(/[^\d]/g, "");
  const value = Number(`${digits}.${fracPart || "0"}`);
  if (!Number.isFinite(value)) return null;
  const out: ParsedNumber = { value: sign * value, decimals: fracPart.length };
  if (decimalAt >= 0) out.decimalSeparator = s[decimalAt] as "." | ",";
  if (groupSeparator !== undefined) out.groupSeparator = groupSeparator;
  return out;
}

export function toCents(value: number): number {
  const c = Math.round(Math.abs(value) * 100 + 1e-9);
  return value < 0 ? -c : c;
}

const CURRENCY_PREFIX = String.raw`(?:US\$|[€£$¥₹]|(?:EUR|GBP|USD|CHF|JPY|CAD|AUD|SEK|NOK|DKK|PLN|CZK|INR)\s?)`;
const CURRENCY_SUFFIX = String.raw`(?:\s?(?:[€£$¥₹]|EUR|GBP|USD|CHF|JPY|CAD|AUD|SEK|NOK|DKK|PLN|CZK|INR|zł|kr)(?![A-Za-z]))`;
const BODY = String.raw`\d{1,3}(?:[.,'\u2019\u00a0\u202f\u2009 ]\d{3})+(?:[.,]\d{1,4})?|\d+(?:[.,]\d{1,4})?`;
const AMOUNT_RE = new RegExp(
  String.raw`(?<![\w.,])(\()?\s?([-\u2212\u2013+])?\s?(${CURRENCY_PREFIX})?\s?([-\u2212\u2013])?(${BODY})(${CURRENCY_SUFFIX})?(\))?([-\u2212](?![\d]))?(\s?(?:CR|DR|Cr|Dr)\b)?`,
  "g",
);

function currencyOf(mark: string | undefined): string | undefined {
  if (!mark) return undefined;
  const m = mark.trim();
  if (CODES.includes(m)) return m;
  return SYMBOLS[m];
}

export interface AmountOptions {
  style?: NumberStyle;
  /** Accept plain numbers without currency or exactly two decimals (default false). */
  loose?: boolean;
  /**
   * For comparing a value from elsewhere (a QR code's amount) with the printed text, where missing a
   * printed amount would cost a false finding and a stray number costs nothing: findAmounts takes every
   * number with exactly two decimals, in either decimal style, whatever surrounds it (letters, units,
   * percent signs); parseAmount reads one value with any separators, ignoring everything but digits,
   * "." and "," ("EUR1234.5", "1.234,5", and "12.345" as 12345: only one or two trailing digits are
   * decimals). Amounts read so are never negative: the sign does not matter for "is it printed".
   * `style` and `loose` do not apply.
   */
  tolerant?: boolean;
}

function amountFromMatch(m: RegExpMatchArray, style: NumberStyle, loose: boolean): ParsedAmount | null {
  const [raw, open, sign1, prefix, sign2, body, suffix, close, trailing, crdr] = m as unknown as (
    | string
    | undefined
  )[];
  if (!raw || !body) return null;
  if (open && !close) return null;
  if (close && !open) return null;
  const n = parseNumber(body, style);
  if (!n) return null;
  const currency = currencyOf(prefix) ?? currencyOf(suffix);
  const moneyShaped = currency !== undefined || n.decimals === 2;
  if (!moneyShaped && !loose) return null;
  let negative: ParsedAmount["negative"];
  if ((sign1 && MINUS.test(sign1)) || (sign2 && MINUS.test(sign2))) negative = "minus";
  if (open && close) negative = "parentheses";
  if (trailing) negative = "trailing_minus";
  const mark = crdr?.trim().toUpperCase();
  if (mark === "DR") negative = "debit";
  const value = negative ? -Math.abs(n.value) : Math.abs(n.value);
  const start = (m.index ?? 0) + (raw.length - raw.trimStart().length);
  const out: ParsedAmount = {
    ...n,
    value,
    cents: toCents(value),
    raw: raw.trim(),
    start,
    end: start + raw.trim().length,
  };
  if (currency) out.currency = currency;
  if (negative) out.negative = negative;
  if (mark === "CR") out.credit = true;
  return out;
}

/** Units and percentages that make a number no amount of money ("19 %", "27.50p/kWh", "12 ct"). */
const NOT_MONEY_AFTER = /^\s?(?:%|p\b|p\/|ct\b|cent|cents\b|kwh|m3|m³|\/|[A-Za-z])/i;

/** Every money amount in a text: numbers with a currency mark or exactly two decimals. */
export function findAmounts(text: string, opts: AmountOptions = {}): ParsedAmount[] {
  if (opts.tolerant) return findAmountsTolerant(text);
  const style = opts.style ?? "dot_decimal";
  const out: ParsedAmount[] = [];
  for (const m of text.matchAll(AMOUNT_RE)) {
    const a = amountFromMatch(m, style, opts.loose ?? false);
    if (!a) continue;
    const after = text.slice(a.end);
    // Part of a date, a version or a longer number ("12.03.2025", "1.2.3").
    if (/^[.,]?\d/.test(after) || /^[.:/]\d/.test(after)) continue;
    if (!a.currency && !/^\s?(?:CR|DR)\b/i.test(after) && NOT_MONEY_AFTER.test(after)) continue;
    out.push(a);
  }
  return out;
}

/** The text read as exactly one amount (surrounding whitespace allowed), or null. */
export function parseAmount(text: string, opts: AmountOptions = {}): ParsedAmount | null {
  if (opts.tolerant) return parseAmountTolerant(text);
  const trimmed = text.trim();
  if (!trimmed) return null;
  const found = findAmounts(trimmed, opts);
  if (found.length !== 1) return null;
  const a = found[0] as ParsedAmount;
  return a.start === 0 && a.end === trimmed.length ? a : null;
}

/** A number with a two-digit decimal part after "." or ",", optional thousands groups of "," "." space or '. */
const TOLERANT_RE =
  /(?<![\d.,])(\d{1,3}(?:([.,\u00a0 '\u2019])\d{3})*(?:\2\d{3})*|\d+)([.,])(\d{2})(?!\d|[.,]\d)/g;

function findAmountsTolerant(text: string): ParsedAmount[] {
  const out: ParsedAmount[] = [];
  for (const m of text.matchAll(TOLERANT_RE)) {
    const whole = m[1] ?? "";
    const group = m[2];
    const dec = m[3] as "." | ",";
    if (group && group === dec) continue; // "1.234.56" is no amount
    const cents = Number(whole.replace(/[.,\u00a0 '\u2019]/g, "")) * 100 + Number(m[4]);
    if (!Number.isFinite(cents)) continue;
    const start = m.index ?? 0;
    out.push({
      value: cents / 100,
      decimals: 2,
      decimalSeparator: dec,
      ...(group ? { groupSeparator: group } : {}),
      cents,
      raw: m[0],
      start,
      end: start + m[0].length,
    });
  }
  return out;
}

function parseAmountTolerant(text: string): ParsedAmount | null {
  const v = text.replace(/^[A-Z]{3}/, "").replace(/[^\d.,-]/g, "");
  if (!/\d/.test(v)) return null;
  const lastSep = Math.max(v.lastIndexOf("."), v.lastIndexOf(","));
  let whole = v;
  let frac = "";
  if (lastSep >= 0 && v.length - lastSep - 1 <= 2) {
    whole = v.slice(0, lastSep);
    frac = v.slice(lastSep + 1);
  }
  const cents = Math.abs(Number(whole.replace(/[^\d]/g, "") || "0") * 100 + Number(frac.padEnd(2, "0")));
  if (!Number.isFinite(cents)) return null;
  const raw = text.trim();
  return { value: cents / 100, decimals: frac.length, cents, raw, start: 0, end: raw.length };
}

/** Cents as a plain amount for messages: "1,234.56" / "1.234,56" (with a minus when negative). */
export function formatCents(cents: number, style: NumberStyle = "dot_decimal", currency?: string): string {
  const neg = cents < 0;
  const abs = Math.abs(Math.round(cents));
  const whole = String(Math.floor(abs / 100)).replace(
    /\B(?=(\d{3})+(?!\d))/g,
    style === "comma_decimal" ? "." : ",",
  );
  const frac = String(abs % 100).padStart(2, "0");
  const num = `${whole}${style === "comma_decimal" ? "," : "."}${frac}`;
  const sym = currency === "GBP" ? "£" : currency === "USD" ? "$" : undefined;
  if (sym) return `${neg ? "-" : ""}${sym}${num}`;
  if (currency === "EUR") return `${neg ? "-" : ""}${num} €`;
  return `${neg ? "-" : ""}${num}${currency ? ` ${currency}` : ""}`;
}

/**
 * The number style a document really prints, from its own figures: "1.234,56" and "12,34" say comma
 * decimals, "1,234.56" and "12.34" dot decimals (dates, times and version-like numbers do not vote). The
 * region's style unless the figures clearly say otherwise (three votes and four in five of them), so a
 * German invoice filed under a British region is still read as German.
 */
export function inferNumberStyle(texts: Iterable<string>, fallback: NumberStyle): NumberStyle {
  let comma = 0;
  let dot = 0;
  for (const text of texts) {
    for (const m of text.matchAll(
      /(?<![\d.,:/-])(\d{1,3}(?:([.,'\u2019\u00a0\u202f ])\d{3})*|\d+)([.,])(\d{2})(?![\d]|[.,:/-]\d)/g,
    )) {
      const group = m[2];
      const dec = m[3];
      if (group && group === dec) continue;
      if (dec === ",") comma++;
      else dot++;
    }
  }
  const votes = comma + dot;
  if (votes < 3) return fallback;
  if (comma >= 0.8 * votes) return "comma_decimal";
  if (dot >= 0.8 * votes) return "dot_decimal";
  return fallback;
}
