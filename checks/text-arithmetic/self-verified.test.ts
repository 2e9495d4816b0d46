import { describe, expect, it } from "vitest";
import type { Finding } from "../../core/check-result.js";
import { grid, layoutDocument } from "../../document/testdata/layout-kit.js";
import { formatCents } from "../../document/values/amounts.js";
import { arithmeticFindings } from "./text-arithmetic.js";

/**
 * A mismatch is proof only on a reading that verified itself (docs/decisions.md "A mismatch is proof only
 * on a reading that verified itself"): the same table or block shows another relation that holds under the
 * same reading. Otherwise it is an anomaly (4), which the score combines only with an independent finding
 * about the same value. Each case: a genuine page whose figures are read under a convention the reader
 * does not know (nothing of its own block verifies the reading) is no proof; an edited page whose own block
 * verifies the reading still is.
 */

const R = (x: number) => ({ x, align: "right" as const });
const fmt = (cents: number) => formatCents(cents, "dot_decimal");
const only = (f: Finding[], code: string) => f.filter((x) => x.code === code);

describe("text.arithmetic: proof needs a reading that verified itself", () => {
  // An invoice whose lines hold (quantity × price), and under its own heading a payment plan whose total
  // includes a fee the plan does not print: a convention the reader does not know. The invoice's relations
  // verify the invoice's table, not the plan's rows.
  const withPlan = (total: string) =>
    layoutDocument(
      [
        [
          ...grid(
            [{ x: 50 }, R(300), R(400), R(545)],
            [
              ["Description", "Qty", "Unit price", "Amount"],
              ["Widget", "10", "20.00", "200.00"],
              ["Gadget", "5", "60.00", "300.00"],
              [undefined, undefined, "Total", "500.00"],
            ],
            760,
          ),
          ...grid(
            [{ x: 50 }, R(545)],
            [
              ["Payment plan", "Amount"],
              ["Instalment 1", "400.00"],
              ["Instalment 2", "400.00"],
              ["Instalment 3", "400.00"],
              ["Total payable", total],
            ],
            600,
          ),
        ],
      ],
      { docType: "invoice", region: "GB" },
    );

  it("a genuine total misread (a fee it includes is not printed) in a block no relation of which holds: an anomaly, though the invoice above checks", () => {
    expect(arithmeticFindings(withPlan("1,200.00")).findings).toEqual([]);
    const r = arithmeticFindings(withPlan("1,236.00"));
    // The invoice's table checks (its products and its total): the document's figures add up elsewhere.
    expect(r.verified).toBeGreaterThanOrEqual(2);
    const total = only(r.findings, "total_mismatch");
    expect(total).toHaveLength(1);
    // Before: 9 (any relation of the document that held counted as support).
    expect(total[0]?.severity).toBe(4);
    expect(total[0]?.evidence?.readingConfidence).toBeGreaterThanOrEqual(0.75);
    expect(total[0]?.evidence?.blockSupport).toBe(0);
    expect(total[0]?.message).toMatch(/anomaly, not proof/);
    expect(r.findings.every((x) => (x.severity ?? 0) < 8)).toBe(true);
  });

  it("the same plan edited where another total of its block checks: proof", () => {
    // The total edited: the instalments' own subtotal and the tax on it hold (they are the total's terms),
    // the total over them does not.
    const doc = (total: string) =>
      layoutDocument(
        [
          grid(
            [{ x: 50 }, R(545)],
            [
              ["Payment plan", "Amount"],
              ["Instalment 1", "400.00"],
              ["Instalment 2", "400.00"],
              ["Subtotal", "800.00"],
              ["VAT 20%", "160.00"],
              ["Interest", "36.00"],
              ["Total payable", total],
            ],
            760,
          ),
        ],
        { docType: "invoice", region: "GB" },
      );
    expect(arithmeticFindings(doc("996.00")).findings).toEqual([]);
    const f = only(arithmeticFindings(doc("969.00")).findings, "total_mismatch");
    expect(f[0]?.severity).toBeGreaterThanOrEqual(8);
    expect(f[0]?.evidence?.blockSupport).toBeGreaterThanOrEqual(1);
  });

  // An invoice whose lines print quantity × unit price: the products verify the reading of the lines.
  const invoice = (widget: string, subtotal = "700.00") =>
    layoutDocument(
      [
        grid(
          [{ x: 50 }, R(300), R(400), R(545)],
          [
            ["Description", "Qty", "Unit price", "Amount"],
            ["Widget", "10", "20.00", widget],
            ["Gadget", "5", "60.00", "300.00"],
            ["Bracket", "4", "50.00", "200.00"],
            [undefined, undefined, "Subtotal", subtotal],
            [undefined, undefined, "VAT 20%", "140.00"],
            [undefined, undefined, "Total", "840.00"],
          ],
          700,
        ),
      ],
      { docType: "invoice", region: "GB" },
    );

  it("an edited line on an invoice whose other products hold: the subtotal and the line are proof", () => {
    expect(arithmeticFindings(invoice("200.00")).findings).toEqual([]);
    const f = arithmeticFindings(invoice("290.00")).findings;
    const line = only(f, "line_item_mismatch")[0];
    const sub = only(f, "subtotal_mismatch")[0];
    expect(line?.severity).toBeGreaterThanOrEqual(8);
    expect(sub?.severity).toBeGreaterThanOrEqual(8);
    expect(sub?.evidence?.blockSupport).toBeGreaterThanOrEqual(1);
    expect(sub?.evidence?.after).toBe("700.00");
  });

  it("an edited subtotal over lines whose products hold: proof", () => {
    const f = arithmeticFindings(invoice("200.00", "760.00")).findings;
    const sub = only(f, "subtotal_mismatch")[0];
    expect(sub?.severity).toBeGreaterThanOrEqual(8);
    expect(sub?.evidence?.after).toBe("760.00");
  });

  // A statement; `last` replaces the last row's balance.
  const moves = [-4520, 250000, -12999, -899, -6050, 1250];
  const statement = (opts: {
    last?: string;
    closing?: boolean;
    endRow?: boolean;
    edit?: { row: number; text: string };
  }) => {
    let b = 100000;
    const rows = moves.map((m, i) => {
      b += m;
      const amount = opts.edit?.row === i ? opts.edit.text : fmt(Math.abs(m));
      return [
        `0${i + 1}/03/2025`,
        `ITEM ${i}`,
        m < 0 ? amount : undefined,
        m > 0 ? amount : undefined,
        i === moves.length - 1 && opts.last ? opts.last : fmt(b),
      ];
    });
    return layoutDocument([
      [
        ...grid(
          [{ x: 50 }, { x: 110 }, R(400), R(470), R(545)],
          [
            ["Date", "Description", "Paid out", "Paid in", "Balance"],
            ...rows,
            // A dated row that repeats the balance under a label the vocabulary does not know.
            ...(opts.endRow ? [["31/03/2025", "Period end", undefined, undefined, fmt(b)]] : []),
          ],
          700,
        ),
        ...(opts.closing ? grid([{ x: 50 }, R(545)], [["Closing balance", fmt(b)]], 560) : []),
      ],
    ]);
  };

  it("a break in the last row of a ledger that nothing after it resolves: an anomaly", () => {
    expect(arithmeticFindings(statement({})).findings).toEqual([]);
    // The last balance off by 10.00, no closing balance printed: the row's amount or its balance, or a
    // convention (a pending hold in the last balance) — the chain cannot say.
    const f = only(arithmeticFindings(statement({ last: "3,287.82" })).findings, "running_balance_mismatch");
    expect(f).toHaveLength(1);
    expect(f[0]?.severity).toBe(4);
  });

  it("the same break with a closing balance printed under the table that confirms the balance: proof at the amount", () => {
    // The last row's amount edited (12.50 → 22.50); the closing balance printed below agrees with the row's
    // balance, so the amount is the figure out of line.
    const f = only(
      arithmeticFindings(statement({ closing: true, edit: { row: 5, text: "22.50" } })).findings,
      "running_balance_mismatch",
    );
    expect(f).toHaveLength(1);
    expect(f[0]?.severity).toBe(9);
  });

  it("the same edit with a row after it that repeats the balance (a closing row under an unknown label): proof", () => {
    const f = only(
      arithmeticFindings(statement({ endRow: true, edit: { row: 5, text: "22.50" } })).findings,
      "running_balance_mismatch",
    );
    expect(f).toHaveLength(1);
    expect(f[0]?.severity).toBe(9);
    expect(f[0]?.evidence?.after).toBe("22.50");
  });

  it("a break in the middle of a ledger whose balances chain before and after it: proof", () => {
    const f = arithmeticFindings(statement({ edit: { row: 2, text: "192.99" } })).findings;
    expect(only(f, "running_balance_mismatch")[0]?.severity).toBe(9);
  });
  // A summary box whose figures do not add up (opening + in − out ≠ closing), above a ledger that chains.
  const boxed = (box: [string, string, string, string]) =>
    layoutDocument([
      [
        ...grid(
          [{ x: 50 }, R(545)],
          [
            ["Opening balance", box[0]],
            ["Total paid in", box[1]],
            ["Total paid out", box[2]],
            ["Closing balance", box[3]],
          ],
          790,
        ),
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
      ],
    ]);

  it("a summary box none of whose figures ties to the ledger (another account's box, a pocket): its mismatch is an anomaly", () => {
    // The ledger chains; the box is some other account's (its opening, totals and closing are not the
    // ledger's) and prints a difference of 25.00 (interest, say, on a line the reader did not see).
    const f = only(
      arithmeticFindings(boxed(["5,000.00", "300.00", "0.00", "5,325.00"])).findings,
      "statement_summary_mismatch",
    );
    expect(f).toHaveLength(1);
    // Before: 9 (the ledger's relations elsewhere on the page counted as support).
    expect(f[0]?.severity).toBe(4);
  });

  it("a summary box tied to the ledger by its opening and totals, its closing edited: proof", () => {
    const f = arithmeticFindings(boxed(["1,000.00", "2,500.00", "1,245.20", "2,354.80"])).findings;
    const s = only(f, "statement_summary_mismatch")[0];
    expect(s?.severity).toBe(9);
    expect(s?.evidence?.blockSupport).toBeGreaterThanOrEqual(2);
  });
});
