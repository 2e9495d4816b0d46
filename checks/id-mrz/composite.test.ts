import { describe, expect, it } from "vitest";
import {
  CHECKED_FIELDS,
  checkDigit,
  fieldChecks,
  MRZ_ALPHABET,
  replaceAt,
} from "../../document/id/mrz-format.js";
import { validateMrz } from "../../document/id/mrz-validate.js";
import { compositeDoubts } from "./id-mrz.js";

/**
 * The composite check digit's confirmation rule (id-mrz.ts compositeDoubts): with every field's own check digit
 * passing, only a misread composite digit, a misread character no field check protects, or two misreadings in
 * one field can make a genuine MRZ's composite fail. A single unconfirmed character in a passing field is no
 * doubt.
 */
const NOW = new Date("2026-06-01T00:00:00Z");
// ICAO 9303 Part 4's TD3 specimen and Part 5's TD1 specimen.
const TD3 = ["P<UTOERIKSSON<<ANNA<MARIA<<<<<<<<<<<<<<<<<<<", "L898902C36UTO7408122F1204159ZE184226B<<<<<10"];
const TD1 = [
  "I<UTOD231458907<<<<<<<<<<<<<<<",
  "7408122F1204159UTO<<<<<<<<<<<6",
  "ERIKSSON<<ANNA<MARIA<<<<<<<<<<",
];

/** The TD3 specimen with its date of birth changed and the date's own check digit recomputed: a stale composite. */
function staleComposite(): string[] {
  const l2 = TD3[1]!;
  for (const dob of ["750812", "740813", "740912", "730812"]) {
    const lines = [TD3[0]!, `${l2.slice(0, 13)}${dob}${checkDigit(dob)}${l2.slice(20)}`];
    if (!fieldChecks("TD3", lines).find((c) => c.name === "composite")!.ok) return lines;
  }
  throw new Error("no date change leaves the composite failing");
}

const every = (lines: string[]) => new Set(lines.flatMap((l, li) => [...l].map((_, i) => `${li}:${i}`)));
const without = (s: Set<string>, ...keys: string[]) => new Set([...s].filter((k) => !keys.includes(k)));

describe("composite check digit: which unconfirmed characters are doubts", () => {
  it("premise: one changed character inside a field whose check digit still passes leaves the composite unchanged", () => {
    // Exhaustively over the TD3 and TD1 specimens: every position a field check protects, every MRZ character.
    for (const [format, lines] of [
      ["TD3", TD3],
      ["TD1", TD1],
    ] as const) {
      const composite = (ls: string[]) => fieldChecks(format, ls).find((c) => c.name === "composite")!.ok;
      expect(composite([...lines])).toBe(true);
      let tried = 0;
      for (const spec of CHECKED_FIELDS[format].filter((c) => c.name !== "composite")) {
        for (const [l, a, b] of [
          ...spec.covers,
          [spec.line, spec.at, spec.at + 1] as [number, number, number],
        ])
          for (let i = a; i < b; i++)
            for (const ch of MRZ_ALPHABET) {
              const trial = [...lines];
              trial[l] = replaceAt(trial[l]!, i, ch);
              if (trial[l] === lines[l]) continue;
              const field = fieldChecks(format, trial).find((c) => c.name === spec.name)!;
              if (!field.ok) continue;
              tried++;
              expect(composite(trial), `${format} ${l}:${i} → ${ch}`).toBe(true);
            }
      }
      // Some substitutions do keep the field's check (G for 6, K for 0…): the premise is not vacuous.
      expect(tried).toBeGreaterThan(0);
    }
  });

  it("a stale composite is proof unless another reader's character would make it pass", () => {
    const lines = staleComposite();
    const v = validateMrz("TD3", lines, NOW);
    expect(v.checks.filter((c) => !c.ok).map((c) => c.name)).toEqual(["composite"]);
    const all = every(lines);
    const none = new Map<string, string[]>();
    const doubts = (unconfirmed: string[], alternatives: Record<string, string[]>) =>
      compositeDoubts(lines, v, without(all, ...unconfirmed), new Map(Object.entries(alternatives)));
    expect(compositeDoubts(lines, v, all, none)).toBe(0);
    // The composite digit: read otherwise by another reader as the digit that passes: a doubt; as another
    // failing digit, or read alike by every reader: none.
    const expected = String(v.checks.find((c) => c.name === "composite")!.expected);
    const failing = expected === "9" ? "8" : "9";
    expect(doubts(["1:43"], { "1:43": [expected] })).toBe(1);
    expect(doubts(["1:43"], { "1:43": [failing] })).toBe(0);
    expect(doubts(["1:43"], {})).toBe(0);
    // One unconfirmed character in a passing field cannot explain it, whatever was seen there.
    expect(doubts(["1:3", "1:15"], { "1:3": [..."ABCDEFGH0123456789<"], "1:15": [..."0123456789"] })).toBe(0);
    // Two in the date of birth: the issued digits seen there again explain it (the date and its check digit).
    const changed = [...Array(6).keys()].map((i) => 13 + i).find((i) => lines[1]![i] !== TD3[1]![i])!;
    const back = { [`1:${changed}`]: [TD3[1]![changed]!], "1:19": [TD3[1]![19]!] };
    expect(doubts([`1:${changed}`, "1:19"], back)).toBe(1);
  });

  it("TD1: optional data no field check protects is tried with what the readers saw", () => {
    const l2 = TD1[1]!;
    const lines = [TD1[0]!, replaceAt(l2, 20, "X"), TD1[2]!];
    const v = validateMrz("TD1", lines, NOW);
    expect(v.checks.filter((c) => !c.ok).map((c) => c.name)).toEqual(["composite"]);
    const unconfirmed = without(every(lines), "1:20");
    expect(compositeDoubts(lines, v, unconfirmed, new Map([["1:20", ["<"]]]))).toBe(1);
    expect(compositeDoubts(lines, v, unconfirmed, new Map([["1:20", ["B"]]]))).toBe(0);
  });
});
