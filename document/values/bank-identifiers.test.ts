import { describe, expect, it } from "vitest";
import { abaRoutingNumber, ibanCheckDigits as fixtureIbanDigits } from "../../fixtures/locale.js";
import { Rng } from "../../fixtures/random.js";
import {
  abaProblem,
  cardBrand,
  findIbans,
  IBAN_LENGTHS,
  ibanCheckDigits,
  ibanProblem,
  luhnValid,
  sortCodeProblem,
} from "./bank-identifiers.js";

describe("IBAN", () => {
  it("finds IBANs printed in a text by their shape", () => {
    expect(findIbans("IBAN: GB29 NWBK 6016 1331 9268 19")).toEqual(["GB29NWBK60161331926819"]);
    expect(findIbans("DE89370400440532013000 and again DE89 3704 0044 0532 0130 00")).toEqual([
      "DE89370400440532013000",
    ]);
    expect(findIbans("GB29 NWBK")).toEqual([]);
  });

  it("accepts published example IBANs of several countries", () => {
    for (const iban of [
      "GB29 NWBK 6016 1331 9268 19",
      "DE89 3704 0044 0532 0130 00",
      "FR14 2004 1010 0505 0001 3M02 606",
      "NL91 ABNA 0417 1643 00",
      "NO93 8601 1117 947",
      "BE68 5390 0754 7034",
    ]) {
      expect(ibanProblem(iban), iban).toBeNull();
    }
  });

  it("finds a changed digit, a swapped pair, a wrong length and an unknown country", () => {
    expect(ibanProblem("GB29 NWBK 6016 1331 9268 18")).toBe("checksum");
    expect(ibanProblem("DE89 3704 0044 0532 0103 00")).toBe("checksum");
    expect(ibanProblem("DE89 3704 0044 0532 0130 0")).toBe("length");
    expect(ibanProblem("QQ89 3704 0044 0532 0130 00")).toBe("unknown_country");
    expect(ibanProblem("DE89 3704 0044 0532 0130 0!")).toBe("characters");
  });

  it("computes the same check digits as the fixture generator", () => {
    const rng = new Rng(9);
    for (let i = 0; i < 50; i++) {
      const bban = `${rng.digits(8)}${rng.digits(10)}`;
      expect(ibanCheckDigits("DE", bban)).toBe(fixtureIbanDigits("DE", bban));
      expect(ibanProblem(`DE${ibanCheckDigits("DE", bban)}${bban}`)).toBeNull();
    }
    expect(IBAN_LENGTHS.GB).toBe(22);
    expect(IBAN_LENGTHS.DE).toBe(22);
  });
});

describe("ABA routing numbers", () => {
  it("accepts real routing numbers and generated ones", () => {
    for (const r of ["021000021", "011000015", "121000358", "322271627"]) expect(abaProblem(r), r).toBeNull();
    const rng = new Rng(4);
    for (let i = 0; i < 50; i++) expect(abaProblem(abaRoutingNumber(rng))).toBeNull();
  });

  it("reports checksum, prefix and format problems", () => {
    expect(abaProblem("021000022")).toBe("checksum");
    expect(abaProblem("400000008")).toBe("prefix");
    expect(abaProblem("02100002")).toBe("format");
  });
});

describe("cards and sort codes", () => {
  it("runs Luhn and knows the brands", () => {
    expect(luhnValid("4111111111111111")).toBe(true);
    expect(luhnValid("4111111111111112")).toBe(false);
    expect(luhnValid("378282246310005")).toBe(true);
    expect(luhnValid("12345")).toBe(false);
    expect(cardBrand("4111111111111111")).toBe("Visa");
    expect(cardBrand("5555555555554444")).toBe("Mastercard");
    expect(cardBrand("378282246310005")).toBe("American Express");
    expect(cardBrand("1234567812345678")).toBeNull();
  });

  it("accepts only nn-nn-nn sort codes", () => {
    expect(sortCodeProblem("40-47-84")).toBeNull();
    expect(sortCodeProblem("404784")).toBe("format");
    expect(sortCodeProblem("40-478-4")).toBe("format");
  });
});
