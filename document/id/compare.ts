import {
  type PrintedDate,
  parsePrintedDate,
  sameDay,
  type VizField,
  type VizFieldName,
  type VizLine,
  type VizWord,
  vizField,
} from "./viz.js";

/**
 * Holds what a machine-readable encoding says (the MRZ, a licence's PDF417) against what the visual zone
 * prints, field by field, tolerating what an OCR reading or the issuer's conventions explain: the ICAO
 * transliteration of names (Ü → UE or U, Å → AA, ß → SS, diacritics dropped, apostrophes removed, spaces and
 * hyphens as fillers), names truncated to the MRZ's width, two-digit years, and OCR look-alikes (0/O, 1/I/L,
 * 5/S, 8/B, 2/Z, 6/G) and one stray character in a long name. What remains is a disagreement.
 */

export interface EncodedValues {
  surname?: string;
  givenNames?: string;
  documentNumber?: string;
  birth?: { y: number; m: number; d: number };
  expiry?: { y: number; m: number; d: number };
  nationality?: string;
}

export interface Disagreement {
  field: VizFieldName;
  /** The value the encoding carries, as a reviewer reads it. */
  encoded: string;
  /** What the visual zone prints. */
  printed: string;
  viz: VizField;
}

const LOOKALIKE: Record<string, string> = {
  O: "0",
  Q: "0",
  D: "0",
  I: "1",
  L: "1",
  S: "5",
  B: "8",
  Z: "2",
  G: "6",
  T: "7",
};
export const foldLookalikes = (s: string) =>
  s
    .toUpperCase()
    // "$" is an S read with its stroke through it (the OCR gives it for a bold S).
    .replace(/\$/g, "S")
    .replace(/[^A-Z0-9]/g, "")
    .replace(/[OQDILSBZGT]/g, (c) => LOOKALIKE[c] ?? c);

/**
 * ICAO 9303 Part 3 (transliteration of Latin characters): the letters with a spelling of their own in the MRZ
 * (the recommended one first, then the plain letter some issuers use), and the letters that Unicode does not
 * decompose into a base letter and a mark (Ø, Ł, Đ...), which the MRZ writes as that base letter.
 */
const TRANSLIT: [RegExp, string[]][] = [
  [/Ä/g, ["AE", "A"]],
  [/Ö/g, ["OE", "O"]],
  [/Ü/g, ["UE", "U"]],
  [/Å/g, ["AA", "A"]],
  [/Æ/g, ["AE"]],
  [/Ø/g, ["OE", "O"]],
  [/Œ/g, ["OE"]],
  [/Ĳ/g, ["IJ"]],
  [/ß/g, ["SS"]],
  [/Þ/g, ["TH"]],
  [/[ĐÐ]/g, ["D"]],
  [/Ł/g, ["L"]],
  [/Ħ/g, ["H"]],
];

/**
 * A name as plain capitals, each letter as its base letter (Ø → O, Ł → L, diacritics dropped; Æ, Œ, ß, Þ, Ĳ
 * as their two letters): what two readings of the same print share when one of them lost a diacritic or a
 * stroke (SØREN read SOREN).
 */
export function baseLetters(s: string): string {
  return s
    .toUpperCase()
    .replace(/Ø/g, "O")
    .replace(/[ĐÐ]/g, "D")
    .replace(/Ł/g, "L")
    .replace(/Ħ/g, "H")
    .replace(/Æ/g, "AE")
    .replace(/Œ/g, "OE")
    .replace(/Ĳ/g, "IJ")
    .replace(/ß|ẞ/g, "SS")
    .replace(/Þ/g, "TH")
    .normalize("NFD")
    .replace(/[\u0300-\u036f]/g, "")
    .replace(/[^A-Z]/g, "");
}

/** The MRZ spellings of a printed name (ICAO 9303 Part 3, 6: transliteration), letters only. */
export function mrzSpellings(printed: string): string[] {
  let forms = [printed.toUpperCase()];
  for (const [re, subs] of TRANSLIT) {
    if (!forms.some((f) => re.test(f))) continue;
    forms = forms.flatMap((f) => subs.map((s) => f.replace(re, s)));
  }
  return [
    ...new Set(
      forms.map((f) =>
        f
          .normalize("NFD")
          .replace(/[\u0300-\u036f]/g, "")
          .replace(/[^A-Z]/g, ""),
      ),
    ),
  ];
}

function distance(a: string, b: string): number {
  const dp = Array.from({ length: b.length + 1 }, (_, i) => i);
  for (let i = 1; i <= a.length; i++) {
    let prev = dp[0]!;
    dp[0] = i;
    for (let j = 1; j <= b.length; j++) {
      const tmp = dp[j]!;
      dp[j] = Math.min(dp[j]! + 1, dp[j - 1]! + 1, prev + (a[i - 1] === b[j - 1] ? 0 : 1));
      prev = tmp;
    }
  }
  return dp[b.length]!;
}

/**
 * A name with the vowel pairs of ICAO transliteration (Ä/Æ → AE, Ö/Ø → OE, Ü → UE, Å → AA) taken back to
 * their first letter: what a printed ÅSTRÖM read without its diacritics (ASTROM) and its MRZ spelling
 * (AASTROEM) have in common.
 */
export const withoutTranslitPairs = (s: string) => s.replace(/AE|OE|UE|AA/g, (p) => p[0]!);

/** Does a printed name agree with the encoded one (letters only, transliterated, maybe truncated)? */
export function sameName(encoded: string, printed: string): boolean {
  // An MRZ holds A-Z only; a licence's barcode may hold the name as printed (ÅSTRÖM): each of its MRZ spellings
  // is the encoded name.
  return mrzSpellings(encoded).some((enc) => sameSpelledName(enc, printed));
}

function sameSpelledName(enc: string, printed: string): boolean {
  if (enc === "") return true;
  // The OCR often drops a diacritic (Å read as A, Ö as O), which the MRZ spells as two letters.
  const plain = lettersOf(printed);
  if (
    plain.length >= 3 &&
    /AE|OE|UE|AA/.test(enc) &&
    withoutTranslitPairs(enc) === withoutTranslitPairs(plain)
  )
    return true;
  for (const form of mrzSpellings(printed)) {
    if (form === enc) return true;
    // The MRZ truncates long names to its width.
    if (enc.length >= 8 && form.startsWith(enc)) return true;
    const folded = (s: string) => s.replace(/[^A-Z]/g, "");
    const d = distance(folded(form), enc);
    // One OCR slip in a name of five letters or more, two in one of twelve or more.
    if (d <= (enc.length >= 12 ? 2 : enc.length >= 5 ? 1 : 0)) return true;
  }
  return false;
}

export function sameNumber(encoded: string, printed: string): boolean {
  const a = foldLookalikes(encoded);
  const b = foldLookalikes(printed);
  if (a === "" || b === "") return true;
  return a === b || (b.length > a.length && b.includes(a));
}

/** Whether a printed name is the encoded sibling name field, or one of its words (a first or middle name). */
function namesSibling(sibling: string | undefined, printed: string): boolean {
  if (!sibling) return false;
  return (
    sameName(sibling, printed) || sibling.split(/[\s<,]+/).some((w) => w.length >= 2 && sameName(w, printed))
  );
}

const two = (n: number) => String(n).padStart(2, "0");
export const showDate = (d: { y: number; m: number; d: number }) => `${d.y}-${two(d.m)}-${two(d.d)}`;
const showPrinted = (p: PrintedDate) =>
  p.twoDigitYear ? `${two(p.y)}-${two(p.m)}-${two(p.d)} (yy-mm-dd)` : showDate(p);

/**
 * The fields on which the encoding and the printed zone disagree. A field the visual zone does not show (or
 * that cannot be read as a value of its kind) is left out: absence is no disagreement.
 */
export function disagreements(
  encoded: EncodedValues,
  printed: Partial<Record<VizFieldName, VizField>>,
  dateOrder: "dmy" | "mdy" = "dmy",
): Disagreement[] {
  const out: Disagreement[] = [];
  // A printed value that is what the encoding holds for the field's sibling (the given names read under the
  // surname's caption; a US licence's expiry, on the holder's birthday, read as the date of birth) is a caption
  // paired with the wrong value, not an altered print: no disagreement.
  const s = printed.surname;
  if (s && encoded.surname && !sameName(encoded.surname, s.text))
    if (!namesSibling(encoded.givenNames, s.text))
      out.push({ field: "surname", encoded: encoded.surname, printed: s.text, viz: s });
  const g = printed.givenNames;
  if (g && encoded.givenNames && !sameName(encoded.givenNames, g.text))
    if (!namesSibling(encoded.surname, g.text))
      out.push({ field: "givenNames", encoded: encoded.givenNames, printed: g.text, viz: g });
  const n = printed.documentNumber;
  if (n && encoded.documentNumber && /\d/.test(n.text) && !sameNumber(encoded.documentNumber, n.text))
    out.push({ field: "documentNumber", encoded: encoded.documentNumber, printed: n.text, viz: n });
  for (const name of ["birth", "expiry"] as const) {
    const f = printed[name];
    const e = encoded[name];
    if (!f || !e) continue;
    const p = parsePrintedDate(f.text, dateOrder);
    const sibling = encoded[name === "birth" ? "expiry" : "birth"];
    if (p && !sameDay(p, e) && !(sibling && sameDay(p, sibling)))
      out.push({ field: name, encoded: showDate(e), printed: `${f.text} (${showPrinted(p)})`, viz: f });
  }
  const nat = printed.nationality;
  if (nat && encoded.nationality) {
    const code = nat.text.toUpperCase().replace(/[^A-Z]/g, "");
    // Only a printed three-letter code (or D) is comparable; a printed demonym ("UTOPIAN") is not.
    if (
      /^[A-Z]{3}$|^D$/.test(code) &&
      code !== encoded.nationality &&
      foldLookalikes(code) !== foldLookalikes(encoded.nationality)
    )
      out.push({ field: "nationality", encoded: encoded.nationality, printed: nat.text, viz: nat });
  }
  return out;
}

/**
 * Fields found by their values where their captions could not be read (captions are small print): the
 * encoded given names and surname printed as words (the surname is the line above the given names in the
 * layouts of ICAO 9303 Part 4/5 when it is not found itself), the document number as the token of its shape
 * nearest to it, the date of birth as the printed date sharing at least two of its day, month and year, and
 * the expiry as a printed date on its day and month, in its year or later.
 * A field found by caption (`byCaption`) is kept.
 */
export function fieldsByValue(
  lines: readonly VizLine[],
  encoded: EncodedValues,
  byCaption: Partial<Record<VizFieldName, VizField>>,
  order: "dmy" | "mdy" = "dmy",
): Partial<Record<VizFieldName, VizField>> {
  const out: Partial<Record<VizFieldName, VizField>> = { ...byCaption };
  const asField = (name: VizFieldName, line: VizLine, words = line.words): VizField =>
    vizField(name, words, FOUND_BY_VALUE);
  const nameLine = (value: string | undefined) =>
    value
      ? lines.find(
          (l) =>
            sameName(value, l.text) &&
            /[A-Za-z]/.test(l.text) &&
            l.text.replace(/[^A-Za-z]/g, "").length <= value.replace(/[^A-Z]/g, "").length + 3,
        )
      : undefined;
  if (!out.givenNames && encoded.givenNames) {
    const l = nameLine(encoded.givenNames);
    if (l) out.givenNames = asField("givenNames", l);
  }
  if (!out.surname && encoded.surname) {
    const l = nameLine(encoded.surname);
    if (l) out.surname = asField("surname", l);
    else if (out.givenNames) {
      // The nearest line above the given names, starting where they start, printed as large as they are: a
      // caption between them (“Given names / Prénoms” over the value) is small print and passed over. Sizes
      // are the lines' heights (tesseract's word boxes of one line vary by half).
      const g = out.givenNames.box;
      const cy = (g[1] + g[3]) / 2;
      const own = lines.find((l) => l.box[1] <= cy && cy <= l.box[3] && l.box[0] <= g[2] && g[0] <= l.box[2]);
      const h = own ? own.box[3] - own.box[1] : g[3] - g[1];
      const above = lines
        .filter(
          (x) =>
            x !== own &&
            x.box[3] <= g[1] + h * 0.2 &&
            g[1] - x.box[3] < h * 4 &&
            Math.abs(x.box[0] - g[0]) < h * 1.5 &&
            x.box[3] - x.box[1] >= h * 0.7,
        )
        .sort((a, b) => b.box[3] - a.box[3])[0];
      // A licence's field number before the name ("1 NOVAK") may be read as punctuation ("+ NOVAK").
      const first = above?.words.findIndex((w) => /[A-Za-zÀ-ÿ]/.test(w.text)) ?? -1;
      const words = above && first >= 0 ? above.words.slice(first) : [];
      const text = words
        .map((w) => w.text)
        .join(" ")
        .trim();
      // A name: capitals, or (printed as large as the given names, so no caption) some read in lower case and
      // a final I read as “!” (“Ross!” for ROSSI on a licence photo, dev draw 13).
      if (above && words.length > 0 && /^[A-ZÀ-Ý][A-Za-zÀ-ÿ' -]*[A-Za-zÀ-ÿ!]$/.test(text))
        out.surname = asField("surname", above, words);
    }
  }
  if (!out.documentNumber && encoded.documentNumber) {
    const want = foldLookalikes(encoded.documentNumber);
    let best: { word: VizWord; line: VizLine; d: number } | undefined;
    for (const line of lines)
      for (const word of line.words) {
        const t = foldLookalikes(word.text);
        if (t.length < Math.max(5, want.length - 1) || t.length > want.length + 1 || !/\d/.test(word.text))
          continue;
        const d = distance(t, want);
        if (d <= 3 && (!best || d < best.d)) best = { word, line, d };
      }
    if (best) out.documentNumber = asField("documentNumber", best.line, [best.word]);
  }
  if (!out.expiry && encoded.expiry) {
    // The expiry: a printed date on its day and month, no earlier than its year. The date of issue shares
    // the expiry's day and month on many documents (issued for whole years), always with an earlier year; no
    // found field's line (the issue date found under its caption) is taken.
    const e = encoded.expiry;
    const taken = Object.values(out).map((f) => f.box);
    for (const line of lines) {
      const p = parsePrintedDate(line.text, order);
      // A two-digit year of an expiry is of this century.
      const y = p && (p.twoDigitYear ? 2000 + p.y : p.y);
      if (!p || y === undefined || p.m !== e.m || p.d !== e.d || y < e.y) continue;
      if (taken.some((b) => overlaps(b, line.box)) || line.text.includes("<")) continue;
      out.expiry = asField("expiry", line);
      if (y === e.y) break;
    }
  }
  if (!out.birth && encoded.birth) {
    const b = encoded.birth;
    for (const line of lines) {
      const p = parsePrintedDate(line.text, order);
      // The expiry date: a US licence expires on its holder's birthday, sharing its day and month.
      if (!p || (encoded.expiry && sameDay(p, encoded.expiry))) continue;
      const y = p.twoDigitYear ? b.y % 100 : b.y;
      const shared = Number(p.y === y) + Number(p.m === b.m) + Number(p.d === b.d);
      if (shared >= 2) {
        out.birth = asField("birth", line);
        if (shared === 3) break;
      }
    }
  }
  return out;
}

// ---------------------------------------------------------------------------------------------
// How sure a disagreement is (issue 20's rule: a mismatch between two readings is proof only when both
// readings are confident; what the OCR's own confusions or a misplaced caption explain is an anomaly)
// ---------------------------------------------------------------------------------------------

/**
 * Why a disagreement between an encoding and the printed zone may be the reading's, not the document's:
 * - `readings_differ`: the second reading of the printed field (alone, at twice the resolution) gives another
 *   value than the first;
 * - `low_confidence`: the OCR was unsure of a word of the printed value;
 * - `found_by_value`: no caption was read for the field; it was found by resembling the encoded value;
 * - `ocr_confusion`: the difference is what OCR look-alikes (O/0, I/1/L, S/5, B/8, Z/2, G/6), diacritics,
 *   a dropped or added character, truncation, spacing or the day/month order explain;
 * - `printed_elsewhere`: the encoded value is printed elsewhere in the visual zone, so the caption was paired
 *   with another value;
 * - `reading_matches`: a third reading of the field (another resolution, the field's characters only) gives
 *   the encoded value: the other two readings are not the only way to read the print.
 */
export type ReadingDoubt =
  | "readings_differ"
  | "low_confidence"
  | "found_by_value"
  | "ocr_confusion"
  | "printed_elsewhere"
  | "reading_matches";

/**
 * Tesseract's word confidence (0-100) below which a printed value is not read with confidence. Calibrated on
 * the development IDs: see docs/calibration.md ("Identity documents: printed-field confidence").
 */
export const CONFIDENT_WORD = 80;

/** The label `fieldsByValue` gives a field it found by its value. */
export const FOUND_BY_VALUE = "(found by its value)";

const lettersOf = baseLetters;

/** Whether two readings of a printed field give the same value of its kind. */
export function sameReading(
  field: VizFieldName,
  a: string,
  b: string,
  order: "dmy" | "mdy" = "dmy",
): boolean {
  if (field === "birth" || field === "expiry" || field === "issue") {
    const p = parsePrintedDate(a, order);
    const q = parsePrintedDate(b, order);
    return !!p && !!q && p.y === q.y && p.m === q.m && p.d === q.d && p.twoDigitYear === q.twoDigitYear;
  }
  if (field === "documentNumber")
    return a.toUpperCase().replace(/[^A-Z0-9]/g, "") === b.toUpperCase().replace(/[^A-Z0-9]/g, "");
  // A name's capital I is read as “!” at times (“Ross!” and “ROSSI”): the same letter.
  const name = (s: string) => lettersOf(s.replace(/!/g, "I"));
  return name(a) !== "" && name(a) === name(b);
}

/**
 * Whether two readings give the same value character for character: a document number's case counts (documents
 * print capitals, so a lowercase letter is the OCR's slip, never the same reading as the capital or digit
 * another reading has there); dates and names as `sameReading`.
 */
function exactReading(field: VizFieldName, a: string, b: string, order: "dmy" | "mdy"): boolean {
  if (field === "documentNumber") {
    const strip = (s: string) => s.replace(/[^A-Za-z0-9]/g, "");
    return strip(a) !== "" && strip(a) === strip(b);
  }
  return sameReading(field, a, b, order);
}

/**
 * Whether three readings give one value: dates and names as `sameReading`, each pair; a document number
 * character for character, where a lowercase letter (the OCR's slip: documents print capitals) stands for
 * whatever the other readings have there, and at least two of the readings are the same without such slips.
 */
export function threeAgree(
  field: VizFieldName,
  readings: readonly [string, string, string],
  order: "dmy" | "mdy" = "dmy",
): boolean {
  if (field !== "documentNumber") {
    const [a, b, c] = readings;
    return (
      sameReading(field, a, b, order) && sameReading(field, b, c, order) && sameReading(field, a, c, order)
    );
  }
  const rs = readings.map((r) => r.replace(/[^A-Za-z0-9]/g, ""));
  const n = rs[0]!.length;
  if (n < 4 || rs.some((r) => r.length !== n)) return false;
  for (let i = 0; i < n; i++) {
    const known = new Set(rs.map((r) => r[i]!).filter((c) => !/[a-z]/.test(c)));
    if (known.size > 1) return false;
  }
  const exact = rs.filter((r) => !/[a-z]/.test(r));
  return exact.length >= 2;
}

const DIGIT_AS_LETTER: Record<string, string> = {
  "0": "O",
  "1": "I",
  "5": "S",
  "8": "B",
  "2": "Z",
  "6": "G",
};
/** A name as letters, the digits an OCR gives for look-alike letters turned back, L read as I. */
const nameFold = (s: string) =>
  baseLetters(s.toUpperCase().replace(/[012568]/g, (c) => DIGIT_AS_LETTER[c] ?? c))
    .replace(/L/g, "I")
    .replace(/Q/g, "O");

/** Whether `a` becomes `b` by inserting or deleting at most `max` characters (no substitution). */
function indelsOnly(a: string, b: string, max: number): boolean {
  const [s, l] = a.length <= b.length ? [a, b] : [b, a];
  if (l.length - s.length > max) return false;
  // Longest common subsequence equal to the shorter string.
  let i = 0;
  for (const c of l) if (i < s.length && s[i] === c) i++;
  return i === s.length;
}

const LETTER_AS_DIGIT: Record<string, string> = {
  S: "5",
  B: "8",
  Z: "2",
  G: "6",
  T: "7",
  O: "0",
  Q: "0",
  D: "0",
  I: "1",
  L: "1",
};

/**
 * Whether the difference between an encoded value and its printed reading is what an OCR's confusions explain
 * (see ReadingDoubt `ocr_confusion`): never a changed letter or digit that no look-alike accounts for.
 */
export function explainedByOcr(
  field: VizFieldName,
  encoded: EncodedValues,
  printed: string,
  order: "dmy" | "mdy" = "dmy",
): boolean {
  if (field === "surname" || field === "givenNames") {
    const e = encoded[field];
    if (!e) return false;
    const enc = nameFold(e);
    const words = e
      .split(/[\s<,]+/)
      .map(nameFold)
      .filter((w) => w.length >= 2);
    for (const form of mrzSpellings(printed.replace(/[012568]/g, (c) => DIGIT_AS_LETTER[c] ?? c))) {
      const p = nameFold(form);
      if (p === "") continue;
      if (p === enc || words.includes(p)) return true;
      // Truncated (the field's width, a name wrapped to the next line, a reading that missed its first
      // letters) or one glyph dropped or doubled.
      if (p.length >= 3 && (enc.startsWith(p) || p.startsWith(enc) || enc.endsWith(p))) return true;
      if (enc.length >= 4 && indelsOnly(p, enc, 1)) return true;
    }
    return false;
  }
  if (field === "documentNumber") {
    if (!encoded.documentNumber) return false;
    const a = foldLookalikes(encoded.documentNumber);
    const b = foldLookalikes(printed);
    return a === b || indelsOnly(a, b, 2);
  }
  if (field === "birth" || field === "expiry") {
    const e = encoded[field];
    if (!e) return false;
    const folded = printed
      .toUpperCase()
      .replace(/(?<=\d)[SBZGTOQDIL]|[SBZGTOQDIL](?=\d)/g, (c) => LETTER_AS_DIGIT[c] ?? c);
    const other = order === "dmy" ? "mdy" : "dmy";
    for (const [text, o] of [
      [folded, order],
      [printed, other],
      [folded, other],
    ] as const) {
      const p = parsePrintedDate(text, o);
      if (p && sameDay(p, e)) return true;
    }
    return false;
  }
  if (field === "nationality")
    return !!encoded.nationality && foldLookalikes(printed) === foldLookalikes(encoded.nationality);
  return false;
}

/**
 * Whether a reading of a printed field is a value of its kind that agrees with the encoded one (an empty or
 * unreadable reading agrees with nothing).
 */
export function readsAsEncoded(
  field: VizFieldName,
  encoded: EncodedValues,
  text: string,
  order: "dmy" | "mdy" = "dmy",
): boolean {
  if (field === "surname" || field === "givenNames") {
    const e = encoded[field];
    return !!e && lettersOf(text).length >= 2 && sameName(e, text);
  }
  if (field === "documentNumber") {
    const e = encoded.documentNumber;
    return !!e && /\d/.test(text) && foldLookalikes(text) === foldLookalikes(e);
  }
  if (field === "birth" || field === "expiry") {
    const e = encoded[field];
    const p = parsePrintedDate(text, order);
    return !!e && !!p && sameDay(p, e);
  }
  if (field === "nationality")
    return !!encoded.nationality && foldLookalikes(text) === foldLookalikes(encoded.nationality);
  return false;
}

const overlaps = (a: readonly number[], b: readonly number[]) =>
  a[0]! < b[2]! && b[0]! < a[2]! && a[1]! < b[3]! && b[1]! < a[3]!;

/**
 * Whether the encoded value of `field` is printed somewhere else in the visual zone than the field's own box
 * (lines at or below `belowY`, the MRZ band, and lines holding `<` fillers are not the visual zone).
 */
export function printedElsewhere(
  field: VizFieldName,
  encoded: EncodedValues,
  lines: readonly VizLine[],
  ownBox: readonly number[],
  order: "dmy" | "mdy" = "dmy",
  belowY = Number.POSITIVE_INFINITY,
): boolean {
  for (const line of lines) {
    if (line.box[1] >= belowY || line.text.includes("<")) continue;
    const words = line.words.filter((w) => !overlaps(w.box, ownBox));
    // Runs of consecutive words that are not the field's own.
    const runs: VizWord[][] = [[]];
    for (const w of line.words) {
      if (words.includes(w)) runs[runs.length - 1]!.push(w);
      else runs.push([]);
    }
    for (const run of runs) {
      for (let i = 0; i < run.length; i++) {
        for (let j = i + 1; j <= Math.min(run.length, i + 4); j++) {
          const text = run
            .slice(i, j)
            .map((w) => w.text)
            .join(" ");
          if (field === "surname" || field === "givenNames") {
            const e = encoded[field];
            if (e && lettersOf(text).length <= lettersOf(e).length + 1 && sameName(e, text)) return true;
          } else if (field === "documentNumber") {
            const e = encoded.documentNumber;
            if (e && j === i + 1 && foldLookalikes(text) === foldLookalikes(e)) return true;
          } else if (field === "birth" || field === "expiry") {
            const e = encoded[field];
            const p = e && parsePrintedDate(text, order);
            if (e && p && sameDay(p, e)) return true;
          }
        }
      }
    }
  }
  return false;
}

/**
 * The doubts about a disagreement found on a first reading and read again (`reread`) that keep it from being
 * proof: none, and the disagreement is proof; any, and it is at most an anomaly.
 *
 * A printed reading is confident when two readings (the page, then the field alone at twice the resolution)
 * give the same value, and it is either read (by either reading) with a word confidence of at least
 * CONFIDENT_WORD or found under its own caption: each of `low_confidence` and `found_by_value` alone is no doubt (a document number the OCR
 * scores low but reads the same twice under "Document No." is a confident reading; so is a name read at 94
 * where its caption was not read), the two together are. `readings_differ`, `ocr_confusion` and
 * `printed_elsewhere` are doubts on their own: what the OCR or a misplaced caption explains is never proof.
 */
export function readingDoubts(
  d: Disagreement,
  reread: string,
  ctx: {
    encoded: EncodedValues;
    lines: readonly VizLine[];
    order?: "dmy" | "mdy";
    /** Where the MRZ band starts in the lines' coordinates (it is not the visual zone). */
    mrzTop?: number;
    /** A third reading of the printed field, when one was made. */
    third?: string;
    /** The confidence of the third reading's least sure word, when it was made. */
    thirdConfidence?: number;
    /** The confidence of the second reading's least sure word, when it was made on the field alone. */
    rereadConfidence?: number;
  },
): ReadingDoubt[] {
  const order = ctx.order ?? "dmy";
  const out: ReadingDoubt[] = [];
  // A confident third reading (the field's characters only, another sampling) that repeats the first or the
  // second reading character for character settles which reading is the print's, and reads it confidently.
  const third = ctx.third;
  // So do three readings (three samplings, one of them restricted to the field's characters) that agree
  // whatever their confidence: one slip repeated by all three is far less likely than one word scored low.
  const thirdSettles =
    third !== undefined &&
    (((ctx.thirdConfidence ?? 0) >= CONFIDENT_WORD &&
      (exactReading(d.field, third, d.viz.text, order) || exactReading(d.field, third, reread, order))) ||
      threeAgree(d.field, [d.viz.text, reread, third], order));
  const same = sameReading(d.field, d.viz.text, reread, order);
  if (!same && !thirdSettles) out.push("readings_differ");
  // A second reading of the field alone that gives the same value confidently makes the value confident.
  const confident =
    d.viz.confidence >= CONFIDENT_WORD ||
    (same && (ctx.rereadConfidence ?? 0) >= CONFIDENT_WORD) ||
    thirdSettles;
  if (!confident && d.viz.label === FOUND_BY_VALUE) out.push("low_confidence", "found_by_value");
  if (
    explainedByOcr(d.field, ctx.encoded, d.viz.text, order) ||
    explainedByOcr(d.field, ctx.encoded, reread, order)
  )
    out.push("ocr_confusion");
  if (printedElsewhere(d.field, ctx.encoded, ctx.lines, d.viz.box, order, ctx.mrzTop))
    out.push("printed_elsewhere");
  if (ctx.third !== undefined && readsAsEncoded(d.field, ctx.encoded, ctx.third, order))
    out.push("reading_matches");
  return out;
}
