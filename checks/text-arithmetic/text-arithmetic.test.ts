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
