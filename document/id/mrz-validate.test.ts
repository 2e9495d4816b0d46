import { describe, expect, it } from "vitest";
import { checkDigit, correctByCheckDigits, fieldChecks, forceClasses } from "./mrz-format.js";
import { mrzDate, nameStructure, validateMrz } from "./mrz-validate.js";

/**
 * ICAO Doc 9303's own worked examples (the fictional state Utopia, UTO): Part 3 Appendix A (check digits),
 * Part 4 (TD3 specimen), Part 5 (TD1), Part 6 (TD2), Part 11 Appendix D.2 (document numbers longer than nine
 * characters). They must reproduce exactly.
 */
const NOW = new Date("2026-06-01T00:00:00Z");

const TD3 = ["P<UTOERIKSSON<<ANNA<MARIA<<<<<<<<<<<<<<<<<<<", "L898902C36UTO7408122F1204159ZE184226B<<<<<10"];
const TD1 = [
  "I<UTOD231458907<<<<<<<<<<<<<<<",
  "7408122F1204159UTO<<<<<<<<<<<6",
  "ERIKSSON<<ANNA<MARIA<<<<<<<<<<",
];
const TD2 = ["I<UTOERIKSSON<<ANNA<MARIA<<<<<<<<<<<", "D231458907UTO7408122F1204159<<<<<<<6"];
const TD1_LONG = [
  "I<UTOD23145890<7349<<<<<<<<<<<",
  "3407127M9507122UTO<<<<<<<<<<<2",
  "STEVENSON<<PETER<JOHN<<<<<<<<<",
];
const TD2_LONG = ["I<UTOSTEVENSON<<PETER<JOHN<<<<<<<<<<", "D23145890<UTO3407127M95071227349<<<8"];

describe("ICAO 9303 worked examples", () => {
  it("Part 3 Appendix A: the check digits of 520727, AB2134<<< and the TD3 composite example", () => {
    expect(checkDigit("520727")).toBe(3);
    expect(checkDigit("AB2134<<<")).toBe(5);
    expect(checkDigit("HA672242<658022549601086<<<<<<<<<<<<<<0")).toBe(8);
  });

  it("Part 4: the TD3 specimen passes every check; it is a specimen, and expired in 2012", () => {
    const v = validateMrz("TD3", TD3, NOW);
    expect(v.problems).toEqual([]);
    expect(v.checks.every((c) => c.ok)).toBe(true);
    expect(v.fields).toMatchObject({
      documentCode: "P",
      issuingState: "UTO",
      surname: "ERIKSSON",
      givenNames: "ANNA MARIA",
      documentNumber: "L898902C3",
      nationality: "UTO",
      sex: "F",
      optional: "ZE184226B",
    });
    expect(v.fields.birth.date).toEqual({ y: 1974, m: 8, d: 12 });
    expect(v.fields.expiry.date).toEqual({ y: 2012, m: 4, d: 15 });
    expect(v.specimen).toBe(true);
    expect(v.expired).toBe(true);
  });

  it("Part 5 and Part 6: the TD1 and TD2 specimens pass every check", () => {
    for (const [format, lines] of [
      ["TD1", TD1],
      ["TD2", TD2],
    ] as const) {
      const v = validateMrz(format, lines, NOW);
      expect(v.problems).toEqual([]);
      expect(v.fields.documentNumber).toBe("D23145890");
      expect(v.fields.surname).toBe("ERIKSSON");
      expect(v.fields.givenNames).toBe("ANNA MARIA");
    }
  });

  it("Part 11 D.2: a document number of 12 characters continues in the optional data (TD1 and TD2)", () => {
    const td1 = validateMrz("TD1", TD1_LONG, NOW);
    expect(td1.problems).toEqual([]);
    expect(td1.fields.documentNumber).toBe("D23145890734");
    const td2 = validateMrz("TD2", TD2_LONG, NOW);
    expect(td2.problems).toEqual([]);
    expect(td2.fields.documentNumber).toBe("D23145890734");
  });
});

describe("validation beyond the check digits", () => {
  it("a broken field check digit names the field; the composite then fails too", () => {
    const broken = [TD3[0]!, TD3[1]!.replace("7408122", "7408192")];
    const v = validateMrz("TD3", broken, NOW);
    expect(v.problems.map((p) => [p.code, p.field])).toEqual([
      ["check_digit", "birthDate"],
      ["composite", "composite"],
    ]);
  });

  it("a field changed with its check digit recomputed leaves only the composite stale", () => {
    // 1974 → 1964: the date's own check digit recomputed, the composite left as issued. (Not every change
    // shows: with 7-3-1 weights a change of the year's last digit moves the date's check digit so that the
    // composite sum moves by a multiple of 10 — ICAO's scheme cannot see it.)
    const dob = "640812";
    const line = `L898902C36UTO${dob}${checkDigit(dob)}F1204159ZE184226B<<<<<10`;
    const v = validateMrz("TD3", [TD3[0]!, line], NOW);
    expect(v.problems.map((p) => p.code)).toEqual(["composite"]);
    expect(v.problems[0]!.evidence.fieldCheckDigitsPass).toBe(true);
  });

  it("31 February, month 13 and day 32 are no dates, whatever the check digits say", () => {
    expect(mrzDate("740231", "birth", NOW).invalid).toMatch(/day 31/);
    expect(mrzDate("741312", "birth", NOW).invalid).toMatch(/month 13/);
    expect(mrzDate("740132", "birth", NOW).invalid).toMatch(/day 32/);
    expect(mrzDate("000229", "birth", NOW).date).toEqual({ y: 2000, m: 2, d: 29 });
    expect(mrzDate("740<<<", "birth", NOW).invalid).toMatch(/month/);
    expect(mrzDate("74<<<<", "birth", NOW)).toEqual({ raw: "74<<<<" });
    const dob = "740231";
    const body = `L898902C36UTO${dob}${checkDigit(dob)}F1204159ZE184226B<<<<<1`;
    const composite = checkDigit(`${body.slice(0, 10)}${body.slice(13, 20)}${body.slice(21, 43)}`);
    const v = validateMrz("TD3", [TD3[0]!, `${body}${composite}`], NOW);
    expect(v.problems.map((p) => p.code)).toEqual(["date_invalid"]);
  });

  it("an unknown state code and a malformed name are reported; UTO is not unknown", () => {
    const v = validateMrz("TD3", [TD3[0]!.replace("UTO", "QQX"), TD3[1]!], NOW);
    expect(v.problems.map((p) => [p.code, p.field])).toEqual([["state_unknown", "issuingState"]]);
    expect(nameStructure("ERIKSSON<<ANNA<<<MARIA<<")).toMatch(/three or more/);
    expect(nameStructure("ERIKSSON<<ANNA<MARIA<<<<")).toBeUndefined();
  });
});

describe("reading corrections", () => {
  it("letters in digit fields and digits in letter fields are settled by the field's class", () => {
    const read = [
      "P<UT0ERIKSS0N<<ANNA<MARIA<<<<<<<<<<<<<<<<<<<",
      "L898902C36UTO74O8I22F12O4159ZE184226B<<<<<1O",
    ];
    const { lines } = forceClasses("TD3", read);
    expect(lines).toEqual(TD3);
  });

  it("a look-alike swap in the document number is kept only when it alone makes the check digit pass", () => {
    const read = [TD3[0]!, "L8989O2C36UTO7408122F1204159ZE184226B<<<<<10"];
    // Only where the OCR was unsure of the character (here: position 5 of line 2).
    expect(correctByCheckDigits("TD3", read, new Set()).lines).toEqual(read);
    const { lines, corrections } = correctByCheckDigits("TD3", read, new Set(["1:5"]));
    expect(lines).toEqual(TD3);
    expect(corrections).toEqual([{ line: 1, at: 5, from: "O", to: "0", why: "check_digit" }]);
    // A wrong digit read with confidence is never swapped for a look-alike letter (8 → B would pass by chance).
    const wrong = [TD3[0]!, "L898912C36UTO7408122F1204159ZE184226B<<<<<10"];
    expect(correctByCheckDigits("TD3", wrong, new Set()).lines).toEqual(wrong);
    expect(fieldChecks("TD3", wrong).find((c) => c.name === "documentNumber")?.ok).toBe(false);
  });
});
