/**
 * Payment references that carry their own check digits, the issuer's billing system computing them for
 * each bill so that a bank can refuse a mistyped one: the ISO 11649 creditor reference (RF), the Swiss
 * QR-bill reference (27 digits, recursive mod 10), the Belgian structured communication (+++ddd/dddd/ddddd+++,
 * mod 97), the Finnish national reference (weights 7-3-1), the Dutch payment reference (betalingskenmerk,
 * 16 digits, mod 11), the Norwegian KID (mod 10 or mod 11) and the Swedish OCR reference (mod 10). Each
 * reader finds the reference in a line's text and says whether it holds.
 */

import { luhnHolds } from "./bank-identifiers.js";

export type PaymentReferenceScheme =
  | "rf"
  | "ch_qr"
  | "be_structured"
  | "fi_reference"
  | "nl_payment_reference"
  | "no_kid"
  | "se_ocr";

export interface PaymentReference {
  scheme: PaymentReferenceScheme;
  /** As printed (spaces and separators kept). */
  printed: string;
  /** The characters the check digits cover (separators removed). */
  compact: string;
  valid: boolean;
}

/** The remainder mod 97 of a string of digits and letters (A = 10 … Z = 35), as ISO 7064 reads it. */
function mod97(s: string): number {
  let r = 0;
  for (const c of s) {
    const v = /\d/.test(c) ? c : String(c.charCodeAt(0) - 55);
    for (const d of v) r = (r * 10 + Number(d)) % 97;
  }
  return r;
}

/** ISO 11649: RF, two check digits, 1-21 letters or digits; valid when body + "RF" + check is 1 mod 97. */
export function rfValid(compact: string): boolean {
  const t = compact.toUpperCase();
  if (!/^RF\d{2}[A-Z0-9]{1,21}$/.test(t)) return false;
  return mod97(`${t.slice(4)}${t.slice(0, 4)}`) === 1;
}

/** The Swiss QR reference: 27 digits, the last the recursive mod-10 check digit of the 26 before it. */
export function chQrValid(digits: string): boolean {
  if (!/^\d{27}$/.test(digits)) return false;
  const table = [0, 9, 4, 6, 8, 2, 7, 1, 3, 5];
  let carry = 0;
  for (const c of digits.slice(0, 26)) carry = table[(carry + Number(c)) % 10] as number;
  return (10 - carry) % 10 === Number(digits[26]);
}

/** The Belgian structured communication: 10 digits and their remainder mod 97 (97 when it is 0). */
export function beStructuredValid(digits: string): boolean {
  if (!/^\d{12}$/.test(digits)) return false;
  const r = Number(BigInt(digits.slice(0, 10)) % 97n) || 97;
  return r === Number(digits.slice(10));
}

/** The Finnish national reference: 4-20 digits, the last checking the others with weights 7, 3, 1 from the right. */
export function fiReferenceValid(digits: string): boolean {
  if (!/^\d{4,20}$/.test(digits)) return false;
  const body = digits.slice(0, -1).split("").reverse();
  const weights = [7, 3, 1];
  const sum = body.reduce((a, d, i) => a + Number(d) * (weights[i % 3] as number), 0);
  return (10 - (sum % 10)) % 10 === Number(digits.slice(-1));
}

/** The Dutch payment reference of 16 digits: the first is the mod-11 check of the 15 after it. */
export function nlPaymentReferenceValid(digits: string): boolean {
  if (!/^\d{16}$/.test(digits)) return false;
  const weights = [2, 4, 8, 5, 10, 9, 7, 3, 6, 1];
  const rest = digits.slice(1).split("").reverse();
  const sum = rest.reduce((a, d, i) => a + Number(d) * (weights[i % 10] as number), 0);
  let check = 11 - (sum % 11);
  if (check === 10) check = 1;
  if (check === 11) check = 0;
  return check === Number(digits[0]);
}

/** The Norwegian KID: 2-25 digits, the last a mod-10 (Luhn) or a mod-11 check digit ("-" for 10). */
export function noKidValid(kid: string): boolean {
  if (!/^\d{1,24}[\d-]$/.test(kid)) return false;
  if (/^\d+$/.test(kid) && luhnHolds(kid)) return true;
  const body = kid.slice(0, -1).split("").reverse();
  const sum = body.reduce((a, d, i) => a + Number(d) * ((i % 6) + 2), 0);
  const r = 11 - (sum % 11);
  const check = r === 11 ? "0" : r === 10 ? "-" : String(r);
  return check === kid.slice(-1);
}

/** The Swedish OCR reference (bankgiro / plusgiro): 2-25 digits, the last the Luhn check of the others. */
export function seOcrValid(digits: string): boolean {
  return /^\d{2,25}$/.test(digits) && luhnHolds(digits);
}

/** Words that label a reference (its number follows them): never one of its groups. */
const STOP_WORD = /^(?:IBAN|BIC|SWIFT|BLZ|KTO|RIB|EUR|CHF|USD|GBP|SEK|NOK|DKK)$/;

/**
 * The creditor references in `text`: "RF" and its check digits, then groups of capitals and digits (printed
 * in fours, or run together). A reference's end is not marked, so the groups after it on the line (another
 * cell's number) may look like more of it: the reference is the shortest run of whole groups that holds,
 * and one that fails is read only when no shorter or longer run holds and the groups stop at a word that
 * cannot be part of it (the end of the text, a word in lower case, a punctuation mark).
 */
function rfReferences(text: string): PaymentReference[] {
  const out: PaymentReference[] = [];
  for (const m of text.matchAll(/(?<![A-Za-z0-9])RF\d{2}(?:[ \u00a0]?[A-Z0-9]{1,4})+(?![A-Za-z0-9])/g)) {
    const groups = m[0].split(/[ \u00a0]/);
    const prefixes: string[] = [];
    let acc = "";
    for (const g of groups) {
      if (acc.length > 4 && STOP_WORD.test(g)) break;
      acc += g;
      if (acc.length > 25) break;
      prefixes.push(acc);
    }
    const candidates = prefixes.filter((p) => p.length >= 5);
    const holds = candidates.find((p) => rfValid(p));
    if (holds) {
      out.push({ scheme: "rf", printed: printedOf(m[0], holds), compact: holds, valid: true });
      continue;
    }
    // Only a reference that ends where the match ends (every group read) is judged.
    const whole = groups.join("");
    if (candidates.length === 0 || candidates[candidates.length - 1] !== whole) continue;
    out.push({ scheme: "rf", printed: m[0], compact: whole, valid: false });
  }
  return out;
}

/** The printed form of the first `compact.length` characters of `printed` (separators kept). */
function printedOf(printed: string, compact: string): string {
  let n = 0;
  let i = 0;
  for (; i < printed.length && n < compact.length; i++) if (/[A-Za-z0-9]/.test(printed[i] as string)) n++;
  return printed.slice(0, i);
}

/** The Belgian structured communication: +++123/4567/89002+++ or ***123/4567/89002***. */
function beReferences(text: string): PaymentReference[] {
  const out: PaymentReference[] = [];
  for (const m of text.matchAll(/(\+{3}|\*{3})\s?(\d{3})\s?\/\s?(\d{4})\s?\/\s?(\d{5})\s?\1/g)) {
    const digits = `${m[2]}${m[3]}${m[4]}`;
    out.push({ scheme: "be_structured", printed: m[0], compact: digits, valid: beStructuredValid(digits) });
  }
  return out;
}

/** A label the Swiss QR reference, the Finnish or the Dutch reference follows. */
const REFERENCE_LABEL =
  /\b(?:referen(?:ce|z|cia|tie)\w*|r[ée]f[ée]rence|riferimento|causale|zahlungsreferenz|verwendungszweck|betalingskenmerk|kenmerk|viite(?:numero)?|referensnummer|please quote)\b/i;

/**
 * The Swiss QR reference after a reference label: 27 digits, printed in groups (2 then fives) or run
 * together. Only a complete 27-digit run is read (a shorter or longer one is another number).
 */
function chReferences(text: string, label: string): PaymentReference[] {
  if (!REFERENCE_LABEL.test(label)) return [];
  const out: PaymentReference[] = [];
  for (const m of text.matchAll(/(?<![\d])\d{2}(?:[ \u00a0]\d{5}){5}(?![ \u00a0]?\d)|(?<!\d)\d{27}(?!\d)/g)) {
    const digits = m[0].replace(/\D/g, "");
    out.push({ scheme: "ch_qr", printed: m[0], compact: digits, valid: chQrValid(digits) });
  }
  return out;
}

/** The Dutch 16-digit payment reference after its label, printed in fours or run together. */
function nlReferences(text: string, label: string): PaymentReference[] {
  if (!/\b(?:betalingskenmerk|kenmerk)\b/i.test(label)) return [];
  const out: PaymentReference[] = [];
  for (const m of text.matchAll(/(?<![\d])\d{4}(?:[ \u00a0]\d{4}){3}(?![ \u00a0]?\d)|(?<!\d)\d{16}(?!\d)/g)) {
    const digits = m[0].replace(/\D/g, "");
    out.push({
      scheme: "nl_payment_reference",
      printed: m[0],
      compact: digits,
      valid: nlPaymentReferenceValid(digits),
    });
  }
  return out;
}

/**
 * A reference after its label on the same line ("KID: 1234 5678 97", "OCR-nummer 12345678", "Viitenumero 1232"),
 * in groups of digits. Its end is not marked (an amount may follow a space later), so, as for a creditor
 * reference, the shortest run of whole groups that holds is the reference, and one that fails is the groups
 * up to the end of the text or a word that is no group of digits.
 */
function labelled(
  text: string,
  labelRe: RegExp,
  scheme: PaymentReferenceScheme,
  valid: (compact: string) => boolean,
  digits: [number, number],
): PaymentReference[] {
  const out: PaymentReference[] = [];
  for (const m of text.matchAll(labelRe)) {
    const groups = (m[1] as string).split(/[ \u00a0]/);
    const runs: string[] = [];
    let acc = "";
    for (const g of groups) {
      acc += g;
      if (acc.length > digits[1]) break;
      if (acc.length >= digits[0]) runs.push(acc);
    }
    const holds = runs.find(valid);
    if (holds) {
      out.push({ scheme, printed: printedOf(m[1] as string, holds), compact: holds, valid: true });
      continue;
    }
    const whole = groups.join("");
    if (runs[runs.length - 1] !== whole) continue;
    out.push({ scheme, printed: m[1] as string, compact: whole, valid: false });
  }
  return out;
}

/** Groups of digits after a label: what `labelled` reads. */
const DIGIT_GROUPS = String.raw`((?:\d+[ \u00a0])*\d+-?)(?![ \u00a0]?\d)`;
const after = (label: string) => new RegExp(String.raw`\b(?:${label})\b\s*:?\s*${DIGIT_GROUPS}`, "gi");
const FI_LABEL = after(String.raw`viitenumero|viite|referensnummer|ref\.?\s*nr\.?`);
const NO_LABEL = after(String.raw`KID(?:[- ]?(?:nummer|nr\.?))?`);
const SE_LABEL = after(String.raw`OCR(?:[- ]?(?:nummer|nr\.?|referens))?`);

/**
 * Every payment reference with check digits printed in `text` (one line or one cell); `label` is where the
 * label of a reference without a mark of its own (Swiss, Dutch) is looked for (the whole line, by default
 * the text). A Finnish reference, a KID and an OCR reference are read only in a document of their country
 * (their rules say nothing about another country's reference numbers).
 */
export function findPaymentReferences(text: string, region = "", label = text): PaymentReference[] {
  return [
    ...rfReferences(text),
    ...beReferences(text),
    ...chReferences(text, label),
    ...nlReferences(text, label),
    ...(region.toUpperCase() === "FI"
      ? labelled(text, FI_LABEL, "fi_reference", fiReferenceValid, [4, 20])
      : []),
    ...(region.toUpperCase() === "NO" ? labelled(text, NO_LABEL, "no_kid", noKidValid, [4, 25]) : []),
    ...(region.toUpperCase() === "SE" ? labelled(text, SE_LABEL, "se_ocr", seOcrValid, [4, 25]) : []),
  ];
}
