import { describe, expect, it } from "vitest";
import type { DocumentModel } from "../../document/model.js";
import { makeDocument, makePng } from "../../fixtures/documents.js";
import { HOSTILE_TEXT_KINDS, makeHostileTextPdf } from "../../fixtures/hostile-text.js";
import { genuineResults, runOn, tamperedResult } from "../testdata/text-check-kit.js";
import { arithmeticFindings, textArithmeticCheck } from "./text-arithmetic.js";

const check = textArithmeticCheck;

/** A document known only by its plain text (as OCR gives it). */
function textDoc(text: string, region = "GB"): DocumentModel {
  return {
    bytes: new Uint8Array(),
    sizeBytes: 0,
    contentType: "image/png",
    filename: "scan.png",
    declaredDocType: "bank_statement",
    region,
    imagePages: [{ number: 1, text, width: 0, height: 0, ocr: true }],
    warnings: [],
  };
}

describe("text.arithmetic", () => {
  it("passes genuine documents and checks the sums each type carries", async () => {
    for (const { name, result } of await genuineResults(check, [11, 12])) {
      expect(["pass", "skip"], name).toContain(result.outcome);
      expect(result.findings, name).toEqual([]);
      if (/^(bank_statement|payslip|invoice|utility_bill|receipt)/.test(name)) {
        expect(result.outcome, name).toBe("pass");
        expect(result.summary, name).toMatch(/All \d+ sums checked/);
      }
      if (name.startsWith("bank_statement")) expect(result.summary, name).toMatch(/running balances/);
    }
  }, 120_000);

  it("checks every running balance of a 10-page statement", async () => {
    const bytes = await makeDocument({ seed: 21, docType: "bank_statement", region: "DE", pages: 10 });
    const r = await runOn(check, bytes, { docType: "bank_statement", region: "DE" });
    expect(r.outcome).toBe("pass");
    expect(Number(/including (\d+) running balances/.exec(r.summary)?.[1])).toBeGreaterThan(300);
  });

  it("finds a changed transaction amount in the running balance", async () => {
    for (const region of ["US", "GB", "DE"] as const) {
      const { t, result } = await tamperedResult(check, 9, "broken_balance", region);
      const f = result.findings.filter((x) => x.code === "running_balance_mismatch");
      expect(f, region).toHaveLength(1);
      expect(f[0]?.page).toBe(t.page);
      expect(f[0]?.severity).toBe(9);
      expect(f[0]?.evidence?.amount).toBe(t.replacement);
      expect(f[0]?.message).toMatch(/previous balance .* gives/);
      expect(result.outcome).toBe("flag");
    }
  });

  it("finds a changed invoice total and a changed net pay", async () => {
    for (const region of ["US", "GB", "DE"] as const) {
      const total = await tamperedResult(check, 10, "broken_total", region);
      const tf = total.result.findings.find((x) => x.code === "total_mismatch");
      expect(tf?.evidence?.printed, region).toBe(total.t.replacement);
      expect(tf?.evidence?.expected, region).toBe(total.t.original);
      const net = await tamperedResult(check, 10, "broken_net", region);
      const nf = net.result.findings.find((x) => x.code === "net_pay_mismatch");
      expect(nf?.evidence?.printed, region).toBe(net.t.replacement);
      expect(nf?.evidence?.expected, region).toBe(net.t.original);
      expect(nf?.severity).toBe(9);
    }
  });

  it("reads a statement from plain text: line items, totals and signed balances", () => {
    const ok = textDoc(
      [
        "Date  Description  Paid out  Paid in  Balance",
        "01/03/2025  Opening balance  £1,000.00",
        "02/03/2025  TESCO  £50.00    £950.00",
        "03/03/2025  SALARY    £2,000.00  £2,950.00",
        "04/03/2025  RENT  £900.00    £2,050.00",
        "05/03/2025  REFUND    £10.00  £2,060.00",
        "31/03/2025  Closing balance  £2,060.00",
      ].join("\n"),
    );
    expect(arithmeticFindings(ok).findings).toEqual([]);
    const broken = textDoc(
      ok.imagePages?.[0]?.text.replace("£2,050.00", "£2,150.00").replace("£2,060.00", "£2,160.00") ?? "",
    );
    const codes = arithmeticFindings(broken).findings.map((f) => f.code);
    expect(codes).toEqual(["running_balance_mismatch", "closing_balance_mismatch"]);
  });

  it("checks quantity × price, subtotal, tax rate and total on a German invoice", () => {
    const lines = [
      "Beschreibung  Menge  Einzelpreis  Betrag",
      "Beratung  3  100,00 €  300,00 €",
      "Lizenz  2  49,50 €  99,00 €",
      "Zwischensumme (netto)  399,00 €",
      "USt. 19 %  75,81 €",
      "Gesamtbetrag (brutto)  474,81 €",
    ];
    expect(arithmeticFindings(textDoc(lines.join("\n"), "DE")).findings).toEqual([]);
    const wrongLine = lines.join("\n").replace("99,00 €", "98,00 €");
    expect(arithmeticFindings(textDoc(wrongLine, "DE")).findings.map((f) => f.code)).toEqual([
      "line_item_mismatch",
      "subtotal_mismatch",
    ]);
    const wrongTax = lines.join("\n").replace("75,81 €", "57,81 €").replace("474,81 €", "456,81 €");
    expect(arithmeticFindings(textDoc(wrongTax, "DE")).findings.map((f) => f.code)).toEqual([
      "tax_amount_mismatch",
    ]);
  });

  it("reads French invoices, payslips and bills: labels, number format, rates per unit", () => {
    const invoice = [
      "Désignation  Quantité  Prix unitaire  Montant",
      "Conseil  3  1 200,00  3 600,00",
      "Licence  2  49,50  99,00",
      "Total HT  3 699,00 €",
      "TVA 20 %  739,80 €",
      "Montant TTC à payer  4 438,80 €",
    ].join("\n");
    const ok = arithmeticFindings(textDoc(invoice, "FR"));
    expect(ok.findings).toEqual([]);
    expect(ok.checked).toBeGreaterThanOrEqual(4);
    const broken = arithmeticFindings(textDoc(invoice.replace("99,00", "199,00"), "FR"));
    expect(broken.findings.map((f) => f.code)).toEqual(["line_item_mismatch", "subtotal_mismatch"]);

    const payslip = [
      "Salaire de base  5 818,00",
      "Heures supplémentaires  6,00  36,00  216,00",
      "Salaire brut  6 034,00 €",
      "Cotisations et retenues",
      "CSG déductible  6,80 %  410,31",
      "Prélèvement à la source  7,50 %  452,55",
      "Total des retenues  862,86 €",
      "Net à payer  5 171,14 €",
    ].join("\n");
    expect(arithmeticFindings(textDoc(payslip, "FR")).findings).toEqual([]);
    const edited = arithmeticFindings(textDoc(payslip.replace("5 818,00", "5 831,00"), "FR"));
    expect(edited.findings.map((f) => f.code)).toEqual(["total_mismatch"]);

    const bill = [
      "Consommation électricité  511 kWh  24,26 ct/kWh  123,97",
      "Abonnement  32 jours  41,00 ct/jour  13,12",
      "Total HT  137,09 €",
      "TVA 20 %  27,42 €",
      "Montant TTC à payer  164,51 €",
    ].join("\n");
    expect(arithmeticFindings(textDoc(bill, "FR")).findings).toEqual([]);
    const charge = arithmeticFindings(textDoc(bill.replace("13,12", "95,12"), "FR"));
    expect(charge.findings.map((f) => f.code)).toEqual(["line_item_mismatch", "subtotal_mismatch"]);
  });

  it("reads real German invoice layouts: rounded unit prices, discounts, tax bases, several rates", () => {
    const doc = [
      "Pfand  20  2,77  55,46",
      "Schweinesteak  5  5,50  27,50",
      "Zwischensumme  82,96",
      "abzgl. Sondernachlass 10%  8,30",
      "Rechnungssumme Netto  74,66",
      "zzgl. Umsatzsteuer 7% von  24,75  1,73",
      "zzgl. Umsatzsteuer 19% von  49,91  9,48",
      "Steuerbasisbetrag USt. 19%  49,91",
      "Transportkosten: Frachtbetrag 19% VAT(S)  15,00",
    ].join("\n");
    // 20 × 2,77 printed 55,46: the unit price is 2,773 rounded; the discount is subtracted; each tax is
    // checked on the base its row prints; the tax base and the line item with a tax column are no taxes.
    const r = arithmeticFindings(textDoc(doc, "DE"));
    expect(r.findings).toEqual([]);
    expect(r.checked).toBeGreaterThanOrEqual(5);
    const wrongTax = arithmeticFindings(textDoc(doc.replace("1,73", "2,73"), "DE"));
    expect(wrongTax.findings.map((f) => [f.code, f.evidence?.rate])).toEqual([["tax_amount_mismatch", "7"]]);
  });

  it("leaves a block unjudged when one of its amounts cannot be read (OCR)", () => {
    const lines = [
      "Tonerkartusche  6  332,00 €  1.992,00 €",
      "Softwarelizenz (jährlich)  8  521,99 €  4.17592 €",
      "Support  2  948,99 €  1.897,98 €",
      "Zwischensumme (netto)  7.865,90 €",
      "USt. 19 %  1.494,52 €",
      "Gesamtbetrag (brutto)  9.360,42 €",
    ].join("\n");
    const r = arithmeticFindings(textDoc(lines, "DE"));
    expect(r.findings).toEqual([]);
    expect(r.verified).toBeGreaterThan(0);
  });

  it("finds an amount due printed twice with different values", () => {
    const lines = [
      "Amount due  £1,250.00",
      "Services  £1,000.00",
      "VAT 20%  £200.00",
      "Total  £1,200.00",
      "Amount due  £1,200.00",
    ].join("\n");
    const r = arithmeticFindings(textDoc(lines));
    expect(r.findings.map((f) => f.code)).toEqual(["total_repeated_mismatch"]);
    expect(r.findings[0]?.message).toMatch(/£1,250.00 on page 1, £1,200.00 on page 1/);
    expect(arithmeticFindings(textDoc(lines.replace("£1,250.00", "£1,200.00"))).findings).toEqual([]);
  });

  it("reads negatives in parentheses and DR/CR in a signed amount column", () => {
    const doc = textDoc(
      [
        "01/03/2025  Opening balance  1,000.00",
        "02/03/2025  CARD  (50.00)  950.00",
        "03/03/2025  TRANSFER  200.00 CR  1,150.00",
        "04/03/2025  FEE  25.00 DR  1,125.00",
        "05/03/2025  CARD  (100.00)  1,125.00",
      ].join("\n"),
      "US",
    );
    const f = arithmeticFindings(doc).findings;
    expect(f.map((x) => x.code)).toEqual(["running_balance_mismatch"]);
    expect(f[0]?.evidence).toMatchObject({ previousBalance: "1,125.00", expectedBalance: "1,025.00" });
  });

  it("does not judge figures it cannot reconcile, and skips documents without sums", async () => {
    const noise = textDoc(
      [
        "01/03/2025  A  1.00  7.00",
        "02/03/2025  B  2.00  19.00",
        "03/03/2025  C  3.00  1.00",
        "04/03/2025  D  4.00  99.00",
      ].join("\n"),
    );
    expect(arithmeticFindings(noise).findings).toEqual([]);
    const contract = await runOn(check, await makeDocument({ seed: 2, docType: "contract", region: "GB" }), {
      docType: "contract",
    });
    expect(contract.outcome).toBe("skip");
    expect((await runOn(check, makePng(1), {})).outcome).toBe("skip");
  });

  it("stays bounded on hostile pages", async () => {
    for (const kind of HOSTILE_TEXT_KINDS) {
      const r = await runOn(check, await makeHostileTextPdf(kind), { docType: "other" });
      expect(["pass", "flag", "skip"], kind).toContain(r.outcome);
      expect(r.summary.length, kind).toBeGreaterThan(20);
    }
  }, 120_000);
});
