import { describe, expect, it } from "vitest";
import { findAmounts, formatCents, numberStyleFor, parseAmount, parseNumber, toCents } from "./amounts.js";

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
