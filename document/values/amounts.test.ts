import { describe, expect, it } from "vitest";
import {
  findAmounts,
  formatCents,
  inferNumberStyle,
  numberStyleFor,
  parseAmount,
  parseNumber,
  toCents,
} from "./amounts.js";

const cents = (text: string, style: "dot_decimal" | "comma_decimal" = "dot_decimal") =>
  parseAmount(text, { style })?.cents ?? null;

describe("parseNumber", () => {
  it("reads grouped and decimal numbers in both conventions", () => {
    expect(parseNumber("1,234.56")?.value).toBe(1234.56);
    expect(parseNumber("1.234,56")?.value).toBe(1234.56);
    expect(parseNumber("1 234,56")?.value).toBe(1234.56);
    expect(parseNumber("1\u00a0234,56")?.value).toBe(1234.56);
    expect(parseNumber("1\u202f234\u202f567,5")?.value).toBe(1234567.5);
    expect(parseNumber("1'234.56")?.value).toBe(1234.56);
    expect(parseNumber("12,345,678")?.value).toBe(12345678);
    expect(parseNumber("12.345.678")?.value).toBe(12345678);
    expect(parseNumber("0.5")?.value).toBe(0.5);
    expect(parseNumber("42")?.value).toBe(42);
    expect(parseNumber("-7,25")?.value).toBe(-7.25);
  });

  it("settles a lone three-digit group by the region's style", () => {
    expect(parseNumber("1,234", "dot_decimal")?.value).toBe(1234);
    expect(parseNumber("1,234", "comma_decimal")?.value).toBe(1.234);
    expect(parseNumber("1.234", "dot_decimal")?.value).toBe(1.234);
    expect(parseNumber("1.234", "comma_decimal")?.value).toBe(1234);
  });

  it("records the separators it saw", () => {
    expect(parseNumber("1.234,56")).toMatchObject({
      decimals: 2,
      decimalSeparator: ",",
      groupSeparator: ".",
    });
    expect(parseNumber("1,234.5")).toMatchObject({ decimals: 1, decimalSeparator: ".", groupSeparator: "," });
  });

  it("refuses what is no number", () => {
    for (const bad of [
      "",
      "abc",
      "1,2,3",
      "1.234.56",
      "12,34.567,8",
      "1,,234",
      "1,23,456",
      ",5",
      "5,",
      "1.234,567.8",
    ]) {
      expect(parseNumber(bad), bad).toBeNull();
    }
  });
});

describe("parseAmount", () => {
  it("reads currency symbols and codes before or after", () => {
    expect(parseAmount("£1,234.56")).toMatchObject({ cents: 123456, currency: "GBP" });
    expect(parseAmount("$0.99")).toMatchObject({ cents: 99, currency: "USD" });
    expect(parseAmount("1.234,56 €", { style: "comma_decimal" })).toMatchObject({
      cents: 123456,
      currency: "EUR",
    });
    expect(parseAmount("€1.234,56", { style: "comma_decimal" })).toMatchObject({
      cents: 123456,
      currency: "EUR",
    });
    expect(parseAmount("EUR 1.234,56")).toMatchObject({ cents: 123456, currency: "EUR" });
    expect(parseAmount("1 234,56 EUR")).toMatchObject({ cents: 123456, currency: "EUR" });
    expect(parseAmount("USD 12.00")).toMatchObject({ cents: 1200, currency: "USD" });
    expect(parseAmount("CHF 1'250.00")).toMatchObject({ cents: 125000, currency: "CHF" });
  });

  it("reads every way of writing a negative", () => {
    expect(parseAmount("-£12.50")).toMatchObject({ cents: -1250, negative: "minus" });
    expect(parseAmount("£-12.50")).toMatchObject({ cents: -1250, negative: "minus" });
    expect(parseAmount("\u221212.50")).toMatchObject({ cents: -1250, negative: "minus" });
    expect(parseAmount("(1,234.56)")).toMatchObject({ cents: -123456, negative: "parentheses" });
    expect(parseAmount("($45.00)")).toMatchObject({ cents: -4500, negative: "parentheses" });
    expect(parseAmount("1.234,56-", { style: "comma_decimal" })).toMatchObject({
      cents: -123456,
      negative: "trailing_minus",
    });
    expect(parseAmount("250.00 DR")).toMatchObject({ cents: -25000, negative: "debit" });
    expect(parseAmount("250.00 CR")).toMatchObject({ cents: 25000, credit: true });
    expect(parseAmount("250.00CR")?.cents).toBe(25000);
    expect(parseAmount("+£3.00")?.cents).toBe(300);
  });

  it("needs money shape unless asked to be loose", () => {
    expect(cents("12")).toBeNull();
    expect(parseAmount("12", { loose: true })?.cents).toBe(1200);
    expect(cents("£12")).toBe(1200);
    expect(cents("12.5")).toBeNull();
    expect(cents("1,234")).toBeNull();
  });

  it("rejects text around the amount, dates, percentages and unit prices", () => {
    for (const bad of [
      "Total 12.00",
      "12.03.2025",
      "03/14/2025",
      "19.00 %",
      "7.25%",
      "27.50p/kWh",
      "0,35 ct/kWh",
      "1.2.3",
      "(12.00",
      "12.00)",
      "v1.20",
    ]) {
      expect(parseAmount(bad), bad).toBeNull();
    }
  });

  it("rounds amounts with more decimals to cents", () => {
    expect(parseAmount("£0.455")?.cents).toBe(46);
    expect(toCents(-0.125)).toBe(-13);
    expect(toCents(1.005)).toBe(101);
  });
});

describe("findAmounts", () => {
  it("finds every amount in a line with offsets", () => {
    const line = "14/03/2025  CARD PAYMENT TESCO  £12.50    £1,234.56";
    const found = findAmounts(line);
    expect(found.map((a) => a.cents)).toEqual([1250, 123456]);
    expect(line.slice(found[0]?.start, found[0]?.end)).toBe("£12.50");
  });

  it("finds German amounts and skips dates, rates and percentages", () => {
    const line = "Arbeitspreis: 420 kWh x 31,25 ct/kWh am 14.03.2025 zu 19 %   131,25 €";
    expect(findAmounts(line, { style: "comma_decimal" }).map((a) => a.cents)).toEqual([13125]);
  });

  it("skips IBANs, phone numbers and long identifiers", () => {
    expect(findAmounts("IBAN: GB29 NWBK 6016 1331 9268 19")).toEqual([]);
    expect(findAmounts("Tel 0113 496 0123")).toEqual([]);
    expect(findAmounts("Invoice INV-2025-00123")).toEqual([]);
  });
});

describe("formatting and styles", () => {
  it("formats cents for messages in the region's style", () => {
    expect(formatCents(123456)).toBe("1,234.56");
    expect(formatCents(-123456, "comma_decimal")).toBe("-1.234,56");
    expect(formatCents(5, "dot_decimal", "GBP")).toBe("£0.05");
    expect(formatCents(100000, "comma_decimal", "EUR")).toBe("1.000,00 €");
  });

  it("knows which regions write a decimal comma", () => {
    expect(numberStyleFor("DE")).toBe("comma_decimal");
    expect(numberStyleFor("fr")).toBe("comma_decimal");
    expect(numberStyleFor("GB")).toBe("dot_decimal");
    expect(numberStyleFor("US")).toBe("dot_decimal");
  });
});

describe("the tolerant reading", () => {
  const printed = (text: string) => findAmounts(text, { tolerant: true }).map((a) => a.cents);

  it("finds every two-decimal number in US, GB and DE notation, signs dropped", () => {
    expect(printed("Total $1,234.56 and -£12.00, (45.10)")).toEqual([123456, 1200, 4510]);
    expect(printed("Gesamt 1.234,56 € und 0,99 €")).toEqual([123456, 99]);
    expect(printed("1 234,56 and 1'234.56")).toEqual([123456, 123456]);
  });

  it("takes numbers the default reading passes over, and still no dates or versions", () => {
    // Glued to a word or followed by a unit: not an amount the document means, but printed all the same.
    expect(findAmounts("Ref12.50 and 19.00% and 27.50p/kWh")).toEqual([]);
    expect(printed("Ref12.50 and 19.00% and 27.50p/kWh")).toEqual([1250, 1900, 2750]);
    expect(printed("Version 1.2.3 on 14.03.2025 and 1.234.56")).toEqual([]);
  });

  it("reads one value with any separators, a trailing three-digit group as thousands", () => {
    const one = (v: string) => parseAmount(v, { tolerant: true })?.cents;
    expect(one("EUR12729.35")).toBe(1272935);
    expect(one("1.234,5")).toBe(123450);
    expect(one("12.345")).toBe(1234500);
    expect(one("-99")).toBe(9900);
    expect(one("n/a")).toBeUndefined();
    // The default reading of the same values: the region's style decides, the sign stays.
    expect(parseAmount("12.345", { loose: true })?.cents).toBe(1235);
    expect(parseAmount("-99", { loose: true })?.cents).toBe(-9900);
  });
  it("a Swiss thousands mark printed as a typographic apostrophe ('19’141.36', U+2019) groups like '", () => {
    expect(parseNumber("19\u2019141.36")?.value).toBe(19141.36);
    expect(parseAmount("1\u2019133.42-", { loose: true })?.cents).toBe(-113342);
    expect(parseAmount("13\u2019819.93 CHF")?.cents).toBe(1381993);
    expect(findAmounts("Saldo: 21\u2019704.56; Betrag: 5\u2019321.43").map((a) => a.cents)).toEqual([
      2170456, 532143,
    ]);
    expect(inferNumberStyle(["1\u2019234.56", "2\u2019345.67", "3\u2019456.78"], "comma_decimal")).toBe(
      "dot_decimal",
    );
    // An apostrophe ends a word elsewhere: no group of a number ("l’1.234" is no 11234).
    expect(parseNumber("12\u201934.5")).toBeNull();
  });
  it("a minus after the amount printed as U+2212 ('90,59−') is a trailing minus like '-'", () => {
    expect(parseAmount("90,59\u2212", { style: "comma_decimal" })?.cents).toBe(-9059);
    expect(parseAmount("1.234,56\u2212", { style: "comma_decimal" })?.negative).toBe("trailing_minus");
    expect(parseAmount("90,59-", { style: "comma_decimal" })?.cents).toBe(-9059);
  });
});
