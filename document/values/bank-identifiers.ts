/**
 * Check-digit and format rules of bank and card identifiers: IBAN (ISO 13616 mod-97 and each country's
 * length), US ABA routing numbers (3-7-1 weighted checksum and Federal Reserve prefixes), card numbers
 * (Luhn) and UK sort codes (six digits, written nn-nn-nn).
 */

/** IBAN length by country (SWIFT IBAN registry). */
export const IBAN_LENGTHS: Record<string, number> = {
  AD: 24,
  AE: 23,
  AL: 28,
  AT: 20,
  AZ: 28,
  BA: 20,
  BE: 16,
  BG: 22,
  BH: 22,
  BR: 29,
  BY: 28,
  CH: 21,
  CR: 22,
  CY: 28,
  CZ: 24,
  DE: 22,
  DK: 18,
  DO: 28,
  EE: 20,
  EG: 29,
  ES: 24,
  FI: 18,
  FO: 18,
  FR: 27,
  GB: 22,
  GE: 22,
  GI: 23,
  GL: 18,
  GR: 27,
  GT: 28,
  HR: 21,
  HU: 28,
  IE: 22,
  IL: 23,
  IQ: 23,
  IS: 26,
  IT: 27,
  JO: 30,
  KW: 30,
  KZ: 20,
  LB: 28,
  LC: 32,
  LI: 21,
  LT: 20,
  LU: 20,
  LV: 21,
  MC: 27,
  MD: 24,
  ME: 22,
  MK: 19,
  MR: 27,
  MT: 31,
  MU: 30,
  NL: 18,
  NO: 15,
  PK: 24,
  PL: 28,
  PS: 29,
  PT: 25,
  QA: 29,
  RO: 24,
  RS: 22,
  SA: 24,
  SC: 31,
  SE: 24,
  SI: 19,
  SK: 24,
  SM: 27,
  ST: 25,
  SV: 28,
  TL: 23,
  TN: 24,
  TR: 26,
  UA: 29,
  VA: 22,
  VG: 24,
  XK: 20,
};

/** ISO 13616 remainder of the rearranged IBAN (1 for a valid IBAN). */
export function ibanRemainder(iban: string): number {
  const s = iban.replace(/\s+/g, "").toUpperCase();
  const rearranged = s.slice(4) + s.slice(0, 4);
  let rem = 0;
  for (const ch of rearranged) {
    const code = ch.charCodeAt(0);
    if (code >= 48 && code <= 57) rem = (rem * 10 + (code - 48)) % 97;
    else if (code >= 65 && code <= 90) rem = (rem * 100 + (code - 55)) % 97;
    else return -1;
  }
  return rem;
}

/** The check digits a valid IBAN with this country and BBAN would carry. */
export function ibanCheckDigits(country: string, bban: string): string {
  const rem = ibanRemainder(`${country}00${bban}`);
  return String(98 - rem).padStart(2, "0");
}

export type IbanProblem = "unknown_country" | "length" | "checksum" | "characters";

export function ibanProblem(iban: string): IbanProblem | null {
  const s = iban.replace(/\s+/g, "").toUpperCase();
  if (!/^[A-Z]{2}\d{2}[A-Z0-9]+$/.test(s)) return "characters";
  const len = IBAN_LENGTHS[s.slice(0, 2)];
  if (len === undefined) return "unknown_country";
  if (s.length !== len) return "length";
  return ibanRemainder(s) === 1 ? null : "checksum";
}

/** ABA routing number problems: bad checksum or a prefix the Federal Reserve does not assign. */
export function abaProblem(routing: string): "format" | "prefix" | "checksum" | null {
  if (!/^\d{9}$/.test(routing)) return "format";
  const p = Number(routing.slice(0, 2));
  const validPrefix = p <= 12 || (p >= 21 && p <= 32) || (p >= 61 && p <= 72) || p === 80;
  const w = [3, 7, 1, 3, 7, 1, 3, 7, 1];
  const sum = routing.split("").reduce((acc, d, i) => acc + Number(d) * (w[i] as number), 0);
  if (sum % 10 !== 0) return "checksum";
  return validPrefix ? null : "prefix";
}

/** A card number's length (12-19 digits) whose Luhn check digit holds. */
export function luhnValid(digits: string): boolean {
  return /^\d{12,19}$/.test(digits) && luhnHolds(digits);
}

/** Luhn (mod 10, weights 2 and 1 from the right, the last digit the check) over digits of any length. */
export function luhnHolds(digits: string): boolean {
  let sum = 0;
  for (let i = 0; i < digits.length; i++) {
    let d = Number(digits[digits.length - 1 - i]);
    if (i % 2 === 1) {
      d *= 2;
      if (d > 9) d -= 9;
    }
    sum += d;
  }
  return sum % 10 === 0;
}

/** Card brands by issuer prefix and length, to tell card numbers from other long numbers. */
export function cardBrand(digits: string): string | null {
  const n = digits.length;
  if (/^4/.test(digits) && (n === 13 || n === 16 || n === 19)) return "Visa";
  if (/^(5[1-5]|222[1-9]|22[3-9]\d|2[3-6]\d{2}|27[01]\d|2720)/.test(digits) && n === 16) return "Mastercard";
  if (/^3[47]/.test(digits) && n === 15) return "American Express";
  if (/^(6011|65|64[4-9])/.test(digits) && n >= 16 && n <= 19) return "Discover";
  return null;
}

/** A UK sort code is six digits, printed as nn-nn-nn. */
export function sortCodeProblem(value: string): "format" | null {
  return /^\d{2}-\d{2}-\d{2}$/.test(value.trim()) ? null : "format";
}

/** IBANs printed in a text (spaces removed), found by their shape; the check digits are not verified here. */
export function findIbans(text: string): string[] {
  const out = new Set<string>();
  for (const m of text.matchAll(/\b([A-Z]{2}\d{2}(?: ?[A-Z0-9]{4}){2,7}(?: ?[A-Z0-9]{1,3})?)\b/g)) {
    const iban = (m[1] as string).replace(/\s+/g, "");
    if (iban.length >= 15 && iban.length <= 34) out.add(iban);
  }
  return [...out];
}
