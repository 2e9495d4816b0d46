import type { RawPdf } from "./document.js";
import { textOf } from "./objects.js";

/** The Info dictionary's text entries as of a revision (each revision may carry its own Info). */
export function infoStrings(raw: RawPdf, rev = raw.last): Record<string, string> {
  const d = raw.info(rev);
  const out: Record<string, string> = {};
  if (!d) return out;
  for (const [k, v] of d.map) {
    const t = textOf(raw.resolve(v, rev));
    if (t !== undefined) out[k] = t;
  }
  return out;
}
