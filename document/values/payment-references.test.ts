import { describe, expect, it } from "vitest";
import {
  beStructuredValid,
  chQrValid,
  findPaymentReferences,
  fiReferenceValid,
  nlPaymentReferenceValid,
  noKidValid,
  rfValid,
  seOcrValid,
} from "./payment-references.js";

describe("payment references", () => {
  it("checks each scheme's digits", () => {
    // ISO 11649's own example, the Swiss QR-bill specification's, a Belgian OGM, a Finnish reference.
    expect(rfValid("RF18539007547034")).toBe(true);
    expect(rfValid("RF18539007547035")).toBe(false);
    expect(chQrValid("210000000003139471430009017")).toBe(true);
    expect(chQrValid("210000000003139471430009018")).toBe(false);
    expect(beStructuredValid("090933755493")).toBe(true);
    expect(beStructuredValid("090933755494")).toBe(false);
    expect(fiReferenceValid("1232")).toBe(true);
    expect(fiReferenceValid("1233")).toBe(false);
    expect(nlPaymentReferenceValid("9000000000000001")).toBe(true);
    expect(nlPaymentReferenceValid("8000000000000001")).toBe(false);
  });

  it("finds a Dutch payment reference only with its label, and checks its first digit", () => {
    // 15 digits 000000000000001: weights 2,4,8,… from the right give 2; 11 - 2 = 9.
    expect(findPaymentReferences("Betalingskenmerk: 9000 0000 0000 0001")).toMatchObject([
      { scheme: "nl_payment_reference", valid: true },
    ]);
    expect(findPaymentReferences("Betalingskenmerk: 8000 0000 0000 0001")).toMatchObject([{ valid: false }]);
    expect(findPaymentReferences("Kaart 8000 0000 0000 0001")).toEqual([]);
  });

  it("reads a creditor reference in groups and stops where a longer run would not hold", () => {
    expect(findPaymentReferences("Payment reference: RF18 5390 0754 7034")).toMatchObject([
      { scheme: "rf", compact: "RF18539007547034", valid: true },
    ]);
    // The next cell's number on the same line is no part of it: the shortest run that holds is the reference.
    expect(findPaymentReferences("RF18 5390 0754 7034  DE12 3456")).toMatchObject([
      { compact: "RF18539007547034", valid: true },
    ]);
    expect(findPaymentReferences("RF18 5390 0754 7035")).toMatchObject([{ valid: false }]);
    // Lower-case words and an amount's currency end it; "RF" inside a word is no reference.
    expect(findPaymentReferences("PERF12 AB")).toEqual([]);
  });

  it("reads the Swiss and Belgian references as printed", () => {
    expect(findPaymentReferences("Referenz: 21 00000 00003 13947 14300 09017")).toMatchObject([
      { scheme: "ch_qr", valid: true },
    ]);
    expect(findPaymentReferences("Referenz: 21 00000 00003 13947 14300 09018")).toMatchObject([
      { scheme: "ch_qr", valid: false },
    ]);
    // 27 digits without a reference label are another number.
    expect(findPaymentReferences("21 00000 00003 13947 14300 09018")).toEqual([]);
    expect(findPaymentReferences("Communication: +++090/9337/55493+++")).toMatchObject([
      { scheme: "be_structured", valid: true },
    ]);
    expect(findPaymentReferences("***090/9337/55494***")).toMatchObject([{ valid: false }]);
  });

  it("reads a Norwegian KID and a Swedish OCR reference only in their country's documents", () => {
    // 1234567897 passes Luhn; 12345678903 passes mod 11 (weights 2-7 from the right: 10+18+… ≡ 8, 11-8=3).
    expect(noKidValid("1234567897")).toBe(true);
    expect(noKidValid("1234567898")).toBe(false);
    expect(noKidValid("12345678903")).toBe(true);
    expect(noKidValid("12345678904")).toBe(false);
    expect(findPaymentReferences("KID: 1234 5678 97", "NO")).toMatchObject([
      { scheme: "no_kid", valid: true },
    ]);
    expect(findPaymentReferences("KID: 1234 5678 98", "NO")).toMatchObject([{ valid: false }]);
    expect(findPaymentReferences("KID: 1234 5678 98", "SE")).toEqual([]);
    // An amount a space after it is no part of it: the shortest run that holds is the KID.
    expect(findPaymentReferences("KID: 1234567897 1 250,00", "NO")).toMatchObject([
      { compact: "1234567897", valid: true },
    ]);
    expect(seOcrValid("1234567897")).toBe(true);
    expect(findPaymentReferences("OCR-nummer 1234567898", "SE")).toMatchObject([
      { scheme: "se_ocr", valid: false },
    ]);
    expect(findPaymentReferences("OCR-nummer 1234567897", "SE")).toMatchObject([{ valid: true }]);
  });

  it("reads a Finnish reference only in a Finnish document", () => {
    expect(findPaymentReferences("Viitenumero 1233", "FI")).toMatchObject([
      { scheme: "fi_reference", valid: false },
    ]);
    expect(findPaymentReferences("Viitenumero 1232", "FI")).toMatchObject([{ valid: true }]);
    expect(findPaymentReferences("Viitenumero 1233", "DE")).toEqual([]);
  });
});
