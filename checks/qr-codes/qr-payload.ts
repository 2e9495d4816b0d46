import { parseAmount } from "../../document/values/amounts.js";
import { findIbans } from "../../document/values/bank-identifiers.js";
import { parseDateValue } from "../../document/values/dates.js";

/** A payload's amount value in cents, read tolerantly ("EUR12.50", "12,5", "1234"). */
const amountOf = (value: string) => parseAmount(value, { tolerant: true })?.cents;

/**
 * What a QR payload claims: a URL (with amount/IBAN/date query parameters), a SEPA credit transfer
 * (EPC069-12 "BCD" GiroCode), a Swiss QR-bill ("SPC") or free text with "key: value" pairs.
 */
export interface QrClaims {
  kind: "url" | "epc" | "swiss" | "text";
  url?: URL;
  /** Cents. */
  amount?: number;
  /** Raw amount text as it appears in the payload. */
  amountText?: string;
  iban?: string;
  /** "YYYY-MM-DD". */
  dates: string[];
  /** Beneficiary or issuer name, when the payload names one. */
  name?: string;
}

const AMOUNT_KEYS = /^(amount|amt|total|sum|betrag|value|price|due_amount|amount_due)$/i;
const IBAN_KEYS = /^(iban|account)$/i;
const DATE_KEYS = /^(date|due|due_date|duedate|issued|issue_date|invoice_date|datum|faellig|period_end)$/i;
const NAME_KEYS = /^(name|payee|beneficiary|issuer|merchant|empfaenger)$/i;

export function parseQrPayload(payload: string, region: string): QrClaims {
  const text = payload.trim();
  const lines = text.split(/\r?\n/).map((l) => l.trim());
  if (lines[0] === "BCD" && lines.length >= 7) {
    const amountLine = lines[7] ?? "";
    return {
      kind: "epc",
      name: lines[5] || undefined,
      iban: (lines[6] ?? "").replace(/\s+/g, "").toUpperCase() || undefined,
      amount: amountLine ? amountOf(amountLine) : undefined,
      amountText: amountLine || undefined,
      dates: [],
    };
  }
  if (lines[0] === "SPC" && lines.length >= 20) {
    const amountLine = lines[18] ?? "";
    return {
      kind: "swiss",
      iban: (lines[3] ?? "").replace(/\s+/g, "").toUpperCase() || undefined,
      name: lines[5] || undefined,
      amount: amountLine ? amountOf(amountLine) : undefined,
      amountText: amountLine || undefined,
      dates: [],
    };
  }
  let url: URL | undefined;
  if (/^https?:\/\//i.test(text)) {
    try {
      url = new URL(text);
    } catch {
      url = undefined;
    }
  }
  const claims: QrClaims = { kind: url ? "url" : "text", url, dates: [] };
  const pairs: [string, string][] = url
    ? [...url.searchParams.entries()]
    : [...text.matchAll(/([A-Za-z_]+)\s*[:=]\s*([^\n;&|]+)/g)].map((m) => [m[1] ?? "", (m[2] ?? "").trim()]);
  for (const [key, value] of pairs) {
    if (AMOUNT_KEYS.test(key) && claims.amount === undefined) {
      claims.amount = amountOf(value);
      claims.amountText = value;
    } else if (IBAN_KEYS.test(key) && claims.iban === undefined) {
      const iban = value.replace(/\s+/g, "").toUpperCase();
      if (/^[A-Z]{2}\d{2}[A-Z0-9]{11,30}$/.test(iban)) claims.iban = iban;
    } else if (DATE_KEYS.test(key)) {
      const d = parseDateValue(value, region);
      if (d) claims.dates.push(d);
    } else if (NAME_KEYS.test(key) && !claims.name) {
      claims.name = value;
    }
  }
  if (!url && claims.iban === undefined) claims.iban = findIbans(text.toUpperCase())[0];
  return claims;
}
