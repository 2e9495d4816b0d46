import { describe, expect, it } from "vitest";
import type { DocType } from "../core/verdict.js";
import type { DocumentModel } from "../document/model.js";
import { grid, layoutDocument } from "../document/testdata/layout-kit.js";
import { makeDocument, makePng } from "../fixtures/documents.js";
import { HOSTILE_TEXT_KINDS, makeHostileTextPdf } from "../fixtures/hostile-text.js";
import { genuineResults, runOn, TEST_NOW, tamperedResult } from "./testdata/text-check-kit.js";
import { identifierFindings, textIdentifiersCheck } from "./text-identifiers.js";

const check = textIdentifiersCheck;

function textDoc(text: string, region: string, docType: DocType = "bank_statement"): DocumentModel {
  return {
    bytes: new Uint8Array(),
    sizeBytes: 0,
    contentType: "image/png",
    filename: "scan.png",
    declaredDocType: docType,
    region,
    imagePages: [{ number: 1, text, width: 0, height: 0, ocr: true }],
    warnings: [],
  };
}
const codes = (doc: DocumentModel) => identifierFindings(doc, TEST_NOW).map((f) => f.code);

describe("text.identifiers", () => {
  it("passes genuine documents of every type and region", async () => {
    for (const { name, result } of await genuineResults(check, [11, 12])) {
      expect(result.outcome, name).toBe("pass");
      expect(result.findings, name).toEqual([]);
    }
  }, 120_000);

  it("finds an altered IBAN and an altered routing number", async () => {
    for (const region of ["GB", "DE"] as const) {
      const { t, result } = await tamperedResult(check, 3, "invalid_iban", region);
      const f = result.findings.find((x) => x.code === "iban_invalid");
      expect(f?.evidence?.iban, region).toBe(t.replacement.replace("IBAN: ", "").replace(/\s/g, ""));
      expect(f?.severity).toBe(8);
    }
    const { t, result } = await tamperedResult(check, 3, "invalid_routing", "US");
    const f = result.findings.find((x) => x.code === "routing_number_invalid");
    expect(f?.evidence).toMatchObject({ routing: t.replacement.slice(-9), problem: "checksum" });
  });

  it("reads an IBAN printed in groups that wraps onto the next line", () => {
    const doc = textDoc(
      ["Please pay to  Sort code 88-42-18  IBAN GB63 THBR 8842 1871", "9478 91  BIC THBRGB2L"].join("\n"),
      "GB",
      "invoice",
    );
    expect(identifierFindings(doc, TEST_NOW)).toEqual([]);
    // Cut off at the end of the line with nothing to continue it: not read as a mistyped IBAN either.
    expect(codes(textDoc("IBAN GB63 THBR 8842 1871", "GB", "invoice"))).toEqual([]);
  });

  it("never takes the label set beside a wrapped IBAN for its last group", () => {
    // The label "IBAN" left of the number, its baseline a little lower, comes out as a line of its own between
    // the number and its wrapped last group: "ES91 … 9822" + "IBAN" was read as the IBAN and failed mod-97
    // (iban_invalid at 8 on a genuine statement).
    const page = (tail: string) =>
      textDoc(
        [
          "Lucía López                          ES91 7139 2856 9124 9822",
          "                            IBAN",
          `                                     ${tail}`,
          "Calle del Sol 156",
        ].join("\n"),
        "ES",
      );
    expect(identifierFindings(page("4245"), TEST_NOW)).toEqual([]);
    // An edited last group on the line after the label is still read, and fails.
    expect(codes(page("4246"))).toEqual(["iban_invalid"]);
  });

  it("reads an IBAN that wraps inside its table cell, with the next cell's text after it on the line", () => {
    const page = (iban: string) =>
      textDoc(
        [
          `IBAN                     ${iban}             Felix Becker`,
          "                         80                                   Hauptstraße 123",
          "                                                              50667 Köln",
          "BIC                      OAMNDE22XXX",
        ].join("\n"),
        "DE",
      );
    expect(identifierFindings(page("DE03 5001 0517 3705 4764"), TEST_NOW)).toEqual([]);
    // One digit changed: no completion passes mod-97, so the IBAN is read as printed and found wrong.
    const edited = identifierFindings(page("DE03 5001 0517 3705 4765"), TEST_NOW);
    expect(edited.map((f) => f.code)).toEqual(["iban_invalid"]);
    expect(edited[0]?.severity).toBeGreaterThanOrEqual(7);
  });

  it("finds a payment reference whose check digits fail on a bill, and passes the one the issuer printed", () => {
    const bill = (reference: string, docType: DocType = "invoice") =>
      layoutDocument(
        [
          grid(
            [{ x: 48 }, { x: 200 }],
            [
              ["Invoice no.", "INV-2025-10493"],
              ["Payment reference:", reference],
              ["IBAN", "DE89 3704 0044 0532 0130 00"],
            ],
            700,
            { pitch: 12 },
          ),
        ],
        { region: "DE", docType },
      );
    expect(identifierFindings(bill("RF18 5390 0754 7034"), TEST_NOW)).toEqual([]);
    const edited = identifierFindings(bill("RF18 5390 0754 7084"), TEST_NOW);
    expect(edited.map((f) => [f.code, f.severity, f.page, f.evidence?.reference])).toEqual([
      ["payment_reference_invalid", 8, 1, "RF18 5390 0754 7084"],
    ]);
    expect(edited[0]?.bbox).toBeDefined();
    // A number at the page's foot under the reference's cell is no wrapped part of it.
    const footed = (reference: string) =>
      layoutDocument(
        [
          [
            ...grid(
              [{ x: 48 }],
              [[`Payment reference: ${reference}`], ["IBAN DE89 3704 0044 0532 0130 00"]],
              400,
              {
                pitch: 12,
              },
            ),
            ...grid([{ x: 60 }], [["998 361 393"]], 40, { pitch: 12 }),
          ],
        ],
        { region: "DE", docType: "invoice" },
      );
    expect(identifierFindings(footed("RF18 5390 0754 7034"), TEST_NOW)).toEqual([]);
    expect(identifierFindings(footed("RF18 5390 0754 7084"), TEST_NOW).map((f) => f.severity)).toEqual([8]);
    // A sample invoice's placeholder (RF00 is a check no reference has): a note.
    expect(identifierFindings(bill("RF00 1234 5678"), TEST_NOW).map((f) => f.severity)).toEqual([2]);
    // A reference on a statement's transaction is the payer's: an anomaly.
    expect(
      identifierFindings(bill("RF18 5390 0754 7084", "bank_statement"), TEST_NOW).map((f) => f.severity),
    ).toEqual([3]);
    // The Swiss QR reference after its label, on an Italian invoice ("Causale").
    const swiss = (reference: string) =>
      textDoc(`Causale: ${reference}\nIBAN CH93 0076 2011 6238 5295 7`, "CH", "invoice");
    expect(identifierFindings(swiss("21 00000 00003 13947 14300 09017"), TEST_NOW)).toEqual([]);
    expect(codes(swiss("21 00000 00003 13947 14300 09077"))).toEqual(["payment_reference_invalid"]);
    // A QR-bill's payment part prints its label over the reference.
    const qrBill = (reference: string) =>
      textDoc(
        ["Zahlteil  Konto / Zahlbar an", "Referenz", reference, "Betrag  CHF 1 949.75"].join("\n"),
        "CH",
        "invoice",
      );
    expect(identifierFindings(qrBill("21 00000 00003 13947 14300 09017"), TEST_NOW)).toEqual([]);
    expect(codes(qrBill("21 00000 00003 13947 14300 09077"))).toEqual(["payment_reference_invalid"]);
  });

  it("reads a creditor reference that wraps onto the next line whole, and a failing one that may wrap as a note", () => {
    const wrapped = (tail: string) =>
      textDoc(["Payment reference  RF18 5390", `${tail}  Due date 14/03/2025`].join("\n"), "GB", "invoice");
    expect(identifierFindings(wrapped("0754 7034"), TEST_NOW)).toEqual([]);
    expect(identifierFindings(wrapped("0754 7084"), TEST_NOW).map((f) => [f.code, f.severity])).toEqual([
      ["payment_reference_invalid", 2],
    ]);
  });

  it("completes a wrapped IBAN from the cell under it, past another column's text and a label beside it", () => {
    // A two-column header: the holder's address on the left, the account on the right. The number wraps in
    // its cell; its tail starts under it, after the address's next line ("Calle Mayor 157  6024 5895").
    const columns = [{ x: 48 }, { x: 302 }, { x: 402 }];
    const statement = (tail: string) =>
      layoutDocument(
        [
          grid(
            columns,
            [
              ["Lucía Gómez", "IBAN", "ES34 5356 4494 9674"],
              ["Calle Mayor 157", undefined, tail],
              ["08002 Barcelona", "BIC", "ZVPZESPPXXX"],
            ],
            700,
            { pitch: 12 },
          ),
        ],
        { region: "ES" },
      );
    expect(identifierFindings(statement("6024 5895"), TEST_NOW)).toEqual([]);
    const edited = identifierFindings(statement("6024 5896"), TEST_NOW);
    expect(edited.map((f) => [f.code, f.severity, f.evidence?.iban])).toEqual([
      ["iban_invalid", 8, "ES3453564494967460245896"],
    ]);
    // The label set after the number on its line is no group of it: "IE62 … 8488" + "IBAN" was read as a
    // 24-character IE IBAN (iban_invalid 7, the wrong length) though its last group "56" wraps under it.
    const irish = (tail: string) =>
      layoutDocument(
        [
          grid(
            [{ x: 48 }, { x: 300 }, { x: 420 }],
            [
              ["Aoife Byrne", "IE62 BOFI 9926 7490 8488", "IBAN"],
              ["12 Main Street", tail],
              ["Dublin 2", "BIC", "DZDVIEPP"],
            ],
            700,
            { pitch: 12 },
          ),
        ],
        { region: "IE" },
      );
    expect(identifierFindings(irish("56"), TEST_NOW)).toEqual([]);
    expect(identifierFindings(irish("57"), TEST_NOW).map((f) => [f.code, f.severity])).toEqual([
      ["iban_invalid", 8],
    ]);
  });

  it("makes a failing wrapped IBAN only a note when the lines after it offer several completions", () => {
    const page = (tail: string) =>
      textDoc(
        [
          "Account holder  IBAN ES34 5356 4494 9674",
          `${tail}  Calle Mayor 157`,
          "1234 5678  08002 Barcelona",
        ].join("\n"),
        "ES",
      );
    // The tail under the number passes: the other candidate is not looked at.
    expect(identifierFindings(page("6024 5895"), TEST_NOW)).toEqual([]);
    // Neither passes: the one under the number is read, but which line wraps it is uncertain.
    const f = identifierFindings(page("6024 5896"), TEST_NOW);
    expect(f.map((x) => [x.code, x.severity])).toEqual([["iban_invalid", 2]]);
    expect(f[0]?.evidence?.candidates).toEqual(["ES3453564494967460245896", "ES3453564494967412345678"]);
  });

  it("judges a failing check digit by whose account it is: the holder's on a statement, the payee's on an invoice", () => {
    const text = "IBAN: DE75 1234 5678 0000 0012 34";
    const statement = identifierFindings(textDoc(text, "DE", "bank_statement"), TEST_NOW);
    expect(statement.map((f) => [f.code, f.severity])).toEqual([["iban_invalid", 8]]);
    const invoice = identifierFindings(textDoc(text, "DE", "invoice"), TEST_NOW);
    expect(invoice.map((f) => [f.code, f.severity])).toEqual([["iban_invalid", 4]]);
    expect(invoice[0]?.message).toMatch(/placeholder or a typo/);
  });

  it("compares a sort code or Bankleitzahl only with the IBAN of its own block", () => {
    const lines = [
      "Zahlungsempfänger: IBAN DE21 8600 0000 0086 0010 55",
      "Verwendungszweck: Rechnung 471102",
      "Bitte überweisen Sie den Betrag innerhalb von 14 Tagen.",
      "Vielen Dank für Ihren Auftrag.",
      "Lastschrift vom Konto des Käufers",
      "BLZ: 700 901 00  Kontonummer: 1234567890",
    ];
    expect(codes(textDoc(lines.join("\n"), "DE", "invoice"))).toEqual([]);
    const together = ["IBAN DE21 8600 0000 0086 0010 55", "BLZ: 700 901 00"].join("\n");
    expect(codes(textDoc(together, "DE", "invoice"))).toEqual(["iban_mismatch"]);
  });

  it("finds impossible, out-of-order, future and foreign-order dates in statements", async () => {
    const cases = [
      ["impossible_date", "date_impossible", "DE"],
      ["out_of_order_dates", "transactions_out_of_order", "US"],
      ["future_date", "date_in_future", "GB"],
      ["region_date_format", "date_order_mixed", "GB"],
    ] as const;
    for (const [kind, code, region] of cases) {
      const { result } = await tamperedResult(check, 4, kind, region);
      expect(
        result.findings.map((x) => x.code),
        kind,
      ).toContain(code);
      expect(result.outcome, kind).toBe("flag");
    }
    const future = await tamperedResult(check, 4, "future_date", "GB");
    const f = future.result.findings.find((x) => x.code === "date_in_future");
    expect(f?.evidence?.dates).toEqual([future.t.replacement]);
    expect(f?.severity).toBe(4);
  });

  it("cross-checks a GB IBAN against the printed sort code and account number", () => {
    const doc = textDoc(
      "Sort code: 60-16-13\nAccount number: 31926819\nIBAN: GB29 NWBK 6016 1331 9268 19",
      "GB",
    );
    expect(codes(doc)).toEqual([]);
    const altered = textDoc(
      "Sort code: 60-16-13\nAccount number: 31926818\nIBAN: GB29 NWBK 6016 1331 9268 19",
      "GB",
    );
    expect(codes(altered)).toEqual(["iban_mismatch"]);
  });

  it("checks card numbers only where they are card numbers, and sort code formats", () => {
    expect(codes(textDoc("Paid by VISA 4111 1111 1111 1112", "GB"))).toEqual(["card_number_invalid"]);
    expect(codes(textDoc("Paid by VISA 4111 1111 1111 1111", "GB"))).toEqual([]);
    expect(codes(textDoc("Paid by VISA **** 1112", "GB"))).toEqual([]);
    expect(codes(textDoc("Reference 1234 5678 9012 3456", "GB"))).toEqual([]);
    expect(codes(textDoc("Sort code: 60-161-3", "GB"))).toEqual(["sort_code_malformed"]);
  });

  it("judges date formats against the region", () => {
    const us = "Statement date 03/14/2025\n03/14/2025  A  $1.00  $2.00\n03/15/2025  B  $1.00  $3.00";
    expect(codes(textDoc(us, "US"))).toEqual([]);
    expect(codes(textDoc(us, "GB"))).toEqual(["date_order_foreign"]);
    const de = "Datum 14/03/2025\nFällig 28/03/2025\nLieferung 10/03/2025";
    expect(codes(textDoc(de, "DE", "invoice"))).toEqual(["date_format_region"]);
    const mixed = "14.03.2025\n15.03.2025\n16.03.2025\n17.03.2025\n18/03/2025";
    expect(codes(textDoc(mixed, "DE", "invoice"))).toEqual(["date_format_mixed"]);
  });

  it("allows future dates on lines about the future and in contracts", () => {
    expect(codes(textDoc("Due date: 14/03/2030", "GB", "invoice"))).toEqual([]);
    expect(codes(textDoc("Invoice date: 14/03/2030", "GB", "invoice"))).toEqual(["date_in_future"]);
    expect(codes(textDoc("The tenancy runs 14/03/2029 onwards", "GB", "contract"))).toEqual([]);
  });

  it("skips images without text and stays bounded on hostile pages", async () => {
    expect((await runOn(check, makePng(1), {})).outcome).toBe("skip");
    for (const kind of HOSTILE_TEXT_KINDS) {
      const r = await runOn(check, await makeHostileTextPdf(kind), { docType: "other" });
      expect(["pass", "flag", "skip"], kind).toContain(r.outcome);
      expect(r.summary.length, kind).toBeGreaterThan(20);
    }
    const multi = await runOn(
      check,
      await makeDocument({ seed: 5, docType: "bank_statement", region: "US", pages: 10 }),
      {
        region: "US",
      },
    );
    expect(multi.outcome).toBe("pass");
  }, 120_000);
});
