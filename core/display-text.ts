/**
 * Text from outside (a document's file name) shown to people: the reviewer page and the logs. Unicode
 * bidirectional controls (U+202A-U+202E, U+2066-U+2069, U+200E, U+200F, U+061C) can make
 * `invoice‮fdp.exe` read as `invoiceexe.pdf`, and zero-width characters (U+200B-U+200D, U+2060, U+FEFF,
 * U+180E) hide a difference between two names that look the same. Where such a name is rendered, each of
 * these characters is replaced by a visible, inert marker `[U+202E]`, so the reviewer sees that the name
 * holds one; the API still returns the name unchanged (it is data, docs/api.md).
 */
export const INVISIBLE_CONTROLS_RE = /[\u061c\u180e\u200b-\u200f\u202a-\u202e\u2060\u2066-\u2069\ufeff]/g;

const marker = (ch: string) => `[U+${ch.codePointAt(0)!.toString(16).toUpperCase().padStart(4, "0")}]`;

/** `text` with every bidirectional control and zero-width character replaced by `[U+XXXX]`. */
export const neutralizeForDisplay = (text: string): string => text.replace(INVISIBLE_CONTROLS_RE, marker);

/** True when `text` holds a character neutralizeForDisplay replaces. */
export const hasInvisibleControls = (text: string): boolean => {
  INVISIBLE_CONTROLS_RE.lastIndex = 0;
  const found = INVISIBLE_CONTROLS_RE.test(text);
  INVISIBLE_CONTROLS_RE.lastIndex = 0;
  return found;
};
