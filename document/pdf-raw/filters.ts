import zlib from "node:zlib";
import { get, isDict, isName, numberOf, type PdfDict, type PdfStream, type PdfValue } from "./objects.js";

/**
 * Stream decoding for the raw walker: FlateDecode (node:zlib, with PNG/TIFF predictors for xref and object
 * streams), ASCIIHexDecode, ASCII85Decode and RunLengthDecode. Image codecs (DCT, JPX, JBIG2, CCITT) are
 * left encoded: the walker compares them by their raw bytes. Every decode is capped in output size, so a
 * decompression bomb ends in a DecodeError instead of exhausting memory.
 */

export class DecodeError extends Error {
  override name = "DecodeError";
}

/** A stream that decodes to more than the caller's limit (a decompression bomb, or just too large). */
export class DecodeLimitError extends DecodeError {
  override name = "DecodeLimitError";
}

/** Image codecs and others the walker does not decode (not needed to compare revisions). */
export const PASSTHROUGH_FILTERS = new Set([
  "DCTDecode",
  "JPXDecode",
  "JBIG2Decode",
  "CCITTFaxDecode",
  "Crypt",
]);

export interface DecodeResult {
  data: Uint8Array;
  /** True when a filter was left undecoded (image codecs). */
  partial: boolean;
}

export function decodeStream(stream: PdfStream, maxOutput: number): DecodeResult {
  const filters = listOf(get(stream.dict, "Filter"));
  const params = listOf(get(stream.dict, "DecodeParms") ?? get(stream.dict, "DP"));
  let data: Uint8Array = stream.raw;
  for (let i = 0; i < filters.length; i++) {
    const f = filters[i];
    const name = isName(f) ? f.name : undefined;
    const p = params[i];
    const parms = isDict(p) ? p : undefined;
    switch (name) {
      case "FlateDecode":
      case "Fl":
        data = predict(inflate(data, maxOutput), parms, maxOutput);
        break;
      case "ASCIIHexDecode":
      case "AHx":
        data = asciiHex(data);
        break;
      case "ASCII85Decode":
      case "A85":
        data = ascii85(data, maxOutput);
        break;
      case "RunLengthDecode":
      case "RL":
        data = runLength(data, maxOutput);
        break;
      case "LZWDecode":
      case "LZW":
        data = predict(lzw(data, parms, maxOutput), parms, maxOutput);
        break;
      default:
        if (name && PASSTHROUGH_FILTERS.has(name)) return { data, partial: true };
        throw new DecodeError(`unsupported stream filter ${name ?? "(not a name)"}`);
    }
  }
  return { data, partial: false };
}

function listOf(v: PdfValue | undefined): PdfValue[] {
  if (v === undefined || v === null) return [];
  return Array.isArray(v) ? v : [v];
}

function inflate(data: Uint8Array, maxOutput: number): Uint8Array {
  try {
    return zlib.inflateSync(data, { maxOutputLength: maxOutput });
  } catch (err) {
    if ((err as { code?: string }).code === "ERR_BUFFER_TOO_LARGE") {
      throw new DecodeLimitError(`a compressed stream expands beyond ${maxOutput} bytes`);
    }
    // Truncated or slightly corrupt streams: take what decodes, as readers do.
    try {
      return zlib.inflateSync(data, { maxOutputLength: maxOutput, finishFlush: zlib.constants.Z_SYNC_FLUSH });
    } catch (err2) {
      if ((err2 as { code?: string }).code === "ERR_BUFFER_TOO_LARGE") {
        throw new DecodeLimitError(`a compressed stream expands beyond ${maxOutput} bytes`);
      }
      try {
        return zlib.inflateRawSync(data, {
          maxOutputLength: maxOutput,
          finishFlush: zlib.constants.Z_SYNC_FLUSH,
        });
      } catch {
        throw new DecodeError(`a FlateDecode stream is corrupt (${(err as Error).message})`);
      }
    }
  }
}

function predict(data: Uint8Array, parms: PdfDict | undefined, maxOutput: number): Uint8Array {
  const predictor = numberOf(get(parms, "Predictor")) ?? 1;
  if (predictor <= 1) return data;
  const colors = Math.max(1, Math.min(32, numberOf(get(parms, "Colors")) ?? 1));
  const bpc = Math.max(1, Math.min(16, numberOf(get(parms, "BitsPerComponent")) ?? 8));
  const columns = Math.max(1, Math.min(1 << 20, numberOf(get(parms, "Columns")) ?? 1));
  const bpp = Math.max(1, Math.ceil((colors * bpc) / 8));
  const rowLen = Math.ceil((colors * bpc * columns) / 8);
  if (predictor === 2) {
    if (bpc !== 8) return data;
    const out = new Uint8Array(data);
    for (let r = 0; r + rowLen <= out.length; r += rowLen) {
      for (let i = bpp; i < rowLen; i++)
        out[r + i] = ((out[r + i] as number) + (out[r + i - bpp] as number)) & 0xff;
    }
    return out;
  }
  // PNG predictors (10-15): each row starts with its filter type byte.
  const rows = Math.floor(data.length / (rowLen + 1));
  if (rows * rowLen > maxOutput) throw new DecodeLimitError("a predicted stream is too large");
  const out = new Uint8Array(rows * rowLen);
  const prev = new Uint8Array(rowLen);
  for (let r = 0; r < rows; r++) {
    const base = r * (rowLen + 1);
    const type = data[base] as number;
    const row = out.subarray(r * rowLen, (r + 1) * rowLen);
    for (let i = 0; i < rowLen; i++) {
      const x = data[base + 1 + i] as number;
      const a = i >= bpp ? (row[i - bpp] as number) : 0;
      const b = prev[i] as number;
      const c = i >= bpp ? (prev[i - bpp] as number) : 0;
      let v: number;
      switch (type) {
        case 1:
          v = x + a;
          break;
        case 2:
          v = x + b;
          break;
        case 3:
          v = x + ((a + b) >> 1);
          break;
        case 4: {
          const p = a + b - c;
          const pa = Math.abs(p - a);
          const pb = Math.abs(p - b);
          const pc = Math.abs(p - c);
          v = x + (pa <= pb && pa <= pc ? a : pb <= pc ? b : c);
          break;
        }
        default:
          v = x;
      }
      row[i] = v & 0xff;
    }
    prev.set(row);
  }
  return out;
}

function asciiHex(data: Uint8Array): Uint8Array {
  const s = Buffer.from(data).toString("latin1");
  const end = s.indexOf(">");
  let hex = (end >= 0 ? s.slice(0, end) : s).replace(/[^0-9a-fA-F]/g, "");
  if (hex.length % 2) hex += "0";
  return Buffer.from(hex, "hex");
}

/**
 * Output of the decoders that build bytes one at a time: a growing Uint8Array (1 byte per byte, unlike a
 * number[] at 8), refusing to pass `max` bytes.
 */
class ByteSink {
  private buf = new Uint8Array(4096);
  length = 0;
  constructor(
    private readonly max: number,
    private readonly what: string,
  ) {}

  private room(n: number): void {
    const need = this.length + n;
    if (need > this.max) throw new DecodeLimitError(`${this.what} is too large`);
    if (need <= this.buf.length) return;
    const next = new Uint8Array(Math.min(Math.max(need, this.buf.length * 2), Math.max(need, this.max)));
    next.set(this.buf.subarray(0, this.length));
    this.buf = next;
  }

  push(b: number): void {
    this.room(1);
    this.buf[this.length++] = b;
  }

  fill(b: number, n: number): void {
    this.room(n);
    this.buf.fill(b, this.length, this.length + n);
    this.length += n;
  }

  append(bytes: ArrayLike<number>): void {
    this.room(bytes.length);
    this.buf.set(bytes, this.length);
    this.length += bytes.length;
  }

  bytes(): Uint8Array {
    return this.buf.slice(0, this.length);
  }
}

function ascii85(data: Uint8Array, maxOutput: number): Uint8Array {
  let s = Buffer.from(data).toString("latin1").replace(/\s+/g, "");
  if (s.startsWith("<~")) s = s.slice(2);
  const end = s.indexOf("~>");
  if (end >= 0) s = s.slice(0, end);
  const out = new ByteSink(maxOutput, "an ASCII85 stream");
  let group: number[] = [];
  for (const ch of s) {
    if (ch === "z" && group.length === 0) {
      out.fill(0, 4);
      continue;
    }
    const c = ch.charCodeAt(0) - 33;
    if (c < 0 || c > 84) throw new DecodeError("an ASCII85 stream holds invalid characters");
    group.push(c);
    if (group.length === 5) {
      let v = 0;
      for (const d of group) v = v * 85 + d;
      out.append([(v >>> 24) & 0xff, (v >>> 16) & 0xff, (v >>> 8) & 0xff, v & 0xff]);
      group = [];
    }
  }
  if (group.length > 1) {
    const n = group.length;
    while (group.length < 5) group.push(84);
    let v = 0;
    for (const d of group) v = v * 85 + d;
    const bytes = [(v >>> 24) & 0xff, (v >>> 16) & 0xff, (v >>> 8) & 0xff, v & 0xff];
    out.append(bytes.slice(0, n - 1));
  }
  return out.bytes();
}

function runLength(data: Uint8Array, maxOutput: number): Uint8Array {
  const out = new ByteSink(maxOutput, "a run-length stream");
  let i = 0;
  while (i < data.length) {
    const n = data[i++] as number;
    if (n === 128) break;
    if (n < 128) {
      const end = Math.min(data.length, i + n + 1);
      out.append(data.subarray(i, end));
      i = end;
    } else {
      out.fill(data[i++] ?? 0, 257 - n);
    }
  }
  return out.bytes();
}

function lzw(data: Uint8Array, parms: PdfDict | undefined, maxOutput: number): Uint8Array {
  const early = numberOf(get(parms, "EarlyChange")) ?? 1;
  const out = new ByteSink(maxOutput, "an LZW stream");
  let dict: number[][] = [];
  const reset = () => {
    dict = [];
    for (let i = 0; i < 256; i++) dict.push([i]);
    dict.push([], []);
  };
  reset();
  let codeLen = 9;
  let bitBuf = 0;
  let bits = 0;
  let prev: number[] | null = null;
  for (let i = 0; i < data.length; i++) {
    bitBuf = (bitBuf << 8) | (data[i] as number);
    bits += 8;
    while (bits >= codeLen) {
      const code = (bitBuf >>> (bits - codeLen)) & ((1 << codeLen) - 1);
      bits -= codeLen;
      bitBuf &= (1 << bits) - 1;
      if (code === 256) {
        reset();
        codeLen = 9;
        prev = null;
        continue;
      }
      if (code === 257) return out.bytes();
      let entry = dict[code];
      if (!entry || (entry.length === 0 && code > 257)) {
        if (prev && code === dict.length) entry = [...prev, prev[0] as number];
        else throw new DecodeError("an LZW stream is corrupt");
      }
      out.append(entry);
      if (prev) dict.push([...prev, entry[0] as number]);
      prev = entry;
      const size = dict.length + early;
      if (size >= 1 << codeLen && codeLen < 12) codeLen++;
    }
  }
  return out.bytes();
}
