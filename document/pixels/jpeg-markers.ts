/**
 * The structure of a JPEG file read without decoding or re-encoding it: its segments in order, the
 * quantisation tables (natural order), the frame (baseline/progressive, size, components and their
 * sampling), Huffman tables (the standard Annex K ones or optimised), restart interval, the application
 * segments that name a writer (JFIF, Exif, XMP, ICC, Adobe, Photoshop IRB, Ducky) and bytes after EOI.
 * And the IJG quality the luminance table corresponds to (libjpeg's scaling of the Annex K tables), with
 * whether the tables are exactly a libjpeg table or someone's own (cameras, Photoshop).
 *
 * Used by the capture classification and jpeg.provenance; bounded (at most MAX_SEGMENTS segments read).
 */

export interface JpegComponent {
  id: number;
  h: number;
  v: number;
  table: number;
}

export interface JpegInfo {
  /** Marker names in order, e.g. ["SOI", "APP0", "DQT", "SOF0", "DHT", "SOS"]. */
  markers: string[];
  /** Quantisation tables by id, 64 values each in natural (row-major) order. */
  tables: Map<number, number[]>;
  /** SOF0 baseline, SOF1 extended, SOF2 progressive, ... */
  frame?: { type: number; width: number; height: number; precision: number; components: JpegComponent[] };
  /** "4:4:4", "4:2:0", "4:2:2", "4:4:0", "grey" or "h1v1 h2v1 ..." for anything else. */
  subsampling?: string;
  /** True when every Huffman table is one of the four of Annex K (libjpeg without optimisation). */
  standardHuffman: boolean;
  restartInterval: number;
  /** Application segments by what they say they are. */
  app: {
    jfif?: { version: string; densityUnits: number; xDensity: number; yDensity: number };
    exif: boolean;
    xmp: boolean;
    icc: boolean;
    adobe?: { transform: number };
    photoshop: boolean;
    ducky: boolean;
    other: string[];
  };
  comments: string[];
  /** Bytes after the EOI marker. */
  trailingBytes: number;
  /** The IJG quality estimate from the luminance table (table 0), see estimateQuality. */
  quality?: QualityEstimate;
}

export interface QualityEstimate {
  /** 1-100: the libjpeg quality whose luminance table is closest. */
  quality: number;
  /** True when table 0 (and table 1, when present) equal libjpeg's tables at that quality exactly. */
  standard: boolean;
  /** Mean absolute difference per entry between the file's tables and that quality's. */
  distance: number;
}

export class JpegFormatError extends Error {
  override name = "JpegFormatError";
}

const MAX_SEGMENTS = 512;

/** Zigzag index → natural index. */
export const ZIGZAG = [
  0, 1, 8, 16, 9, 2, 3, 10, 17, 24, 32, 25, 18, 11, 4, 5, 12, 19, 26, 33, 40, 48, 41, 34, 27, 20, 13, 6, 7,
  14, 21, 28, 35, 42, 49, 56, 57, 50, 43, 36, 29, 22, 15, 23, 30, 37, 44, 51, 58, 59, 52, 45, 38, 31, 39, 46,
  53, 60, 61, 54, 47, 55, 62, 63,
];

/** ITU T.81 Annex K tables (natural order). */
export const STD_LUMA = [
  16, 11, 10, 16, 24, 40, 51, 61, 12, 12, 14, 19, 26, 58, 60, 55, 14, 13, 16, 24, 40, 57, 69, 56, 14, 17, 22,
  29, 51, 87, 80, 62, 18, 22, 37, 56, 68, 109, 103, 77, 24, 35, 55, 64, 81, 104, 113, 92, 49, 64, 78, 87, 103,
  121, 120, 101, 72, 92, 95, 98, 112, 100, 103, 99,
];
export const STD_CHROMA = [
  17, 18, 24, 47, 99, 99, 99, 99, 18, 21, 26, 66, 99, 99, 99, 99, 24, 26, 56, 99, 99, 99, 99, 99, 47, 66, 99,
  99, 99, 99, 99, 99, 99, 99, 99, 99, 99, 99, 99, 99, 99, 99, 99, 99, 99, 99, 99, 99, 99, 99, 99, 99, 99, 99,
  99, 99, 99, 99, 99, 99, 99, 99, 99, 99,
];

/** libjpeg's table for a quality (jpeg_quality_scaling, baseline-limited to 255). */
export function ijgTable(base: readonly number[], quality: number): number[] {
  const q = Math.min(100, Math.max(1, Math.round(quality)));
  const scale = q < 50 ? Math.floor(5000 / q) : 200 - q * 2;
  return base.map((t) => Math.min(255, Math.max(1, Math.floor((t * scale + 50) / 100))));
}

/** The libjpeg quality closest to the tables (luminance, and chrominance when given). */
export function estimateQuality(luma: readonly number[], chroma?: readonly number[]): QualityEstimate {
  let best: QualityEstimate = { quality: 50, standard: false, distance: Number.POSITIVE_INFINITY };
  for (let q = 1; q <= 100; q++) {
    const l = ijgTable(STD_LUMA, q);
    let d = 0;
    for (let i = 0; i < 64; i++) d += Math.abs(l[i]! - luma[i]!);
    let exact = d === 0;
    if (chroma) {
      const c = ijgTable(STD_CHROMA, q);
      let dc = 0;
      for (let i = 0; i < 64; i++) dc += Math.abs(c[i]! - chroma[i]!);
      exact &&= dc === 0;
      d = (d + dc) / 2;
    }
    const distance = d / 64;
    if (distance < best.distance) best = { quality: q, standard: exact, distance };
  }
  best.distance = Math.round(best.distance * 100) / 100;
  return best;
}

const MARKER_NAMES = new Map<number, string>([
  [0xd8, "SOI"],
  [0xd9, "EOI"],
  [0xda, "SOS"],
  [0xdb, "DQT"],
  [0xc4, "DHT"],
  [0xdd, "DRI"],
  [0xfe, "COM"],
  [0xcc, "DAC"],
]);
function markerName(m: number): string {
  const known = MARKER_NAMES.get(m);
  if (known) return known;
  if (m >= 0xe0 && m <= 0xef) return `APP${m - 0xe0}`;
  if (m >= 0xc0 && m <= 0xcf) return `SOF${m - 0xc0}`;
  if (m >= 0xd0 && m <= 0xd7) return `RST${m - 0xd0}`;
  return `0x${m.toString(16)}`;
}

/** Annex K Huffman tables as (class<<4|id) → bits(16)+values, to tell libjpeg's default from optimised ones. */
const STD_HUFFMAN_BITS = new Set([
  "0,1,5,1,1,1,1,1,1,0,0,0,0,0,0,0", // DC luminance
  "0,3,1,1,1,1,1,1,1,1,1,0,0,0,0,0", // DC chrominance
  "0,2,1,3,3,2,4,3,5,5,4,4,0,0,1,125", // AC luminance
  "0,2,1,2,4,4,3,4,7,5,4,4,0,1,2,119", // AC chrominance
]);

function ascii(bytes: Uint8Array, start: number, len: number): string {
  let s = "";
  for (let i = start; i < Math.min(bytes.length, start + len); i++) s += String.fromCharCode(bytes[i]!);
  return s;
}

function subsamplingOf(components: JpegComponent[]): string {
  if (components.length === 1) return "grey";
  const [y, cb, cr] = components;
  if (!y || !cb || !cr || cb.h !== cr.h || cb.v !== cr.v || cb.h !== 1 || cb.v !== 1)
    return components.map((c) => `h${c.h}v${c.v}`).join(" ");
  if (y.h === 1 && y.v === 1) return "4:4:4";
  if (y.h === 2 && y.v === 2) return "4:2:0";
  if (y.h === 2 && y.v === 1) return "4:2:2";
  if (y.h === 1 && y.v === 2) return "4:4:0";
  return components.map((c) => `h${c.h}v${c.v}`).join(" ");
}

export function isJpeg(bytes: Uint8Array): boolean {
  return bytes.length > 3 && bytes[0] === 0xff && bytes[1] === 0xd8 && bytes[2] === 0xff;
}

/** Reads the segments of a JPEG file up to its first scan (and finds its EOI). Throws JpegFormatError. */
export function readJpeg(bytes: Uint8Array): JpegInfo {
  if (!isJpeg(bytes)) throw new JpegFormatError("the data does not start with a JPEG SOI marker");
  const info: JpegInfo = {
    markers: ["SOI"],
    tables: new Map(),
    standardHuffman: true,
    restartInterval: 0,
    app: { exif: false, xmp: false, icc: false, photoshop: false, ducky: false, other: [] },
    comments: [],
    trailingBytes: 0,
  };
  let sawHuffman = false;
  let p = 2;
  let scans = 0;
  while (p + 4 <= bytes.length && info.markers.length < MAX_SEGMENTS) {
    if (bytes[p] !== 0xff) throw new JpegFormatError(`no marker at byte ${p}`);
    let m = bytes[p + 1]!;
    while (m === 0xff && p + 2 < bytes.length) {
      p++;
      m = bytes[p + 1]!;
    }
    const name = markerName(m);
    if (m === 0xd9) {
      info.markers.push(name);
      info.trailingBytes = Math.max(0, bytes.length - (p + 2));
      break;
    }
    const len = (bytes[p + 2]! << 8) | bytes[p + 3]!;
    if (len < 2 || p + 2 + len > bytes.length) throw new JpegFormatError(`segment ${name} overruns the file`);
    const s = p + 4;
    const end = p + 2 + len;
    info.markers.push(name);
    if (m === 0xdb) {
      let q = s;
      while (q < end) {
        const pq = bytes[q]! >> 4;
        const id = bytes[q]! & 15;
        q++;
        const table = new Array<number>(64);
        for (let i = 0; i < 64; i++) {
          const v = pq ? (bytes[q + 2 * i]! << 8) | bytes[q + 2 * i + 1]! : bytes[q + i]!;
          table[ZIGZAG[i]!] = v;
        }
        q += pq ? 128 : 64;
        info.tables.set(id, table);
      }
    } else if (m >= 0xc0 && m <= 0xcf && m !== 0xc4 && m !== 0xc8 && m !== 0xcc) {
      const n = bytes[s + 5]!;
      const components: JpegComponent[] = [];
      for (let i = 0; i < n; i++) {
        const o = s + 6 + i * 3;
        components.push({
          id: bytes[o]!,
          h: bytes[o + 1]! >> 4,
          v: bytes[o + 1]! & 15,
          table: bytes[o + 2]!,
        });
      }
      info.frame = {
        type: m - 0xc0,
        precision: bytes[s]!,
        height: (bytes[s + 1]! << 8) | bytes[s + 2]!,
        width: (bytes[s + 3]! << 8) | bytes[s + 4]!,
        components,
      };
      info.subsampling = subsamplingOf(components);
    } else if (m === 0xc4) {
      sawHuffman = true;
      let q = s;
      while (q + 17 <= end) {
        const counts = Array.from(bytes.subarray(q + 1, q + 17));
        const total = counts.reduce((a, b) => a + b, 0);
        if (!STD_HUFFMAN_BITS.has(counts.join(","))) info.standardHuffman = false;
        q += 17 + total;
      }
    } else if (m === 0xdd) {
      info.restartInterval = (bytes[s]! << 8) | bytes[s + 1]!;
    } else if (m === 0xfe) {
      if (info.comments.length < 8) info.comments.push(ascii(bytes, s, Math.min(200, len - 2)));
    } else if (m >= 0xe0 && m <= 0xef) {
      const id = ascii(bytes, s, Math.min(32, len - 2));
      if (m === 0xe0 && id.startsWith("JFIF\0")) {
        info.app.jfif = {
          version: `${bytes[s + 5]}.${String(bytes[s + 6]).padStart(2, "0")}`,
          densityUnits: bytes[s + 7]!,
          xDensity: (bytes[s + 8]! << 8) | bytes[s + 9]!,
          yDensity: (bytes[s + 10]! << 8) | bytes[s + 11]!,
        };
      } else if (m === 0xe1 && id.startsWith("Exif\0")) info.app.exif = true;
      else if (m === 0xe1 && id.startsWith("http://ns.adobe.com/xap/1.0/")) info.app.xmp = true;
      else if (m === 0xe2 && id.startsWith("ICC_PROFILE")) info.app.icc = true;
      else if (m === 0xee && id.startsWith("Adobe")) info.app.adobe = { transform: bytes[s + 11] ?? 0 };
      else if (m === 0xed && id.startsWith("Photoshop 3.0")) info.app.photoshop = true;
      else if (m === 0xec && id.startsWith("Ducky")) info.app.ducky = true;
      else info.app.other.push(`${name}:${id.replace(/[^\x20-\x7e]+/g, "").slice(0, 16)}`);
    }
    if (m === 0xda) {
      scans++;
      // Skip the entropy-coded data to the next marker that is not a stuffed byte or a restart.
      let q = end;
      while (q + 1 < bytes.length) {
        if (bytes[q] === 0xff) {
          const n2 = bytes[q + 1]!;
          if (n2 !== 0 && !(n2 >= 0xd0 && n2 <= 0xd7) && n2 !== 0xff) break;
        }
        q++;
      }
      p = q;
      if (q + 1 >= bytes.length) break;
      continue;
    }
    p = end;
  }
  if (!sawHuffman) info.standardHuffman = false;
  const luma = info.tables.get(info.frame?.components[0]?.table ?? 0) ?? info.tables.get(0);
  const chromaId = info.frame?.components[1]?.table;
  const chroma = chromaId !== undefined ? info.tables.get(chromaId) : undefined;
  if (luma) info.quality = estimateQuality(luma, chroma && chroma !== luma ? chroma : undefined);
  if (scans === 0 && !info.markers.includes("EOI")) throw new JpegFormatError("the file has no image data");
  return info;
}

/** A short fingerprint of the quantisation tables (to compare images of one file). */
export function tablesFingerprint(info: JpegInfo): string {
  return [...info.tables.entries()]
    .sort((a, b) => a[0] - b[0])
    .map(([id, t]) => `${id}:${t.join(".")}`)
    .join("|");
}
