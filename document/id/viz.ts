import type { IdOcr, OcrLine } from "./id-ocr.js";
import type { GreyImage, Point } from "./geometry.js";

/**
 * The visual inspection zone (VIZ) of an identity document: its OCR'd lines with word boxes, the fields a
 * reviewer compares with the MRZ or the barcode (name, document number, dates, nationality) found by their
 * labels (ICAO 9303 Part 3 field captions in the languages documents print, and the AAMVA field numbers of
 * US/Canadian licences), and dates read in the forms documents print them ("12 AUG/AOÛT 74", "12.08.1974",
 * "1974-08-12", "08/12/1974").
 */

export type VizFieldName =
  | "surname"
  | "givenNames"
  | "documentNumber"
  | "birth"
  | "expiry"
  | "nationality"
  | "issue";
/** Captions recognised so that their words are not taken for another field's (never compared). */
type OtherCaption = "placeOfBirth" | "authority" | "type" | "code" | "sex";

export interface VizWord {
  text: string;
  confidence: number;
  /** [x0, y0, x1, y1] in the pixels of the image the lines were read from. */
  box: [number, number, number, number];
}

export interface VizLine {
  text: string;
  words: VizWord[];
  box: [number, number, number, number];
}

export interface VizField {
  name: VizFieldName;
  /** The value as printed (the words after or under the label). */
  text: string;
  box: [number, number, number, number];
  confidence: number;
  /** The label it was found by. */
  label: string;
}

/**
 * Caption words of each field, in the languages documents print (single words or short phrases), and the
 * AAMVA field numbers licences print beside their values. Captions are small print, so they are matched
 * loosely: a word of five or six letters may differ from its caption word in one letter, a longer one in
 * one letter in three ("Sumame" for "Surname").
 */
const CAPTIONS: Record<VizFieldName | OtherCaption, string[]> = {
  placeOfBirth: [
    "place of birth",
    "lieu de naissance",
    "geburtsort",
    "lugar de nacimiento",
    "luogo di nascita",
  ],
  authority: ["authority", "autorite", "autorité", "behorde", "behörde"],
  type: ["type"],
  code: ["code"],
  sex: ["sex", "sexe", "geschlecht", "sexo", "sesso", "15"],
  surname: [
    "surname",
    "nom",
    "apellidos",
    "apellido",
    "cognome",
    "achternaam",
    "efternamn",
    "familienname",
    "nachname",
    "name",
    "LN",
    "1",
  ],
  givenNames: [
    "given names",
    "given name",
    "prenoms",
    "prénoms",
    "vornamen",
    "nombres",
    "nome",
    "voornamen",
    "fornamn",
    "förnamn",
    "FN",
    "2",
  ],
  documentNumber: [
    "passport no",
    "document no",
    "card no",
    "passeport",
    "dokumentnummer",
    "DLN",
    "LIC",
    "license no",
    "4d",
  ],
  birth: [
    "date of birth",
    "birth",
    "naissance",
    "geburtsdatum",
    "nacimiento",
    "nascita",
    "geboortedatum",
    "fodelsedatum",
    "DOB",
    "3",
  ],
  expiry: [
    "date of expiry",
    "expiry",
    "expiration",
    "valid until",
    "gultig bis",
    "caducidad",
    "scadenza",
    "vervaldatum",
    "EXP",
    "4b",
  ],
  nationality: [
    "nationality",
    "nationalite",
    "nationalité",
    "staatsangehorigkeit",
    "nacionalidad",
    "cittadinanza",
    "nationaliteit",
  ],
  issue: [
    "date of issue",
    "issue",
    "delivrance",
    "délivrance",
    "ausstellung",
    "expedicion",
    "rilascio",
    "ISS",
    "4a",
  ],
};

const fold = (s: string) =>
  s
    .toLowerCase()
    .normalize("NFD")
    .replace(/[\u0300-\u036f]/g, "")
    .replace(/[^a-z0-9 ]/g, "");

function near(word: string, caption: string): boolean {
  if (word === caption) return true;
  if (caption.length < 5 || /\d/.test(caption)) return false;
  return editDistance(word, caption) <= (caption.length >= 7 ? Math.floor(caption.length / 3) : 1);
}

function editDistance(a: string, b: string): number {
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

/** The field whose caption starts at word `i` of `words`, and how many words the caption takes. */
function captionAt(
  words: readonly string[],
  i: number,
): { name: VizFieldName | OtherCaption; length: number } | undefined {
  let best: { name: VizFieldName | OtherCaption; length: number } | undefined;
  for (const [name, captions] of Object.entries(CAPTIONS) as [VizFieldName | OtherCaption, string[]][]) {
    for (const caption of captions) {
      const parts = fold(caption).split(" ");
      if (i + parts.length > words.length) continue;
      // AAMVA numbers and short codes only as a word of their own, exactly.
      const ok = parts.every((p, k) => {
        const w = fold(words[i + k]!);
        return p.length <= 3 ? w === p && words[i + k]!.replace(/[:.]$/, "").length === p.length : near(w, p);
      });
      if (ok && (!best || parts.length > best.length)) best = { name, length: parts.length };
    }
  }
  return best;
}

const COMPARED: Record<VizFieldName, true> = {
  surname: true,
  givenNames: true,
  documentNumber: true,
  birth: true,
  expiry: true,
  nationality: true,
  issue: true,
};

/** Words that continue a caption rather than start a value (the other language, separators). */
const CAPTION_WORD =
  /^(\/|type|code|sex|sexe|place|lieu|authority|autorit[ée]|of|de|du|la|le|des|date|d|no\.?|n[°º]|[a-z]{1,2})$/i;

const height = (b: readonly number[]) => b[3]! - b[1]!;

/**
 * Finds the labelled fields in OCR'd lines. The value of a label is on its line after it (separated by a
 * gap or a colon), or else on the nearest line below that starts under the label.
 */
export function findFields(lines: readonly VizLine[]): Partial<Record<VizFieldName, VizField>> {
  const out: Partial<Record<VizFieldName, VizField>> = {};
  const sorted = [...lines].sort((a, b) => a.box[1] - b.box[1]);
  for (const line of sorted) {
    const texts = line.words.map((w) => w.text);
    for (let i = 0; i < texts.length; i++) {
      const found = captionAt(texts, i);
      if (!found) continue;
      const first = i;
      const last = i + found.length - 1;
      i = last;
      if (!(found.name in COMPARED) || out[found.name as VizFieldName]) continue;
      const cap = { name: found.name as VizFieldName };
      const labelBox = line.words[first]!.box;
      const h = Math.max(6, height(line.box));
      // The rest of a bilingual caption ("Date of birth / Date de naissance") is no value.
      let k = last + 1;
      while (
        k < line.words.length &&
        line.words[k]!.box[0] - line.words[k - 1]!.box[2] <= h * 1.2 &&
        (CAPTION_WORD.test(line.words[k]!.text) ||
          captionAt(texts, k) ||
          /^[a-zà-ÿ]/.test(line.words[k]!.text))
      )
        k++;
      const after = valueWords(line.words.slice(k), h);
      const gapOk =
        after.length > 0 &&
        (after[0]!.box[0] - line.words[k - 1]!.box[2] > h * 0.6 || /:$/.test(line.words[k - 1]!.text));
      if (gapOk && !captionAt(texts, k) && plausibleValue(cap.name, after)) {
        out[cap.name] = vizField(cap.name, after, texts.slice(first, last + 1).join(" "));
        continue;
      }
      // The line below, starting under the caption.
      const below = sorted.find(
        (l) =>
          l !== line &&
          l.box[1] > line.box[1] + h * 0.5 &&
          l.box[1] - line.box[3] < h * 2.6 &&
          Math.abs(l.box[0] - labelBox[0]) < h * 3,
      );
      if (!below) continue;
      const belowTexts = below.words.map((w) => w.text);
      if (captionAt(belowTexts, 0)) continue;
      const startAt = below.words.findIndex((w) => w.box[2] > labelBox[0] - h * 2);
      const words = valueWords(below.words.slice(Math.max(0, startAt)), Math.max(6, height(below.box)));
      if (words.length && plausibleValue(cap.name, words))
        out[cap.name] = vizField(cap.name, words, texts.slice(first, last + 1).join(" "));
    }
  }
  return out;
}

/** A caption of a compared field whose value was not read (findFields found none for its field). */
export interface LoneCaption {
  name: VizFieldName;
  /** The caption's words, as read. */
  text: string;
  box: [number, number, number, number];
  /** The height of the caption's letters. */
  glyph: number;
  /**
   * Where its column starts: the leftmost start of the lines near it that start left of it by a few heights
   * (the caption's first words may not have been read: "ames / Prénoms" for "Given names / Prénoms").
   */
  columnLeft: number;
  /** Where the next caption on its line starts (the value below ends before it), or the line's end. */
  rightLimit: number;
  /** Where the next line read below it starts (at least two caption heights down), or infinity. */
  bottomLimit: number;
}

/**
 * Captions of compared fields that findFields paired with no value: the OCR of a whole page sometimes reads a
 * caption and skips the bold value under it, which a reading of the strip under the caption alone finds.
 */
export function loneCaptions(
  lines: readonly VizLine[],
  fields: Partial<Record<VizFieldName, VizField>>,
): LoneCaption[] {
  const out: LoneCaption[] = [];
  for (const line of lines) {
    const h = Math.max(6, height(line.box));
    // Runs of words no further apart than a couple of heights: a caption, with its other language, is one.
    const runs: VizWord[][] = [];
    for (const w of line.words) {
      const run = runs[runs.length - 1];
      if (run && w.box[0] - run[run.length - 1]!.box[2] <= h * 1.6) run.push(w);
      else runs.push([w]);
    }
    for (const run of runs) {
      const texts = run.map((w) => w.text);
      let name: VizFieldName | undefined;
      for (let i = 0; i < texts.length && !name; i++) {
        const c = captionAt(texts, i);
        // AAMVA numbers ("1", "4d") are too short to stand for a caption without their value beside them.
        if (!c || (c.length === 1 && fold(texts[i]!).length <= 3)) continue;
        if (!(c.name in COMPARED)) break;
        name = c.name as VizFieldName;
      }
      if (!name || fields[name] || out.some((o) => o.name === name)) continue;
      const box: [number, number, number, number] = [
        run[0]!.box[0],
        Math.min(...run.map((w) => w.box[1])),
        run[run.length - 1]!.box[2],
        Math.max(...run.map((w) => w.box[3])),
      ];
      // Word boxes of small print may be inflated (a "|" read with its rule); the line's height is the caption's.
      const heights = run.map((w) => height(w.box)).sort((a, b) => a - b);
      const glyph = Math.max(6, Math.min(h, heights[Math.floor(heights.length / 2)]!));
      box[1] = Math.max(box[1], line.box[1]);
      box[3] = Math.min(box[3], box[1] + glyph);
      // The value under it ends before what is printed to its right at its height (the next column's caption)
      // and before the next line read under it (the next caption).
      let rightLimit = Number.POSITIVE_INFINITY;
      let bottomLimit = Number.POSITIVE_INFINITY;
      let columnLeft = box[0];
      for (const other of lines) {
        if (
          Math.abs(other.box[1] - box[1]) < 8 * glyph &&
          other.box[0] < box[0] &&
          other.box[0] > box[0] - 12 * glyph
        )
          columnLeft = Math.min(columnLeft, other.box[0]);
        for (const w of other.words) {
          if (w.box[0] > box[2] + glyph && w.box[1] < box[3] && w.box[3] > box[1])
            rightLimit = Math.min(rightLimit, w.box[0]);
          if (w.box[1] > box[3] + 2 * glyph && w.box[0] < box[2] && w.box[2] > box[0])
            bottomLimit = Math.min(bottomLimit, w.box[1]);
        }
      }
      out.push({ name, text: texts.join(" "), box, glyph, columnLeft, rightLimit, bottomLimit });
    }
  }
  return out;
}

/**
 * Whether words read after or under a caption can be the value of its field at all: a name holds no run of
 * digits (an address line, a date or a licence's next field read beside a misplaced caption) and is not
 * itself caption text (the caption's other language, "/ Nom", read as its value); a date reads as a date; a
 * document number holds a digit. A caption whose value is implausible is paired with the wrong words: the
 * field is looked for under it, or by its value, instead.
 */
export function plausibleValue(name: VizFieldName, words: readonly VizWord[]): boolean {
  const text = words.map((w) => w.text).join(" ");
  // A bilingual caption's separator: what follows is the caption's other language ("| Nom"), not a value.
  if (/^[/|]/.test(words[0]?.text ?? "")) return false;
  if (name === "surname" || name === "givenNames") {
    if (/\d{2}/.test(text) || (text.match(/\d/g) ?? []).length > 1) return false;
    const texts = words.map((w) => w.text).filter((t) => /[A-Za-zÀ-ÿ]/.test(t));
    if (texts.length === 0) return false;
    // Caption words only ("/ Nom", "Prénoms", "Given names"), in the small mixed-case print of captions: the
    // caption's other half. Names print in capitals (a surname NOME is a name).
    const captionOnly = texts.every(
      (t, i) => captionAt(texts, i) !== undefined || CAPTION_WORD.test(t.replace(/[:.,]$/, "")),
    );
    return !captionOnly || texts.every((t) => t === t.toUpperCase() && t.length > 3);
  }
  if (name === "birth" || name === "expiry" || name === "issue")
    return parsePrintedDate(text) !== undefined || parsePrintedDate(text, "mdy") !== undefined;
  if (name === "documentNumber") return /\d/.test(text);
  return true;
}

/** The first run of words with gaps no wider than a couple of character heights. */
export function valueWords(words: VizWord[], h: number): VizWord[] {
  const out: VizWord[] = [];
  for (const w of words) {
    if (out.length && w.box[0] - out[out.length - 1]!.box[2] > h * 1.6) break;
    if (w.text.trim() === "") continue;
    out.push(w);
  }
  return out;
}

/**
 * A field's reading from the words of its value: their text joined, the box around them, and the confidence
 * of the least sure of them (a value is read as surely as its worst word). `words` is not empty.
 */
export function vizField(name: VizFieldName, words: readonly VizWord[], label: string): VizField {
  return {
    name,
    text: words.map((w) => w.text).join(" "),
    box: [
      Math.min(...words.map((w) => w.box[0])),
      Math.min(...words.map((w) => w.box[1])),
      Math.max(...words.map((w) => w.box[2])),
      Math.max(...words.map((w) => w.box[3])),
    ],
    confidence: Math.min(...words.map((w) => w.confidence)),
    label,
  };
}

// ---------------------------------------------------------------------------------------------
// Dates as documents print them
// ---------------------------------------------------------------------------------------------

const MONTHS: [RegExp, number][] = [
  [/^(JAN|JANV|JANVIER|ENE|GEN|JANUARY)$/, 1],
  [/^(FEB|F[ÉE]V|FEVR?|FEBRUARY|FEBR)$/, 2],
  [/^(MAR|MARS|M[ÄA]R|MRT|MARCH|MARZ)$/, 3],
  [/^(APR|AVR|ABR|APRIL)$/, 4],
  [/^(MAY|MAI|MAG|MEI|MAJ|MAYO)$/, 5],
  [/^(JUN|JUIN|GIU|JUNE|JUNI)$/, 6],
  [/^(JUL|JUIL|LUG|JULY|JULI)$/, 7],
  [/^(AUG|AO[ÛU]T?|AGO|AUGUST)$/, 8],
  [/^(SEP|SEPT|SET|SEPTEMBER)$/, 9],
  [/^(OCT|OKT|OTT|OCTOBER)$/, 10],
  [/^(NOV|NOVEMBER)$/, 11],
  [/^(DEC|D[ÉE]C|DEZ|DIC|DES|DECEMBER)$/, 12],
];

export interface PrintedDate {
  /** Four-digit year when printed so, else the two digits as printed (yy < 100). */
  y: number;
  m: number;
  d: number;
  twoDigitYear: boolean;
}

/** The letters a month's name may begin with, by the digit an OCR reads them as. */
const MONTH_INITIAL: Record<string, string> = { "0": "O", "5": "S", "4": "A", "6": "G" };

const monthOf = (s: string) => MONTHS.find(([re]) => re.test(s.toUpperCase()))?.[1];

/** Reads one printed date; `order` decides numeric d/m vs m/d (US documents print month first). */
export function parsePrintedDate(text: string, order: "dmy" | "mdy" = "dmy"): PrintedDate | undefined {
  const t = text
    .toUpperCase()
    .replace(/[OQ](?=\d)|(?<=\d)[OQ]/g, "0")
    .replace(/(?<=\d)[IL]|[IL](?=\d)/g, "1")
    .trim();
  // 12 AUG/AOÛT 74, 12 AUG 1974
  let m =
    /(\d{1,2})\s*[ .-]?\s*([A-ZÀ-Ý]{3,9})\.?(?:\s*\/\s*[A-ZÀ-Ý]{3,9}\.?)?\s*[ .-]?\s*(\d{4}|\d{2})\b/.exec(t);
  if (m) {
    const month = monthOf(m[2]!);
    if (month) return make(Number(m[3]), month, Number(m[1]), m[3]!.length === 2);
  }
  // 31 OCT 98 read with the month's first letter as its digit look-alike (“310CT 98”: the space lost, O read
  // as 0): the day's digits, then 0/5/4/6 for O/S/A/G and the rest of a month's name.
  m =
    /(\d{1,2})\s*[ .-]?\s*([0546])([A-ZÀ-Ý]{2,8})\.?(?:\s*\/\s*[A-ZÀ-Ý]{3,9}\.?)?\s*[ .-]?\s*(\d{4}|\d{2})\b/.exec(
      t,
    );
  if (m) {
    const month = monthOf(MONTH_INITIAL[m[2]!]! + m[3]!);
    if (month) return make(Number(m[4]), month, Number(m[1]), m[4]!.length === 2);
  }
  // 1974-08-12 (a separator may be read with a space beside it, or lost: 1974-0812)
  const sep = String.raw`(?:\s*[-./]\s*|\s+)`;
  m = new RegExp(String.raw`\b(\d{4})${sep}(\d{1,2})${sep}(\d{1,2})\b`).exec(t);
  if (m) return make(Number(m[1]), Number(m[2]), Number(m[3]), false);
  m = /\b((?:19|20)\d{2})(?:[-./](\d{2})(\d{2})|(\d{2})[-./](\d{2}))\b/.exec(t);
  if (m) {
    const p = make(Number(m[1]), Number(m[2] ?? m[4]), Number(m[3] ?? m[5]), false);
    if (p) return p;
  }
  // 12.08.1974, 08/12/1974, 12 08 74, 08/12/ 1974
  m = new RegExp(String.raw`\b(\d{1,2})${sep}(\d{1,2})${sep}(\d{4}|\d{2})\b`).exec(t);
  if (m) {
    const a = Number(m[1]);
    const b = Number(m[2]);
    const [d, mo] = order === "mdy" ? [b, a] : [a, b];
    return make(Number(m[3]), mo, d, m[3]!.length === 2);
  }
  // 08/12/1974 with both slashes read as 1 (0811211974, or 081121 1974 with the space the second slash left):
  // ten digits, a four-digit year of this or the last century
  m = /\b(\d{2})1(\d{2})1\s?((?:19|20)\d{2})\b/.exec(t);
  if (m) {
    const a = Number(m[1]);
    const b = Number(m[2]);
    const [d, mo] = order === "mdy" ? [b, a] : [a, b];
    const p = make(Number(m[3]), mo, d, false);
    if (p) return p;
  }
  // 12081974 (some licences print digits only)
  m = /\b(\d{2})(\d{2})(\d{4})\b/.exec(t);
  if (m) {
    const a = Number(m[1]);
    const b = Number(m[2]);
    const [d, mo] = order === "mdy" ? [b, a] : [a, b];
    return make(Number(m[3]), mo, d, false);
  }
  return undefined;
}

function make(y: number, m: number, d: number, twoDigitYear: boolean): PrintedDate | undefined {
  if (m < 1 || m > 12 || d < 1 || d > 31) return undefined;
  return { y, m, d, twoDigitYear };
}

/** Does a printed date show the same day as a full date (two-digit years compared modulo 100)? */
export function sameDay(p: PrintedDate, full: { y: number; m: number; d: number }): boolean {
  return p.m === full.m && p.d === full.d && (p.twoDigitYear ? p.y === full.y % 100 : p.y === full.y);
}

// ---------------------------------------------------------------------------------------------
// Reading
// ---------------------------------------------------------------------------------------------

/** OCR lines as VIZ lines, their boxes mapped by `toSource` (e.g. from a rectified page to the image). */
export function vizLines(lines: OcrLine[], toSource: (p: Point) => Point = (p) => p): VizLine[] {
  const mapBox = (b: [number, number, number, number]): [number, number, number, number] => {
    const pts = [
      toSource([b[0], b[1]]),
      toSource([b[2], b[1]]),
      toSource([b[2], b[3]]),
      toSource([b[0], b[3]]),
    ];
    return [
      Math.min(...pts.map((p) => p[0])),
      Math.min(...pts.map((p) => p[1])),
      Math.max(...pts.map((p) => p[0])),
      Math.max(...pts.map((p) => p[1])),
    ];
  };
  return lines
    .map((l) => ({
      text: l.text,
      box: l.box,
      words: l.words
        .filter((w) => w.text.trim() !== "")
        .map((w) => ({ text: w.text, confidence: w.confidence, box: w.box })),
    }))
    .filter((l) => l.words.length > 0)
    .map((l) => ({ ...l, mapped: l }))
    .map(({ mapped }) => ({
      text: mapped.text,
      box: mapBox(mapped.box),
      words: mapped.words.map((w) => ({ ...w, box: mapBox(w.box) })),
    }));
}

/** Reads the text lines of a (rectified) image of the visual zone. */
export async function readViz(img: GreyImage, ocr: IdOcr): Promise<OcrLine[]> {
  return ocr.readText(img, "sparse");
}
