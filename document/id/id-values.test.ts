import { describe, expect, it } from "vitest";
import { aamvaPayload, makeSpecimen } from "../../fixtures/ids/specimen.js";
import { aamvaDate, isAamva, parseAamva } from "./aamva.js";
import {
  CONFIDENT_WORD,
  type Disagreement,
  disagreements,
  FOUND_BY_VALUE,
  fieldsByValue,
  mrzSpellings,
  readingDoubts,
  sameName,
  sameNumber,
  sameReading,
  threeAgree,
} from "./compare.js";
import { findFields, loneCaptions, parsePrintedDate, type VizLine } from "./viz.js";

describe("dates as documents print them", () => {
  it("reads the ICAO bilingual form, dotted, ISO and US forms", () => {
    expect(parsePrintedDate("12 AUG/AOÛT 74")).toEqual({ y: 74, m: 8, d: 12, twoDigitYear: true });
    expect(parsePrintedDate("12 AUG/AOUT 74")).toEqual({ y: 74, m: 8, d: 12, twoDigitYear: true });
    expect(parsePrintedDate("12.08.1974")).toEqual({ y: 1974, m: 8, d: 12, twoDigitYear: false });
    expect(parsePrintedDate("1974-08-12")).toEqual({ y: 1974, m: 8, d: 12, twoDigitYear: false });
    expect(parsePrintedDate("12 AUG 1974")).toEqual({ y: 1974, m: 8, d: 12, twoDigitYear: false });
    expect(parsePrintedDate("08/12/1974", "mdy")).toEqual({ y: 1974, m: 8, d: 12, twoDigitYear: false });
    expect(parsePrintedDate("30 DÉC 23")).toEqual({ y: 23, m: 12, d: 30, twoDigitYear: true });
    expect(parsePrintedDate("ZENITH")).toBeUndefined();
  });

  it("reads the separators an OCR loses, doubles or reads as a digit", () => {
    // A space read beside a slash, a lost dash, both slashes of a US date read as 1.
    expect(parsePrintedDate("10/23/ 1966", "mdy")).toEqual({ y: 1966, m: 10, d: 23, twoDigitYear: false });
    expect(parsePrintedDate("2027-0523")).toEqual({ y: 2027, m: 5, d: 23, twoDigitYear: false });
    expect(parsePrintedDate("0312612000", "mdy")).toEqual({ y: 2000, m: 3, d: 26, twoDigitYear: false });
    // The same with the space the second slash left before the year.
    expect(parsePrintedDate("021101 1973")).toEqual({ y: 1973, m: 10, d: 2, twoDigitYear: false });
    // Ten digits with no 1 where the slashes would be are not a date.
    expect(parsePrintedDate("0352652000", "mdy")).toBeUndefined();
  });

  it("reads a month whose first letter was read as its digit look-alike", () => {
    // “31 OCT 98” on a development TD1 photo (eval:ids dev draw 13), the space lost and O read as 0.
    expect(parsePrintedDate("310CT 98")).toEqual({ y: 98, m: 10, d: 31, twoDigitYear: true });
    expect(parsePrintedDate("10CT/OCT 98")).toEqual({ y: 98, m: 10, d: 1, twoDigitYear: true });
    expect(parsePrintedDate("04 5EP 2031")).toEqual({ y: 2031, m: 9, d: 4, twoDigitYear: false });
    expect(parsePrintedDate("12 4UG/AOÛT 74")).toEqual({ y: 74, m: 8, d: 12, twoDigitYear: true });
    // Not a month after the look-alike: no date.
    expect(parsePrintedDate("310XY 98")).toBeUndefined();
  });
});

describe("names and numbers across zones", () => {
  it("spells a printed name the ICAO ways (Ü → UE or U, Å → AA, apostrophes dropped)", () => {
    expect(mrzSpellings("MÜLLER")).toEqual(["MUELLER", "MULLER"]);
    expect(mrzSpellings("O'NEILL")).toEqual(["ONEILL"]);
    expect(sameName("AASTROEM", "ÅSTRÖM")).toBe(true);
    expect(sameName("GARCIA LOPEZ", "GARCÍA LÓPEZ")).toBe(true);
    expect(sameName("ERIKSSON", "ERIKSS0N")).toBe(true); // one OCR slip in a long name
    expect(sameName("ERIKSSON", "NAKAMURA")).toBe(false);
    // The OCR drops the diacritics the MRZ spells as two letters (a genuine passport of the dev part).
    expect(sameName("AASTROEM", "ASTROM")).toBe(true);
    expect(sameName("HAEKKINEN", "HAKKINEN")).toBe(true);
    expect(sameName("SOEREN", "SOREN")).toBe(true);
    // A licence's barcode holds the name as printed: its ICAO spellings are the encoded name.
    expect(sameName("ÅSTRÖM", "ASTROM")).toBe(true);
    expect(sameName("ÅSTRÖM", "AASTROEM")).toBe(true);
    expect(sameName("ÅSTRÖM", "OLSEN")).toBe(false);
    // Letters Unicode does not decompose (ICAO 9303 Part 3: Ł → L, Đ → D, Œ → OE).
    expect(mrzSpellings("ŁUKASZ")).toEqual(["LUKASZ"]);
    expect(sameName("DORDE", "ĐORĐE")).toBe(true);
    expect(sameName("COEUR", "CŒUR")).toBe(true);
    // Two readings of SØREN, one of which lost the stroke, are the same reading.
    expect(sameReading("givenNames", "SØREN", "SOREN")).toBe(true);
    expect(sameReading("givenNames", "SØREN", "SAREN")).toBe(false);
    expect(sameName("AASTROEM", "OSTROM")).toBe(false);
    expect(sameNumber("L898902C3", "L898902C3")).toBe(true);
    expect(sameNumber("L898902C3", "L8989O2C3")).toBe(true); // O/0 look-alikes
    expect(sameNumber("L898902C3", "L898907C3")).toBe(false);
    expect(sameNumber("S74715818", "$74715818")).toBe(true); // a bold S read as $
  });

  it("reports the fields that differ, and only those the visual zone shows", () => {
    const box = [0, 0, 10, 10] as [number, number, number, number];
    const f = (name: "surname" | "birth" | "documentNumber", text: string) => ({
      name,
      text,
      box,
      confidence: 90,
      label: "",
    });
    const out = disagreements(
      { surname: "ERIKSSON", birth: { y: 1974, m: 8, d: 12 }, documentNumber: "L898902C3" },
      {
        surname: f("surname", "ERIKSSON"),
        birth: f("birth", "12 AUG/AOÛT 71"),
        documentNumber: f("documentNumber", "L898902C3"),
      },
    );
    expect(out.map((d) => [d.field, d.encoded])).toEqual([["birth", "1974-08-12"]]);
  });

  it("takes a printed value that is the encoding's value of the sibling field for a caption paired wrongly", () => {
    const box = [0, 0, 10, 10] as [number, number, number, number];
    const f = (name: "surname" | "givenNames" | "birth" | "expiry", text: string) => ({
      name,
      text,
      box,
      confidence: 90,
      label: "",
    });
    const encoded = {
      surname: "OLSEN",
      givenNames: "TOMAS ERIK",
      birth: { y: 1961, m: 10, d: 23 },
      expiry: { y: 2029, m: 10, d: 23 },
    };
    // A given name under the surname's caption; a licence's expiry (on the birthday) read as the birth date.
    const misPaired = disagreements(
      encoded,
      { surname: f("surname", "TOMAS"), birth: f("birth", "10/23/2029") },
      "mdy",
    );
    expect(misPaired).toEqual([]);
    // Another name, another date: still disagreements.
    const altered = disagreements(
      encoded,
      { surname: f("surname", "HANSEN"), birth: f("birth", "10/23/1971") },
      "mdy",
    );
    expect(altered.map((d) => d.field)).toEqual(["surname", "birth"]);
  });
});

describe("captions", () => {
  const w = (text: string, x: number, y: number, h = 20) => ({
    text,
    confidence: 90,
    box: [x, y, x + text.length * 10, y + h] as [number, number, number, number],
  });
  const line = (...words: ReturnType<typeof w>[]): VizLine => ({
    text: words.map((x) => x.text).join(" "),
    words,
    box: [
      Math.min(...words.map((x) => x.box[0])),
      words[0]!.box[1],
      Math.max(...words.map((x) => x.box[2])),
      words[0]!.box[3],
    ],
  });
  it("finds an expiry by its value: its day and month, its year or later, never the issue date", () => {
    const issue = line(
      w("Date", 10, 300),
      w("of", 60, 300),
      w("issue:", 90, 300),
      w("11 MAR 2025", 160, 300),
    );
    const changed = line(w("11 MAR 2038", 400, 200));
    const encoded = { expiry: { y: 2035, m: 3, d: 11 } };
    const byCaption = findFields([issue]);
    expect(byCaption.issue?.text).toBe("11 MAR 2025");
    // A printed expiry later than the encoded one (no caption read over it) is the expiry, and disagrees.
    const found = fieldsByValue([issue, changed], encoded, byCaption);
    expect(found.expiry?.text).toBe("11 MAR 2038");
    expect(disagreements(encoded, found).map((d) => d.field)).toEqual(["expiry"]);
    // The date of issue (same day and month, an earlier year) is no expiry, caption read or not.
    expect(fieldsByValue([issue], encoded, byCaption).expiry).toBeUndefined();
    expect(fieldsByValue([line(w("11 MAR 2025", 160, 300))], encoded, {}).expiry).toBeUndefined();
    expect(fieldsByValue([line(w("11 MAR 2035", 400, 200))], encoded, {}).expiry?.text).toBe("11 MAR 2035");
  });

  it("takes the value-sized line above the given names as the surname, past a small caption", () => {
    const encoded = { surname: "OLSEN", givenNames: "ANNA MARIA" };
    // A card whose surname caption was not read, the given names' caption read between the two values
    // (small print, 9 px to the values' 17): the surname is the changed value two lines up.
    const card = [
      line(w("MULLER", 400, 1184, 17)),
      line(
        w("Given", 400, 1226, 9),
        w("names", 460, 1226, 9),
        w("/", 520, 1226, 9),
        w("Prénoms", 535, 1226, 9),
      ),
      line(w("ANNA", 400, 1244, 17), w("MARIA", 450, 1244, 17)),
    ];
    const found = fieldsByValue(card, encoded, {});
    expect(found.surname?.text).toBe("MULLER");
    expect(disagreements(encoded, found).map((d) => d.field)).toEqual(["surname"]);
    // A licence (dev draw 13): the field numbers 1 and 2 read as commas, ROSSI read “Ross!”.
    const licence = [
      line(w(",", 481, 461, 28), w("Ross!", 500, 461, 28)),
      line(w(",", 480, 501, 27), w("KENJI", 500, 501, 27)),
    ];
    const dl = fieldsByValue(licence, { surname: "GARCÍA LÓPEZ", givenNames: "KENJI" }, {});
    expect(dl.surname?.text).toBe("Ross!");
    // Small print above the given names, with no value line above it, is no surname.
    expect(fieldsByValue(card.slice(1), encoded, {}).surname).toBeUndefined();
  });

  it("reads a name's capital I read as “!” as the same reading", () => {
    expect(sameReading("surname", "Ross!", "ROSSI")).toBe(true);
    expect(sameReading("surname", "ROSS", "ROSSI")).toBe(false);
  });

  it("finds values under their captions, misread captions included, and not under 'place of birth'", () => {
    const fields = findFields([
      line(w("Sumame", 100, 100, 12), w("/", 170, 100, 12), w("Nom", 185, 100, 12)),
      line(w("ERIKSSON", 100, 118)),
      line(
        w("Date", 100, 150, 12),
        w("of", 150, 150, 12),
        w("bith", 175, 150, 12),
        w("/", 220, 150, 12),
        w("Date", 235, 150, 12),
        w("de", 280, 150, 12),
        w("naissance", 305, 150, 12),
      ),
      line(w("12", 100, 168), w("AUG/AOUT", 130, 168), w("74", 220, 168)),
      line(w("Place", 100, 200, 12), w("of", 150, 200, 12), w("birth", 175, 200, 12)),
      line(w("ZENITH", 100, 218)),
      line(w("4d", 600, 100, 12), w("DLN", 630, 100, 12), w("Z94266160", 700, 96, 26)),
    ]);
    expect(fields.surname?.text).toBe("ERIKSSON");
    expect(fields.birth?.text).toBe("12 AUG/AOUT 74");
    expect(fields.documentNumber?.text).toBe("Z94266160");
  });

  it("does not take a caption's other language, an address or a date for a name, nor words for a date", () => {
    const fields = findFields([
      // The French half of the caption read as the surname's value (a genuine dev passport).
      line(w("Surname", 100, 100, 12), w("/", 300, 100, 12), w("Nom", 320, 100, 12)),
      line(w("ERIKSSON", 100, 118)),
      // A licence's given-names number beside the address line.
      line(w("2", 600, 100, 12), w("8088", 640, 100, 12), w("LAKE", 700, 100, 12), w("RD", 760, 100, 12)),
      line(w("LUCAS", 610, 118)),
      // The date-of-birth number beside noise.
      line(w("3", 600, 200, 12), w("mM", 640, 200, 12)),
    ]);
    expect(fields.surname?.text).toBe("ERIKSSON");
    expect(fields.givenNames?.text).toBe("LUCAS");
    expect(fields.birth).toBeUndefined();
  });

  it("lists the captions left without a value, with the strip their value can be in", () => {
    // A dev ID card photo: the page's OCR read the captions and none of the bold values under them.
    const lines = [
      line(w("Sormame", 384, 1113, 11), w("|", 470, 1113, 11), w("tom", 480, 1113, 11)),
      line(w("Gover", 383, 1174, 11), w("names", 440, 1174, 11)),
      line(w("Document", 382, 1359, 11), w("No.", 470, 1359, 11)),
      line(w("Date", 720, 1359, 11), w("of", 765, 1359, 11), w("expiry", 790, 1359, 11)),
      line(w("Place", 100, 1756, 11), w("of", 150, 1756, 11), w("birth", 175, 1756, 11)),
    ];
    const fields = findFields(lines);
    expect(fields.surname).toBeUndefined(); // "| tom" is the caption's French half, not a name
    const lone = loneCaptions(lines, fields);
    expect(lone.map((c) => c.name)).toEqual(["surname", "documentNumber", "expiry"]);
    const surname = lone[0]!;
    expect(surname.box).toEqual([384, 1113, 510, 1124]);
    expect(surname.columnLeft).toBe(383); // the given-names caption starts a pixel further left
    // The strip under it ends at the next caption below, the number's at the next column's caption.
    expect(surname.bottomLimit).toBe(1174);
    expect(lone[1]!.rightLimit).toBe(720);
    // A caption with its value beside it is not lone.
    const paired = [...lines, line(w("ERIKSSON", 384, 1130, 20))];
    expect(loneCaptions(paired, findFields(paired)).map((c) => c.name)).not.toContain("surname");
  });
});

describe("AAMVA data", () => {
  it("parses the elements of a licence's PDF417 payload and keeps impossible dates as they are", () => {
    const s = makeSpecimen(5, "dl");
    const payload = aamvaPayload(s);
    expect(isAamva(payload)).toBe(true);
    const a = parseAamva(payload);
    expect(a.iin).toBe(s.iin);
    expect(a.surname).toBe(s.person.surname.toUpperCase());
    expect(a.documentNumber).toBe(s.documentNumber);
    expect(a.birth?.date).toEqual(s.person.birth);
    expect(aamvaDate("02301990", "USA", 10).invalid).toMatch(/day 30/);
    expect(aamvaDate("19900230", "CAN", 10).invalid).toMatch(/day 30/);
    expect(aamvaDate("13011990", "USA", 10).invalid).toMatch(/month 13/);
    expect(() => parseAamva("hello")).toThrow(/AAMVA header/);
  });
});

describe("how sure a disagreement is (proof only on confident readings)", () => {
  type Box = [number, number, number, number];
  const w = (text: string, x: number, y: number, confidence = 95) => ({
    text,
    confidence,
    box: [x, y, x + text.length * 20, y + 30] as Box,
  });
  const line = (...words: ReturnType<typeof w>[]) => ({
    text: words.map((x) => x.text).join(" "),
    words,
    box: [words[0]!.box[0], words[0]!.box[1], words[words.length - 1]!.box[2], words[0]!.box[3]] as Box,
  });
  /** The one disagreement of a printed field (found under `label`) with the encoding. */
  const one = (
    encoded: Parameters<typeof disagreements>[0],
    name: "surname" | "givenNames" | "documentNumber" | "birth",
    at: ReturnType<typeof w>,
    label = "Caption",
    order: "dmy" | "mdy" = "dmy",
  ): Disagreement => {
    const out = disagreements(
      encoded,
      { [name]: { name, text: at.text, box: at.box, confidence: at.confidence, label } },
      order,
    );
    expect(out).toHaveLength(1);
    return out[0]!;
  };
  const passport = {
    surname: "HAEKKINEN",
    givenNames: "ZOE",
    documentNumber: "L898902C3",
    birth: { y: 1974, m: 8, d: 12 },
    expiry: { y: 2031, m: 4, d: 15 },
  };
  // The MRZ band, read by the same OCR pass, below the visual zone: never "printed elsewhere".
  const mrzLines = [
    line(w("P<UTOHAEKKINEN<<ZOE<<<<<<<<<<<<<<<<<<<<<<<<<", 0, 900)),
    line(w("L898902C36UTO7408122F3104159<<<<<<<<<<<<<<02", 0, 950)),
  ];

  it("keeps a changed value read confidently twice under its caption as proof", () => {
    const surname = w("MARTINEZ", 300, 100);
    const birth = w("12.08.1976", 300, 300);
    const number = w("L898907C3", 300, 500, 44); // scored low by the OCR, read the same twice under its caption
    const lines = [line(surname), line(birth), line(number), ...mrzLines];
    const ctx = { encoded: passport, lines, mrzTop: 880 };
    expect(readingDoubts(one(passport, "surname", surname), "MARTINEZ", ctx)).toEqual([]);
    expect(readingDoubts(one(passport, "birth", birth), "12.08.1976", ctx)).toEqual([]);
    expect(readingDoubts(one(passport, "documentNumber", number), "L898907C3", ctx)).toEqual([]);
    // A name found by its place rather than its caption, read at 95: still a confident reading.
    expect(readingDoubts(one(passport, "surname", surname, FOUND_BY_VALUE), "MARTINEZ", ctx)).toEqual([]);
  });

  it("does not accuse the document of the OCR's look-alikes, dropped characters or date order", () => {
    const lines: ReturnType<typeof line>[] = [];
    const ctx = { encoded: passport, lines };
    // 2 for Z: a name of three letters has no slip tolerance in the comparison itself.
    const given = w("2OE", 300, 100);
    expect(readingDoubts(one(passport, "givenNames", given), "2OE", ctx)).toContain("ocr_confusion");
    // A dropped glyph in the document number.
    const number = w("L89890C3", 300, 200);
    expect(readingDoubts(one(passport, "documentNumber", number), "L89890C3", ctx)).toContain(
      "ocr_confusion",
    );
    // Day and month in the other order than the reader assumed.
    const birth = w("08.12.1974", 300, 300);
    expect(readingDoubts(one(passport, "birth", birth), "08.12.1974", ctx)).toContain("ocr_confusion");
    // A reading that missed the first letters of the names (its caption's first words were not read).
    const names = { ...passport, givenNames: "ANNA MARIA" };
    const cut = w("NA MARIA", 300, 400);
    expect(readingDoubts(one(names, "givenNames", cut), "NA MARIA", { encoded: names, lines })).toContain(
      "ocr_confusion",
    );
  });

  it("takes a value the encoding has printed elsewhere for a caption paired with the wrong value", () => {
    // A licence: the family-name caption "1" read beside the street line; the family name is printed above.
    const licence = { surname: "OLSEN", givenNames: "TOMAS ERIK", birth: { y: 1961, m: 10, d: 23 } };
    const street = w("KINGSWAY", 330, 300);
    const lines = [line(w("OLSEN", 330, 215)), line(w("1", 300, 300), street)];
    const d = one(licence, "surname", street, "1", "mdy");
    expect(readingDoubts(d, "KINGSWAY", { encoded: licence, lines, order: "mdy" })).toEqual([
      "printed_elsewhere",
    ]);
    // The same print without the family name anywhere else: the printed name was changed.
    expect(readingDoubts(d, "KINGSWAY", { encoded: licence, lines: [lines[1]!], order: "mdy" })).toEqual([]);
  });

  it("holds a third reading that gives the encoded value as a doubt, and no other third reading", () => {
    const lines: ReturnType<typeof line>[] = [];
    const birth = w("12.08.1976", 300, 300);
    const d = one(passport, "birth", birth);
    const ctx = { encoded: passport, lines };
    expect(readingDoubts(d, "12.08.1976", { ...ctx, third: "12.08.1974" })).toEqual(["reading_matches"]);
    // The changed value again, an unreadable third reading, or none: proof stands.
    expect(readingDoubts(d, "12.08.1976", { ...ctx, third: "12.08.1976" })).toEqual([]);
    expect(readingDoubts(d, "12.08.1976", { ...ctx, third: "" })).toEqual([]);
    expect(readingDoubts(d, "12.08.1976", { ...ctx, third: "1Z.O" })).toEqual([]);
    expect(readingDoubts(d, "12.08.1976", ctx)).toEqual([]);
    const surname = w("MARTINEZ", 300, 100);
    const s = one(passport, "surname", surname);
    expect(readingDoubts(s, "MARTINEZ", { ...ctx, third: "HÄKKINEN" })).toEqual(["reading_matches"]);
    expect(readingDoubts(s, "MARTINEZ", { ...ctx, third: "MARTINEZ" })).toEqual([]);
  });

  it("takes a confident third reading that repeats a disagreeing reading as settling it", () => {
    const lines: ReturnType<typeof line>[] = [];
    const ctx = { encoded: passport, lines };
    // Found by its value at a low confidence, the two readings apart by a look-alike (B for 8): a third reading
    // with the field's characters only, confident and equal to the second, makes the changed digit proof.
    const weak = w("LB98907C3", 300, 500, CONFIDENT_WORD - 20);
    const d = one(passport, "documentNumber", weak, FOUND_BY_VALUE);
    expect(readingDoubts(d, "L898907C3", ctx)).toEqual([
      "readings_differ",
      "low_confidence",
      "found_by_value",
    ]);
    const third = (text: string, thirdConfidence: number) =>
      readingDoubts(d, "L898907C3", { ...ctx, third: text, thirdConfidence });
    expect(third("L898907C3", CONFIDENT_WORD + 5)).toEqual([]);
    // Not confident, or another value: the doubts stay.
    expect(third("L898907C3", CONFIDENT_WORD - 5)).toEqual([
      "readings_differ",
      "low_confidence",
      "found_by_value",
    ]);
    expect(third("L898917C3", CONFIDENT_WORD + 5)).toEqual([
      "readings_differ",
      "low_confidence",
      "found_by_value",
    ]);
    // A lowercase letter is the OCR's slip: a capital read there is not the same reading.
    const slip = one(
      passport,
      "documentNumber",
      w("L8989v7C3", 300, 500, CONFIDENT_WORD - 50),
      FOUND_BY_VALUE,
    );
    expect(
      readingDoubts(slip, "L8989v7C3", { ...ctx, third: "L8989V7C3", thirdConfidence: CONFIDENT_WORD + 5 }),
    ).toEqual(["low_confidence", "found_by_value"]);
    // A date read twice at a low confidence, then confidently: its changed year is proof.
    const date = one(passport, "birth", w("12 AUG 1979", 300, 300, CONFIDENT_WORD - 16), FOUND_BY_VALUE);
    expect(readingDoubts(date, "12AUG 1979", ctx)).toEqual(["low_confidence", "found_by_value"]);
    expect(readingDoubts(date, "12AUG 1979", { ...ctx, third: "12 AUG 1979", thirdConfidence: 90 })).toEqual(
      [],
    );
    // A third reading that gives the encoded value is still a doubt of its own.
    expect(readingDoubts(date, "12AUG 1979", { ...ctx, third: "12 AUG 1974", thirdConfidence: 90 })).toEqual([
      "low_confidence",
      "found_by_value",
      "reading_matches",
    ]);
  });

  it("takes three readings that agree as settling their low confidence", () => {
    const lines: ReturnType<typeof line>[] = [];
    const ctx = { encoded: passport, lines };
    // A date found by its value, read at 64, 75 and 56: the three samplings give one changed year.
    const date = one(passport, "birth", w("12 AUG 1979", 300, 300, 64), FOUND_BY_VALUE);
    expect(readingDoubts(date, "12AUG 1979", { ...ctx, third: "12AUG 1979", thirdConfidence: 56 })).toEqual(
      [],
    );
    expect(readingDoubts(date, "12AUG 1979", { ...ctx, third: "12AUG 1978", thirdConfidence: 56 })).toEqual([
      "low_confidence",
      "found_by_value",
    ]);
    // A document number: the lowercase slip of one reading stands for what the other two read there.
    const number = one(passport, "documentNumber", w("L8989e7C3", 300, 500, 61), FOUND_BY_VALUE);
    expect(readingDoubts(number, "L898967C3", { ...ctx, third: "L898967C3", thirdConfidence: 0 })).toEqual(
      [],
    );
    // Two readings with the same slip and a third without it: not two readings of one value.
    expect(readingDoubts(number, "L8989e7C3", { ...ctx, third: "L898967C3", thirdConfidence: 0 })).toEqual([
      "low_confidence",
      "found_by_value",
    ]);
    expect(threeAgree("documentNumber", ["L8989e7C3", "L898967C3", "L898967C3"])).toBe(true);
    expect(threeAgree("documentNumber", ["L8989e7C3", "L898967C3", "L898957C3"])).toBe(false);
    expect(threeAgree("documentNumber", ["L898967C3", "L898967C", "L898967C3"])).toBe(false);
  });

  it("holds a second reading that gives another value, and a low-confidence value found by resemblance, as doubts", () => {
    const lines: ReturnType<typeof line>[] = [];
    const birth = w("12.08.1976", 300, 300);
    expect(readingDoubts(one(passport, "birth", birth), "12.08.1978", { encoded: passport, lines })).toEqual([
      "readings_differ",
    ]);
    const weak = w("L898907C3", 300, 500, CONFIDENT_WORD - 30);
    expect(
      readingDoubts(one(passport, "documentNumber", weak, FOUND_BY_VALUE), "L898907C3", {
        encoded: passport,
        lines,
      }),
    ).toEqual(["low_confidence", "found_by_value"]);
    // The same value read again alone with confidence is a confident reading; read again alone without it, or
    // read otherwise, it is not.
    const again = (text: string, rereadConfidence: number) =>
      readingDoubts(one(passport, "documentNumber", weak, FOUND_BY_VALUE), text, {
        encoded: passport,
        lines,
        rereadConfidence,
      });
    expect(again("L898907C3", CONFIDENT_WORD + 3)).toEqual([]);
    expect(again("L898907C3", CONFIDENT_WORD - 33)).toEqual(["low_confidence", "found_by_value"]);
    expect(again("L898917C3", CONFIDENT_WORD + 10)).toEqual([
      "readings_differ",
      "low_confidence",
      "found_by_value",
    ]);
  });
});
