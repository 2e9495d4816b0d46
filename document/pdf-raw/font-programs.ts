import type { RawPdf } from "./document.js";
import { dictOf, get, isRef, isStream, nameOf } from "./objects.js";

/**
 * The embedded font programs of a PDF's original save, read only as far as the checks need: which
 * format each is in, and for a CFF (Type1C) program whether its Top DICT still carries the FontInfo
 * strings (Version, Notice, FullName, FamilyName, Weight) that a font file ships with. A writer that
 * embeds from font files copies them; one that takes fonts from another PDF's embedded subsets (a
 * re-distilled PDF) often cannot. Bounded: at most MAX_FONTS descriptors, each program's header only.
 */

export interface EmbeddedFont {
  /** FontName of the descriptor, subset prefix included. */
  name: string;
  format: "cff" | "type1" | "truetype" | "opentype" | "none";
  /** For CFF: true when the Top DICT names any FontInfo string. */
  fontInfo?: boolean;
}

const MAX_FONTS = 200;
/** Top DICT operators of the FontInfo strings: version, Notice, FullName, FamilyName, Weight; Copyright (12 0). */
const FONT_INFO_OPS = new Set([0, 1, 2, 3, 4, 1200]);

/** The items of a CFF INDEX at `at`, and where it ends; undefined when the bytes do not hold one. */
function readIndex(b: Uint8Array, at: number): { items: Uint8Array[]; end: number } | undefined {
  if (at + 2 > b.length) return undefined;
  const count = ((b[at] as number) << 8) | (b[at + 1] as number);
  if (count === 0) return { items: [], end: at + 2 };
  const size = b[at + 2] as number;
  if (size < 1 || size > 4 || count > 10_000) return undefined;
  const offsets: number[] = [];
  for (let i = 0; i <= count; i++) {
    let v = 0;
    for (let k = 0; k < size; k++) v = v * 256 + (b[at + 3 + i * size + k] ?? 0);
    offsets.push(v);
  }
  const base = at + 3 + (count + 1) * size - 1;
  const end = base + (offsets[count] as number);
  if (end > b.length) return undefined;
  return {
    items: offsets.slice(0, -1).map((o, i) => b.subarray(base + o, base + (offsets[i + 1] as number))),
    end,
  };
}

/** The operators a CFF DICT uses (operands skipped). */
function dictOperators(d: Uint8Array): Set<number> {
  const ops = new Set<number>();
  let i = 0;
  while (i < d.length) {
    const b0 = d[i] as number;
    if (b0 === 12) {
      ops.add(1200 + (d[i + 1] ?? 0));
      i += 2;
    } else if (b0 <= 21) {
      ops.add(b0);
      i++;
    } else if (b0 === 28) i += 3;
    else if (b0 === 29) i += 5;
    else if (b0 === 30) {
      i++;
      while (i < d.length && ((d[i] as number) & 0x0f) !== 0x0f && (d[i] as number) >> 4 !== 0x0f) i++;
      i++;
    } else if (b0 >= 32 && b0 <= 246) i++;
    else i += 2;
  }
  return ops;
}

/** True when a CFF program's (first) Top DICT carries any FontInfo string; undefined if unreadable. */
export function cffHasFontInfo(program: Uint8Array): boolean | undefined {
  const headerSize = program[2];
  if (program[0] !== 1 || headerSize === undefined) return undefined;
  const names = readIndex(program, headerSize);
  const top = names && readIndex(program, names.end);
  const dict = top?.items[0];
  if (!dict) return undefined;
  const ops = dictOperators(dict);
  return [...FONT_INFO_OPS].some((op) => ops.has(op));
}

/** The embedded fonts of the original save (revision 0). */
export function embeddedFonts(raw: RawPdf): EmbeddedFont[] {
  const rev = 0;
  const out: EmbeddedFont[] = [];
  for (const [num] of raw.revisions[rev]?.entries ?? []) {
    if (out.length >= MAX_FONTS) break;
    const d = dictOf(raw.object(num, rev) ?? undefined);
    if (!d || nameOf(get(d, "Type")) !== "FontDescriptor") continue;
    const name = nameOf(get(d, "FontName")) ?? `object ${num}`;
    const ff3 = get(d, "FontFile3");
    if (isRef(ff3)) {
      const s = raw.object(ff3.num, rev);
      if (!isStream(s)) continue;
      const subtype = nameOf(get(s, "Subtype"));
      if (subtype === "OpenType") {
        out.push({ name, format: "opentype" });
        continue;
      }
      let info: boolean | undefined;
      try {
        info = cffHasFontInfo(raw.decode(s));
      } catch {
        info = undefined;
      }
      out.push({ name, format: "cff", ...(info !== undefined ? { fontInfo: info } : {}) });
    } else if (isRef(get(d, "FontFile"))) out.push({ name, format: "type1" });
    else if (isRef(get(d, "FontFile2"))) out.push({ name, format: "truetype" });
    else out.push({ name, format: "none" });
  }
  return out;
}
