import { Lexer, Parser } from "./lexer.js";
import {
  get,
  isDict,
  isName,
  numberOf,
  type PdfDict,
  type PdfStream,
  PdfSyntaxError,
  type PdfValue,
} from "./objects.js";

/**
 * Cross-reference sections (PDF 32000-1 §7.5.4 tables, §7.5.8 streams): read one section at a byte
 * offset. The caller follows /Prev and /XRefStm itself, so it can detect cycles and attribute sections to
 * revisions. Entry counts are bounded by the bytes actually present, never by /Size or /Index claims.
 */

export type XrefEntry =
  | { type: "free"; gen: number }
  | { type: "offset"; offset: number; gen: number }
  | { type: "compressed"; stream: number; index: number };

export interface XrefSection {
  offset: number;
  kind: "table" | "stream";
  entries: Map<number, XrefEntry>;
  trailer: PdfDict;
  prev?: number;
  xrefStm?: number;
  /** Object number of the xref stream itself. */
  streamObject?: number;
  /** Problems met while reading it (entries beyond the data, a table cut short). */
  problems: string[];
}

export interface XrefReadOptions {
  maxEntries: number;
  /** Parses the indirect object at an offset (for xref streams) and decodes a stream. */
  readStreamAt(offset: number): { num: number; stream: PdfStream } | undefined;
  decode(stream: PdfStream): Uint8Array;
}

export function readXrefSection(buf: Uint8Array, offset: number, opts: XrefReadOptions): XrefSection {
  if (!Number.isSafeInteger(offset) || offset < 0 || offset >= buf.length) {
    throw new PdfSyntaxError(`the cross-reference offset ${offset} lies outside the file`, offset);
  }
  const lex = new Lexer(buf, offset);
  lex.skipSpace();
  const save = lex.pos;
  const first = lex.next();
  if (first.t === "kw" && first.v === "xref") return readTable(buf, lex, offset, opts);
  lex.pos = save;
  const obj = opts.readStreamAt(offset);
  if (!obj) throw new PdfSyntaxError(`no cross-reference section at offset ${offset}`, offset);
  if (!isName(get(obj.stream.dict, "Type"), "XRef")) {
    throw new PdfSyntaxError(`the object at offset ${offset} is not a cross-reference stream`, offset);
  }
  return readStream(obj.stream, obj.num, offset, opts);
}

function readTable(buf: Uint8Array, lex: Lexer, offset: number, opts: XrefReadOptions): XrefSection {
  const entries = new Map<number, XrefEntry>();
  const problems: string[] = [];
  const parser = new Parser(lex);
  for (;;) {
    const save = lex.pos;
    const t = lex.next();
    if (t.t === "kw" && t.v === "trailer") break;
    if (t.t !== "num") {
      lex.pos = save;
      throw new PdfSyntaxError(`the cross-reference table at ${offset} has no trailer`, lex.pos);
    }
    const count = lex.next();
    if (count.t !== "num" || !Number.isSafeInteger(t.v) || !Number.isSafeInteger(count.v) || count.v < 0) {
      throw new PdfSyntaxError(`a malformed subsection header in the table at ${offset}`, lex.pos);
    }
    // Each entry takes 20 bytes (18 at the least with sloppy writers): cap by what is there.
    const room = Math.floor((buf.length - lex.pos) / 18) + 1;
    let n = count.v;
    if (n > room) {
      problems.push(`a subsection claims ${n} entries but the file holds room for ${room} at most`);
      n = room;
    }
    for (let i = 0; i < n; i++) {
      const entryAt = lex.pos;
      const a = lex.next();
      const g = lex.next();
      const k = lex.next();
      if (a.t !== "num" || g.t !== "num" || k.t !== "kw" || (k.v !== "n" && k.v !== "f")) {
        problems.push(`the table at ${offset} is cut short after ${i} of ${count.v} entries`);
        // Resynchronise at the next subsection header or the trailer.
        const trailerAt = Buffer.from(buf.buffer, buf.byteOffset, buf.length).indexOf(
          "trailer",
          entryAt,
          "latin1",
        );
        if (trailerAt < 0)
          throw new PdfSyntaxError(`the cross-reference table at ${offset} has no trailer`, lex.pos);
        lex.pos = trailerAt;
        break;
      }
      if (entries.size >= opts.maxEntries)
        throw new PdfSyntaxError("too many cross-reference entries", lex.pos);
      const num = t.v + i;
      if (entries.has(num)) continue; // the first entry for a number wins within one section
      if (k.v === "n" && a.v > 0) entries.set(num, { type: "offset", offset: a.v, gen: g.v });
      else entries.set(num, { type: "free", gen: g.v });
    }
  }
  const trailer = parser.value();
  if (!isDict(trailer as PdfValue))
    throw new PdfSyntaxError(`the trailer after the table at ${offset} is not a dictionary`, lex.pos);
  return finish({ offset, kind: "table", entries, trailer: trailer as PdfDict, problems });
}

function readStream(stream: PdfStream, num: number, offset: number, opts: XrefReadOptions): XrefSection {
  const d = stream.dict;
  const problems: string[] = [];
  const w = get(d, "W");
  if (
    !Array.isArray(w) ||
    w.length < 3 ||
    w.some((x) => numberOf(x) === undefined || (x as number) < 0 || (x as number) > 8)
  ) {
    throw new PdfSyntaxError(`the cross-reference stream at ${offset} has an invalid /W`, offset);
  }
  const [w1, w2, w3] = w.map((x) => x as number) as [number, number, number];
  const rowLen = w1 + w2 + w3;
  if (rowLen === 0)
    throw new PdfSyntaxError(`the cross-reference stream at ${offset} has empty rows`, offset);
  const size = numberOf(get(d, "Size")) ?? 0;
  const index = get(d, "Index");
  const ranges: [number, number][] = [];
  if (Array.isArray(index)) {
    for (let i = 0; i + 1 < index.length; i += 2) {
      const s = numberOf(index[i]);
      const c = numberOf(index[i + 1]);
      if (s === undefined || c === undefined || s < 0 || c < 0) continue;
      ranges.push([s, c]);
    }
  } else ranges.push([0, size]);
  const data = opts.decode(stream);
  const entries = new Map<number, XrefEntry>();
  let pos = 0;
  const field = (width: number, dflt: number) => {
    if (width === 0) return dflt;
    let v = 0;
    for (let i = 0; i < width; i++) v = v * 256 + (data[pos + i] as number);
    pos += width;
    return v;
  };
  outer: for (const [start, count] of ranges) {
    for (let i = 0; i < count; i++) {
      if (pos + rowLen > data.length) {
        problems.push(`the cross-reference stream at ${offset} declares more entries than its data holds`);
        break outer;
      }
      if (entries.size >= opts.maxEntries)
        throw new PdfSyntaxError("too many cross-reference entries", offset);
      const type = field(w1, 1);
      const f2 = field(w2, 0);
      const f3 = field(w3, 0);
      const n = start + i;
      if (entries.has(n)) continue;
      if (type === 0) entries.set(n, { type: "free", gen: f3 });
      else if (type === 1)
        entries.set(n, f2 > 0 ? { type: "offset", offset: f2, gen: f3 } : { type: "free", gen: f3 });
      else if (type === 2) entries.set(n, { type: "compressed", stream: f2, index: f3 });
      // other types are reserved: readers treat them as null objects
    }
  }
  return finish({ offset, kind: "stream", entries, trailer: d, streamObject: num, problems });
}

function finish(s: XrefSection): XrefSection {
  const prev = numberOf(get(s.trailer, "Prev"));
  const xrefStm = numberOf(get(s.trailer, "XRefStm"));
  if (prev !== undefined) s.prev = prev;
  if (xrefStm !== undefined) s.xrefStm = xrefStm;
  return s;
}
