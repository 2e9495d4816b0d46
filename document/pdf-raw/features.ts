import type { RawPdf } from "./document.js";
import { DecodeError } from "./filters.js";
import { get, isName, isStream } from "./objects.js";
import { terminalFields } from "./revision-changes.js";

/**
 * Facts visible on the raw structure, for DetectionDetail.discovered: JavaScript, embedded files, form
 * fields and encryption. Names are looked for in the file's bytes and inside decoded object streams
 * (where a writer can hide them from a plain byte scan).
 */

export interface RawFeatures {
  javascript: boolean;
  embeddedFiles: boolean;
  /** Fields a user fills in (signature fields not counted). */
  formFields: number;
  encrypted: boolean;
}

const DELIMS = new Set([0x20, 0x0a, 0x0d, 0x09, 0x0c, 0x00, 0x2f, 0x3c, 0x3e, 0x28, 0x5b, 0x5d]);

/** True when the PDF name `/name` occurs in the data as a whole name (not as a prefix of a longer one). */
export function hasName(data: Uint8Array, name: string): boolean {
  const b = Buffer.from(data.buffer, data.byteOffset, data.length);
  const needle = `/${name}`;
  for (let i = b.indexOf(needle, 0, "latin1"); i !== -1; i = b.indexOf(needle, i + 1, "latin1")) {
    const next = b[i + needle.length];
    if (next === undefined || DELIMS.has(next)) return true;
  }
  return false;
}

export function rawFeatures(raw: RawPdf): RawFeatures {
  const sources: Uint8Array[] = [raw.bytes];
  const seen = new Set<number>();
  for (const rev of raw.revisions) {
    for (const e of rev.entries.values()) {
      if (e.type !== "compressed" || seen.has(e.stream) || seen.size >= 10_000) continue;
      seen.add(e.stream);
      const s = raw.object(e.stream, rev.index);
      if (!isStream(s) || !isName(get(s.dict, "Type"), "ObjStm")) continue;
      try {
        sources.push(raw.decode(s));
      } catch (err) {
        if (!(err instanceof DecodeError)) throw err;
      }
    }
  }
  const any = (...names: string[]) => sources.some((src) => names.some((n) => hasName(src, n)));
  return {
    javascript: any("JS", "JavaScript"),
    embeddedFiles: any("EmbeddedFiles", "EmbeddedFile", "FileAttachment"),
    formFields: terminalFields(raw, raw.last).filter((f) => !f.isSignature).length,
    encrypted: raw.encrypted,
  };
}
