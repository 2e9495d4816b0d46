/**
 * The values of the PDF object model (PDF 32000-1 §7.3) as the raw walker reads them. Streams keep the
 * position of their raw data in the file, so nothing is decoded until a caller asks.
 */

export interface PdfName {
  kind: "name";
  name: string;
}
export interface PdfString {
  kind: "string";
  bytes: Uint8Array;
  hex: boolean;
}
export interface PdfRef {
  kind: "ref";
  num: number;
  gen: number;
}
export interface PdfDict {
  kind: "dict";
  map: Map<string, PdfValue>;
}
export interface PdfStream {
  kind: "stream";
  dict: PdfDict;
  /** The raw (still encoded) data. */
  raw: Uint8Array;
  /** Offset of the raw data in the buffer it was read from. */
  offset: number;
}
/** A content-stream operator (only produced when parsing content streams). */
export interface PdfOp {
  kind: "op";
  op: string;
}
export type PdfValue =
  | null
  | boolean
  | number
  | PdfName
  | PdfString
  | PdfRef
  | PdfDict
  | PdfStream
  | PdfValue[];

export class PdfSyntaxError extends Error {
  override name = "PdfSyntaxError";
  constructor(
    message: string,
    readonly offset: number,
  ) {
    super(message);
  }
}

export const isDict = (v: PdfValue | undefined): v is PdfDict =>
  typeof v === "object" && v !== null && !Array.isArray(v) && v.kind === "dict";
export const isStream = (v: PdfValue | undefined): v is PdfStream =>
  typeof v === "object" && v !== null && !Array.isArray(v) && v.kind === "stream";
export const isRef = (v: PdfValue | undefined): v is PdfRef =>
  typeof v === "object" && v !== null && !Array.isArray(v) && v.kind === "ref";
export const isName = (v: PdfValue | undefined, name?: string): v is PdfName =>
  typeof v === "object" &&
  v !== null &&
  !Array.isArray(v) &&
  v.kind === "name" &&
  (name === undefined || v.name === name);
export const isString = (v: PdfValue | undefined): v is PdfString =>
  typeof v === "object" && v !== null && !Array.isArray(v) && v.kind === "string";

/** The dictionary of a dict or a stream. */
export function dictOf(v: PdfValue | undefined): PdfDict | undefined {
  if (isDict(v)) return v;
  if (isStream(v)) return v.dict;
  return undefined;
}

export function get(d: PdfDict | PdfStream | undefined, key: string): PdfValue | undefined {
  if (!d) return undefined;
  return (d.kind === "stream" ? d.dict : d).map.get(key);
}

export const nameOf = (v: PdfValue | undefined): string | undefined => (isName(v) ? v.name : undefined);
export const numberOf = (v: PdfValue | undefined): number | undefined =>
  typeof v === "number" && Number.isFinite(v) ? v : undefined;
export const refKey = (r: PdfRef) => `${r.num} ${r.gen}`;

/** PDFDocEncoding / UTF-16BE text string to a JS string (§7.9.2). */
export function textOf(v: PdfValue | undefined): string | undefined {
  if (!isString(v)) return undefined;
  return decodeTextString(v.bytes);
}

export function decodeTextString(b: Uint8Array): string {
  if (b.length >= 2 && b[0] === 0xfe && b[1] === 0xff) {
    let s = "";
    for (let i = 2; i + 1 < b.length; i += 2)
      s += String.fromCharCode(((b[i] as number) << 8) | (b[i + 1] as number));
    return s;
  }
  if (b.length >= 3 && b[0] === 0xef && b[1] === 0xbb && b[2] === 0xbf) {
    return Buffer.from(b.subarray(3)).toString("utf8");
  }
  return Buffer.from(b).toString("latin1");
}

/**
 * A compact, canonical rendering of a value, for comparing an object across revisions. Streams render
 * as their dictionary plus the length and a hash of the raw data (passed in, so callers choose).
 */
export function canonical(v: PdfValue, streamDigest: (s: PdfStream) => string, depth = 0): string {
  if (depth > 64) return "…";
  if (v === null) return "null";
  if (typeof v === "boolean" || typeof v === "number") return String(v);
  if (Array.isArray(v)) return `[${v.map((x) => canonical(x, streamDigest, depth + 1)).join(" ")}]`;
  switch (v.kind) {
    case "name":
      return `/${v.name}`;
    case "string":
      return `<${Buffer.from(v.bytes).toString("hex")}>`;
    case "ref":
      return `${v.num} ${v.gen} R`;
    case "dict": {
      const keys = [...v.map.keys()].sort();
      return `<<${keys.map((k) => `/${k} ${canonical(v.map.get(k) as PdfValue, streamDigest, depth + 1)}`).join(" ")}>>`;
    }
    case "stream": {
      const d = new Map(v.dict.map);
      d.delete("Length");
      return `${canonical({ kind: "dict", map: d }, streamDigest, depth + 1)}stream:${streamDigest(v)}`;
    }
  }
}
