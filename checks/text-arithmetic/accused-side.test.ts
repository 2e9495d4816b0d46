import { describe, expect, it } from "vitest";
import type { Finding } from "../../core/check-result.js";
import { grid, layoutDocument, rightRun } from "../../document/testdata/layout-kit.js";
import { formatCents } from "../../document/values/amounts.js";
import { arithmeticFindings } from "./text-arithmetic.js";

/**
 * Support comes from the side a mismatch accuses (docs/decisions.md "Support comes from the side the
 * mismatch accuses"). A total that takes a subtotal's figure among its terms (total = subtotal + tax), a tax
 * on it, the change tendered on it: these confirm the figure printed, not the reading of the rows the
 * subtotal is said not to add up to. A balance alone out of line with the rows around it is how a misread
 * balance reads. A tax is proof only on a base a relation of its own confirms, with the rounding of a tax
 * computed per line allowed. Each rule: a genuine page whose reading misleads is no proof; an edited page
 * still is.
 */

const R = (x: number) => ({ x, align: "right" as const });
const fmt = (cents: number) => formatCents(cents, "dot_decimal");
const only = (f: Finding[], code: string) => f.filter((x) => x.code === code);
const maxSeverity = (f: Finding[]) => Math.max(0, ...f.map((x) => x.severity ?? 0));

describe("text.arithmetic: support from the side the mismatch accuses", () => {
  // A genuine invoice whose loyalty credit is subtracted without a minus sign or a label the vocabulary
  // knows, and whose VAT is charged on the items before the credit (its base printed beside it). Read as
  // printed, the lines do not add up to the subtotal; yet total = subtotal + VAT holds, taking its figure.
  const credited = layoutDocument(
    [
      grid(
        [{ x: 50 }, R(545)],
        [
          ["Description", "Amount"],
          ["Widget", "500.00"],
          ["Gadget", "300.00"],
          ["Loyalty credit", "50.00"],
          ["Subtotal", "750.00"],
          ["VAT 20% on 800.00", "160.00"],
          ["Total", "910.00"],
        ],
        720,
      ),
    ],
    { docType: "invoice", region: "GB" },
  );

  it("a subtotal over lines nothing confirms, whose figure a total over it takes: an anomaly, not proof", () => {
    const f = arithmeticFindings(credited).findings;
    const sub = only(f, "subtotal_mismatch");
    expect(sub).toHaveLength(1);
    // Before: 9 (total = subtotal + VAT held, and counted as support).
    expect(sub[0]?.severity).toBe(4);
    expect(sub[0]?.evidence?.blockSupport).toBe(0);
  });

  it("a tax on a base no relation of its own confirms: an anomaly, not proof", () => {
    // The base printed beside the tax misread (800.00 read, the lines' 750.00 meant, say): 20 % of it is
    // not the tax, and nothing adds up to 800.00.
    const doc = layoutDocument(
      [
        grid(
          [{ x: 50 }, R(545)],
          [
            ["Description", "Amount"],
            ["Widget", "500.00"],
            ["Gadget", "250.00"],
            ["Subtotal", "750.00"],
            ["VAT 20% on 800.00", "150.00"],
            ["Total", "900.00"],
          ],
          720,
        ),
      ],
      { docType: "invoice", region: "GB" },
    );
    const tax = only(arithmeticFindings(doc).findings, "tax_amount_mismatch");
    expect(tax).toHaveLength(1);
    // Before: 8 (the total over subtotal and VAT took the tax's figure).
    expect(tax[0]?.severity).toBe(4);
    expect(maxSeverity(arithmeticFindings(doc).findings)).toBeLessThan(8);
    expect(maxSeverity(arithmeticFindings(credited).findings)).toBeLessThan(8);
  });

  // A receipt's lines without quantity × price, its total taken by the tax included in it.
  const receipt = (coffee: string, coffeeX = 545) =>
    layoutDocument(
      [
        [
          ...grid(
            [{ x: 50 }, R(545)],
            [
              ["Description", "Amount"],
              ["Bread", "10.20"],
              ["Cheese", "42.56"],
              ["Coffee", undefined],
              ["Total incl. VAT", "69.77"],
              ["incl. VAT 21%", "12.11"],
            ],
            700,
          ),
          rightRun(coffee, coffeeX, 658),
        ],
      ],
      { docType: "receipt" },
    );

  it("an edited line among lines read without doubt, the total taken by the tax in it: proof", () => {
    expect(arithmeticFindings(receipt("17.01")).findings).toEqual([]);
    const f = only(arithmeticFindings(receipt("27.01")).findings, "total_mismatch");
    expect(f[0]?.severity).toBe(9);
  });

  it("the same lines with one amount off its column's edge (a figure of another column read as the amount): an anomaly", () => {
    const f = only(arithmeticFindings(receipt("27.01", 500)).findings, "total_mismatch");
    expect(f).toHaveLength(1);
    expect(f[0]?.severity).toBe(4);
  });

  it("an amount whose thousands are a run set apart (read as 250.00, not 1,250.00): a whole thousand off is a reading doubt", () => {
    const doc = layoutDocument(
      [
        [
          ...grid(
            [{ x: 50 }, R(545)],
            [
              ["Description", "Amount"],
              ["Monitor", "310.40"],
              ["Laptop", undefined],
              ["Cable", "12.99"],
              ["Subtotal", "1,573.39"],
              ["VAT 20%", "314.68"],
              ["Total", "1,888.07"],
            ],
            700,
          ),
          rightRun("250.00", 545, 672),
          rightRun("1,", 503, 672),
        ],
      ],
      { docType: "invoice", region: "GB" },
    );
    const f = only(arithmeticFindings(doc).findings, "subtotal_mismatch");
    expect(f).toHaveLength(1);
    // Before: 9 (the VAT on the subtotal and the total over both took the subtotal's figure).
    expect(f[0]?.severity).toBe(4);
  });

  // One table of two sections: labour and materials, each with its subtotal, and the total over both.
  const sections = (paint: string, vat = "286.00") =>
    layoutDocument(
      [
        grid(
          [{ x: 50 }, R(545)],
          [
            ["Description", "Amount"],
            ["Labour"],
            ["Design", "400.00"],
            ["Build", "600.00"],
            ["Subtotal labour", "1,000.00"],
            ["Materials"],
            ["Timber", "250.00"],
            ["Paint", paint],
            ["Subtotal materials", "330.00"],
            ["Total net", "1,330.00"],
            ["VAT 20% on 1,330.00", vat],
            ["Total", "1,596.00"],
          ],
          760,
        ),
      ],
      { docType: "invoice", region: "GB" },
    );

  it("an edited line where another section of the same column adds up: proof", () => {
    expect(arithmeticFindings(sections("80.00", "266.00")).findings).toEqual([]);
    const f = only(arithmeticFindings(sections("180.00", "266.00")).findings, "subtotal_mismatch");
    expect(f).toHaveLength(1);
    expect(f[0]?.evidence?.after).toBe("330.00");
    expect(f[0]?.severity).toBe(9);
    expect(f[0]?.evidence?.blockSupport).toBeGreaterThanOrEqual(1);
  });

  it("an edited tax on a base whose lines add up: proof", () => {
    const f = only(arithmeticFindings(sections("80.00", "286.00")).findings, "tax_amount_mismatch");
    expect(f).toHaveLength(1);
    expect(f[0]?.severity).toBe(8);
  });

  // VAT computed on each line and rounded there, then added: 3 cents off 20 % of the total of 8 lines (its
  // base printed beside it, so the tax is judged on a confident reading).
  const lines = [1002, 2002, 507, 752, 302, 407, 602, 807];
  const perLine = (vat: string) =>
    layoutDocument(
      [
        grid(
          [{ x: 50 }, R(545)],
          [
            ["Description", "Amount"],
            ...lines.map((c, i) => [`Item ${i + 1}`, fmt(c)]),
            ["Subtotal", fmt(lines.reduce((a, c) => a + c, 0))],
            [`VAT 20% on ${fmt(lines.reduce((a, c) => a + c, 0))}`, vat],
            ["Total", fmt(lines.reduce((a, c) => a + c, 0) + 1273)],
          ],
          760,
        ),
      ],
      { docType: "invoice", region: "GB" },
    );

  it("a tax rounded on each line: no mismatch (before: a tax mismatch, proof)", () => {
    const vat = lines.reduce((a, c) => a + Math.round(c * 0.2), 0);
    expect(vat).toBe(1273);
    expect(arithmeticFindings(perLine(fmt(vat))).findings).toEqual([]);
  });

  it("the same tax edited: proof", () => {
    const f = only(arithmeticFindings(perLine("14.73")).findings, "tax_amount_mismatch");
    expect(f).toHaveLength(1);
    expect(f[0]?.severity).toBe(8);
  });

  // The same lines in a table with their net total, the VAT in a breakdown by rate under it (a 5 % row on
  // other goods).
  const breakdown = (vat20: string, base20 = fmt(lines.reduce((a, c) => a + c, 0))) =>
    layoutDocument(
      [
        [
          ...grid(
            [{ x: 50 }, R(545)],
            [
              ["Description", "Amount"],
              ...lines.map((c, i) => [`Item ${i + 1}`, fmt(c)]),
              ["Books", "100.00"],
              ["Net total", fmt(lines.reduce((a, c) => a + c, 0) + 10000)],
            ],
            780,
          ),
          ...grid(
            [{ x: 50 }, R(300), R(545)],
            [
              ["VAT rate", "VAT base", "VAT amount"],
              ["5%", "100.00", "5.00"],
              ["20%", base20, vat20],
            ],
            600,
          ),
        ],
      ],
      { docType: "invoice", region: "GB" },
    );

  it("a tax breakdown whose tax was rounded on each line: no mismatch (before: a tax mismatch, proof)", () => {
    expect(only(arithmeticFindings(breakdown("12.73")).findings, "tax_amount_mismatch")).toEqual([]);
  });

  it("a breakdown whose base is read wrong (the bases add up to no amount printed): its tax is an anomaly", () => {
    // 20 % of 93.81 is 18.76; the tax printed is 14.73 (and the net total 163.81, not 193.81).
    const f = only(arithmeticFindings(breakdown("14.73", "93.81")).findings, "tax_amount_mismatch");
    expect(f).toHaveLength(1);
    // Before: 8 (the 5 % row held).
    expect(f[0]?.severity).toBe(4);
  });

  it("the same breakdown with a tax edited: proof", () => {
    const f = only(arithmeticFindings(breakdown("14.73")).findings, "tax_amount_mismatch");
    expect(f).toHaveLength(1);
    expect(f[0]?.severity).toBe(8);
  });

  // A statement whose balances chain; `balance` replaces one row's balance, `amount` one row's amount.
  const moves = [-4520, 250000, -12999, -899, -6050, 1250];
  const statement = (edit: { row: number; balance?: string; amount?: string }) => {
    let b = 100000;
    const rows = moves.map((m, i) => {
      b += m;
      const amount = edit.row === i && edit.amount ? edit.amount : fmt(Math.abs(m));
      return [
        `0${i + 1}/03/2025`,
        `ITEM ${i}`,
        m < 0 ? amount : undefined,
        m > 0 ? amount : undefined,
        edit.row === i && edit.balance ? edit.balance : fmt(b),
      ];
    });
    return layoutDocument([
      grid(
        [{ x: 50 }, { x: 110 }, R(400), R(470), R(545)],
        [["Date", "Description", "Paid out", "Paid in", "Balance"], ...rows],
        700,
      ),
    ]);
  };

  it("one balance out of line, the next row following from the balance expected: a reading doubt, not proof", () => {
    // Row 2's balance is 1,324.81 - 129.99 = 1,194.82 (printed 1,149.82, as a misread or a sign missed
    // would read); row 3 follows from 1,194.82.
    const f = only(
      arithmeticFindings(statement({ row: 2, balance: "1,149.82" })).findings,
      "running_balance_mismatch",
    );
    expect(f).toHaveLength(1);
    expect(f[0]?.evidence?.changed).toBe("balance");
    // Before: 9 ("the balance printed is the figure out of line").
    expect(f[0]?.severity).toBe(4);
    expect(f[0]?.message).toMatch(/anomaly, not proof/);
  });

  it("a line printed but not booked (the balance does not move by its amount): a reading doubt, not proof", () => {
    // Row 2 is a pending card payment: its amount is printed, its balance repeats the one before, and the
    // rows after it never took it.
    let b = 100000;
    const rows = moves.map((m, i) => {
      if (i !== 2) b += m;
      return [
        `0${i + 1}/03/2025`,
        i === 2 ? "CARD PAYMENT (PENDING)" : `ITEM ${i}`,
        m < 0 ? fmt(-m) : undefined,
        m > 0 ? fmt(m) : undefined,
        fmt(b),
      ];
    });
    const doc = layoutDocument([
      grid(
        [{ x: 50 }, { x: 110 }, R(400), R(470), R(545)],
        [["Date", "Description", "Paid out", "Paid in", "Balance"], ...rows],
        700,
      ),
    ]);
    const f = only(arithmeticFindings(doc).findings, "running_balance_mismatch");
    expect(f).toHaveLength(1);
    expect(f[0]?.evidence?.changed).toBe("amount");
    // Before: 9 ("the amount 129.99 is the figure out of line").
    expect(f[0]?.severity).toBe(4);
  });

  it("an edited amount whose row breaks the chain and the next row holds: still proof", () => {
    const f = only(
      arithmeticFindings(statement({ row: 2, amount: "192.99" })).findings,
      "running_balance_mismatch",
    );
    expect(f).toHaveLength(1);
    expect(f[0]?.evidence?.changed).toBe("amount");
    expect(f[0]?.severity).toBe(9);
  });
});
