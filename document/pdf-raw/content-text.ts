import type { PageInfo, RawPdf } from "./document.js";
import { DecodeError } from "./filters.js";
import { isOp, Lexer, Parser } from "./lexer.js";
import {
  get,
  isDict,
  isName,
  isStream,
  isString,
  nameOf,
  numberOf,
  type PdfDict,
  type PdfOp,
  PdfSyntaxError,
  type PdfValue,
} from "./objects.js";

/**
 * The text a page's content streams show, run by run (one Tj/TJ/'/" each), with where it starts on the
 * page and in which font, read straight from one revision's objects. Decodes strings through the font's
 * /ToUnicode CMap when there is one, else as single-byte WinAnsi (the standard 14 fonts and most simple
 * fonts). Form XObjects are followed a few levels deep. Bounded in operators per page.
 */

export interface TextRun {
  text: string;
  x: number;
  y: number;
  size: number;
  /** The font's /BaseFont (or resource name when unknown). */
  font: string;
}

const MAX_OPS = 500_000;
const MAX_FORM_DEPTH = 3;

type Matrix = [number, number, number, number, number, number];
const IDENTITY: Matrix = [1, 0, 0, 1, 0, 0];
const mul = (m: Matrix, n: Matrix): Matrix => [
  m[0] * n[0] + m[1] * n[2],
  m[0] * n[1] + m[1] * n[3],
  m[2] * n[0] + m[3] * n[2],
  m[2] * n[1] + m[3] * n[3],
  m[4] * n[0] + m[5] * n[2] + n[4],
  m[4] * n[1] + m[5] * n[3] + n[5],
];

interface FontDecoder {
  name: string;
  decode(bytes: Uint8Array): string;
}

/** Windows-1252 for 0x80-0x9F; Latin-1 elsewhere (WinAnsiEncoding, near enough for comparing text). */
const CP1252_HIGH = "€\u0081‚ƒ„…†‡ˆ‰Š‹Œ\u008dŽ\u008f\u0090‘’“”•–—˜™š›œ\u009džŸ";

function singleByte(bytes: Uint8Array): string {
  let s = "";
  for (const b of bytes) s += b >= 0x80 && b <= 0x9f ? CP1252_HIGH[b - 0x80] : String.fromCharCode(b);
  return s;
}

export function parseToUnicode(data: Uint8Array): { map: Map<number, string>; codeBytes: number } {
  const text = Buffer.from(data).toString("latin1");
  const map = new Map<number, string>();
  let codeBytes = 1;
  const utf16 = (hex: string) => {
    let s = "";
    for (let i = 0; i + 3 < hex.length + 0; i += 4)
      s += String.fromCharCode(Number.parseInt(hex.slice(i, i + 4), 16));
    if (hex.length === 2) s = String.fromCharCode(Number.parseInt(hex, 16));
    return s;
  };
  const space = /begincodespacerange([\s\S]*?)endcodespacerange/.exec(text);
  const firstCode = space ? /<([0-9a-fA-F]+)>/.exec(space[1] ?? "") : null;
  if (firstCode) codeBytes = Math.max(1, Math.ceil((firstCode[1] as string).length / 2));
  for (const block of text.matchAll(/beginbfchar([\s\S]*?)endbfchar/g)) {
    for (const m of (block[1] ?? "").matchAll(/<([0-9a-fA-F]+)>\s*<([0-9a-fA-F]*)>/g)) {
      map.set(Number.parseInt(m[1] as string, 16), utf16(m[2] as string));
      if (map.size > 100_000) return { map, codeBytes };
    }
  }
  for (const block of text.matchAll(/beginbfrange([\s\S]*?)endbfrange/g)) {
    for (const m of (block[1] ?? "").matchAll(
      /<([0-9a-fA-F]+)>\s*<([0-9a-fA-F]+)>\s*(<[0-9a-fA-F]*>|\[[^\]]*\])/g,
    )) {
      const lo = Number.parseInt(m[1] as string, 16);
      const hi = Math.min(Number.parseInt(m[2] as string, 16), lo + 65_535);
      const dst = m[3] as string;
      if (dst.startsWith("[")) {
        const items = [...dst.matchAll(/<([0-9a-fA-F]*)>/g)].map((x) => utf16(x[1] as string));
        for (let c = lo; c <= hi && c - lo < items.length; c++) map.set(c, items[c - lo] as string);
      } else {
        const base = dst.slice(1, -1);
        const start = utf16(base);
        const last = start.charCodeAt(start.length - 1);
        for (let c = lo; c <= hi; c++) map.set(c, start.slice(0, -1) + String.fromCharCode(last + (c - lo)));
      }
      if (map.size > 100_000) return { map, codeBytes };
    }
  }
  return { map, codeBytes };
}

function fontDecoder(raw: RawPdf, fontRef: PdfValue | undefined, rev: number, resName: string): FontDecoder {
  const font = raw.dict(fontRef, rev);
  const base = nameOf(get(font, "BaseFont")) ?? resName;
  const composite = isName(get(font, "Subtype"), "Type0");
  const tu = raw.resolve(get(font, "ToUnicode"), rev);
  let cmap: { map: Map<number, string>; codeBytes: number } | undefined;
  if (isStream(tu)) {
    try {
      cmap = parseToUnicode(raw.decode(tu));
    } catch (err) {
      if (!(err instanceof DecodeError)) throw err;
    }
  }
  const width = composite ? 2 : (cmap?.codeBytes ?? 1);
  return {
    name: base,
    decode(bytes) {
      if (!cmap || cmap.map.size === 0) {
        if (!composite) return singleByte(bytes);
        // A composite font without ToUnicode: show the codes, so a change is still visible.
        return `<${Buffer.from(bytes).toString("hex")}>`;
      }
      let s = "";
      for (let i = 0; i + width <= bytes.length; i += width) {
        let code = 0;
        for (let k = 0; k < width; k++) code = code * 256 + (bytes[i + k] as number);
        s += cmap.map.get(code) ?? (width === 1 ? singleByte(bytes.subarray(i, i + 1)) : "\ufffd");
      }
      return s;
    },
  };
}

/** The text runs of a page as of revision `rev`. */
export function pageTextRuns(raw: RawPdf, page: PageInfo, rev: number): TextRun[] {
  const runs: TextRun[] = [];
  const budget = { ops: 0 };
  const parts = raw.contents(page, rev);
  const chunks: Uint8Array[] = [];
  for (const p of parts) {
    try {
      chunks.push(raw.decode(p.stream), Uint8Array.of(0x0a));
    } catch (err) {
      if (!(err instanceof DecodeError)) throw err;
    }
  }
  const data = Buffer.concat(chunks);
  runContent(raw, data, page.resources, rev, IDENTITY, runs, budget, 0);
  return runs;
}

function runContent(
  raw: RawPdf,
  data: Uint8Array,
  resources: PdfDict | undefined,
  rev: number,
  baseCtm: Matrix,
  runs: TextRun[],
  budget: { ops: number },
  depth: number,
): void {
  const lex = new Lexer(data);
  const parser = new Parser(lex);
  const fonts = raw.dict(get(resources, "Font"), rev);
  const xobjects = raw.dict(get(resources, "XObject"), rev);
  const decoders = new Map<string, FontDecoder>();
  let ctm: Matrix = baseCtm;
  const stack: Matrix[] = [];
  let tm: Matrix = IDENTITY;
  let tlm: Matrix = IDENTITY;
  let leading = 0;
  let fontName = "";
  let size = 0;
  let operands: (PdfValue | PdfOp)[] = [];

  const decoder = (): FontDecoder => {
    let d = decoders.get(fontName);
    if (!d) {
      d = fontDecoder(raw, get(fonts, fontName), rev, fontName);
      decoders.set(fontName, d);
    }
    return d;
  };
  const show = (parts: PdfValue[]) => {
    const d = decoder();
    let text = "";
    for (const p of parts) {
      if (isString(p)) text += d.decode(p.bytes);
      else if (typeof p === "number" && p < -180) text += " ";
    }
    const at = mul(tm, ctm);
    runs.push({
      text,
      x: round(at[4]),
      y: round(at[5]),
      size: round(size * Math.hypot(at[0], at[1]) || size),
      font: d.name,
    });
  };
  const nextLine = () => {
    tlm = mul([1, 0, 0, 1, 0, -leading], tlm);
    tm = tlm;
  };

  for (;;) {
    let v: PdfValue | PdfOp;
    try {
      if (++budget.ops > MAX_OPS) return;
      v = parser.value(0, true);
    } catch (err) {
      if (err instanceof PdfSyntaxError) {
        if (lex.pos >= data.length) return;
        operands = [];
        continue;
      }
      throw err;
    }
    if (!isOp(v)) {
      if (operands.length < 64) operands.push(v);
      continue;
    }
    const op = v.op;
    const num = (i: number) => numberOf(operands[i] as PdfValue) ?? 0;
    switch (op) {
      case "q":
        if (stack.length < 256) stack.push(ctm);
        break;
      case "Q":
        ctm = stack.pop() ?? baseCtm;
        break;
      case "cm":
        if (operands.length >= 6) ctm = mul([num(0), num(1), num(2), num(3), num(4), num(5)], ctm);
        break;
      case "BT":
        tm = IDENTITY;
        tlm = IDENTITY;
        break;
      case "Tf":
        fontName = nameOf(operands[0] as PdfValue) ?? "";
        size = num(1);
        break;
      case "TL":
        leading = num(0);
        break;
      case "Td":
        tlm = mul([1, 0, 0, 1, num(0), num(1)], tlm);
        tm = tlm;
        break;
      case "TD":
        leading = -num(1);
        tlm = mul([1, 0, 0, 1, num(0), num(1)], tlm);
        tm = tlm;
        break;
      case "Tm":
        tlm = [num(0), num(1), num(2), num(3), num(4), num(5)];
        tm = tlm;
        break;
      case "T*":
        nextLine();
        break;
      case "Tj":
        show([operands[0] as PdfValue]);
        break;
      case "'":
        nextLine();
        show([operands[0] as PdfValue]);
        break;
      case '"':
        nextLine();
        show([operands[2] as PdfValue]);
        break;
      case "TJ": {
        const arr = operands[0];
        if (Array.isArray(arr)) show(arr);
        break;
      }
      case "BI": {
        // Inline image: skip its data up to EI.
        const end = Buffer.from(data.buffer, data.byteOffset, data.length).indexOf("EI", lex.pos, "latin1");
        lex.pos = end < 0 ? data.length : end + 2;
        break;
      }
      case "Do": {
        if (depth >= MAX_FORM_DEPTH) break;
        const name = nameOf(operands[0] as PdfValue);
        const xo = name ? raw.resolve(get(xobjects, name), rev) : undefined;
        if (isStream(xo) && isName(get(xo.dict, "Subtype"), "Form")) {
          try {
            const m = get(xo.dict, "Matrix");
            const fm: Matrix =
              Array.isArray(m) && m.length === 6 ? (m.map((x) => numberOf(x) ?? 0) as Matrix) : IDENTITY;
            const res = raw.dict(get(xo.dict, "Resources"), rev) ?? resources;
            runContent(
              raw,
              raw.decode(xo),
              isDict(res) ? res : undefined,
              rev,
              mul(fm, ctm),
              runs,
              budget,
              depth + 1,
            );
          } catch (err) {
            if (!(err instanceof DecodeError)) throw err;
          }
        }
        break;
      }
    }
    operands = [];
  }
}

const round = (n: number) => Math.round(n * 100) / 100;
