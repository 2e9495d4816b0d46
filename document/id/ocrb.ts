import { existsSync } from "node:fs";
import { createCanvas, GlobalFonts } from "@napi-rs/canvas";
import { MRZ_ALPHABET } from "./mrz-format.js";

/**
 * The OCR-B glyphs of the MRZ alphabet as templates. ICAO 9303 Part 3 mandates OCR-B (ISO 1073-2) at a fixed
 * pitch for the machine readable zone, so a cell of a rectified MRZ line can be classified against the 37
 * characters rendered from the font itself. The font comes from Debian's `fonts-ocr-b` (installed by the
 * product image and by `npm run test:setup`), found at `DOCVERIFY_OCRB_FONT` or the Debian path; nothing is
 * downloaded. Each character is rendered once per process at a large size, in several stroke weights and
 * blurs (print, scan and camera thicken, thin and soften strokes), and sampled into the same normalised cell
 * window the reader samples documents with (mrz-template.ts).
 */

export const DEFAULT_OCRB_FONT = "/usr/share/fonts/opentype/ocr-b/OCRB.otf";

/** The OCR-B font file: `DOCVERIFY_OCRB_FONT` when set, else Debian's fonts-ocr-b. */
export function ocrbFontPath(env: NodeJS.ProcessEnv = process.env): string {
  return env.DOCVERIFY_OCRB_FONT?.trim() || DEFAULT_OCRB_FONT;
}

/** The OCR-B font is not where it should be: the identity checks report `error` with this sentence. */
export class OcrbFontMissingError extends Error {
  readonly code = "ocrb_font_missing";
  constructor(readonly path: string) {
    super(
      `the OCR-B font the MRZ reader needs is not at ${path}: install Debian's fonts-ocr-b (the product image does) or point DOCVERIFY_OCRB_FONT at an OCR-B .otf/.ttf file`,
    );
    this.name = "OcrbFontMissingError";
  }
}

/**
 * The normalised cell window, in units of the line's geometry: horizontally from 0.15 pitch before the cell
 * to 0.15 after it, vertically from 1.25 cap heights above the baseline to 0.25 below.
 */
export const CELL_WINDOW = { left: 0.15, right: 0.15, above: 1.25, below: 0.25 } as const;

export interface TemplateSize {
  /** Samples across and down the window. */
  w: number;
  h: number;
}

export interface GlyphTemplate {
  char: string;
  variant: string;
  /** Zero-mean, unit-norm samples (ink positive), w × h. */
  v: Float32Array;
}

export interface TemplateBank {
  size: TemplateSize;
  templates: GlyphTemplate[];
  byChar: Map<string, GlyphTemplate[]>;
  /** Ink centroid (samples, within the window) of each character's regular template. */
  centroids: Map<string, [number, number]>;
  /** Ink centre of the filler `<` from its cell's centre, in pitches. */
  fillerOffset: number;
}

/** Render size of the master glyphs (pixels per em). */
const EM = 96;

interface Master {
  char: string;
  /** Ink coverage 0-1, EM-scaled canvas. */
  ink: Float32Array;
  width: number;
  height: number;
  originX: number;
  baseline: number;
}

let registered: string | undefined;

function register(path: string): string {
  if (registered === path) return "DocverifyOCRB";
  if (!existsSync(path)) throw new OcrbFontMissingError(path);
  const ok = GlobalFonts.registerFromPath(path, "DocverifyOCRB");
  if (!ok) throw new OcrbFontMissingError(path);
  registered = path;
  return "DocverifyOCRB";
}

interface Metrics {
  advance: number;
  capHeight: number;
  /** Ink centre of `<` from its advance's centre, in advances. */
  fillerOffset: number;
}

function renderMasters(fontPath: string): { masters: Master[]; metrics: Metrics } {
  const family = register(fontPath);
  const width = Math.round(EM * 1.2);
  const height = Math.round(EM * 1.6);
  const originX = Math.round(EM * 0.3);
  const baseline = Math.round(EM * 1.2);
  const canvas = createCanvas(width, height);
  const g = canvas.getContext("2d");
  g.font = `${EM}px ${family}`;
  const advance = g.measureText("0").width;
  const draw = (ch: string): Float32Array => {
    g.fillStyle = "#fff";
    g.fillRect(0, 0, width, height);
    g.fillStyle = "#000";
    g.textBaseline = "alphabetic";
    g.fillText(ch, originX, baseline);
    const data = g.getImageData(0, 0, width, height).data;
    const ink = new Float32Array(width * height);
    for (let i = 0; i < ink.length; i++) ink[i] = 1 - data[i * 4]! / 255;
    return ink;
  };
  // Cap height: the ink top of H above the baseline.
  const h = draw("H");
  let top = baseline;
  for (let y = 0; y < baseline; y++) {
    let any = false;
    for (let x = 0; x < width; x++) if (h[y * width + x]! > 0.5) any = true;
    if (any) {
      top = y;
      break;
    }
  }
  const lt = draw("<");
  let minX = width;
  let maxX = 0;
  for (let y = 0; y < height; y++)
    for (let x = 0; x < width; x++)
      if (lt[y * width + x]! > 0.5) {
        minX = Math.min(minX, x);
        maxX = Math.max(maxX, x);
      }
  const fillerOffset = maxX >= minX ? ((minX + maxX + 1) / 2 - (originX + advance / 2)) / advance : 0;
  const masters = [...MRZ_ALPHABET].map((char) => ({
    char,
    ink: draw(char),
    width,
    height,
    originX,
    baseline,
  }));
  return { masters, metrics: { advance, capHeight: baseline - top, fillerOffset } };
}

/** Grey-level dilation (r > 0) or erosion (r < 0) with a square of side 2|r|+1 (separable). */
function morph(src: Float32Array, w: number, h: number, r: number): Float32Array {
  if (r === 0) return src;
  const k = Math.abs(r);
  const dilate = r > 0;
  const pass = (from: Float32Array, step: number, count: number, lineStep: number, lines: number) => {
    const out = new Float32Array(from.length);
    for (let line = 0; line < lines; line++) {
      const base = line * lineStep;
      for (let i = 0; i < count; i++) {
        let v = from[base + i * step]!;
        const lo = Math.max(0, i - k);
        const hi = Math.min(count - 1, i + k);
        for (let j = lo; j <= hi; j++) {
          const u = from[base + j * step]!;
          if (dilate ? u > v : u < v) v = u;
        }
        out[base + i * step] = v;
      }
    }
    return out;
  };
  return pass(pass(src, 1, w, w, h), w, h, 1, w);
}

/** Normalises a vector in place to zero mean and unit norm (a flat vector stays zero). */
export function normalise(v: Float32Array): Float32Array {
  let mean = 0;
  for (const x of v) mean += x;
  mean /= v.length;
  let ss = 0;
  for (let i = 0; i < v.length; i++) {
    const d = v[i]! - mean;
    v[i] = d;
    ss += d * d;
  }
  const n = Math.sqrt(ss);
  if (n > 1e-6) for (let i = 0; i < v.length; i++) v[i] = v[i]! / n;
  return v;
}

/**
 * Samples the cell window of a master glyph at `size`, averaging the master's pixels over each sample's
 * footprint, with a Gaussian blur of `blur` samples applied afterwards.
 */
function sampleMaster(m: Master, ink: Float32Array, metrics: Metrics, size: TemplateSize, blur: number) {
  const x0 = m.originX - CELL_WINDOW.left * metrics.advance;
  const x1 = m.originX + (1 + CELL_WINDOW.right) * metrics.advance;
  const y0 = m.baseline - CELL_WINDOW.above * metrics.capHeight;
  const y1 = m.baseline + CELL_WINDOW.below * metrics.capHeight;
  const out = new Float32Array(size.w * size.h);
  const sx = (x1 - x0) / size.w;
  const sy = (y1 - y0) / size.h;
  for (let j = 0; j < size.h; j++)
    for (let i = 0; i < size.w; i++) {
      let sum = 0;
      let n = 0;
      const ya = Math.floor(y0 + j * sy);
      const yb = Math.floor(y0 + (j + 1) * sy);
      const xa = Math.floor(x0 + i * sx);
      const xb = Math.floor(x0 + (i + 1) * sx);
      for (let y = ya; y < yb; y++)
        for (let x = xa; x < xb; x++) {
          if (x >= 0 && y >= 0 && x < m.width && y < m.height) sum += ink[y * m.width + x]!;
          n++;
        }
      out[j * size.w + i] = n > 0 ? sum / n : 0;
    }
  return blur > 0 ? gaussian(out, size.w, size.h, blur) : out;
}

/** A separable Gaussian blur of a small float image. */
export function gaussian(src: Float32Array, w: number, h: number, sigma: number): Float32Array {
  const r = Math.max(1, Math.ceil(sigma * 2.5));
  const k: number[] = [];
  let s = 0;
  for (let i = -r; i <= r; i++) {
    const v = Math.exp(-(i * i) / (2 * sigma * sigma));
    k.push(v);
    s += v;
  }
  for (let i = 0; i < k.length; i++) k[i] = k[i]! / s;
  const tmp = new Float32Array(src.length);
  for (let y = 0; y < h; y++)
    for (let x = 0; x < w; x++) {
      let v = 0;
      for (let d = -r; d <= r; d++) {
        const xx = Math.min(w - 1, Math.max(0, x + d));
        v += src[y * w + xx]! * k[d + r]!;
      }
      tmp[y * w + x] = v;
    }
  const out = new Float32Array(src.length);
  for (let y = 0; y < h; y++)
    for (let x = 0; x < w; x++) {
      let v = 0;
      for (let d = -r; d <= r; d++) {
        const yy = Math.min(h - 1, Math.max(0, y + d));
        v += tmp[yy * w + x]! * k[d + r]!;
      }
      out[y * w + x] = v;
    }
  return out;
}

/** Stroke weights (dilation radius in master pixels: ink spread, thin toner) and blurs of the templates. */
const VARIANTS: { name: string; weight: number; blur: number }[] = [
  { name: "regular", weight: 0, blur: 0.5 },
  { name: "bold", weight: 2, blur: 0.7 },
  { name: "light", weight: -2, blur: 0.5 },
  { name: "soft", weight: 1, blur: 1.3 },
];

const banks = new Map<string, TemplateBank>();
let mastersOf:
  | { path: string; masters: Master[]; metrics: Metrics; weighted: Map<string, Float32Array> }
  | undefined;

/**
 * The template bank of `size` for the font at `fontPath` (built once per process and size). Throws
 * OcrbFontMissingError when the font is absent.
 */
export function templateBank(size: TemplateSize, fontPath: string = ocrbFontPath()): TemplateBank {
  const key = `${fontPath}|${size.w}x${size.h}`;
  const hit = banks.get(key);
  if (hit) return hit;
  if (!mastersOf || mastersOf.path !== fontPath) {
    const { masters, metrics } = renderMasters(fontPath);
    mastersOf = { path: fontPath, masters, metrics, weighted: new Map() };
  }
  const { masters, metrics, weighted } = mastersOf;
  const templates: GlyphTemplate[] = [];
  const centroids = new Map<string, [number, number]>();
  for (const m of masters) {
    const plain = sampleMaster(m, m.ink, metrics, size, 0);
    let sx = 0;
    let sy = 0;
    let n = 0;
    for (let j = 0; j < size.h; j++)
      for (let i = 0; i < size.w; i++) {
        const v = plain[j * size.w + i]!;
        sx += v * i;
        sy += v * j;
        n += v;
      }
    centroids.set(m.char, n > 0 ? [sx / n, sy / n] : [size.w / 2, size.h / 2]);
    for (const variant of VARIANTS) {
      const wk = `${m.char}|${variant.weight}`;
      let ink = weighted.get(wk);
      if (!ink) {
        ink = morph(m.ink, m.width, m.height, variant.weight);
        weighted.set(wk, ink);
      }
      const v = normalise(sampleMaster(m, ink, metrics, size, variant.blur));
      templates.push({ char: m.char, variant: variant.name, v });
    }
  }
  const byChar = new Map<string, GlyphTemplate[]>();
  for (const t of templates) byChar.set(t.char, [...(byChar.get(t.char) ?? []), t]);
  const bank = { size, templates, byChar, centroids, fillerOffset: metrics.fillerOffset };
  banks.set(key, bank);
  return bank;
}
