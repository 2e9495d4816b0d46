import type { Finding } from "../../core/check-result.js";
import type { CodeTable } from "../../core/finding-levels.js";
import { fullText, textPages } from "../../document/document-text.js";
import type { DocumentModel } from "../../document/model.js";
import { ImageDecodeError } from "../../document/raster.js";
import { findAmounts } from "../../document/values/amounts.js";
import { findIbans } from "../../document/values/bank-identifiers.js";
import { findDates, isoDay, PLAUSIBLE_YEARS } from "../../document/values/dates.js";
import { defineCheck, skip, unreadable } from "../check.js";
import { registrableDomain } from "./domains.js";
import { findIssuer, hostBelongsToIssuer } from "./issuer.js";
import { parseQrPayload, type QrClaims } from "./qr-payload.js";
import { type FoundQr, type QrScan, scanQrCodes } from "./qr-scan.js";

/**
 * qr.codes: finds QR codes in the document (embedded images, rendered pages, image documents), reports
 * `qr_present`, decodes each payload and compares what it claims with what the document prints: a URL
 * whose domain does not belong to the issuer named in the text, or an amount, IBAN or date that the
 * printed document does not show, is a finding (a QR code left from the original after the printed
 * values were edited, or one swapped to send payments elsewhere).
 */

export const QR_CODES_CHECK_ID = "qr.codes";

/**
 * Payment and invoicing platforms that host pay links on the issuer's behalf: a link there does not
 * belong to the issuer's domain but is normal.
 */
const PAYMENT_PLATFORMS = new Set([
  "stripe.com",
  "paypal.com",
  "paypal.me",
  "gocardless.com",
  "square.link",
  "squareup.com",
  "wise.com",
  "klarna.com",
  "adyen.com",
  "mollie.com",
  "sumup.com",
  "payoneer.com",
  "intuit.com",
  "xero.com",
  "zoho.com",
  "freshbooks.com",
  "sage.com",
  "billdesk.com",
  "paddle.com",
  "checkout.com",
  "epc-qr.eu",
]);

/** Hosts that hide where a link goes. */
const SHORTENERS = new Set([
  "bit.ly",
  "tinyurl.com",
  "t.co",
  "goo.gl",
  "ow.ly",
  "is.gd",
  "buff.ly",
  "cutt.ly",
  "rebrand.ly",
  "rb.gy",
  "shorturl.at",
  "tiny.cc",
  "s.id",
]);

const show = (payload: string) => (payload.length > 120 ? `${payload.slice(0, 117)}...` : payload);
const money = (cents: number) => (cents / 100).toFixed(2);

interface Printed {
  amounts: Set<number>;
  ibans: Set<string>;
  dates: Set<string>;
}

function printedValues(doc: DocumentModel): Printed {
  const text = fullText(doc);
  return {
    // Tolerant readings: a printed value the strict readers pass over would make a false mismatch.
    amounts: new Set(findAmounts(text, { tolerant: true }).map((a) => a.cents)),
    ibans: new Set(findIbans(text)),
    dates: new Set(
      findDates(text, doc.region, { eitherOrder: true, years: PLAUSIBLE_YEARS }).flatMap((d) =>
        d.date ? [isoDay(d.date)] : [],
      ),
    ),
  };
}

export function qrFindings(doc: DocumentModel, code: FoundQr, claims: QrClaims, printed: Printed): Finding[] {
  const findings: Finding[] = [];
  const where = `the QR code on page ${code.page}`;
  const evidence = { payload: show(code.payload), source: code.source };
  if (claims.url) {
    const host = claims.url.hostname.toLowerCase();
    const issuer = findIssuer(doc);
    const ipLiteral = /^\d+\.\d+\.\d+\.\d+$/.test(host) || host.startsWith("[");
    if (SHORTENERS.has(registrableDomain(host)) || ipLiteral) {
      findings.push({
        code: "qr_url_obscured",
        message: `${cap(where)} links to ${host}, ${ipLiteral ? "a bare IP address" : "a link shortener"} that hides where it leads; issuers link to their own domain.`,
        page: code.page,
        evidence: { ...evidence, host },
        severity: 7,
      });
    } else if (!hostBelongsToIssuer(host, issuer) && !PAYMENT_PLATFORMS.has(registrableDomain(host))) {
      // A payment link (it carries an amount, an IBAN or a reference to pay) to a domain that is neither
      // the issuer's own (named or printed in the document) nor a payment platform is how a swapped QR
      // code redirects a payment. Any other link elsewhere (a messenger, a partner, a lab) is worth a look.
      const payment =
        claims.amount !== undefined ||
        claims.iban !== undefined ||
        /\b(pay|payment|invoice|checkout|billing|zahlung|paiement)\b/i.test(
          `${claims.url.pathname} ${claims.url.search}`,
        );
      const redirect = payment && (issuer.domains.length > 0 || issuer.names.length > 0);
      findings.push({
        code: "qr_domain_foreign",
        message: `${cap(where)} links to ${registrableDomain(host)}, which does not belong to the issuer named in the document (${issuer.names[0] ?? "no name found"})${
          redirect
            ? `, and the link is a payment link${issuer.domains.length ? ` although the document prints its own web address (${issuer.domains.slice(0, 2).join(", ")})` : ""}: a swapped QR code sends the payment elsewhere`
            : "; worth a look, as links to other sites are common"
        }.`,
        page: code.page,
        evidence: {
          ...evidence,
          host,
          issuer: issuer.names.slice(0, 3),
          printedDomains: issuer.domains,
          paymentLink: payment,
        },
        severity: redirect ? 7 : 3,
      });
    }
  }
  if (
    claims.amount !== undefined &&
    claims.amount > 0 &&
    printed.amounts.size > 0 &&
    !printed.amounts.has(claims.amount)
  ) {
    findings.push({
      code: "qr_amount_mismatch",
      message: `${cap(where)} encodes the amount ${money(claims.amount)}, which is printed nowhere in the document; the printed amounts were changed after the QR code was made.`,
      page: code.page,
      evidence: { ...evidence, qrAmount: money(claims.amount), qrAmountText: claims.amountText },
      severity: 8,
    });
  }
  if (claims.iban) {
    if (printed.ibans.size > 0 && !printed.ibans.has(claims.iban)) {
      findings.push({
        code: "qr_iban_mismatch",
        message: `${cap(where)} pays to the IBAN ${claims.iban}, but the document prints ${[...printed.ibans].join(", ")}; payments made by scanning it go to another account.`,
        page: code.page,
        evidence: { ...evidence, qrIban: claims.iban, printedIbans: [...printed.ibans] },
        severity: 8,
      });
    } else if (printed.ibans.size === 0) {
      findings.push({
        code: "qr_iban_unprinted",
        message: `${cap(where)} pays to the IBAN ${claims.iban}, which the document does not print anywhere; payments made by scanning it go to an account the document never shows.`,
        page: code.page,
        evidence: { ...evidence, qrIban: claims.iban },
        severity: 7,
      });
    }
  }
  const unprintedDates = claims.dates.filter((d) => !printed.dates.has(d));
  if (unprintedDates.length > 0 && printed.dates.size > 0) {
    findings.push({
      code: "qr_date_mismatch",
      message: `${cap(where)} carries the date ${unprintedDates.join(", ")}, which the document does not print; its printed dates were changed after the QR code was made.`,
      page: code.page,
      evidence: { ...evidence, qrDates: unprintedDates },
      severity: 5,
    });
  }
  return findings;
}

const cap = (s: string) => s.charAt(0).toUpperCase() + s.slice(1);

/** Every finding code this check reports: its highest level, its kind of evidence, what it means. */
export const CODES = {
  qr_url_obscured: {
    level: "anomaly",
    kind: "provenance",
    means: "A QR code links to a bare IP address or a link shortener.",
  },
  qr_domain_foreign: {
    level: "anomaly",
    kind: "provenance",
    means: "A QR code links to a domain that does not belong to the named issuer.",
  },
  qr_amount_mismatch: {
    level: "proof",
    kind: "consistency",
    means: "A QR code encodes an amount the document prints nowhere.",
  },
  qr_iban_mismatch: {
    level: "proof",
    kind: "consistency",
    means: "A payment QR code pays another IBAN than the one printed.",
  },
  qr_iban_unprinted: {
    level: "specific",
    kind: "consistency",
    means: "A payment QR code pays an IBAN the document never prints.",
  },
  qr_date_mismatch: {
    level: "specific",
    kind: "consistency",
    means: "A QR code carries a date the document does not print.",
  },
} as const satisfies CodeTable;

/**
 * QR codes decoded by `prepare` while the OCR reads (the decode needs the pixels only), per model; undefined
 * when the preparation was aborted or failed (inspect then decodes them itself and reports what failed).
 */
const prepared = new WeakMap<DocumentModel, Promise<QrScan | undefined>>();

export const qrCodesCheck = defineCheck({
  id: QR_CODES_CHECK_ID,
  codes: CODES,
  appliesTo: (doc) => doc.pdf !== undefined || doc.contentType.startsWith("image/"),
  async prepare(doc, signal) {
    const scan = scanQrCodes(doc, signal).then(
      (s) => (signal?.aborted ? undefined : s),
      () => undefined,
    );
    prepared.set(doc, scan);
    await scan;
  },
  async inspect(doc, ctx) {
    let scan: QrScan;
    try {
      scan = (await prepared.get(doc)) ?? (await scanQrCodes(doc, ctx.signal));
    } catch (err) {
      if (err instanceof ImageDecodeError) {
        return unreadable(`The image could not be decoded to look for QR codes (${err.message}).`);
      }
      throw err;
    }
    const notInspected = scan.notInspected.length
      ? ` ${scan.notInspected.length} image(s) or page(s) could not be inspected: ${scan.notInspected.slice(0, 3).join("; ")}.`
      : "";
    if (scan.codes.length === 0) return skip(`The document carries no readable QR code.${notInspected}`);
    const printed = printedValues(doc);
    const hasText = textPages(doc).some((p) => p.text.trim() !== "");
    const findings = scan.codes.flatMap((code) =>
      hasText ? qrFindings(doc, code, parseQrPayload(code.payload, doc.region), printed) : [],
    );
    return { findings, discovered: ["qr_present"], codes: scan.codes, hasText, notInspected };
  },
  summary({ outcome, findings, codes, hasText, notInspected }) {
    const list = codes.map((c) => `page ${c.page}: "${show(c.payload)}"`).join("; ");
    return !hasText
      ? `Found ${codes.length} QR code(s) (${list}) but the document has no text to compare them with.${notInspected}`
      : outcome === "pass"
        ? `Found ${codes.length} QR code(s) (${list}); what they encode agrees with the printed document.${notInspected}`
        : `Found ${codes.length} QR code(s) whose content disagrees with the printed document: ${[...new Set(findings.map((f) => f.code))].join(", ")}.${notInspected}`;
  },
});
