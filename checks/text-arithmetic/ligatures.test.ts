import { describe, expect, it } from "vitest";
import type { Finding } from "../../core/check-result.js";
import { grid, layoutDocument } from "../../document/testdata/layout-kit.js";
import { headerRole } from "../../document/tables/vocabulary.js";
import { arithmeticFindings } from "./text-arithmetic.js";

/**
 * Labels set with typographic ligatures ("ﬁ", "ﬂ": what many producers draw for "fi" and "fl") are the
 * words they read as (docs/decisions.md "Labels are matched with their ligatures spelled out"); the figures
 * are never touched.
 */

const R = (x: number) => ({ x, align: "right" as const });
const only = (f: Finding[], code: string) => f.filter((x) => x.code === code);

describe("text.arithmetic: labels with ligatures", () => {
  // A French payslip: its taxable pay ("Net ﬁscal") printed between the deductions, no term of them.
  const slip = (csg: string) =>
    layoutDocument(
      [
        grid(
          [{ x: 50 }, R(545)],
          [
            ["Rubrique", "Montant"],
            ["Salaire de base", "3 000,00"],
            ["Salaire brut", "3 000,00"],
            ["CSG déductible", csg],
            ["Cotisations retraite", "300,00"],
            ["Net \uFB01scal", "2 500,00"],
            ["Impôt sur le revenu", "150,00"],
            ["Total des retenues", "650,00"],
            ["Net à payer", "2 350,00"],
          ],
          760,
        ),
      ],
      { docType: "payslip", region: "FR" },
    );

  it("a genuine payslip whose taxable pay is labelled with a ligature: no mismatch (before: its taxable pay was a deduction)", () => {
    expect(arithmeticFindings(slip("200,00")).findings).toEqual([]);
  });

  it("the same payslip with a deduction edited: proof", () => {
    const f = only(arithmeticFindings(slip("260,00")).findings, "total_mismatch");
    expect(f).toHaveLength(1);
    expect(f[0]?.evidence?.after).toBe("650,00");
    expect(f[0]?.severity).toBe(9);
  });

  it("a header with a ligature names its column", () => {
    expect(headerRole("Steuerp\uFB02ichtiger Betrag")).toBe(headerRole("Steuerpflichtiger Betrag"));
    expect(headerRole("Steuerp\uFB02ichtiger Betrag")).toBeDefined();
  });

  // A statement whose closing balance is labelled "ﬁnal balance" under the ledger.
  const statement = (closing: string) =>
    layoutDocument([
      [
        ...grid(
          [{ x: 50 }, { x: 110 }, R(400), R(470), R(545)],
          [
            ["Date", "Description", "Paid out", "Paid in", "Balance"],
            ["01/10", "Opening balance", undefined, undefined, "1,000.00"],
            ["02/10", "Grocer", "45.20", undefined, "954.80"],
            ["03/10", "Salary", undefined, "2,500.00", "3,454.80"],
            ["04/10", "Rent", "1,200.00", undefined, "2,254.80"],
          ],
          700,
        ),
        ...grid([{ x: 50 }, R(545)], [["\uFB01nal balance", closing]], 600),
      ],
    ]);

  it("an edited closing balance labelled with a ligature is read as the closing balance: proof", () => {
    expect(arithmeticFindings(statement("2,254.80")).findings).toEqual([]);
    const f = arithmeticFindings(statement("2,854.80")).findings;
    expect(f.some((x) => (x.severity ?? 0) >= 8)).toBe(true);
  });
});
