import type { Finding } from "../core/check-result.js";
import type { CodeTable } from "../core/finding-levels.js";
import type { DocumentModel } from "../document/model.js";
import { documentLines, type Line } from "../document/text-lines.js";
import { numberStyleFor, parseAmount } from "../document/values/amounts.js";
import {
  abaProblem,
  cardBrand,
  IBAN_LENGTHS,
  ibanProblem,
  luhnValid,
  sortCodeProblem,
} from "../document/values/bank-identifiers.js";
import {
  type ContentDate,
  findDates,
  isoDay,
  monthFirstRegion,
  PLAUSIBLE_YEARS,
  parseDateText,
} from "../document/values/dates.js";
import { findPaymentReferences, type PaymentReference } from "../document/values/payment-references.js";
import { defineCheck, flaggedCodes, skip } from "./check.js";

/**
 * text.identifiers: identifiers and dates printed in the text that cannot be right. IBANs failing mod-97
 * or their country's length (and GB IBANs disagreeing with the printed sort code and account number), US
 * routing numbers failing the ABA checksum, card numbers failing Luhn, malformed UK sort codes,
 * impossible calendar dates (31/02/2025), transactions out of date order or outside the statement
 * period, dates in the future, and date formats the declared region does not use.
 */

export const TEXT_IDENTIFIERS_CHECK_ID = "text.identifiers";

const DAY = 86_400_000;
/** Document types whose printed dates all lie in the past when they are issued. */
const HISTORICAL = new Set([
  "bank_statement",
  "payslip",
  "invoice",
  "receipt",
  "utility_bill",
  "tax_return",
  "other",
]);
/** Lines about the future (due dates, expiry, contract terms) may carry future dates. */
const FORWARD =
  /\b(due|fällig|payable|zahlbar|expir\w*|valid|gültig|until|bis zum|next|nächste|renew\w*|starts?|begin\w*|beginnt|ends?|term|laufzeit|deadline|frist|[ée]ch[ée]ance|fin|jusqu\w*|valable|validit[ée]|prochain\w*|d[ée]but|p[ée]riode|vervaldatum|geldig|vencimiento|v[áa]lid[oa]|hasta|scadenza|fino)\b/i;
/** Regions that write numeric dates with dots (14.03.2025). */
const DOT_REGIONS = new Set([
  "DE",
  "AT",
  "CH",
  "LI",
  "PL",
  "CZ",
  "SK",
  "HU",
  "RU",
  "UA",
  "FI",
  "NO",
  "DK",
  "TR",
  "HR",
  "SI",
  "RS",
  "RO",
]);

function expectedNumericFormat(region: string): "slash" | "dot" {
  return DOT_REGIONS.has(region.toUpperCase()) ? "dot" : "slash";
}

interface Located {
  line: Line;
  value: string;
}

const where = (l: Line) => `page ${l.page}`;

/**
 * Documents whose bank identifiers are the issuer's record of an account (the holder's own on a
 * statement, the account a payroll or utility system pays from or debits): a check digit that fails means
 * no bank issued the number, so the document was made up or altered. On an invoice or a receipt the IBAN
 * is the payee's, typed into a template: one that fails cannot receive money, and invoice-redirection
 * fraud needs a working account, so a failing check digit there is more often a placeholder or a typo
 * than an edit (docs/calibration.md, "Identifiers by role").
 */
const ACCOUNT_RECORDS = new Set(["bank_statement", "payslip", "utility_bill", "tax_return"]);

/** Words that label a bank identifier: never one of its groups. */
const ACCOUNT_LABEL_WORD = /^(?:IBAN|BIC|SWIFT|BLZ|KTO|RIB|CCC|ABI|CAB|CIN)$/i;

const tokenAt = (t: string | undefined) => (t ?? "").replace(/[^A-Z0-9]+$/gi, "");
const isGroup = (t: string) => /^[A-Z0-9]{1,4}$/.test(t) && !ACCOUNT_LABEL_WORD.test(t);

/** The IBAN `head` completed by the groups that start `tokens` (its wrapped tail), if that gives its length. */
function wrapCompletion(head: string, len: number, tokens: string[]): string | undefined {
  let extended = head;
  for (const t of tokens.map(tokenAt)) {
    // A label's word ("IBAN" set beside the number, its baseline a little lower) is no group of the number.
    if (extended.length >= len || !isGroup(t)) break;
    extended += t;
  }
  return extended.length === len ? extended : undefined;
}

/** Lines after the number within which its wrapped tail is looked for (label-only lines not counted). */
const WRAP_LINES = 3;

interface Tail {
  value: string;
  /** The tail's cell lies under the number's cell (by position; without layout: it starts its line). */
  under: boolean;
}

/**
 * Where an IBAN printed in groups that stops short of its length goes on: the groups starting a cell of
 * one of the next lines. With layout, the wrapped tail of a cell starts under that cell (its left edge within
 * the cell's extent), whatever other columns print before it on the line ("Calle Mayor 157  6024 5895");
 * without layout, at the start of the line. Label-only lines ("IBAN" set a little lower than the number
 * beside it) are skipped. `expected`: the completion found where the tail belongs (the nearest line with
 * a cell under the number), `all`: every completion of the right length in any cell of those lines.
 */
function wrapTails(
  lines: Line[],
  li: number,
  cell: Line["cells"][number],
  head: string,
  len: number,
): { expected?: string; all: Tail[] } {
  const line = lines[li] as Line;
  const all: Tail[] = [];
  let expected: string | undefined;
  let decided = false;
  const box = cell.bbox;
  const tol = 0.5 * (cell.size ?? 10);
  for (let k = 1, counted = 0; counted < WRAP_LINES; k++) {
    const next = lines[li + k];
    if (next?.page !== line.page) break;
    const words = next.text.split(/\s+/).map(tokenAt);
    if (words.some(Boolean) && words.every((g) => !g || ACCOUNT_LABEL_WORD.test(g))) continue;
    counted++;
    let underHere = false;
    for (const [ci, c] of next.cells.entries()) {
      const under =
        box && c.bbox ? c.bbox[0] >= box[0] - tol && c.bbox[0] <= box[2] : ci === 0 && !box && !c.bbox;
      underHere ||= under;
      const value = wrapCompletion(head, len, c.text.split(/\s+/));
      if (value) all.push({ value, under });
      if (under && !decided) expected ??= value;
    }
    if (underHere) decided = true;
  }
  return { expected, all };
}

function ibanFindings(lines: Line[], docType: string): { findings: Finding[]; ibans: Located[] } {
  const findings: Finding[] = [];
  const ibans: Located[] = [];
  const seen = new Set<string>();
  const record = ACCOUNT_RECORDS.has(docType);
  for (const [li, line] of lines.entries()) {
    const labelled = /\bIBAN\b/i.test(line.text);
    for (const [ci, cell] of line.cells.entries()) {
      const tokens = cell.text.split(/\s+/);
      for (let i = 0; i < tokens.length; i++) {
        const head = (tokens[i] as string).replace(/^[^A-Z0-9]+|[^A-Z0-9]+$/gi, "");
        if (!/^[A-Z]{2}\d{2}[A-Z0-9]*$/.test(head)) continue;
        const country = head.slice(0, 2);
        const len = IBAN_LENGTHS[country];
        if (len === undefined) continue;
        let compact = head;
        let j = i + 1;
        for (; j < tokens.length && compact.length < len; j++) {
          const t = tokenAt(tokens[j]);
          if (!isGroup(t)) break;
          compact += t;
        }
        // Open: the groups stop short at the end of their cell (or at a label word): the rest wrapped or is
        // laid out elsewhere. Short inside its cell, before other words, the number was printed as read.
        const open =
          compact.length < len && (j >= tokens.length || ACCOUNT_LABEL_WORD.test(tokenAt(tokens[j])));
        let wrapped = false;
        let ambiguous: string[] | undefined;
        if (compact.length < len) {
          // Groups split over cells of the line (a wide gap between two groups) count when they pass mod-97.
          const rest =
            open && j >= tokens.length ? line.cells.slice(ci + 1).flatMap((c) => c.text.split(/\s+/)) : [];
          const inLine = wrapCompletion(compact, len, rest);
          const { expected, all } = wrapTails(lines, li, cell, compact, len);
          // A completion that passes mod-97 is the wrap (1 in 97 by chance); the tail under the number is
          // preferred. Otherwise, where the number's groups ran open, the tail where it belongs is read as
          // printed (an edited digit is still read), but when other lines offer other completions (other cells
          // under the number; without layout, any cell) the reading is ambiguous and the failing check digit
          // only a note.
          const valid = [
            ...(inLine ? [{ value: inLine, under: true }] : []),
            ...all.filter((t) => t.under),
            ...all.filter((t) => !t.under),
          ].find((t) => ibanProblem(t.value) === null);
          if (valid) {
            compact = valid.value;
            wrapped = true;
          } else if (open && expected) {
            compact = expected;
            wrapped = true;
            // With layout only the cells under the number can be its tail; without, any line's may.
            const others = [...new Set(all.filter((t) => t.under || !cell.bbox).map((t) => t.value))];
            if (others.length > 1) ambiguous = others;
          }
        }
        if (compact.length < 15) continue;
        if (!labelled && compact.length !== len) continue;
        if (seen.has(compact)) continue;
        seen.add(compact);
        const problem = ibanProblem(compact);
        ibans.push({ line, value: compact });
        // Too short where its groups ran open: the rest may be cut off or laid out elsewhere, not mistyped.
        const cutOff = compact.length < len && open;
        const role = record
          ? ""
          : " On an invoice the IBAN is the payee's, and one that fails cannot receive a payment, so this is more often a placeholder or a typo than an edit.";
        if (problem === "length" && !cutOff) {
          findings.push({
            code: "iban_invalid",
            message: `On ${where(line)}, the IBAN ${compact} has ${compact.length} characters, but ${country} IBANs have ${len}: it was mistyped or altered.${role}`,
            page: line.page,
            evidence: { iban: compact, length: compact.length, expectedLength: len },
            severity: record ? 7 : 3,
          });
        } else if (problem === "checksum" && ambiguous) {
          findings.push({
            code: "iban_invalid",
            message: `On ${where(line)}, the IBAN ${compact} (its last groups read from the next lines) fails the ISO 13616 mod-97 check, but the lines after it offer other completions (${ambiguous.join(", ")}), none passing: the reading of the wrap is uncertain.`,
            page: line.page,
            evidence: { iban: compact, check: "mod-97", wrapped: true, candidates: ambiguous },
            severity: 2,
          });
        } else if (problem === "checksum") {
          findings.push({
            code: "iban_invalid",
            message: `On ${where(line)}, the IBAN ${compact} fails the ISO 13616 mod-97 check, so no bank issued it${record ? ": a digit was changed" : ""}.${role}`,
            page: line.page,
            evidence: { iban: compact, check: "mod-97", ...(wrapped ? { wrapped: true } : {}) },
            severity: record ? 8 : 4,
          });
        }
      }
    }
  }
  return { findings, ibans };
}

/** Lines apart within which a printed sort code or Bankleitzahl belongs to an IBAN (one payment block). */
const SAME_BLOCK_LINES = 3;

/**
 * A GB IBAN carries the sort code and account number; a DE IBAN the Bankleitzahl and account. Compared
 * only with the numbers printed in the IBAN's own block (an invoice may print the payee's IBAN and, in
 * another place, the payer's old-style account for a direct debit).
 */
function ibanCrossFindings(lines: Line[], ibans: Located[]): Finding[] {
  const findings: Finding[] = [];
  const near = (at: Line, re: RegExp) => {
    const i = lines.indexOf(at);
    for (let d = 0; d <= SAME_BLOCK_LINES; d++) {
      for (const l of [lines[i - d], lines[i + d]]) {
        if (!l || l.page !== at.page) continue;
        const m = re.exec(l.text);
        if (m?.[1]) return { line: l, value: m[1].replace(/\D/g, "") };
      }
    }
    return undefined;
  };
  for (const { line, value } of ibans) {
    const sort = near(line, /sort[\s-]?code:?\s*(\d{2}[-\s]?\d{2}[-\s]?\d{2})\b/i);
    const account = near(line, /account (?:number|no\.?):?\s*(\d{8})\b/i);
    const blz = near(line, /\b(?:BLZ|Bankleitzahl):?\s*(\d{3}\s?\d{3}\s?\d{2})\b/i);
    const konto = near(line, /\b(?:Kontonummer|Konto-Nr\.?):?\s*(\d{1,10})\b/i);
    if (ibanProblem(value) !== null) continue;
    const parts: [string, string | undefined, string][] = [];
    if (value.startsWith("GB")) {
      parts.push(
        ["sort code", sort?.value, value.slice(8, 14)],
        ["account number", account?.value, value.slice(14, 22)],
      );
    } else if (value.startsWith("DE")) {
      parts.push(
        ["Bankleitzahl", blz?.value, value.slice(4, 12)],
        ["Kontonummer", konto?.value.padStart(10, "0"), value.slice(12, 22)],
      );
    }
    for (const [name, printed, inIban] of parts) {
      if (!printed || printed === inIban) continue;
      findings.push({
        code: "iban_mismatch",
        message: `On ${where(line)}, the IBAN ${value} contains the ${name} ${inIban}, but the document prints the ${name} as ${printed}: one of them was altered.`,
        page: line.page,
        evidence: { iban: value, field: name, printed, inIban },
        severity: 8,
      });
    }
  }
  return findings;
}

/**
 * A routing number read with confidence: a label that names it ("Routing number", "ABA routing no.", "RTN",
 * "ABA #") right before exactly nine digits (or three groups of three), not part of a longer number. An
 * unlabelled nine-digit number is not a routing number (an account, a reference, a phone number), and a
 * labelled value of another length is some other figure read after the label (a phone number in "Routing
 * questions? Call ...", the account number of "Account/Routing: ..."), not a routing number missing a digit.
 */
const ROUTING_LABEL =
  /\b(?:ABA|RTN|routing)\b(?:[\s/]*(?:routing|transit|number|num\.?|no\.?|nr\.?|#|code|ABA|RTN|\((?:ABA|RTN)\)))*\s*[:#.]?\s*(?<![\d])(\d{9}|\d{3}[ -]\d{3}[ -]\d{3})(?![\d]|[ -]\d)/gi;

/** The routing numbers a line prints under a label, as nine digits. */
export function labelledRoutingNumbers(text: string): string[] {
  return [...text.matchAll(ROUTING_LABEL)].map((m) => (m[1] as string).replace(/[\s-]/g, ""));
}

function routingFindings(lines: Line[], docType: string): Finding[] {
  const findings: Finding[] = [];
  const record = ACCOUNT_RECORDS.has(docType);
  for (const line of lines) {
    for (const routing of labelledRoutingNumbers(line.text.normalize("NFKC"))) {
      const problem = abaProblem(routing);
      if (!problem || problem === "format") continue;
      findings.push({
        code: "routing_number_invalid",
        message:
          problem === "checksum"
            ? `On ${where(line)}, the routing number ${routing} fails the ABA checksum (weights 3-7-1), so no US bank has it: a digit was changed.`
            : `On ${where(line)}, the routing number ${routing} starts with ${routing.slice(0, 2)}, a prefix the Federal Reserve does not assign.`,
        page: line.page,
        evidence: { routing, problem },
        // On an invoice the routing number is the payee's (see ACCOUNT_RECORDS).
        severity: !record ? 4 : problem === "checksum" ? 8 : 6,
      });
    }
  }
  return findings;
}

function cardFindings(lines: Line[]): Finding[] {
  const findings: Finding[] = [];
  for (const line of lines) {
    const cardContext = /\b(card|visa|mastercard|amex|american express|karte|kreditkarte|carte)\b/i.test(
      line.text,
    );
    for (const m of line.text.matchAll(/(?<![\d*Xx])(?:\d[ -]?){12,18}\d(?![\d*])/g)) {
      const digits = m[0].replace(/\D/g, "");
      const grouped = /^\d{4}([ -])\d{4}\1\d{4}\1\d{1,7}$|^\d{4}([ -])\d{6}\2\d{5}$/.test(m[0]);
      const brand = cardBrand(digits);
      if (!((cardContext && (grouped || brand)) || (grouped && brand))) continue;
      if (luhnValid(digits)) continue;
      findings.push({
        code: "card_number_invalid",
        message: `On ${where(line)}, the card number ${m[0]}${brand ? ` (${brand})` : ""} fails the Luhn check every issued card number passes: it was mistyped or invented.`,
        page: line.page,
        evidence: { number: m[0], brand },
        severity: 6,
      });
    }
  }
  return findings;
}

function sortCodeFindings(lines: Line[]): Finding[] {
  const findings: Finding[] = [];
  for (const line of lines) {
    const m = /sort[\s-]?code:?\s*([\d][\d\s-]{3,12}\d)/i.exec(line.text);
    if (!m?.[1]) continue;
    const value = m[1].trim();
    if (!sortCodeProblem(value)) continue;
    findings.push({
      code: "sort_code_malformed",
      message: `On ${where(line)}, the sort code "${value}" is not six digits written nn-nn-nn, the only form UK banks print.`,
      page: line.page,
      evidence: { sortCode: value },
      severity: 5,
    });
  }
  return findings;
}

/**
 * Documents whose payment reference is the issuer's own: its billing system computes the reference and its
 * check digits for each bill, and the payer's bank refuses one that fails. On a statement a reference is a
 * transaction's, written by whoever paid.
 */
const BILLS = new Set(["invoice", "utility_bill"]);

/** Lines after a reference within which its wrapped groups are looked for. */
const REFERENCE_WRAP_LINES = 2;

/**
 * A failing reference completed by the groups that start a cell of the next lines into one that holds
 * (`completes`), or that may go on under its cell (`mayWrap`: a cell there, under it by position or without
 * layout first on its line, starts with groups of capitals or digits that are no label and no IBAN of their own).
 */
function referenceWrap(
  lines: Line[],
  li: number,
  cell: Line["cells"][number],
  ref: PaymentReference,
  region: string,
): { completes: boolean; mayWrap: boolean } {
  const line = lines[li] as Line;
  const box = cell.bbox;
  const tol = 0.5 * (cell.size ?? 10);
  let mayWrap = false;
  for (let k = 1; k <= REFERENCE_WRAP_LINES; k++) {
    const next = lines[li + k];
    if (next?.page !== line.page) break;
    // A wrapped line follows at a line's pitch, not a page's foot further down.
    if (line.y !== undefined && next.y !== undefined && Math.abs(next.y - line.y) > 2 * k * (cell.size ?? 10))
      break;
    for (const [ci, c] of next.cells.entries()) {
      const groups = c.text.split(/\s+/).map(tokenAt);
      const under = box && c.bbox ? c.bbox[0] >= box[0] - tol && c.bbox[0] <= box[2] : ci === 0;
      const compact = c.text.replace(/\s+/g, "");
      const ownIban = /^[A-Z]{2}\d{2}[A-Z0-9]{8,30}$/.test(compact) && ibanProblem(compact) === null;
      const tail = isGroup(groups[0] ?? "") && !ownIban;
      if (under && tail) mayWrap = true;
      let head = ref.printed;
      for (const g of groups) {
        if (!/^[A-Z0-9]{1,5}$/.test(g)) break;
        head = `${head} ${g}`;
        if (findPaymentReferences(head, region, line.text).some((r) => r.scheme === ref.scheme && r.valid))
          return { completes: true, mayWrap };
      }
    }
  }
  return { completes: false, mayWrap };
}

/** A template's placeholder: all zeros, or RF check digits the mod-97 rule never gives (00, 01, 99). */
const isPlaceholder = (ref: PaymentReference) =>
  /^(?:RF)?0+$/.test(ref.compact.replace(/^RF\d{2}/, "RF")) ||
  (ref.scheme === "rf" && /^RF(?:00|01|99)/.test(ref.compact));

const SCHEME_NAME: Record<PaymentReference["scheme"], string> = {
  rf: "creditor reference (ISO 11649, mod 97)",
  ch_qr: "QR reference (27 digits, recursive mod 10)",
  be_structured: "structured communication (mod 97)",
  fi_reference: "reference number (weights 7-3-1)",
  nl_payment_reference: "payment reference (betalingskenmerk, mod 11)",
  no_kid: "KID (mod 10 or mod 11)",
  se_ocr: "OCR reference (mod 10)",
};

/**
 * Payment references whose check digits fail. On a bill the reference is the issuer's, computed by its
 * billing system: one that fails was typed by hand, so a printed digit was changed (proof). A reference
 * that ends its cell and may go on in a cell of the next lines (groups of capitals or digits there) is a
 * note; one those groups complete into a reference that holds is read whole and passes. Elsewhere (a
 * statement's transaction) the reference is a payer's: an anomaly.
 */
function referenceFindings(lines: Line[], docType: string, region: string): Finding[] {
  const findings: Finding[] = [];
  const bill = BILLS.has(docType);
  for (const [li, line] of lines.entries()) {
    // A reference's label is on its line or on the line above it (a Swiss QR-bill prints "Referenz" over it).
    const above = lines[li - 1];
    const label = above?.page === line.page ? `${above.text}\n${line.text}` : line.text;
    for (const cell of line.cells) {
      for (const ref of findPaymentReferences(cell.text, region, label)) {
        if (ref.valid) continue;
        const atEnd = cell.text.trimEnd().endsWith(ref.printed.trimEnd());
        const wrap = atEnd
          ? referenceWrap(lines, li, cell, ref, region)
          : { completes: false, mayWrap: false };
        if (wrap.completes) continue;
        const placeholder = isPlaceholder(ref);
        findings.push({
          code: "payment_reference_invalid",
          message: `On ${where(line)}, the ${SCHEME_NAME[ref.scheme]} ${ref.printed} fails its check digits, which the issuer's billing system computes for every reference and a bank verifies: ${
            placeholder
              ? "it is a template's placeholder (check digits no system computes), not an issued reference."
              : wrap.mayWrap
                ? "it may go on in the line under it, so this is uncertain."
                : bill
                  ? "a digit of it was changed after it was issued."
                  : "it was mistyped or changed."
          }`,
          page: line.page,
          ...(cell.bbox ? { bbox: cell.bbox } : {}),
          evidence: {
            reference: ref.printed,
            scheme: ref.scheme,
            check: SCHEME_NAME[ref.scheme],
            ...(wrap.mayWrap ? { wrapped: true } : {}),
          },
          severity: placeholder || wrap.mayWrap ? 2 : bill ? 8 : 3,
        });
      }
    }
  }
  return findings;
}

interface DatedLine {
  line: Line;
  date: ContentDate;
}

/** Lines that start with a date and carry an amount: ledger or transaction rows. */
function transactionRows(lines: Line[], region: string): DatedLine[] {
  const style = numberStyleFor(region);
  const out: DatedLine[] = [];
  for (const line of lines) {
    const first = line.cells[0]?.text ?? "";
    const d = parseDateText(first, region);
    if (!d?.date) continue;
    if (!line.cells.slice(1).some((c) => parseAmount(c.text, { style }))) continue;
    out.push({ line, date: d });
  }
  return out;
}

function dateFindings(lines: Line[], doc: DocumentModel, now: Date): Finding[] {
  const findings: Finding[] = [];
  const region = doc.region;
  const all: DatedLine[] = lines.flatMap((line) =>
    findDates(line.text, region).map((date) => ({ line, date })),
  );

  for (const { line, date } of all) {
    const impossible =
      date.format === "slash" || date.format === "dot" || date.format === "dash"
        ? !date.dayFirstValid && !date.monthFirstValid
        : date.date === undefined;
    if (!impossible) continue;
    findings.push({
      code: "date_impossible",
      message: `On ${where(line)}, the date "${date.raw}" does not exist in the calendar in either day/month order: it was typed by hand.`,
      page: line.page,
      evidence: { date: date.raw, line: line.text.slice(0, 200) },
      severity: 7,
    });
  }

  // Numeric dates that only make sense in another region's order, and formats mixed in one document.
  const numeric = all.filter(
    (d) => d.date.format === "slash" || d.date.format === "dot" || d.date.format === "dash",
  );
  const slash = numeric.filter((d) => d.date.format === "slash");
  const monthFirst = monthFirstRegion(region);
  const onlyForeign = slash.filter((d) =>
    monthFirst
      ? d.date.dayFirstValid && !d.date.monthFirstValid
      : d.date.monthFirstValid && !d.date.dayFirstValid,
  );
  const onlyNative = slash.filter((d) =>
    monthFirst
      ? d.date.monthFirstValid && !d.date.dayFirstValid
      : d.date.dayFirstValid && !d.date.monthFirstValid,
  );
  if (onlyForeign.length > 0) {
    const ex = onlyForeign.slice(0, 3).map((d) => `"${d.date.raw}" (page ${d.line.page})`);
    const mixed = onlyNative.length > 0;
    findings.push({
      code: mixed ? "date_order_mixed" : "date_order_foreign",
      message: mixed
        ? `The document writes dates both day-first and month-first: ${ex.join(", ")} only work ${monthFirst ? "day" : "month"} first while ${onlyNative.length} other date${onlyNative.length > 1 ? "s" : ""} such as "${onlyNative[0]?.date.raw}" only work ${monthFirst ? "month" : "day"} first; the dates were typed by different hands.`
        : `${ex.join(", ")} ${onlyForeign.length > 1 ? "are" : "is"} only valid ${monthFirst ? "day" : "month"} first, but a ${region} document writes numeric dates ${monthFirst ? "month" : "day"} first.`,
      page: onlyForeign[0]?.line.page,
      evidence: {
        dates: onlyForeign.map((d) => d.date.raw),
        region,
        otherOrder: onlyNative.map((d) => d.date.raw).slice(0, 5),
      },
      // One order used throughout is the document's own convention (integrators declare the region
      // loosely); only a document that writes both orders shows two hands.
      severity: mixed ? 6 : 2,
    });
  }
  const byFormat = new Map<string, DatedLine[]>();
  for (const d of numeric) byFormat.set(d.date.format, [...(byFormat.get(d.date.format) ?? []), d]);
  const expected = expectedNumericFormat(region);
  if (byFormat.size >= 2) {
    const ranked = [...byFormat.entries()].sort((a, b) => b[1].length - a[1].length);
    const [main, ...rest] = ranked;
    for (const [format, list] of rest) {
      if (!main || list.length > numeric.length * 0.25) continue;
      findings.push({
        code: "date_format_mixed",
        message: `Most dates are written with ${main[0] === "dot" ? "dots" : main[0] === "slash" ? "slashes" : "dashes"} (e.g. "${main[1][0]?.date.raw}"), but ${list
          .slice(0, 3)
          .map((d) => `"${d.date.raw}" on page ${d.line.page}`)
          .join(
            ", ",
          )} ${list.length > 1 ? "use" : "uses"} ${format === "dot" ? "dots" : format === "slash" ? "slashes" : "dashes"}: those dates were added by someone else.`,
        page: list[0]?.line.page,
        evidence: { usual: main[0], odd: format, dates: list.map((d) => d.date.raw) },
        severity: 5,
      });
    }
  } else if (numeric.length >= 3 && !byFormat.has(expected)) {
    const [format] = [...byFormat.keys()];
    findings.push({
      code: "date_format_region",
      message: `All ${numeric.length} numeric dates use ${format === "dot" ? "dots" : format === "slash" ? "slashes" : "dashes"} (e.g. "${numeric[0]?.date.raw}"), but ${region} documents write them with ${expected === "dot" ? "dots (14.03.2025)" : "slashes"}.`,
      page: numeric[0]?.line.page,
      evidence: { format, expected, region },
      severity: 3,
    });
  }

  // Transactions: order, period, future.
  const txs = transactionRows(lines, region);
  const steps = txs
    .slice(1)
    .map((t, i) => (t.date.date?.getTime() ?? 0) - ((txs[i] as DatedLine).date.date?.getTime() ?? 0));
  const up = steps.filter((s) => s > 0).length;
  const down = steps.filter((s) => s < 0).length;
  if (txs.length >= 4 && up + down > 0) {
    const ascending = up >= down;
    const against = txs
      .slice(1)
      .filter((_, i) => (ascending ? (steps[i] as number) < 0 : (steps[i] as number) > 0));
    if (against.length > 0 && against.length <= Math.max(1, steps.length * 0.3)) {
      findings.push({
        code: "transactions_out_of_order",
        message: `The transactions run in ${ascending ? "ascending" : "descending"} date order except ${against
          .slice(0, 3)
          .map((t) => `"${t.date.raw}" on page ${t.line.page} (${t.line.cells[1]?.text ?? ""})`)
          .join(", ")}: a bank's ledger is never out of order, so rows were inserted or re-dated.`,
        page: against[0]?.line.page,
        bbox: against[0]?.line.cells[0]?.bbox,
        evidence: { order: ascending ? "ascending" : "descending", rows: against.map((t) => t.date.raw) },
        severity: 6,
      });
    }
  }
  const period = periodOf(lines, region);
  if (period && txs.length > 0) {
    const outside = txs.filter((t) => {
      const d = t.date.date?.getTime() ?? 0;
      return d < period.from.getTime() - DAY || d > period.to.getTime() + DAY;
    });
    // The statement's own opening and closing rows carry the period's edge dates; anything else outside is odd.
    if (outside.length > 0 && outside.length <= txs.length / 2) {
      findings.push({
        code: "transaction_outside_period",
        message: `The statement covers ${period.raw}, but ${outside
          .slice(0, 3)
          .map((t) => `"${t.date.raw}" on page ${t.line.page}`)
          .join(", ")} lie${outside.length > 1 ? "" : "s"} outside it.`,
        page: outside[0]?.line.page,
        evidence: { period: period.raw, dates: outside.map((t) => t.date.raw) },
        severity: 6,
      });
    }
  }
  if (HISTORICAL.has(doc.declaredDocType)) {
    const txLines = new Set(txs.map((t) => t.line));
    const future = all.filter(({ line, date }) => {
      if (!date.date || FORWARD.test(line.text)) return false;
      // A "date" centuries ahead is a part or reference number (737-7/8/8200), not a date.
      if (date.date.getUTCFullYear() > PLAUSIBLE_YEARS.to) return false;
      const ahead = date.date.getTime() - now.getTime();
      return ahead > (txLines.has(line) ? DAY : 31 * DAY);
    });
    if (future.length > 0) {
      const tx = future.some((f) => txLines.has(f.line));
      findings.push({
        code: "date_in_future",
        message: `${future
          .slice(0, 3)
          .map((f) => `"${f.date.raw}" on page ${f.line.page}`)
          .join(
            ", ",
          )} ${future.length > 1 ? "lie" : "lies"} after today (${isoDay(now)}), but ${tx ? "a transaction cannot have happened yet" : "this document can only report the past"}.`,
        page: future[0]?.line.page,
        evidence: { dates: future.map((f) => f.date.raw), now: isoDay(now) },
        severity: tx ? 7 : 5,
      });
    }
  }
  return findings;
}

/** "Statement period: 01/03/2025 to 31/03/2025" and similar. */
function periodOf(lines: Line[], region: string): { from: Date; to: Date; raw: string } | undefined {
  for (const line of lines) {
    if (!/\b(period|zeitraum|from|vom|statement date range)\b/i.test(line.text)) continue;
    const ds = findDates(line.text, region).filter((d) => d.date);
    if (ds.length !== 2) continue;
    const [a, b] = ds as [ContentDate, ContentDate];
    if ((a.date as Date) > (b.date as Date)) continue;
    return { from: a.date as Date, to: b.date as Date, raw: `${a.raw} to ${b.raw}` };
  }
  return undefined;
}

export function identifierFindings(doc: DocumentModel, now: Date): Finding[] {
  const lines = documentLines(doc);
  const { findings: ibanIssues, ibans } = ibanFindings(lines, doc.declaredDocType);
  return [
    ...ibanIssues,
    ...ibanCrossFindings(lines, ibans),
    ...routingFindings(lines, doc.declaredDocType),
    ...cardFindings(lines),
    ...sortCodeFindings(lines),
    ...referenceFindings(lines, doc.declaredDocType, doc.region),
    ...dateFindings(lines, doc, now),
  ];
}

/** Every finding code this check reports: its highest level, its kind of evidence, what it means. */
export const CODES = {
  iban_invalid: {
    level: "proof",
    kind: "identifier",
    means: "An IBAN fails its check digits (proof on the holder's own account; an anomaly for a payee's).",
  },
  iban_mismatch: {
    level: "proof",
    kind: "consistency",
    means: "The IBAN and the bank details printed beside it disagree.",
  },
  routing_number_invalid: {
    level: "proof",
    kind: "identifier",
    means: "An ABA routing number fails its checksum or prefix.",
  },
  card_number_invalid: {
    level: "specific",
    kind: "identifier",
    means: "A card number fails the Luhn check.",
  },
  sort_code_malformed: {
    level: "specific",
    kind: "identifier",
    means: "A UK sort code is not six digits.",
  },
  payment_reference_invalid: {
    level: "proof",
    kind: "identifier",
    means:
      "A payment reference with check digits (RF creditor reference, Swiss QR reference, Belgian structured communication, Finnish, Dutch, Norwegian KID or Swedish OCR reference) fails them (proof on a bill, the issuer's own reference).",
  },
  date_impossible: {
    level: "anomaly",
    kind: "plausibility",
    means: "A printed date does not exist (31 February, month 13).",
  },
  date_format_mixed: {
    level: "anomaly",
    kind: "plausibility",
    means: "The document prints dates in more than one format.",
  },
  date_format_region: {
    level: "anomaly",
    kind: "plausibility",
    means: "Dates are printed in a format unusual for the region.",
  },
  date_order_mixed: {
    level: "anomaly",
    kind: "plausibility",
    means: "Dates are printed both day-first and month-first.",
  },
  date_order_foreign: {
    level: "anomaly",
    kind: "plausibility",
    means: "Dates are printed in an order foreign to the region.",
  },
  transactions_out_of_order: {
    level: "anomaly",
    kind: "plausibility",
    means: "Transaction dates are not in order.",
  },
  transaction_outside_period: {
    level: "anomaly",
    kind: "plausibility",
    means: "A transaction lies outside the statement period.",
  },
  date_in_future: {
    level: "anomaly",
    kind: "plausibility",
    means: "A printed date lies after the time of the check.",
  },
} as const satisfies CodeTable;

export const textIdentifiersCheck = defineCheck({
  id: TEXT_IDENTIFIERS_CHECK_ID,
  codes: CODES,
  appliesTo: (doc) => doc.pdf !== undefined || (doc.imagePages?.length ?? 0) > 0,
  inspect(doc, ctx) {
    const lines = documentLines(doc);
    if (lines.length === 0) {
      return skip("The document has no readable text, so there are no identifiers or dates to verify.");
    }
    const text = lines.map((l) => l.text).join("\n");
    return { findings: identifierFindings(doc, ctx.now), dates: findDates(text, doc.region).length };
  },
  summary: ({ outcome, findings, dates }) =>
    outcome === "pass"
      ? `Identifiers and ${dates} printed date${dates === 1 ? "" : "s"} are consistent: check digits pass, dates are real, in order and in the region's format.`
      : `Identifiers or dates are wrong: ${flaggedCodes(findings).join(", ")}.`,
});
