/**
 * The MRZ formats of ICAO Doc 9303 (TD3 passports, Part 4; TD1 cards, Part 5; TD2, Part 6) as per-position
 * character classes, the check digit of Part 3 (4.9), and the correction of an OCR reading by those classes
 * and the check digits: a letter read where only a digit may stand (O → 0, I → 1, S → 5, B → 8 …) and the
 * reverse are settled by the field's class; in the alphanumeric fields (document number, optional data) a
 * look-alike swap of a character the OCR was unsure of is kept only when it makes a failing check digit pass
 * and is the only swap that does. A
 * digit is never changed into another digit: a wrong digit stays wrong, so a broken check digit stays broken.
 */

export type MrzFormat = "TD1" | "TD2" | "TD3";

/**
 * Class of each position: `A` letters or `<`, `N` digits, `X` letters, digits or `<`, `S` sex (M, F, X or
 * `<`), `D` a check digit, `d` a check digit or `<` (an empty optional field), `P` the document code.
 */
export const MRZ_TEMPLATES: Record<MrzFormat, string[]> = {
  TD3: [
    `PA${"A".repeat(3)}${"A".repeat(39)}`,
    `${"X".repeat(9)}D${"A".repeat(3)}${"N".repeat(6)}DS${"N".repeat(6)}D${"X".repeat(14)}dD`,
  ],
  TD2: [
    `PA${"A".repeat(3)}${"A".repeat(31)}`,
    `${"X".repeat(9)}D${"A".repeat(3)}${"N".repeat(6)}DS${"N".repeat(6)}D${"X".repeat(7)}D`,
  ],
  TD1: [
    `PA${"A".repeat(3)}${"X".repeat(9)}d${"X".repeat(15)}`,
    `${"N".repeat(6)}DS${"N".repeat(6)}D${"A".repeat(3)}${"X".repeat(11)}D`,
    "A".repeat(30),
  ],
};

export const MRZ_SHAPES: Record<MrzFormat, { lines: number; width: number }> = {
  TD1: { lines: 3, width: 30 },
  TD2: { lines: 2, width: 36 },
  TD3: { lines: 2, width: 44 },
};

/** ICAO 9303 Part 3, 4.9: weights 7, 3, 1 repeating; `<` = 0, A = 10 … Z = 35; the sum modulo 10. */
export function checkDigit(s: string): number {
  const weights = [7, 3, 1];
  let sum = 0;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    const v = c === 60 ? 0 : c >= 48 && c <= 57 ? c - 48 : c >= 65 && c <= 90 ? c - 55 : Number.NaN;
    if (Number.isNaN(v)) throw new Error(`not an MRZ character: ${s[i]}`);
    sum += v * weights[i % 3]!;
  }
  return sum % 10;
}

/** A field protected by a check digit: where it is, and what the check digit covers. */
export interface CheckedField {
  name: "documentNumber" | "birthDate" | "expirationDate" | "optional" | "composite";
  /** The check digit's line and column. */
  line: number;
  at: number;
  /** The ranges the check digit covers, [line, start, end). */
  covers: [number, number, number][];
  /** The check digit may be `<` when the field is empty (optional data). */
  emptyAllowed?: boolean;
}

export const CHECKED_FIELDS: Record<MrzFormat, CheckedField[]> = {
  TD3: [
    { name: "documentNumber", line: 1, at: 9, covers: [[1, 0, 9]] },
    { name: "birthDate", line: 1, at: 19, covers: [[1, 13, 19]] },
    { name: "expirationDate", line: 1, at: 27, covers: [[1, 21, 27]] },
    { name: "optional", line: 1, at: 42, covers: [[1, 28, 42]], emptyAllowed: true },
    {
      name: "composite",
      line: 1,
      at: 43,
      covers: [
        [1, 0, 10],
        [1, 13, 20],
        [1, 21, 43],
      ],
    },
  ],
  TD2: [
    { name: "documentNumber", line: 1, at: 9, covers: [[1, 0, 9]] },
    { name: "birthDate", line: 1, at: 19, covers: [[1, 13, 19]] },
    { name: "expirationDate", line: 1, at: 27, covers: [[1, 21, 27]] },
    {
      name: "composite",
      line: 1,
      at: 35,
      covers: [
        [1, 0, 10],
        [1, 13, 20],
        [1, 21, 35],
      ],
    },
  ],
  TD1: [
    // A document number longer than 9 characters continues in the optional data (Part 5, 4.2.4): its check
    // digit is `<` and the number's own check digit follows the continuation; handled in fieldChecks().
    { name: "documentNumber", line: 0, at: 14, covers: [[0, 5, 14]] },
    { name: "birthDate", line: 1, at: 6, covers: [[1, 0, 6]] },
    { name: "expirationDate", line: 1, at: 14, covers: [[1, 8, 14]] },
    {
      name: "composite",
      line: 1,
      at: 29,
      covers: [
        [0, 5, 30],
        [1, 0, 7],
        [1, 8, 15],
        [1, 18, 29],
      ],
    },
  ],
};

export interface FieldCheck {
  name: CheckedField["name"];
  /** The characters the check digit covers, joined. */
  value: string;
  /** The check digit printed. */
  printed: string;
  /** The check digit the value gives. */
  expected: number;
  ok: boolean;
  line: number;
  at: number;
  /** The ranges the check digit covers here, [line, start, end) (a long document number's continuation included). */
  covers: [number, number, number][];
}

/** Every check digit of an MRZ of `format`, computed over `lines` (which must have the format's shape). */
export function fieldChecks(format: MrzFormat, lines: readonly string[]): FieldCheck[] {
  const out: FieldCheck[] = [];
  for (const f of CHECKED_FIELDS[format]) {
    let covers = f.covers;
    let at = f.at;
    let line = f.line;
    const printedAt = (lines[line] ?? "")[at] ?? "";
    if (format !== "TD1" && f.name === "documentNumber" && printedAt === "<") {
      // TD3/TD2 long document numbers (Part 4, 4.2.2.1): the number continues in the optional data, up
      // to its own check digit; the `<` in the check digit position is then part of the extended number.
      const opt = lines[1] ?? "";
      const optStart = format === "TD3" ? 28 : 28;
      const optEnd = format === "TD3" ? 42 : 35;
      const firstFiller = opt.indexOf("<", optStart);
      const endOfNumber = firstFiller > optStart && firstFiller <= optEnd ? firstFiller - 1 : -1;
      if (endOfNumber > optStart) {
        covers = [
          [1, 0, 9],
          [1, optStart, endOfNumber],
        ];
        at = endOfNumber;
      }
    }
    if (format === "TD1" && f.name === "documentNumber" && printedAt === "<") {
      const l0 = lines[0] ?? "";
      const firstFiller = l0.indexOf("<", 15);
      const end = firstFiller > 15 ? firstFiller - 1 : -1;
      if (end > 15) {
        covers = [
          [0, 5, 14],
          [0, 15, end],
        ];
        at = end;
        line = 0;
      }
    }
    const value = covers.map(([l, a, b]) => (lines[l] ?? "").slice(a, b)).join("");
    const printed = (lines[line] ?? "")[at] ?? "";
    let expected: number;
    try {
      expected = checkDigit(value);
    } catch {
      expected = -1;
    }
    const empty = /^<*$/.test(value);
    const ok =
      (f.emptyAllowed && empty && (printed === "<" || printed === "0")) ||
      (expected >= 0 && printed === String(expected));
    out.push({ name: f.name, value, printed, expected, ok, line, at, covers });
  }
  return out;
}

const TO_DIGIT: Record<string, string> = {
  O: "0",
  Q: "0",
  D: "0",
  U: "0",
  I: "1",
  L: "1",
  T: "7",
  Z: "2",
  S: "5",
  B: "8",
  G: "6",
  A: "4",
  E: "8",
};
const TO_LETTER: Record<string, string> = {
  "0": "O",
  "1": "I",
  "2": "Z",
  "5": "S",
  "8": "B",
  "6": "G",
  "4": "A",
  "7": "T",
};
/** Look-alike pairs an OCR confuses in alphanumeric fields. */
const SWAPS: Record<string, string> = {
  "0": "O",
  O: "0",
  "1": "I",
  I: "1",
  "5": "S",
  S: "5",
  "8": "B",
  B: "8",
  "2": "Z",
  Z: "2",
  "6": "G",
  G: "6",
};

export interface Correction {
  line: number;
  at: number;
  from: string;
  to: string;
  why: "class" | "check_digit";
}

/** Forces each character into its position's class (letters in digit fields and the reverse). */
export function forceClasses(
  format: MrzFormat,
  lines: string[],
): { lines: string[]; corrections: Correction[] } {
  const corrections: Correction[] = [];
  const out = lines.map((line, li) => {
    const tpl = MRZ_TEMPLATES[format][li] ?? "";
    let s = "";
    for (let i = 0; i < line.length; i++) {
      const c = line[i]!;
      const k = tpl[i];
      let to = c;
      if ((k === "N" || k === "D") && !/[0-9]/.test(c))
        to = TO_DIGIT[c] ?? (c === "<" && k === "N" ? "<" : c);
      else if (k === "d" && !/[0-9<]/.test(c)) to = TO_DIGIT[c] ?? c;
      else if ((k === "A" || k === "P") && /[0-9]/.test(c)) to = TO_LETTER[c] ?? c;
      else if (k === "S" && !/[MFX<]/.test(c))
        to = c === "N" || c === "H" ? "M" : c === "E" || c === "P" ? "F" : "<";
      if (to !== c) corrections.push({ line: li, at: i, from: c, to, why: "class" });
      s += to;
    }
    return s;
  });
  return { lines: out, corrections };
}

/**
 * Check-digit-guided correction of the alphanumeric fields: for each field whose check digit fails, the
 * look-alike swaps (0/O, 1/I, 5/S, 8/B, 2/Z, 6/G) of up to two of its characters the OCR was unsure of are
 * tried; a variant is kept only when exactly one makes the check digit pass. A character read with
 * confidence is never swapped: a forger's changed digit would otherwise pass one time in ten by a swap.
 */
export function correctByCheckDigits(
  format: MrzFormat,
  input: string[],
  /** Positions (`line:column`) whose character the OCR was unsure of; only these may be swapped. */
  unsure: ReadonlySet<string>,
): { lines: string[]; corrections: Correction[] } {
  const lines = [...input];
  const corrections: Correction[] = [];
  for (const f of fieldChecks(format, lines)) {
    if (f.ok || f.name === "composite" || f.name === "birthDate" || f.name === "expirationDate") continue;
    const spec = CHECKED_FIELDS[format].find((c) => c.name === f.name);
    if (!spec) continue;
    const positions: [number, number][] = [];
    for (const [l, a, b] of spec.covers)
      for (let i = a; i < b; i++)
        if (unsure.has(`${l}:${i}`) && SWAPS[(lines[l] ?? "")[i] ?? ""]) positions.push([l, i]);
    if (!/^[0-9]$/.test(f.printed) || positions.length === 0) continue;
    const fits: [number, number][][] = [];
    const test = (swaps: [number, number][]) => {
      const trial = [...lines];
      for (const [l, i] of swaps) trial[l] = replaceAt(trial[l]!, i, SWAPS[trial[l]![i]!]!);
      const check = fieldChecks(format, trial).find((c) => c.name === f.name);
      if (check?.ok) fits.push(swaps);
    };
    for (let a = 0; a < positions.length; a++) test([positions[a]!]);
    if (fits.length === 0)
      for (let a = 0; a < positions.length; a++)
        for (let b = a + 1; b < positions.length; b++) test([positions[a]!, positions[b]!]);
    if (fits.length !== 1) continue;
    for (const [l, i] of fits[0]!) {
      const from = lines[l]![i]!;
      const to = SWAPS[from]!;
      lines[l] = replaceAt(lines[l]!, i, to);
      corrections.push({ line: l, at: i, from, to, why: "check_digit" });
    }
  }
  return { lines, corrections };
}

export function replaceAt(s: string, i: number, c: string): string {
  return s.slice(0, i) + c + s.slice(i + 1);
}

/** The format whose shape the lines have, if any. */
export function formatOf(lines: readonly string[]): MrzFormat | undefined {
  for (const f of ["TD1", "TD2", "TD3"] as const) {
    const { lines: n, width } = MRZ_SHAPES[f];
    if (lines.length === n && lines.every((l) => l.length === width)) return f;
  }
  return undefined;
}

/** The 37 characters of an MRZ (ICAO 9303 Part 3): capitals, digits and the filler. */
export const MRZ_ALPHABET = "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789<";
