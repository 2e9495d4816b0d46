/**
 * Values printed in a document's text, read locale-aware: money amounts (1,234.56 and 1.234,56, currency
 * symbols, negatives with a minus or in parentheses), calendar dates (ISO, numeric in the region's order,
 * long English and German forms), IBANs and web domains. Used to compare what a QR code or metadata says
 * with what the page prints.
 */

import { MONTHS } from "../../document/values/dates.js";

/** Amounts as integer cents (absolute values; the sign does not matter for "is it printed"). */
export function parseAmounts(text: string): number[] {
  const out: number[] = [];
  // A number with a 2-digit decimal part after "." or ",", optional thousands groups of "," "." or space.
  const re = /(?<![\d.,])(\d{1,3}(?:([.,\u00a0 '])\d{3})*(?:\2\d{3})*|\d+)([.,])(\d{2})(?!\d|[.,]\d)/g;
  for (const m of text.matchAll(re)) {
    const whole = m[1] ?? "";
    const group = m[2];
    const dec = m[3];
    if (group && group === dec) continue; // "1.234.56" is no amount
    const digits = whole.replace(/[.,\u00a0 ']/g, "");
    const cents = Number(digits) * 100 + Number(m[4]);
    if (Number.isFinite(cents)) out.push(cents);
  }
  return out;
}

/** One amount from a value such as "EUR123.45", "123,45", "1234.5" or "1,234.56" (cents), or undefined. */
export function parseAmount(value: string): number | undefined {
  const v = value.replace(/^[A-Z]{3}/, "").replace(/[^\d.,-]/g, "");
  if (!/\d/.test(v)) return undefined;
  const lastSep = Math.max(v.lastIndexOf("."), v.lastIndexOf(","));
  let whole = v;
  let frac = "0";
  if (lastSep >= 0 && v.length - lastSep - 1 <= 2) {
    whole = v.slice(0, lastSep);
    frac = v.slice(lastSep + 1).padEnd(2, "0");
  }
  const digits = whole.replace(/[^\d]/g, "") || "0";
  const cents = Number(digits) * 100 + Number(frac);
  return Number.isFinite(cents) ? Math.abs(cents) : undefined;
}

/** A calendar date as "YYYY-MM-DD" when valid. */
function ymd(y: number, m: number, d: number): string | undefined {
  if (y < 1900 || y > 2200 || m < 1 || m > 12 || d < 1 || d > 31) return undefined;
  const date = new Date(Date.UTC(y, m - 1, d));
  if (date.getUTCMonth() !== m - 1) return undefined;
  return `${y}-${String(m).padStart(2, "0")}-${String(d).padStart(2, "0")}`;
}

/** Dates printed in the text, as "YYYY-MM-DD"; numeric dates read month-first only for US documents. */
export function parseDates(text: string, region: string): string[] {
  const out = new Set<string>();
  const add = (v: string | undefined) => v && out.add(v);
  for (const m of text.matchAll(/\b(\d{4})-(\d{2})-(\d{2})\b/g)) add(ymd(+m[1]!, +m[2]!, +m[3]!));
  for (const m of text.matchAll(/\b(\d{1,2})([./-])(\d{1,2})\2(\d{4})\b/g)) {
    const a = +m[1]!;
    const b = +m[3]!;
    const y = +m[4]!;
    if (region === "US" && m[2] === "/") add(ymd(y, a, b) ?? ymd(y, b, a));
    else add(ymd(y, b, a) ?? ymd(y, a, b));
  }
  for (const m of text.matchAll(/\b(\d{1,2})\.?\s+([A-Za-zä]{3,9})\.?\s+(\d{4})\b/g)) {
    const month = MONTHS[m[2]!.toLowerCase()];
    if (month) add(ymd(+m[3]!, month, +m[1]!));
  }
  for (const m of text.matchAll(/\b([A-Za-z]{3,9})\.?\s+(\d{1,2}),?\s+(\d{4})\b/g)) {
    const month = MONTHS[m[1]!.toLowerCase()];
    if (month) add(ymd(+m[3]!, month, +m[2]!));
  }
  return [...out];
}

/** One date value such as "2025-03-14", "20250314" or "14.03.2025", as "YYYY-MM-DD". */
export function parseDateValue(value: string, region: string): string | undefined {
  const compact = /^(\d{4})(\d{2})(\d{2})$/.exec(value.trim());
  if (compact) return ymd(+compact[1]!, +compact[2]!, +compact[3]!);
  return parseDates(value, region)[0];
}

/** IBANs printed in the text (spaces removed, upper case); the check digits are not verified here. */
export function parseIbans(text: string): string[] {
  const out = new Set<string>();
  for (const m of text.matchAll(/\b([A-Z]{2}\d{2}(?: ?[A-Z0-9]{4}){2,7}(?: ?[A-Z0-9]{1,3})?)\b/g)) {
    const iban = m[1]!.replace(/\s+/g, "");
    if (iban.length >= 15 && iban.length <= 34) out.add(iban);
  }
  return [...out];
}

/** Web domains named in the text (URLs, www. names and e-mail addresses), lower case. */
export function parseDomains(text: string): string[] {
  const out = new Set<string>();
  const re = /(?:https?:\/\/|www\.|@)([a-z0-9-]+(?:\.[a-z0-9-]+)+)/gi;
  for (const m of text.matchAll(re)) {
    const host = m[0].toLowerCase().startsWith("www.") ? `www.${m[1]}` : m[1];
    if (host) out.add(host.toLowerCase());
  }
  return [...out];
}

/** Second-level public suffixes that take one more label ("bank.co.uk" is the bank's own name). */
const TWO_PART_SUFFIXES = new Set([
  "co.uk",
  "org.uk",
  "ac.uk",
  "gov.uk",
  "ltd.uk",
  "plc.uk",
  "me.uk",
  "com.au",
  "net.au",
  "org.au",
  "co.nz",
  "co.za",
  "com.br",
  "co.jp",
  "co.in",
  "com.cn",
  "com.mx",
  "com.tr",
  "com.sg",
  "co.at",
]);

/** The registrable domain of a host ("pay.bank.co.uk" → "bank.co.uk"); the host itself for IP literals. */
export function registrableDomain(host: string): string {
  const h = host.toLowerCase().replace(/\.$/, "");
  if (/^\d+\.\d+\.\d+\.\d+$/.test(h) || h.includes(":")) return h;
  const labels = h.split(".");
  const lastTwo = labels.slice(-2).join(".");
  return TWO_PART_SUFFIXES.has(lastTwo) ? labels.slice(-3).join(".") : lastTwo;
}
