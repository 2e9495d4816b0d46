import { createHash } from "node:crypto";
import { type Decryptor, openSecurity, type Security } from "./crypt.js";
import { DecodeError, decodeStream } from "./filters.js";
import { indexOfBytes, isOp, Lexer, Parser } from "./lexer.js";
import {
  dictOf,
  get,
  isDict,
  isName,
  isRef,
  isStream,
  numberOf,
  type PdfDict,
  type PdfRef,
  type PdfStream,
  PdfSyntaxError,
  type PdfValue,
} from "./objects.js";
import { readXrefSection, type XrefEntry, type XrefSection } from "./xref.js";

/**
 * The raw-bytes PDF walker: splits a file into its revisions (the original save plus every incremental
 * update, PDF 32000-1 §7.5.6) and resolves any object *as it was in a given revision*, unlike a reader
 * that silently shows only the newest objects. Handles classic xref tables, xref streams, hybrid files
 * (/XRefStm), linearized files (whose first-page section is not an update), object streams, and files
 * whose xref is broken (objects are then found by scanning the revision's bytes). Everything is bounded:
 * xref sections, entries, decoded bytes, page-tree size and nesting; problems are recorded, not thrown.
 */

export interface RawLimits {
  maxSections: number;
  maxEntries: number;
  maxStreamBytes: number;
  maxDecodedBytes: number;
  maxPages: number;
}

export const DEFAULT_LIMITS: RawLimits = {
  maxSections: 1000,
  maxEntries: 2_000_000,
  maxStreamBytes: 32 * 1024 * 1024,
  maxDecodedBytes: 128 * 1024 * 1024,
  maxPages: 10_000,
};

export interface StructureProblem {
  code:
    | "xref_broken"
    | "xref_cycle"
    | "prev_mismatch"
    | "duplicate_startxref"
    | "xref_offset_wrong"
    | "missing_eof"
    | "hidden_data_after_eof"
    | "limit_reached";
  message: string;
  revision?: number;
  offset?: number;
}

export interface Revision {
  /** 0 = the original save. */
  index: number;
  /** Byte range of the revision: [start, end). `end` is just after its %%EOF line. */
  start: number;
  end: number;
  /** The startxref value written at its end (null when unreadable). */
  startxref: number | null;
  sections: XrefSection[];
  /** The objects this revision (re)defines or frees, from its own sections. */
  entries: Map<number, XrefEntry>;
  trailer?: PdfDict;
  /** True when the entries were rebuilt by scanning the bytes (no usable xref). */
  reconstructed: boolean;
  /** A linearized file's first-page section merged into the original save. */
  linearized: boolean;
}

export interface ObjectLocation {
  num: number;
  gen: number;
  /** The revision whose entry defines it. */
  revision: number;
  entry: XrefEntry;
}

interface ObjStm {
  offsets: Map<number, number>;
  order: number[];
  data: Uint8Array;
  first: number;
}

const EOF_MARK = "%%EOF";

export class RawPdf {
  readonly revisions: Revision[] = [];
  readonly problems: StructureProblem[] = [];
  linearized = false;
  /** Bytes after the final %%EOF that are not whitespace. */
  trailingBytes = 0;
  private decodedTotal = 0;
  private objectCache = new Map<string, PdfValue | undefined>();
  private objStmCache = new Map<string, ObjStm | undefined>();
  private decodeCache = new WeakMap<PdfStream, Uint8Array>();
  private scanned?: Map<number, { gen: number; offset: number }[]>;
  private resolving = 0;
  /** The file's encryption as opened with the empty user password (crypt.ts); "none" when unencrypted. */
  security: Security = { kind: "none" };
  private decryptor?: Decryptor;
  /** The /Encrypt dictionary's object number (its own strings are not encrypted). */
  private encryptNum?: number;

  constructor(
    readonly bytes: Uint8Array,
    readonly limits: RawLimits = DEFAULT_LIMITS,
  ) {
    this.load();
    this.openEncryption();
  }

  /**
   * An encrypted file that opens with the empty user password is decrypted from here on: every object read
   * later has its strings and stream data decrypted (objects inside object streams are decrypted with
   * their stream). A file that needs a password stays as it is (`security.kind` "locked").
   */
  private openEncryption(): void {
    let trailer: PdfDict | undefined;
    for (let r = this.last; r >= 0 && !trailer; r--) {
      const t = (this.revisions[r] as Revision).trailer;
      if (t?.map.has("Encrypt")) trailer = t;
    }
    if (!trailer) return;
    const ref = get(trailer, "Encrypt");
    if (isRef(ref)) this.encryptNum = ref.num;
    const id = this.resolve(get(trailer, "ID"));
    const id0 = Array.isArray(id) ? id[0] : undefined;
    this.security = openSecurity(
      this.dict(ref),
      typeof id0 === "object" && id0 !== null && !Array.isArray(id0) && id0.kind === "string"
        ? id0.bytes
        : undefined,
    );
    if (this.security.kind !== "open") return;
    this.decryptor = this.security.decryptor;
    // Objects read while loading (cross-reference streams, lengths) were read undecrypted.
    this.objectCache.clear();
    this.objStmCache.clear();
    this.decodeCache = new WeakMap();
  }

  /** Decrypts, in place, the strings of object `num gen` (a signature's /Contents excepted). */
  private decryptValue(v: PdfValue, num: number, gen: number, depth = 0): void {
    const d = this.decryptor;
    if (!d || depth > 64 || typeof v !== "object" || v === null) return;
    if (Array.isArray(v)) {
      for (const x of v) this.decryptValue(x, num, gen, depth + 1);
      return;
    }
    if (v.kind === "string") {
      v.bytes = d.string(v.bytes, num, gen);
      return;
    }
    const dict = v.kind === "dict" ? v : v.kind === "stream" ? v.dict : undefined;
    if (!dict) return;
    // A signature's /Contents is written after encryption and stays in the clear (ISO 32000-2 §7.6.2).
    const signature = dict.map.has("ByteRange");
    for (const [k, x] of dict.map) {
      if (signature && k === "Contents") continue;
      this.decryptValue(x, num, gen, depth + 1);
    }
  }

  get last(): number {
    return this.revisions.length - 1;
  }

  get encrypted(): boolean {
    return this.revisions.some((r) => r.trailer?.map.has("Encrypt"));
  }

  // -------------------------------------------------------------------------------------------
  // Revisions
  // -------------------------------------------------------------------------------------------

  private load(): void {
    const buf = this.bytes;
    const head = Buffer.from(buf.buffer, buf.byteOffset, Math.min(buf.length, 2048)).toString("latin1");
    const lin = /^[\s\S]{0,1100}?\d+\s+\d+\s+obj\s*<<([^>]*\/Linearized\b[^>]*)>>/.exec(head);
    this.linearized = lin !== null;
    /** The file length the linearized original had (/L): where its last section ends. */
    const linearizedLength = Number(/\/L\s+(\d+)/.exec(lin?.[1] ?? "")?.[1] ?? Number.NaN);
    const segments = this.segments();
    const sectionsAt = new Map<number, XrefSection | null>();
    const readSection = (offset: number): XrefSection | null => {
      if (sectionsAt.has(offset)) return sectionsAt.get(offset) ?? null;
      if (sectionsAt.size >= this.limits.maxSections) {
        this.problem(
          "limit_reached",
          `The file has more than ${this.limits.maxSections} cross-reference sections; the rest were not read.`,
        );
        sectionsAt.set(offset, null);
        return null;
      }
      let s: XrefSection | null = null;
      try {
        s = readXrefSection(buf, offset, {
          maxEntries: this.limits.maxEntries,
          readStreamAt: (o) => this.readStreamObjectAt(o),
          decode: (st) => this.decode(st),
        });
      } catch (err) {
        if (!(err instanceof PdfSyntaxError || err instanceof DecodeError)) throw err;
      }
      sectionsAt.set(offset, s);
      return s;
    };

    // Every section reachable from any revision's startxref through /Prev and /XRefStm.
    const startxrefs = segments.map((s) => s.startxref);
    const seenStart = new Map<number, number>();
    startxrefs.forEach((sx, i) => {
      if (sx === null) return;
      const other = seenStart.get(sx);
      if (other !== undefined) {
        this.problem(
          "duplicate_startxref",
          `Revisions ${other + 1} and ${i + 1} both point to the cross-reference section at byte ${sx}; one of them was copied or its index was not rewritten.`,
          i,
          sx,
        );
      } else seenStart.set(sx, i);
    });
    for (const sx of startxrefs) {
      if (sx === null) continue;
      const visited = new Set<number>();
      let at: number | undefined = sx;
      while (at !== undefined) {
        if (visited.has(at)) {
          this.problem(
            "xref_cycle",
            `The chain of cross-reference sections loops back to byte ${at}; a reader following it would never finish.`,
            undefined,
            at,
          );
          break;
        }
        visited.add(at);
        const s = readSection(at);
        if (!s) break;
        if (s.xrefStm !== undefined) readSection(s.xrefStm);
        at = s.prev;
        if (visited.size > this.limits.maxSections) break;
      }
    }

    const segmentOf = (offset: number) => segments.findIndex((s) => offset >= s.start && offset < s.end);
    const revs: Revision[] = segments.map((seg, index) => ({
      index,
      start: seg.start,
      end: seg.end,
      startxref: seg.startxref,
      sections: [],
      entries: new Map(),
      reconstructed: false,
      linearized: false,
    }));
    // Sections in order of preference: the one startxref names first, then what its chain reaches.
    for (const [offset, s] of sectionsAt) {
      if (!s) continue;
      const k = segmentOf(offset);
      if (k < 0) continue;
      (revs[k] as Revision).sections.push(s);
    }
    for (const rev of revs) {
      const main = rev.sections.find((s) => s.offset === rev.startxref);
      rev.sections.sort((a, b) => rank(a, rev, main) - rank(b, rev, main));
      for (const s of rev.sections) {
        for (const [num, e] of s.entries) if (!rev.entries.has(num)) rev.entries.set(num, e);
        for (const p of s.problems)
          this.problem("xref_broken", `Revision ${rev.index + 1}: ${p}.`, rev.index, s.offset);
      }
      const withRoot = [main, ...rev.sections].find((s) => s?.trailer.map.has("Root"));
      rev.trailer = (withRoot ?? main ?? rev.sections[0])?.trailer;
    }

    // A linearized file's first-page section (with its own %%EOF) belongs to the original save.
    // Merge only when the original's end (/L) is the end of the second segment: then the first one is
    // the first-page section. A linearized file whose only %%EOF is at /L needs no merge.
    const secondEnd = revs[1]?.end ?? -1;
    if (this.linearized && revs.length >= 2 && Math.abs(secondEnd - linearizedLength) <= 2) {
      const [a, b] = revs as [Revision, Revision];
      for (const [num, e] of a.entries) if (!b.entries.has(num)) b.entries.set(num, e);
      b.sections.push(...a.sections);
      b.start = a.start;
      b.linearized = true;
      b.trailer = [b.trailer, a.trailer].find((t) => t?.map.has("Root")) ?? b.trailer ?? a.trailer;
      revs.shift();
      revs.forEach((r, i) => {
        r.index = i;
      });
    }

    if (this.linearized && revs[0]) revs[0].linearized = true;
    for (const rev of revs) {
      if (rev.sections.length > 0) continue;
      // No readable xref for this revision: find its objects by scanning its bytes.
      rev.reconstructed = true;
      for (const [num, list] of this.scanObjects()) {
        for (const o of list)
          if (o.offset >= rev.start && o.offset < rev.end)
            rev.entries.set(num, { type: "offset", offset: o.offset, gen: o.gen });
      }
      rev.trailer = this.scanTrailer(rev) ?? revs[rev.index - 1]?.trailer;
      this.problem(
        "xref_broken",
        rev.startxref === null
          ? `Revision ${rev.index + 1} (bytes ${rev.start}-${rev.end}) has no startxref, so its objects were found by scanning.`
          : `Revision ${rev.index + 1} points to a cross-reference section at byte ${rev.startxref} that cannot be read, so its objects were found by scanning.`,
        rev.index,
        rev.startxref ?? rev.start,
      );
    }
    this.revisions.push(...revs);

    // Each update should link back to the previous revision's section.
    for (const rev of this.revisions.slice(1)) {
      const main = rev.sections.find((s) => s.offset === rev.startxref) ?? rev.sections[0];
      if (!main) continue;
      const prevRev = this.revisions[rev.index - 1] as Revision;
      if (main.prev === undefined) {
        this.problem(
          "prev_mismatch",
          `Revision ${rev.index + 1} does not link to the previous revision (no /Prev), so readers see only part of the file's history.`,
          rev.index,
          main.offset,
        );
        continue;
      }
      const target = this.revisions.find((r) => r.sections.some((s) => s.offset === main.prev));
      if (!target) {
        this.problem(
          "prev_mismatch",
          `Revision ${rev.index + 1} links to a previous cross-reference section at byte ${main.prev}, where there is none.`,
          rev.index,
          main.prev,
        );
      } else if (target.index !== prevRev.index) {
        this.problem(
          "prev_mismatch",
          `Revision ${rev.index + 1} links to revision ${target.index + 1} instead of revision ${prevRev.index + 1}, so a reader following the chain skips part of the file.`,
          rev.index,
          main.prev,
        );
      }
    }
  }

  private segments(): { start: number; end: number; startxref: number | null }[] {
    const buf = this.bytes;
    const b = Buffer.from(buf.buffer, buf.byteOffset, buf.length);
    const out: { start: number; end: number; startxref: number | null }[] = [];
    let start = 0;
    for (let i = b.indexOf(EOF_MARK, 0, "latin1"); i !== -1; i = b.indexOf(EOF_MARK, i + 5, "latin1")) {
      // Only an %%EOF right after "startxref N" ends a revision (not one inside a stream's data).
      const before = b.subarray(Math.max(start, i - 64), i).toString("latin1");
      const m = /startxref\s+(\d+)\s*(?:%[^\r\n]*[\r\n]+\s*)*$/.exec(before);
      if (!m) continue;
      let end = i + 5;
      if (b[end] === 0x0d) end++;
      if (b[end] === 0x0a) end++;
      out.push({ start, end, startxref: Number(m[1]) });
      start = end;
    }
    // A tail with its own startxref but no %%EOF is an unfinished revision; anything else is trailing data.
    const tail = b.subarray(start).toString("latin1");
    const m = /startxref\s+(\d+)\s*$/.exec(tail);
    if (m) {
      this.problem(
        "missing_eof",
        `The last revision (from byte ${start}) ends without %%EOF; the file was cut or appended to by hand.`,
        out.length,
        start,
      );
      out.push({ start, end: b.length, startxref: Number(m[1]) });
    } else {
      let trailing = 0;
      for (let i = start; i < b.length; i++) {
        const c = b[i] as number;
        if (c !== 0x20 && c !== 0x0a && c !== 0x0d && c !== 0x09 && c !== 0x0c && c !== 0x00) trailing++;
      }
      this.trailingBytes = trailing;
      if (out.length > 0 && /\d+\s+\d+\s+obj\b/.test(tail)) {
        this.problem(
          "hidden_data_after_eof",
          `The file holds PDF objects after its final %%EOF (from byte ${start}) that no cross-reference section lists; readers ignore them.`,
          undefined,
          start,
        );
      }
    }
    if (out.length === 0) out.push({ start: 0, end: b.length, startxref: null });
    return out;
  }

  private problem(code: StructureProblem["code"], message: string, revision?: number, offset?: number): void {
    if (this.problems.length >= 200) return;
    if (this.problems.some((p) => p.message === message)) return;
    this.problems.push({
      code,
      message,
      ...(revision !== undefined ? { revision } : {}),
      ...(offset !== undefined ? { offset } : {}),
    });
  }

  /** Every `n g obj` header in the file (bounded), by object number. */
  scanObjects(): Map<number, { gen: number; offset: number }[]> {
    if (this.scanned) return this.scanned;
    const out = new Map<number, { gen: number; offset: number }[]>();
    const text = Buffer.from(this.bytes.buffer, this.bytes.byteOffset, this.bytes.length).toString("latin1");
    const re = /(?<![\d.])(\d{1,10})\s+(\d{1,5})\s+obj\b/g;
    let count = 0;
    for (let m = re.exec(text); m; m = re.exec(text)) {
      const num = Number(m[1]);
      const list = out.get(num) ?? [];
      list.push({ gen: Number(m[2]), offset: m.index });
      out.set(num, list);
      if (++count >= this.limits.maxEntries) break;
    }
    this.scanned = out;
    return out;
  }

  private scanTrailer(rev: Revision): PdfDict | undefined {
    const at = indexOfBytes(this.bytes, "trailer", rev.start, rev.end);
    if (at < 0) return undefined;
    try {
      const v = new Parser(new Lexer(this.bytes, at + 7, rev.end)).value();
      return isOp(v) || !isDict(v) ? undefined : v;
    } catch {
      return undefined;
    }
  }

  // -------------------------------------------------------------------------------------------
  // Objects
  // -------------------------------------------------------------------------------------------

  /** Where object `num` is defined as of revision `rev` (the newest entry at or before it). */
  locate(num: number, rev = this.last): ObjectLocation | undefined {
    for (let r = Math.min(rev, this.last); r >= 0; r--) {
      const e = (this.revisions[r] as Revision).entries.get(num);
      if (e) return { num, gen: e.type === "compressed" ? 0 : e.gen, revision: r, entry: e };
    }
    return undefined;
  }

  /** The object as it was in revision `rev`; null for a freed or null object, undefined when unreadable. */
  object(num: number, rev = this.last): PdfValue | undefined {
    const loc = this.locate(num, rev);
    if (!loc) return undefined;
    const e = loc.entry;
    if (e.type === "free") return null;
    const key = e.type === "offset" ? `o${e.offset}` : `c${e.stream}:${e.index}@${loc.revision}`;
    if (this.objectCache.has(key)) return this.objectCache.get(key);
    this.objectCache.set(key, undefined); // guards against self-reference while resolving
    let value: PdfValue | undefined;
    if (this.resolving > 32) return undefined;
    this.resolving++;
    try {
      value =
        e.type === "offset"
          ? this.readAt(num, e.offset, loc.revision)
          : this.readCompressed(num, e.stream, e.index, loc.revision);
    } finally {
      this.resolving--;
    }
    this.objectCache.set(key, value);
    return value;
  }

  resolve(v: PdfValue | undefined, rev = this.last): PdfValue | undefined {
    let cur = v;
    for (let i = 0; i < 8 && isRef(cur); i++) cur = this.object(cur.num, rev);
    return isRef(cur) ? undefined : cur;
  }

  dict(v: PdfValue | undefined, rev = this.last): PdfDict | undefined {
    return dictOf(this.resolve(v, rev));
  }

  private readAt(num: number, offset: number, rev: number): PdfValue | undefined {
    const direct = this.parseIndirect(offset, rev);
    if (direct && direct.num === num) return direct.value;
    // The entry's offset is wrong: look for the object among the headers in the file.
    const candidates = (this.scanObjects().get(num) ?? []).filter((c) => {
      const r = this.revisions[rev] as Revision;
      return c.offset >= r.start && c.offset < r.end;
    });
    this.problem(
      "xref_offset_wrong",
      `Revision ${rev + 1} lists object ${num} at byte ${offset}, but ${direct ? `object ${direct.num}` : "no object"} is there.`,
      rev,
      offset,
    );
    const c = candidates.at(-1);
    if (!c) return undefined;
    const found = this.parseIndirect(c.offset, rev);
    return found && found.num === num ? found.value : undefined;
  }

  /** The indirect object whose header (`n g obj`) starts at `offset`, parsed as revision `rev` sees it. */
  objectAt(offset: number, rev = this.last): { num: number; value: PdfValue } | undefined {
    return this.parseIndirect(offset, rev);
  }

  private parseIndirect(offset: number, rev: number): { num: number; value: PdfValue } | undefined {
    if (offset < 0 || offset >= this.bytes.length) return undefined;
    try {
      const lex = new Lexer(this.bytes, offset);
      const a = lex.next();
      const g = lex.next();
      const k = lex.next();
      if (a.t !== "num" || g.t !== "num" || k.t !== "kw" || k.v !== "obj") return undefined;
      const parser = new Parser(lex);
      const v = parser.value();
      if (isOp(v)) return { num: a.v, value: null };
      const save = lex.pos;
      const t = lex.next();
      const decrypt = this.decryptor !== undefined && a.v !== this.encryptNum;
      if (isDict(v) && t.t === "kw" && t.v === "stream") {
        const stream = this.readStreamData(v, lex.pos, rev);
        if (decrypt) {
          this.decryptValue(stream.dict, a.v, g.v);
          stream.raw = (this.decryptor as Decryptor).stream(stream.raw, a.v, g.v, stream.dict);
        }
        return { num: a.v, value: stream };
      }
      lex.pos = save;
      if (decrypt) this.decryptValue(v, a.v, g.v);
      return { num: a.v, value: v };
    } catch (err) {
      if (err instanceof PdfSyntaxError || err instanceof DecodeError) return undefined;
      throw err;
    }
  }

  private readStreamData(dict: PdfDict, afterKeyword: number, rev: number): PdfStream {
    const b = this.bytes;
    let start = afterKeyword;
    if (b[start] === 0x0d) start++;
    if (b[start] === 0x0a) start++;
    let length = numberOf(get(dict, "Length"));
    const lenRef = get(dict, "Length");
    if (length === undefined && isRef(lenRef)) length = numberOf(this.object(lenRef.num, rev));
    let end = length !== undefined && length >= 0 ? start + length : -1;
    const ok =
      end >= start &&
      end <= b.length &&
      /^\s*endstream/.test(
        Buffer.from(b.buffer, b.byteOffset + end, Math.min(32, b.length - end)).toString("latin1"),
      );
    if (!ok) {
      const at = indexOfBytes(b, "endstream", start);
      end = at < 0 ? b.length : at;
      if (b[end - 1] === 0x0a) end--;
      if (b[end - 1] === 0x0d) end--;
    }
    return { kind: "stream", dict, raw: b.subarray(start, Math.max(start, end)), offset: start };
  }

  private readStreamObjectAt(offset: number): { num: number; stream: PdfStream } | undefined {
    const o = this.parseIndirect(offset, this.revisions.length ? this.last : 0);
    return o && isStream(o.value) ? { num: o.num, stream: o.value } : undefined;
  }

  private readCompressed(num: number, streamNum: number, _index: number, rev: number): PdfValue | undefined {
    const loc = this.locate(streamNum, rev);
    if (loc?.entry.type !== "offset") return undefined;
    const key = `${loc.entry.offset}`;
    let stm = this.objStmCache.get(key);
    if (!this.objStmCache.has(key)) {
      stm = this.loadObjStm(streamNum, rev);
      this.objStmCache.set(key, stm);
    }
    if (!stm) return undefined;
    const off = stm.offsets.get(num);
    if (off === undefined) return undefined;
    try {
      const lex = new Lexer(stm.data, stm.first + off);
      const v = new Parser(lex).value();
      return isOp(v) ? null : v;
    } catch (err) {
      if (err instanceof PdfSyntaxError) return undefined;
      throw err;
    }
  }

  private loadObjStm(streamNum: number, rev: number): ObjStm | undefined {
    const s = this.object(streamNum, rev);
    if (!isStream(s) || !isName(get(s.dict, "Type"), "ObjStm")) return undefined;
    let data: Uint8Array;
    try {
      data = this.decode(s);
    } catch (err) {
      if (err instanceof DecodeError) return undefined;
      throw err;
    }
    const n = Math.min(numberOf(get(s.dict, "N")) ?? 0, 1_000_000);
    const first = numberOf(get(s.dict, "First")) ?? 0;
    const lex = new Lexer(data, 0, Math.min(first, data.length));
    const offsets = new Map<number, number>();
    const order: number[] = [];
    for (let i = 0; i < n; i++) {
      const a = lex.next();
      const o = lex.next();
      if (a.t !== "num" || o.t !== "num") break;
      if (!offsets.has(a.v)) offsets.set(a.v, o.v);
      order.push(a.v);
    }
    return { offsets, order, data, first };
  }

  /** The decoded data of a stream (cached, bounded); throws DecodeError. */
  decode(s: PdfStream): Uint8Array {
    const cached = this.decodeCache.get(s);
    if (cached) return cached;
    const room = Math.min(this.limits.maxStreamBytes, this.limits.maxDecodedBytes - this.decodedTotal);
    if (room <= 0) throw new DecodeError("the budget for decoding streams is used up");
    if (get(s.dict, "Filter") === undefined) return s.raw;
    const { data } = decodeStream(s, room);
    this.decodedTotal += data.length;
    this.decodeCache.set(s, data);
    return data;
  }

  /** A short digest of a stream's data (decoded when possible), for comparing revisions. */
  streamDigest(s: PdfStream): string {
    let data: Uint8Array = s.raw;
    try {
      data = this.decode(s);
    } catch {
      // compare raw bytes
    }
    return createHash("sha1").update(data).digest("hex").slice(0, 16);
  }

  // -------------------------------------------------------------------------------------------
  // Document structure per revision
  // -------------------------------------------------------------------------------------------

  trailer(rev = this.last): PdfDict | undefined {
    for (let r = Math.min(rev, this.last); r >= 0; r--) {
      const t = (this.revisions[r] as Revision).trailer;
      if (t?.map.has("Root")) return t;
    }
    return undefined;
  }

  catalog(rev = this.last): PdfDict | undefined {
    return this.dict(get(this.trailer(rev), "Root"), rev);
  }

  info(rev = this.last): PdfDict | undefined {
    return this.dict(get(this.trailer(rev), "Info"), rev);
  }

  /** The pages in order as of a revision, with inherited resources; bounded and cycle-safe. */
  pages(rev = this.last): PageInfo[] {
    const out: PageInfo[] = [];
    const root = get(this.catalog(rev), "Pages");
    const visited = new Set<string>();
    const walk = (v: PdfValue | undefined, inherited: PdfDict | undefined, depth: number) => {
      if (depth > 64 || out.length >= this.limits.maxPages) return;
      const ref = isRef(v) ? v : undefined;
      if (ref) {
        const k = `${ref.num} ${ref.gen}`;
        if (visited.has(k)) return;
        visited.add(k);
      }
      const node = this.dict(v, rev);
      if (!node) return;
      const res = this.dict(get(node, "Resources"), rev) ?? inherited;
      const kids = this.resolve(get(node, "Kids"), rev);
      const type = get(node, "Type");
      if (Array.isArray(kids) && !isName(type, "Page")) {
        for (const kid of kids) walk(kid, res, depth + 1);
        return;
      }
      out.push({ ref, dict: node, resources: res, number: out.length + 1 });
    };
    walk(root, undefined, 0);
    return out;
  }

  /** The content streams of a page, in order. */
  contents(page: PageInfo, rev = this.last): { ref?: PdfRef; stream: PdfStream }[] {
    const c = get(page.dict, "Contents");
    const list =
      isRef(c) && Array.isArray(this.resolve(c, rev))
        ? (this.resolve(c, rev) as PdfValue[])
        : Array.isArray(c)
          ? c
          : [c];
    const out: { ref?: PdfRef; stream: PdfStream }[] = [];
    for (const item of list.slice(0, 10_000)) {
      const s = this.resolve(item, rev);
      if (isStream(s)) out.push(isRef(item) ? { ref: item, stream: s } : { stream: s });
    }
    return out;
  }
}

export interface PageInfo {
  ref?: PdfRef;
  dict: PdfDict;
  resources?: PdfDict;
  /** 1-based. */
  number: number;
}

function rank(s: XrefSection, rev: Revision, main: XrefSection | undefined): number {
  if (s === main) return 0;
  // A hybrid file's table wins over its /XRefStm stream, which wins over anything else found.
  if (main && main.xrefStm === s.offset) return 1;
  return 2 + (rev.end - s.offset) / 1e12;
}

/** Opens a PDF for raw walking; never throws for bad input (problems are recorded on the result). */
export function openRawPdf(bytes: Uint8Array, limits: RawLimits = DEFAULT_LIMITS): RawPdf {
  return new RawPdf(bytes, limits);
}
