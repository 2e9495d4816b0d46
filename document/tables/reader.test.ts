import { describe, expect, it } from "vitest";
import type { TextRun } from "../page-layout.js";
import { grid, layoutPage, run, rightRun } from "../testdata/layout-kit.js";
import { inferNumberStyle } from "../values/amounts.js";
import { parseDayMonth } from "../values/dates.js";
import { debitLetterMarked, figureOf, readCells } from "./cells.js";
import { linesOf } from "./lines.js";
import { ocrWordsPage, pdfRunsPage, plainTextPage, tablePageOf } from "./pieces.js";
import { CONFIDENT, readingConfidence, readTables } from "./reader.js";
import { headerRole, LABELS } from "./vocabulary.js";

const pdf = (n: number, runs: TextRun[]) => pdfRunsPage(n, layoutPage(n, runs).layout?.runs ?? []);
const R = (x: number) => ({ x, align: "right" as const });
const roles = (t: { columns: { role: string }[] } | undefined) => t?.columns.map((c) => c.role);
/** The roles of `pairs` header pairs of words for money going out and coming in, in that order. */
const debitCredit = (pairs: number) => Array.from({ length: pairs }, () => ["debit", "credit"]).flat();

describe("document/tables: reading tables from positioned text", () => {
  it("rows by baseline: pieces out of order, a smaller currency mark, a baseline a little off", () => {
    const runs = [
      rightRun("1,234.56", 545, 700),
      run("Rent", 110, 700.8),
      run("£", 480, 701, { size: 7 }),
      run("01/03/2025", 50, 699.6),
      run("Salary", 110, 686),
    ];
    const lines = linesOf(pdf(1, runs));
    expect(lines.map((l) => l.cells.map((c) => c.text))).toEqual([
      ["01/03/2025", "Rent", "£ 1,234.56"],
      ["Salary"],
    ]);
  });

  it("rows of OCR words: boxes of one band share a line, whatever their heights", () => {
    const page = ocrWordsPage(1, [
      { text: "Total", bbox: [100, 500, 180, 528], confidence: 91 },
      { text: "due", bbox: [190, 504, 240, 526], confidence: 88 },
      { text: "1,250.00", bbox: [900, 502, 1020, 530], confidence: 0.95 },
      { text: "Thank", bbox: [100, 560, 190, 588], confidence: 0.9 },
    ]);
    const lines = linesOf(page);
    expect(lines.map((l) => l.cells.map((c) => c.text))).toEqual([["Total due", "1,250.00"], ["Thank"]]);
    // Pixels grow downwards: the first line read is the top one, and confidences are 0-1.
    expect(lines[0]?.cells[0]?.confidence).toBe(0.88);
  });

  it("an OCR'd page of the document model: its words read top down, with their confidence", () => {
    // document/ocr.ts keeps an image document's words in pixels (y down, layout.units "px") with a
    // confidence 0-100: read as PDF runs, its rows came out bottom up and no balance followed another.
    const word = (text: string, x: number, y: number, confidence: number): TextRun => ({
      ...run(text, x, y),
      bbox: [x, y - 24, x + 10 * text.length, y],
      y,
      size: 24,
      confidence,
    });
    const page = tablePageOf({
      number: 1,
      text: "",
      layout: {
        ...layoutPage(1, []).layout!,
        units: "px",
        runs: [word("First", 100, 500, 93), word("Second", 100, 560, 61)],
      },
    } as unknown as Parameters<typeof tablePageOf>[0]);
    expect(page).toMatchObject({ origin: "top_left", source: "ocr_words" });
    const lines = linesOf(page);
    expect(lines.map((l) => l.cells.map((c) => c.text))).toEqual([["First"], ["Second"]]);
    expect(lines[1]?.cells[0]?.confidence).toBe(0.61);
  });

  it("columns by alignment: right-aligned figures of any width line up on their right edge without a header", () => {
    const runs = grid(
      [{ x: 50 }, { x: 110 }, { x: 400, align: "right" }, { x: 545, align: "right" }],
      [
        ["01/03/2025", "A", "5.00", "995.00"],
        ["02/03/2025", "B", "1,250.00", "2,245.00"],
        ["03/03/2025", "C", "12.30", "2,232.70"],
        ["04/03/2025", "D", "100.00", "2,132.70"],
      ],
      700,
    );
    const r = readTables([pdf(1, runs)], { region: "GB" });
    expect(r.tables).toHaveLength(1);
    const t = r.tables[0];
    expect(t?.columns.map((c) => [c.role, Math.round(c.anchor), c.align])).toEqual([
      ["unknown", 400, "right"],
      ["unknown", 545, "right"],
    ]);
    expect(t?.structure.header).toBe(0.4);
    expect(t?.structure.columns).toBe(1);
  });

  it("header words in six languages name column roles; a header on two lines is read by column", () => {
    const words: Record<string, string[]> = {
      en: ["Date", "Description", "Qty", "Unit price", "VAT %", "Amount", "Balance"],
      de: ["Datum", "Bezeichnung", "Menge", "Einzelpreis", "MwSt %", "Betrag", "Saldo"],
      fr: ["Date", "Désignation", "Qté", "Prix unitaire", "TVA %", "Montant", "Solde"],
      nl: ["Datum", "Omschrijving", "Aantal", "Stukprijs", "BTW %", "Bedrag", "Saldo"],
      es: ["Fecha", "Descripción", "Cantidad", "Precio unitario", "IVA %", "Importe", "Saldo"],
      it: ["Data", "Descrizione", "Quantità", "Prezzo unitario", "IVA %", "Importo", "Saldo"],
    };
    for (const [lang, list] of Object.entries(words))
      expect(list.map(headerRole), lang).toEqual([
        "date",
        "description",
        "quantity",
        "unit_price",
        "tax_rate",
        "amount",
        "balance",
      ]);
    expect(
      [
        "Paid out",
        "Money in",
        "Soll",
        "Haben",
        "Débit",
        "Crédit",
        "Af",
        "Bij",
        "Cargo",
        "Abono",
        "Dare",
        "Avere",
      ].map(headerRole),
    ).toEqual(debitCredit(6));
    // "Som" (Dutch) names the amounts like "Somme" and "Sum": a payslip's deductions table under its own header.
    expect(headerRole("Som")).toBe("amount");
    // "Aant. Eenheid" (quantity and unit in one Dutch header cell), its cells "8 st.", "7,75 stuk", "1,25 mnd".
    expect(headerRole("Aant. Eenheid")).toBe("quantity");
    const at = { box: [0, 0, 10, 10] as [number, number, number, number], page: 1, confidence: 1 };
    expect(["8 st.", "7,75 stuk", "1,25 mnd"].map((t) => figureOf(t, "comma_decimal", at)?.value)).toEqual([
      8, 7.75, 1.25,
    ]);
    // Money going out and coming in, by their words for movements ("Sorties | Entrées", "Salidas | Entradas").
    expect(["Sorties", "Entrées", "Salidas", "Entradas", "Uitgaven", "Ontvangsten"].map(headerRole)).toEqual(
      debitCredit(3),
    );
    expect(["Amount (€)", "Betrag in EUR", "Total HT", "Year to date", "Base TVA"].map(headerRole)).toEqual([
      "amount",
      "amount",
      "line_total",
      "ytd",
      "tax_base",
    ]);
    // "Unit" over "price", "Paid" over "out": one header on two lines.
    const cols = [
      { x: 50 },
      { x: 350, align: "right" as const },
      { x: 450, align: "right" as const },
      { x: 545, align: "right" as const },
    ];
    const runs = [
      ...grid(cols, [[undefined, undefined, "Unit", "Line"]], 714),
      ...grid(
        cols,
        [
          ["Item", "Qty", "price", "total"],
          ["Widget", "2", "10.00", "20.00"],
          ["Gadget", "1", "5.00", "5.00"],
        ],
        700,
      ),
    ];
    const t = readTables([pdf(1, runs)], { region: "GB" }).tables[0];
    expect(roles(t)).toEqual(["description", "quantity", "unit_price", "line_total"]);
    expect(t?.rows.map((r) => r.figures.map((f) => f?.text))).toEqual([
      [undefined, "2", "10.00", "20.00"],
      [undefined, "1", "5.00", "5.00"],
    ]);
  });

  it("words between rows continue the row above; a date line before its figures starts the row below", () => {
    const cols = [
      { x: 50 },
      { x: 110 },
      { x: 400, align: "right" as const },
      { x: 545, align: "right" as const },
    ];
    const runs = grid(
      cols,
      [
        ["Date", "Details", "Amount", "Balance"],
        ["01/03/2025", "CARD PAYMENT", "-5.00", "995.00"],
        [undefined, "COFFEE SHOP LONDON"],
        ["02/03/2025", "TRANSFER FROM"],
        [undefined, "J SMITH", "250.00", "1,245.00"],
        ["03/03/2025", "FEE", "-1.00", "1,244.00"],
      ],
      700,
    );
    const t = readTables([pdf(1, runs)], { region: "GB" }).tables[0];
    expect(t?.rows.map((r) => [r.date, r.description])).toEqual([
      ["01/03/2025", "CARD PAYMENT COFFEE SHOP LONDON"],
      ["02/03/2025", "TRANSFER FROM J SMITH"],
      ["03/03/2025", "FEE"],
    ]);
  });

  // A statement's columns and its first page (the header and two rows), continued by the tables below.
  const ledgerColumns = [{ x: 50 }, { x: 110 }, R(400), R(470), R(545)];
  const ledgerFirstPage = () =>
    grid(
      ledgerColumns,
      [
        ["Date", "Description", "Debit", "Credit", "Balance"],
        ["01/03/2025", "A", "5.00", undefined, "995.00"],
        ["02/03/2025", "B", undefined, "5.00", "1,000.00"],
      ],
      700,
    );

  it("a table goes on at the top of the next page without its header; its columns carry over", () => {
    const cols = ledgerColumns;
    const p1 = ledgerFirstPage();
    const p2 = [
      run("Statement, page 2", 50, 800),
      ...grid(
        cols,
        [
          ["03/03/2025", "C", undefined, "10.00", "1,010.00"],
          ["04/03/2025", "D", "1.00", undefined, "1,009.00"],
        ],
        760,
      ),
    ];
    const r = readTables([pdf(1, p1), pdf(2, p2)], { region: "GB" });
    expect(r.tables).toHaveLength(1);
    expect(r.tables[0]?.pages).toEqual([1, 2]);
    expect(r.tables[0]?.rows.map((row) => row.figures.map((f) => f?.text))).toEqual([
      [undefined, undefined, "5.00", undefined, "995.00"],
      [undefined, undefined, undefined, "5.00", "1,000.00"],
      [undefined, undefined, undefined, "10.00", "1,010.00"],
      [undefined, undefined, "1.00", undefined, "1,009.00"],
    ]);
  });

  it("a third page joins the table when the second page's rows all went into it at its top", () => {
    // Page 2 continues the table line by line (no table of its own); page 3's first row is a little off its
    // columns (a scan's jitter), so it starts a table of its own, whose columns still line up with the
    // ledger's: it joins the ledger rather than starting a new one (one three-page statement, one ledger).
    const cols = ledgerColumns;
    const p1 = ledgerFirstPage();
    const p2 = grid(cols, [["03/03/2025", "C", undefined, "10.00", "1,010.00"]], 760);
    const off = cols.map((c, i) => (i === 2 ? { ...c, x: c.x - 6 } : c));
    const p3 = [
      ...grid(off, [["04/03/2025", "D", "1.00", undefined, "1,009.00"]], 760),
      ...grid(
        cols,
        [
          ["05/03/2025", "E", "2.00", undefined, "1,007.00"],
          ["06/03/2025", "F", "3.00", undefined, "1,004.00"],
        ],
        746,
      ),
    ];
    const r = readTables([pdf(1, p1), pdf(2, p2), pdf(3, p3)], { region: "GB" });
    expect(r.tables).toHaveLength(1);
    expect(r.tables[0]?.pages).toEqual([1, 2, 3]);
    expect(r.tables[0]?.rows.map((row) => row.figures[4]?.text)).toEqual([
      "995.00",
      "1,000.00",
      "1,010.00",
      "1,009.00",
      "1,007.00",
      "1,004.00",
    ]);
  });

  it("an identifier's digit groups are no figures, on its line or wrapped onto the next", () => {
    const runs = [
      run("IBAN", 50, 700),
      run("DE89 3704 0044 0532 0130", 110, 700),
      run("00", 110, 688),
      run("Total", 50, 660),
      rightRun("1,200.00", 545, 660),
    ];
    const r = readTables([pdf(1, runs)], { region: "DE" });
    expect(r.lines.flatMap((l) => l.cells.filter((c) => c.figure).map((c) => c.text))).toEqual(["1,200.00"]);
  });

  it("the number style is the document's own: its figures outvote its region", () => {
    expect(inferNumberStyle(["1.234,56 €", "12,50", "3,00", "7.500,00"], "dot_decimal")).toBe(
      "comma_decimal",
    );
    expect(inferNumberStyle(["$1,234.56", "12.50", "3.00"], "comma_decimal")).toBe("dot_decimal");
    // Dates, times and too few figures do not vote.
    expect(inferNumberStyle(["12.03.2025", "10:30", "4,50"], "dot_decimal")).toBe("dot_decimal");
    const runs = grid(
      [{ x: 50 }, { x: 545, align: "right" }],
      [
        ["A", "1.500,00"],
        ["B", "2,50"],
        ["C", "3,00"],
      ],
      700,
    );
    expect(readTables([pdf(1, runs)], { region: "GB" }).style).toBe("comma_decimal");
  });

  it("booking days without a year are dates, not amounts", () => {
    expect(parseDayMonth("03.03.", "DE")).toEqual({ day: 3, month: 3 });
    expect(parseDayMonth("03/14", "US")).toEqual({ day: 14, month: 3 });
    expect(parseDayMonth("3 mars", "FR")).toEqual({ day: 3, month: 3 });
    expect(parseDayMonth("Mar 3", "US")).toEqual({ day: 3, month: 3 });
    expect(parseDayMonth("31.02.", "DE")).toBeUndefined();
    const line = readTables(
      [pdf(1, [run("03.03.", 50, 700), run("KARTENZAHLUNG", 110, 700), rightRun("12,50", 545, 700)])],
      {
        region: "DE",
      },
    ).lines[0];
    expect(line?.cells.map((c) => [c.date, c.figure?.cents])).toEqual([
      ["03.03.", undefined],
      [undefined, undefined],
      [undefined, 1250],
    ]);
  });

  it("plain text is read without positions: figures by their order from the right, and trusted less", () => {
    const r = readTables(
      [
        plainTextPage(
          1,
          [
            "01/03/2025  A  5.00  995.00",
            "02/03/2025  B  250.00  1,245.00",
            "03/03/2025  C  1,000.00  245.00",
          ].join("\n"),
        ),
      ],
      { region: "GB" },
    );
    expect(r.tables[0]?.rows.map((row) => row.figures.map((f) => f?.text))).toEqual([
      ["5.00", "995.00"],
      ["250.00", "1,245.00"],
      ["1,000.00", "245.00"],
    ]);
    expect(r.tables[0]?.structure.source).toBe(0.8);
  });

  it("a reading's confidence: identified structure and relations that hold", () => {
    const headed = { source: 1, header: 1, columns: 1, rows: 1, notes: [] };
    const headerless = { ...headed, header: 0.4 };
    // A header-named table with one relation broken among 29 that hold: proof.
    expect(readingConfidence(headed, 29, 30)).toBeGreaterThanOrEqual(CONFIDENT);
    // A single relation, broken: not enough to trust the reading.
    expect(readingConfidence(headed, 0, 1)).toBeLessThan(CONFIDENT);
    // Without a header, a long chain that holds makes the reading; two of three does not.
    expect(readingConfidence(headerless, 29, 30)).toBeGreaterThanOrEqual(CONFIDENT);
    expect(readingConfidence(headerless, 2, 3)).toBeLessThan(CONFIDENT);
    // OCR words at 0.6 and plain text: never proof on their own.
    expect(readingConfidence({ ...headed, source: 0.6 }, 29, 30)).toBeLessThan(CONFIDENT);
  });

  it("a reference wrapped onto a line of its own continues its row, under a header that names no column of words", () => {
    const cols = [
      { x: 50 },
      { x: 110 },
      { x: 400, align: "right" as const },
      { x: 545, align: "right" as const },
    ];
    const rows: (string | undefined)[][] = [[undefined, undefined, "Paid out", "Balance"]];
    let balance = 1000;
    for (let k = 0; k < 8; k++) {
      balance -= 10 + k;
      rows.push([
        `${String(k + 2).padStart(2, "0")}/03/2025`,
        `Transfer ${k} Reference`,
        `${10 + k}.00`,
        `${balance}.00`,
      ]);
      if (k === 2) rows.push([undefined, "68681843", undefined, undefined]);
    }
    const r = readTables([pdf(1, grid(cols, rows, 700))], { region: "GB" });
    expect(r.tables).toHaveLength(1);
    expect(r.tables[0]?.rows).toHaveLength(8);
    expect(r.tables[0]?.rows[2]?.description).toMatch(/68681843/);
  });

  it("a group separator whose glyph maps to no character ('5\\u0000224,60EUR') is still a separator", () => {
    const at = { box: [0, 0, 10, 10] as [number, number, number, number], page: 1, confidence: 1 };
    expect(figureOf("5\u0000224,60EUR", "comma_decimal", at)?.cents).toBe(522460);
    expect(figureOf("1\u0000234.56", "dot_decimal", at)?.cents).toBe(123456);
  });

  it("a negative in parentheses with its currency mark outside them ('€(827,47)', '(827,47) €') is a figure", () => {
    const at = { box: [0, 0, 10, 10] as [number, number, number, number], page: 1, confidence: 1 };
    expect(figureOf("€(827,47)", "comma_decimal", at)?.cents).toBe(-82747);
    expect(figureOf("(827,47) €", "comma_decimal", at)?.cents).toBe(-82747);
    expect(figureOf("$ (1,234.50)", "dot_decimal", at)?.cents).toBe(-123450);
    // A sign suffix before the currency: "599,71- €", "2,796.48 CR GBP".
    expect(figureOf("599,71- €", "comma_decimal", at)?.cents).toBe(-59971);
    expect(figureOf("2,796.48 CR GBP", "dot_decimal", at)?.credit).toBe(true);
  });

  it("two header words drawn as one cell ('Quantity Transaction details') name two columns", () => {
    const rows = [
      ["Quantity Transaction details", "Sum"],
      ["3 Olive oil", "72.75"],
      ["4 Batteries AA", "22.44"],
      ["1 Newspaper", "15.03"],
    ];
    const r = readTables([pdf(1, grid([{ x: 50 }, { x: 300, align: "right" }], rows, 700))], {
      region: "GB",
    });
    expect(roles(r.tables[0])).toEqual(["quantity", "description", "amount"]);
    expect(r.tables[0]?.rows).toHaveLength(3);
  });
  it("a header word its narrow column wrapped ('Boekdatu' over 'm') is the header's, and the table under it is read", () => {
    const cols = [{ x: 50 }, { x: 110 }, R(385), R(461), R(536)];
    const rows = [
      ["02-07-2024 Periodieke overboeking", undefined, "147,47", undefined, "3.568,16"],
      ["03-07-2024 Overboeking van F. de Boer", undefined, undefined, "25,64", "3.593,80"],
      ["04-07-2024 Overboeking van R. Visser Kenmerk", undefined, undefined, "817,14", "4.410,94"],
      [undefined, "724522361"],
      ["07-07-2024 Online aankoop", undefined, "152,76", undefined, "4.258,18"],
    ];
    const runs = [
      ...grid(cols, [["Boekdatu", "Naam / Omschrijving", "Afschrijving", "Credit", "Saldo (EUR)"]], 700),
      run("m", 50, 688),
      ...grid(cols, rows, 672),
    ];
    const r = readTables([pdf(1, runs)], { region: "NL" });
    expect(r.tables).toHaveLength(1);
    expect(roles(r.tables[0])).toEqual(["date", "debit", "credit", "balance"]);
    expect(r.tables[0]?.headers).toHaveLength(1);
    expect(r.tables[0]?.rows.map((row) => row.date)).toEqual([
      "02-07-2024",
      "03-07-2024",
      "04-07-2024",
      "07-07-2024",
    ]);
    // The rest of a header word under a column no word names ("Volg" over "nr."): the header's too, no line
    // of words left of the figures that ends the table before its first row.
    const tail = [
      ...grid(cols, [["Volg", "Naam / Omschrijving", "Afschrijving", "Credit", "Saldo (EUR)"]], 700),
      run("nr.", 50, 688),
      ...grid(cols, rows, 672),
    ];
    const t = readTables([pdf(1, tail)], { region: "NL" }).tables;
    expect(t).toHaveLength(1);
    expect(roles(t[0])).toEqual(["debit", "credit", "balance"]);
    expect(t[0]?.rows).toHaveLength(4);
  });
  it("a gap drawn before a group separator ('13 .465,07', a re-distilled page) is no space of the number", () => {
    const at = { box: [0, 0, 10, 10] as [number, number, number, number], page: 1, confidence: 1 };
    expect(figureOf("13 .465,07", "comma_decimal", at)?.cents).toBe(1346507);
    expect(figureOf("\u22121 .028,00", "comma_decimal", at)?.cents).toBe(-102800);
    expect(figureOf("EUR 14 .493,07", "comma_decimal", at)?.cents).toBe(1449307);
    expect(figureOf("1 ,234.50", "dot_decimal", at)?.cents).toBe(123450);
    // A currency mark a re-distil mapped to another character ("¬6095.61" for "€6095.61"): the amount.
    expect(figureOf("\u00ac6095.61", "dot_decimal", at)?.cents).toBe(609561);
    expect(figureOf("\u00ac1.459,23", "comma_decimal", at)?.money).toBe(true);
    expect(figureOf("\ufffd 54.86", "dot_decimal", at)?.cents).toBe(5486);
    // Only before an amount with its decimals: "¬12" or a mark after the number is no figure made up.
    expect(figureOf("\u00ac12", "dot_decimal", at)?.money).not.toBe(true);
    // Not a group of three digits after it: two figures, or none, never one made up.
    expect(figureOf("2 ,50", "comma_decimal", at)).toBeUndefined();
    expect(figureOf("12 .3456", "comma_decimal", at)).toBeUndefined();
  });
  it("a year among a two-line header's upper words is one of them; a reference run together is no header", () => {
    const cols = [{ x: 59 }, { x: 230 }, R(469), R(536)];
    const page = (upper: (string | undefined)[]) =>
      pdf(1, [
        ...grid(
          cols,
          [
            upper,
            [undefined, undefined, undefined, "balance"],
            ["2024-05-02", "Transfer 1", "12.00", "112.00"],
            ["2024-05-03", "Transfer 2", "8.00", "120.00"],
            ["2024-05-04", "Transfer 3", "5.00", "125.00"],
          ],
          700,
          { pitch: 12 },
        ),
      ]);
    const read = (upper: (string | undefined)[]) => readTables([page(upper)], { region: "GB" }).tables[0];
    expect(roles(read([undefined, "Particulars (2024)", "Sum", "Running"]))).toEqual([
      "description",
      "amount",
      "balance",
    ]);
    expect(roles(read([undefined, "Particulars 2024", "Sum", "Running"]))).toContain("balance");
    // Dates and a reference run together (the previous row's words left above a repeated header) stay refused.
    expect(roles(read(["2024−05−182024−05−1871255597", "Particulars", "Sum", "Running"]))).not.toContain(
      "balance",
    );
  });

  it("a one-letter debit/credit mark after the amount in its cell ('164.72 D', '806.15 C') signs it", () => {
    const at = { box: [0, 0, 10, 10] as [number, number, number, number], page: 1, confidence: 1 };
    expect(figureOf("164.72 D", "dot_decimal", at)?.cents).toBe(-16472);
    expect(figureOf("1'109.38 C", "dot_decimal", at)?.credit).toBe(true);
    expect(figureOf("303.23 C CHF", "dot_decimal", at)?.credit).toBe(true);
    expect(figureOf("303.23 D CHF", "dot_decimal", at)?.cents).toBe(-30323);
    // A tax category letter drawn into the amount's cell: the amount, when it carries its currency mark.
    expect(figureOf("A EUR 15,36", "comma_decimal", at)?.cents).toBe(1536);
    expect(figureOf("B 12,00", "comma_decimal", at)).toBeUndefined();
    // Italian statements: "A" (avere) is a credit, "D" (dare) a debit.
    expect(figureOf("4093.31 A", "dot_decimal", at)?.credit).toBe(true);
    expect(figureOf("4059.89 A CHF", "dot_decimal", at)?.credit).toBe(true);
    // Spanish statements mark debits "DB" (débito) beside "CR": a debit, in its cell or before the currency.
    expect(figureOf("466,36 DB", "comma_decimal", at)?.cents).toBe(-46636);
    expect(figureOf("1.099,64 DB", "comma_decimal", at)?.negative).toBe("debit");
    expect(figureOf("466,36 DB EUR", "comma_decimal", at)?.cents).toBe(-46636);
    // A letter that is no mark is no figure of it.
    expect(figureOf("164.72 Z", "dot_decimal", at)).toBeUndefined();
    expect(figureOf("164.72 ZB", "dot_decimal", at)).toBeUndefined();
    // German statements: "S" (Soll) is a debit; "H" (Haben) a credit only in a document marking its debits so.
    expect(figureOf("1.234,56 S", "comma_decimal", at)?.cents).toBe(-123456);
    expect(figureOf("2’532.55 S CHF", "dot_decimal", at)?.cents).toBe(-253255);
    const cell = (text: string) => ({ text, box: at.box, pieces: [], size: 9, confidence: 1 });
    const read = (text: string, haben: boolean) =>
      readCells([cell(text)], 1, "comma_decimal", "DE", haben)[0]?.figure;
    expect(read("8.337,38 H €", true)?.credit).toBe(true);
    expect(read("1.234,56 H", true)?.money).toBe(true);
    expect(read("7,50 H", false)?.money).toBe(false);
    expect(debitLetterMarked("CHF 19.92 S")).toBe(true);
    expect(debitLetterMarked("7,50 h")).toBe(false);
    // "Solde à reporter" hands a balance to the next page, like "Saldo a riportare".
    expect(LABELS.carry.test("Solde à reporter")).toBe(true);
  });
  it("opening and closing labels that start or end with an accented letter ('Solde reporté', 'Übertrag vom')", () => {
    expect(LABELS.opening.test("Solde reporté")).toBe(true);
    expect(LABELS.opening.test("Übertrag vom 31.03.")).toBe(true);
    expect(LABELS.closing.test("Übertrag auf Seite 2")).toBe(true);
    // "Saldo neu" / "Saldo alt" like "Kontostand neu" / "alt"; "Saldovortrag" in one word hands a balance on.
    expect(LABELS.closing.test("Saldo neu")).toBe(true);
    expect(LABELS.opening.test("Saldo alt")).toBe(true);
    expect(LABELS.carry.test("Saldovortrag")).toBe(true);
    // Still whole words only.
    expect(LABELS.opening.test("Reopening balance")).toBe(false);
    expect(LABELS.closing.test("Soldes reportés")).toBe(false);
  });

  it("Dutch payslip words for gross and net pay, one word each ('Brutoloon', 'Nettoloon')", () => {
    expect(["Brutoloon", "Totaal bruto", "Bruto"].map((l) => LABELS.gross.test(l))).toEqual([
      true,
      true,
      true,
    ]);
    expect(["Nettoloon", "Netto uit te betalen"].map((l) => LABELS.net.test(l))).toEqual([true, true]);
    expect(LABELS.gross.test("Nettoloon") || LABELS.net.test("Brutoloon")).toBe(false);
  });
  // A payslip's deductions under the earnings, their header set again under a heading of their own: words the
  // vocabulary does not know ("Mededelingen") beside "Bedrag", too few named columns to be a header alone. Read
  // as a row, the repeated header and the heading above it went into the earnings table as the description
  // of its last row, and the deductions with them: one table summing earnings and deductions together.
  it("a header seen again starts a new table under the same columns, not a row of the one above", () => {
    const cols = [{ x: 51 }, R(426), R(544)];
    const runs = [
      ...grid(
        cols,
        [
          ["Mededelingen", "Uren", "Bedrag"],
          ["Basisloon", undefined, "3.803,72"],
          ["Overwerk", "2,50", "68,73"],
          ["Bonus", undefined, "366,91"],
        ],
        700,
      ),
      ...grid(
        cols,
        [
          "Inhoudingen",
          ["Mededelingen", undefined, "Bedrag"],
          ["Loonheffing", undefined, "437,71"],
          ["Pensioenpremie", undefined, "317,95"],
        ],
        630,
      ),
    ];
    const r = readTables([pdf(1, runs)], { region: "NL" });
    expect(r.tables.map((t) => t.rows.map((row) => row.label))).toEqual([
      ["Basisloon", "Overwerk", "Bonus"],
      ["Loonheffing", "Pensioenpremie"],
    ]);
    expect(r.tables[1]?.columns.map((c) => c.role)).toEqual(r.tables[0]?.columns.map((c) => c.role));
    // The last earnings row keeps its own words: the heading and the repeated header are no part of it.
    expect(r.tables[0]?.rows[2]?.description).toBe("Bonus");
  });
});
