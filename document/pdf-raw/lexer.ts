import { type PdfDict, type PdfOp, PdfSyntaxError, type PdfValue } from "./objects.js";

/**
 * Tokenizer and object parser for PDF syntax (PDF 32000-1 §7.2-7.3) working on raw bytes at absolute
 * offsets. Bounded: nesting deeper than MAX_DEPTH and objects with more than MAX_ITEMS items are syntax
 * errors, so a hostile file cannot exhaust the stack or memory through one object.
 */

export const MAX_DEPTH = 64;
export const MAX_ITEMS = 1_000_000;

const WS = new Uint8Array(256);
for (const c of [0x00, 0x09, 0x0a, 0x0c, 0x0d, 0x20]) WS[c] = 1;
const DELIM = new Uint8Array(256);
for (const c of "()<>[]{}/%") DELIM[c.charCodeAt(0)] = 1;

export const isWhite = (c: number | undefined) => c !== undefined && WS[c] === 1;
const isRegular = (c: number | undefined) => c !== undefined && WS[c] === 0 && DELIM[c] === 0;

export type Token =
  | { t: "num"; v: number; int: boolean }
  | { t: "name"; v: string }
  | { t: "str"; v: Uint8Array; hex: boolean }
  | { t: "kw"; v: string }
  | { t: "open" | "close" | "dopen" | "dclose" | "bopen" | "bclose" }
  | { t: "eof" };

export class Lexer {
  pos: number;
  constructor(
    readonly buf: Uint8Array,
    start = 0,
    readonly end = buf.length,
  ) {
    this.pos = start;
  }

  skipSpace(): void {
    const b = this.buf;
    while (this.pos < this.end) {
      const c = b[this.pos] as number;
      if (WS[c]) this.pos++;
      else if (c === 0x25 /* % */) {
        while (this.pos < this.end && b[this.pos] !== 0x0a && b[this.pos] !== 0x0d) this.pos++;
      } else break;
    }
  }

  next(): Token {
    this.skipSpace();
    const b = this.buf;
    if (this.pos >= this.end) return { t: "eof" };
    const c = b[this.pos] as number;
    switch (c) {
      case 0x5b:
        this.pos++;
        return { t: "open" };
      case 0x5d:
        this.pos++;
        return { t: "close" };
      case 0x7b:
        this.pos++;
        return { t: "bopen" };
      case 0x7d:
        this.pos++;
        return { t: "bclose" };
      case 0x3c:
        if (b[this.pos + 1] === 0x3c) {
          this.pos += 2;
          return { t: "dopen" };
        }
        return this.hexString();
      case 0x3e:
        if (b[this.pos + 1] === 0x3e) {
          this.pos += 2;
          return { t: "dclose" };
        }
        this.pos++;
        return { t: "kw", v: ">" };
      case 0x28:
        return this.literalString();
      case 0x2f:
        return this.name();
      case 0x29:
        this.pos++;
        return { t: "kw", v: ")" };
    }
    const start = this.pos;
    let numeric = true;
    let dot = false;
    let word = "";
    while (this.pos < this.end) {
      const ch = b[this.pos] as number;
      if (WS[ch] || DELIM[ch]) break;
      if (ch === 0x2e) dot = true;
      else if (!(ch >= 0x30 && ch <= 0x39) && !((ch === 0x2b || ch === 0x2d) && this.pos === start))
        numeric = false;
      if (this.pos - start < 128) word += String.fromCharCode(ch);
      this.pos++;
    }
    if (numeric && word !== "" && word !== "." && word !== "+" && word !== "-") {
      const v = Number(word);
      if (Number.isFinite(v)) return { t: "num", v, int: !dot };
    }
    if (/^[+-]?\d*\.?\d*[+-]\d*$/.test(word) && /\d/.test(word)) {
      // Malformed numbers such as "0.00-5" that some writers emit: readers take the leading part.
      const lead = /^[+-]?\d*\.?\d*/.exec(word)?.[0] ?? "0";
      return { t: "num", v: Number(lead) || 0, int: false };
    }
    return { t: "kw", v: word };
  }

  private name(): Token {
    const b = this.buf;
    this.pos++;
    const start = this.pos;
    while (this.pos < this.end && isRegular(b[this.pos])) this.pos++;
    let raw = Buffer.from(b.buffer, b.byteOffset + start, this.pos - start).toString("latin1");
    if (raw.includes("#")) {
      raw = raw.replace(/#([0-9a-fA-F]{2})/g, (_m, h: string) => String.fromCharCode(Number.parseInt(h, 16)));
    }
    return { t: "name", v: raw };
  }

  private hexString(): Token {
    const b = this.buf;
    this.pos++;
    const out: number[] = [];
    let hi = -1;
    while (this.pos < this.end) {
      const c = b[this.pos++] as number;
      if (c === 0x3e) break;
      const v = hexValue(c);
      if (v < 0) continue;
      if (hi < 0) hi = v;
      else {
        out.push((hi << 4) | v);
        hi = -1;
      }
    }
    if (hi >= 0) out.push(hi << 4);
    return { t: "str", v: Uint8Array.from(out), hex: true };
  }

  private literalString(): Token {
    const b = this.buf;
    this.pos++;
    const out: number[] = [];
    let depth = 1;
    while (this.pos < this.end) {
      const c = b[this.pos++] as number;
      if (c === 0x28) {
        depth++;
        out.push(c);
      } else if (c === 0x29) {
        if (--depth === 0) break;
        out.push(c);
      } else if (c === 0x5c) {
        const e = b[this.pos++];
        if (e === undefined) break;
        switch (e) {
          case 0x6e:
            out.push(0x0a);
            break;
          case 0x72:
            out.push(0x0d);
            break;
          case 0x74:
            out.push(0x09);
            break;
          case 0x62:
            out.push(0x08);
            break;
          case 0x66:
            out.push(0x0c);
            break;
          case 0x0d:
            if (b[this.pos] === 0x0a) this.pos++;
            break;
          case 0x0a:
            break;
          default:
            if (e >= 0x30 && e <= 0x37) {
              let v = e - 0x30;
              for (let k = 0; k < 2; k++) {
                const d = b[this.pos];
                if (d === undefined || d < 0x30 || d > 0x37) break;
                v = v * 8 + (d - 0x30);
                this.pos++;
              }
              out.push(v & 0xff);
            } else out.push(e);
        }
      } else out.push(c);
    }
    return { t: "str", v: Uint8Array.from(out), hex: false };
  }
}

function hexValue(c: number): number {
  if (c >= 0x30 && c <= 0x39) return c - 0x30;
  if (c >= 0x41 && c <= 0x46) return c - 0x37;
  if (c >= 0x61 && c <= 0x66) return c - 0x57;
  return -1;
}

/**
 * Parses one value starting at the lexer's position. References (`n g R`) are recognised by lookahead.
 * `allowOps` turns unknown keywords into operator values (content streams); otherwise they end the value
 * with a syntax error.
 */
export class Parser {
  items = 0;
  constructor(readonly lex: Lexer) {}

  value(depth = 0, allowOps = false): PdfValue | PdfOp {
    const tok = this.lex.next();
    return this.fromToken(tok, depth, allowOps);
  }

  private fromToken(tok: Token, depth: number, allowOps: boolean): PdfValue | PdfOp {
    if (++this.items > MAX_ITEMS) throw new PdfSyntaxError("too many items in one object", this.lex.pos);
    switch (tok.t) {
      case "num": {
        if (tok.int && tok.v >= 0 && !allowOps) {
          const save = this.lex.pos;
          const gen = this.lex.next();
          if (gen.t === "num" && gen.int && gen.v >= 0) {
            const r = this.lex.next();
            if (r.t === "kw" && r.v === "R") return { kind: "ref", num: tok.v, gen: gen.v };
          }
          this.lex.pos = save;
        }
        return tok.v;
      }
      case "name":
        return { kind: "name", name: tok.v };
      case "str":
        return { kind: "string", bytes: tok.v, hex: tok.hex };
      case "open": {
        if (depth >= MAX_DEPTH) throw new PdfSyntaxError("objects nested too deeply", this.lex.pos);
        const arr: PdfValue[] = [];
        for (;;) {
          const t = this.lex.next();
          if (t.t === "close") return arr;
          if (t.t === "eof") throw new PdfSyntaxError("unterminated array", this.lex.pos);
          const v = this.fromToken(t, depth + 1, allowOps);
          if (isOp(v)) {
            if (allowOps) throw new PdfSyntaxError(`operator ${v.op} inside an array`, this.lex.pos);
            continue;
          }
          arr.push(v);
        }
      }
      case "dopen": {
        if (depth >= MAX_DEPTH) throw new PdfSyntaxError("objects nested too deeply", this.lex.pos);
        const map = new Map<string, PdfValue>();
        for (;;) {
          const k = this.lex.next();
          if (k.t === "dclose") return { kind: "dict", map } satisfies PdfDict;
          if (k.t === "eof") throw new PdfSyntaxError("unterminated dictionary", this.lex.pos);
          if (k.t !== "name") {
            if (k.t === "kw" && (k.v === "endobj" || k.v === "stream")) {
              throw new PdfSyntaxError("unterminated dictionary", this.lex.pos);
            }
            continue; // tolerate junk between entries, as readers do
          }
          const v = this.value(depth + 1, allowOps);
          if (isOp(v)) {
            if (v.op === "endobj" || v.op === "stream") {
              throw new PdfSyntaxError("unterminated dictionary", this.lex.pos);
            }
            continue;
          }
          map.set(k.v, v);
        }
      }
      case "kw":
        if (tok.v === "true") return true;
        if (tok.v === "false") return false;
        if (tok.v === "null") return null;
        return { kind: "op", op: tok.v };
      case "eof":
        throw new PdfSyntaxError("unexpected end of data", this.lex.pos);
      default:
        // `]`, `>>`, `{`, `}` out of place
        if (allowOps) return { kind: "op", op: tok.t };
        throw new PdfSyntaxError(`unexpected ${tok.t}`, this.lex.pos);
    }
  }
}

export const isOp = (v: PdfValue | PdfOp): v is PdfOp =>
  typeof v === "object" && v !== null && !Array.isArray(v) && v.kind === "op";

/** Finds `needle` (latin1) in buf between from and to; -1 when absent. */
export function indexOfBytes(buf: Uint8Array, needle: string, from = 0, to = buf.length): number {
  const b = Buffer.from(buf.buffer, buf.byteOffset, Math.min(to, buf.length));
  const i = b.indexOf(needle, from, "latin1");
  return i;
}

export function lastIndexOfBytes(buf: Uint8Array, needle: string, before: number, notBefore = 0): number {
  const b = Buffer.from(buf.buffer, buf.byteOffset, buf.length);
  const i = b.lastIndexOf(needle, before, "latin1");
  return i >= notBefore ? i : -1;
}
