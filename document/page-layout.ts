import { OPS } from "pdfjs-dist/legacy/build/pdf.mjs";

/**
 * What a PDF page draws, in paint order: text runs with position, font, size, render mode and colour,
 * and the filled areas (paths and images) between them. Built from pdfjs's operator list in one walk,
 * so the text checks can compare fonts, find text hidden under boxes or drawn over other text, and
 * rebuild rows and columns. All coordinates are PDF user-space points of the page (origin bottom left).
 */

/** [x0, y0, x1, y1] with x0 ≤ x1 and y0 ≤ y1. */
export type Box = [number, number, number, number];

/** Why a run cannot be seen by a reader of the rendered page. */
export type HiddenReason =
  | "render_mode_invisible"
  | "transparent"
  | "covered"
  | "same_colour_as_background"
  | "outside_page"
  | "tiny";

export interface TextRun {
  text: string;
  bbox: Box;
  /** Baseline start in user space. */
  x: number;
  y: number;
  /** Font size as rendered, in points (text size × text matrix × CTM). */
  size: number;
  /** The font's BaseFont as the PDF names it, subset prefix included (`ABCDEF+Arial-BoldMT`). */
  font: string;
  /** The font program is embedded in the file (false: the viewer substitutes a system font). */
  fontEmbedded: boolean;
  /** Text render mode 0-7 (3 = invisible, 7 = clip only). */
  renderMode: number;
  /** Fill colour `#rrggbb`; null for a pattern or unknown colour. */
  fill: string | null;
  /** Fill opacity 0-1 (ExtGState /ca). */
  alpha: number;
  /** Horizontal, not rotated or mirrored (the only runs the table analysis uses). */
  upright: boolean;
  /** Paint order on the page, shared with areas: higher is drawn later (on top). */
  order: number;
  /** Set when a reader cannot see the run. */
  hidden?: HiddenReason;
  /** For `covered`: the order of the area drawn over the run. */
  coveredBy?: number;
  /**
   * Set when the run's centre lies outside the clip path in force where it was drawn (the part of a cell's
   * text a spreadsheet clips at the cell's edge): no one sees it, whatever its colour.
   */
  clippedOut?: true;
  /**
   * Set on words read by OCR (document/ocr.ts): the OCR's confidence in the word, 0-100. Such runs have
   * no font (`font` is ""), and their boxes are in the page's units (see PageLayout.units).
   */
  confidence?: number;
  /**
   * Set on words read by OCR when the engine segmented them: each character's text, box (the page's units,
   * as `bbox`) and the OCR's confidence in it, 0-100. The pixel checks find a character's ink by it.
   */
  chars?: { text: string; bbox: Box; confidence: number }[];
}

export interface PaintedArea {
  kind: "fill" | "image";
  bbox: Box;
  /** Fill colour `#rrggbb` of a filled path; null for images and patterns. */
  fill: string | null;
  alpha: number;
  /** Blend mode other than Normal (Multiply highlights do not hide what is under them). */
  blended: boolean;
  order: number;
}

export interface PageLayout {
  /** The page box (CropBox within MediaBox) in user space. */
  box: Box;
  /**
   * Units of every box and baseline: "pt" (PDF user space, origin bottom left, y up; the default) or "px"
   * (an image document's own pixels, origin top left, y down: the OCR'd words of an image).
   */
  units?: "pt" | "px";
  runs: TextRun[];
  areas: PaintedArea[];
  /** Set when caps were reached and the layout is incomplete. */
  truncated?: string;
}

export interface FontInfo {
  name: string;
  embedded: boolean;
  ascent: number;
  descent: number;
  /** Glyph units → text space (0.001 for most fonts). */
  widthScale: number;
  vertical: boolean;
}

export interface LayoutLimits {
  maxOps: number;
  maxRuns: number;
  maxAreas: number;
  maxStackDepth: number;
}

export const DEFAULT_LAYOUT_LIMITS: LayoutLimits = {
  maxOps: 400_000,
  maxRuns: 20_000,
  maxAreas: 20_000,
  maxStackDepth: 256,
};

type Matrix = [number, number, number, number, number, number];
const IDENTITY: Matrix = [1, 0, 0, 1, 0, 0];

/** `m1` then `m2` (PDF row-vector convention: m1 × m2). */
function mul(m1: Matrix, m2: Matrix): Matrix {
  const [a1, b1, c1, d1, e1, f1] = m1;
  const [a2, b2, c2, d2, e2, f2] = m2;
  return [
    a1 * a2 + b1 * c2,
    a1 * b2 + b1 * d2,
    c1 * a2 + d1 * c2,
    c1 * b2 + d1 * d2,
    e1 * a2 + f1 * c2 + e2,
    e1 * b2 + f1 * d2 + f2,
  ];
}

function apply(m: Matrix, x: number, y: number): [number, number] {
  return [m[0] * x + m[2] * y + m[4], m[1] * x + m[3] * y + m[5]];
}

function toMatrix(v: unknown): Matrix | null {
  if (!v || typeof (v as ArrayLike<number>).length !== "number") return null;
  const a = Array.from(v as ArrayLike<number>);
  if (a.length !== 6 || a.some((n) => typeof n !== "number" || !Number.isFinite(n))) return null;
  return a as Matrix;
}

/** Bounding box of the rectangle [x0,y0,x1,y1] mapped through m. */
function mapBox(m: Matrix, x0: number, y0: number, x1: number, y1: number): Box {
  const pts = [apply(m, x0, y0), apply(m, x1, y0), apply(m, x0, y1), apply(m, x1, y1)];
  const xs = pts.map((p) => p[0]);
  const ys = pts.map((p) => p[1]);
  return [Math.min(...xs), Math.min(...ys), Math.max(...xs), Math.max(...ys)];
}

const round2 = (n: number) => Math.round(n * 100) / 100;
const roundBox = (b: Box): Box => [round2(b[0]), round2(b[1]), round2(b[2]), round2(b[3])];

interface GState {
  ctm: Matrix;
  fill: string | null;
  stroke: string | null;
  fillAlpha: number;
  blended: boolean;
  fontId: string | null;
  fontSize: number;
  charSpacing: number;
  wordSpacing: number;
  hScale: number;
  leading: number;
  rise: number;
  renderMode: number;
  /** The clip path's bounding box on the page (W / W*), null while nothing is clipped. */
  clip: Box | null;
}

const initialState = (): GState => ({
  ctm: IDENTITY,
  fill: "#000000",
  stroke: "#000000",
  clip: null,
  fillAlpha: 1,
  blended: false,
  fontId: null,
  fontSize: 0,
  charSpacing: 0,
  wordSpacing: 0,
  hScale: 1,
  leading: 0,
  rise: 0,
  renderMode: 0,
});

const FILL_PATH_OPS = new Set<number>([
  OPS.fill,
  OPS.eoFill,
  OPS.fillStroke,
  OPS.eoFillStroke,
  OPS.closeFillStroke,
  OPS.closeEOFillStroke,
]);

/** A TJ adjustment wider than this (in em) starts a new run: columns drawn with one TJ stay apart. */
const SPLIT_GAP_EM = 0.8;
/** A TJ adjustment wider than this (in em) reads as a space. */
const SPACE_GAP_EM = 0.2;

interface Glyph {
  unicode?: string;
  width?: number;
  isSpace?: boolean;
}

/**
 * Walks an operator list (pdfjs `getOperatorList()`) and returns the page's layout. `fontOf` resolves
 * pdfjs's internal font ids (from `setFont`) to the real font; unknown ids fall back to the id itself.
 */
export function layoutFromOperatorList(
  fnArray: ArrayLike<number>,
  argsArray: ArrayLike<unknown>,
  fontOf: (id: string) => FontInfo | undefined,
  pageBox: Box,
  limits: LayoutLimits = DEFAULT_LAYOUT_LIMITS,
): PageLayout {
  const runs: TextRun[] = [];
  const areas: PaintedArea[] = [];
  let truncated: string | undefined;
  const stack: GState[] = [];
  let overflow = 0;
  let gs = initialState();
  let tm: Matrix = IDENTITY;
  let tlm: Matrix = IDENTITY;
  let order = 0;
  let clipNext = false;

  const push = (next?: Partial<GState>) => {
    if (stack.length >= limits.maxStackDepth) {
      overflow++;
      return;
    }
    stack.push(gs);
    gs = { ...gs, ...next };
  };
  const pop = () => {
    if (overflow > 0) {
      overflow--;
      return;
    }
    const prev = stack.pop();
    if (prev) gs = prev;
  };
  const addArea = (area: Omit<PaintedArea, "order">) => {
    if (areas.length >= limits.maxAreas) {
      truncated ??= `more than ${limits.maxAreas} painted areas`;
      return;
    }
    const [x0, y0, x1, y1] = area.bbox;
    if (![x0, y0, x1, y1].every(Number.isFinite)) return;
    areas.push({ ...area, bbox: roundBox(area.bbox), order: order++ });
  };
  const addImage = (m: Matrix) =>
    addArea({
      kind: "image",
      bbox: mapBox(m, 0, 0, 1, 1),
      fill: null,
      alpha: gs.fillAlpha,
      blended: gs.blended,
    });

  const showText = (items: unknown[]) => {
    const font = gs.fontId ? fontOf(gs.fontId) : undefined;
    const fs = gs.fontSize;
    const widthScale = font?.widthScale ?? 0.001;
    const ascent = clamp(font?.ascent ?? 0.8, 0.5, 1.2);
    const descent = clamp(font?.descent ?? -0.2, -0.5, 0);
    let x = 0;
    let start = 0;
    let text = "";
    // The run's box spans its inked glyphs: leading and trailing spaces (and glyphs without text, which
    // some producers use to pad table cells) advance the pen but draw nothing a reader sees.
    let inkStart: number | undefined;
    let inkEnd = 0;
    const flush = () => {
      if (text.trim() === "") {
        text = "";
        start = x;
        inkStart = undefined;
        return;
      }
      const x0 = inkStart ?? start;
      const x1 = inkStart === undefined ? x : inkEnd;
      inkStart = undefined;
      if (runs.length >= limits.maxRuns) {
        truncated ??= `more than ${limits.maxRuns} text runs`;
        text = "";
        return;
      }
      const m = mul(tm, gs.ctm);
      const bbox = mapBox(m, x0, gs.rise + descent * fs, x1, gs.rise + ascent * fs);
      const [bx, by] = apply(m, x0, gs.rise);
      const size = Math.abs(fs) * Math.hypot(m[2], m[3]);
      if ([...bbox, bx, by, size].every(Number.isFinite)) {
        const cx = (bbox[0] + bbox[2]) / 2;
        const cy = (bbox[1] + bbox[3]) / 2;
        const clip = gs.clip;
        const clippedOut =
          clip !== null &&
          (cx < clip[0] - 0.5 || cx > clip[2] + 0.5 || cy < clip[1] - 0.5 || cy > clip[3] + 0.5);
        runs.push({
          text: text.replace(/\s+/g, " ").trim(),
          bbox: roundBox(bbox),
          x: round2(bx),
          y: round2(by),
          size: round2(size),
          font: font?.name ?? gs.fontId ?? "unknown",
          fontEmbedded: font?.embedded ?? false,
          renderMode: gs.renderMode,
          fill: gs.fill,
          alpha: gs.fillAlpha,
          upright: m[0] > 0 && m[3] > 0 && Math.abs(m[1]) < 1e-3 * m[0] && Math.abs(m[2]) < 1e-3 * m[3],
          order: order++,
          ...(clippedOut ? { clippedOut: true as const } : {}),
        });
      }
      text = "";
      start = x;
    };
    for (const item of items) {
      if (typeof item === "number") {
        if (!Number.isFinite(item)) continue;
        const gapEm = -item / 1000;
        const advance = gapEm * fs * gs.hScale;
        if (gapEm > SPLIT_GAP_EM || gapEm < -SPLIT_GAP_EM) {
          flush();
          x += advance;
          start = x;
          continue;
        }
        if (gapEm > SPACE_GAP_EM && text && !text.endsWith(" ")) text += " ";
        x += advance;
        continue;
      }
      const g = item as Glyph | null;
      if (!g || typeof g !== "object") continue;
      const w = typeof g.width === "number" && Number.isFinite(g.width) ? g.width : 0;
      const spacing = gs.charSpacing + (g.isSpace ? gs.wordSpacing : 0);
      const inked = typeof g.unicode === "string" && g.unicode.trim() !== "";
      if (typeof g.unicode === "string") text += g.unicode;
      if (inked) inkStart ??= x;
      x += (w * widthScale * fs + spacing) * gs.hScale;
      if (inked) inkEnd = x - spacing * gs.hScale;
    }
    flush();
    // The text matrix advances by the width shown (horizontal writing).
    tm = mul([1, 0, 0, 1, x, 0], tm);
  };

  const n = Math.min(fnArray.length, limits.maxOps);
  if (fnArray.length > limits.maxOps) truncated = `more than ${limits.maxOps} drawing operations`;
  for (let i = 0; i < n; i++) {
    const fn = fnArray[i] as number;
    const args = (argsArray[i] ?? []) as unknown[];
    switch (fn) {
      case OPS.save:
        push();
        break;
      case OPS.restore:
        pop();
        break;
      case OPS.transform: {
        const m = toMatrix(args);
        if (m) gs = { ...gs, ctm: mul(m, gs.ctm) };
        break;
      }
      case OPS.paintFormXObjectBegin: {
        const m = toMatrix(args[0]);
        push(m ? { ctm: mul(m, gs.ctm) } : undefined);
        break;
      }
      case OPS.paintFormXObjectEnd:
        pop();
        break;
      case OPS.beginAnnotation: {
        const t = toMatrix(args[2]) ?? IDENTITY;
        const m = toMatrix(args[3]) ?? IDENTITY;
        push({ ...initialState(), ctm: mul(m, t) });
        break;
      }
      case OPS.endAnnotation:
        pop();
        break;
      case OPS.setFillRGBColor:
        gs = { ...gs, fill: typeof args[0] === "string" ? args[0].toLowerCase() : null };
        break;
      case OPS.setStrokeRGBColor:
        gs = { ...gs, stroke: typeof args[0] === "string" ? args[0].toLowerCase() : null };
        break;
      case OPS.setFillColorN:
      case OPS.setFillTransparent:
        gs = { ...gs, fill: null };
        break;
      case OPS.setGState: {
        const entries = Array.isArray(args[0]) ? (args[0] as unknown[]) : [];
        for (const e of entries) {
          if (!Array.isArray(e)) continue;
          const [key, value] = e as [unknown, unknown];
          if (key === "ca" && typeof value === "number") gs = { ...gs, fillAlpha: clamp(value, 0, 1) };
          else if (key === "BM")
            gs = {
              ...gs,
              blended: typeof value === "string" && value !== "source-over" && value !== "normal",
            };
          else if (key === "Font" && Array.isArray(value)) {
            const [id, size] = value as [unknown, unknown];
            if (typeof id === "string" && typeof size === "number")
              gs = { ...gs, fontId: id, fontSize: size };
          }
        }
        break;
      }
      case OPS.beginText:
        tm = IDENTITY;
        tlm = IDENTITY;
        break;
      case OPS.setFont: {
        const [id, size] = args as [unknown, unknown];
        if (typeof id === "string") gs = { ...gs, fontId: id };
        if (typeof size === "number" && Number.isFinite(size)) gs = { ...gs, fontSize: size };
        break;
      }
      case OPS.setTextMatrix: {
        const m = toMatrix(args[0]) ?? toMatrix(args);
        if (m) {
          tm = m;
          tlm = m;
        }
        break;
      }
      case OPS.moveText:
      case OPS.setLeadingMoveText: {
        const [tx, ty] = args as [number, number];
        if (typeof tx !== "number" || typeof ty !== "number") break;
        if (fn === OPS.setLeadingMoveText) gs = { ...gs, leading: -ty };
        tlm = mul([1, 0, 0, 1, tx, ty], tlm);
        tm = tlm;
        break;
      }
      case OPS.nextLine:
        tlm = mul([1, 0, 0, 1, 0, -gs.leading], tlm);
        tm = tlm;
        break;
      case OPS.setLeading:
        if (typeof args[0] === "number") gs = { ...gs, leading: args[0] };
        break;
      case OPS.setCharSpacing:
        if (typeof args[0] === "number") gs = { ...gs, charSpacing: args[0] };
        break;
      case OPS.setWordSpacing:
        if (typeof args[0] === "number") gs = { ...gs, wordSpacing: args[0] };
        break;
      case OPS.setHScale:
        if (typeof args[0] === "number") gs = { ...gs, hScale: args[0] / 100 };
        break;
      case OPS.setTextRise:
        if (typeof args[0] === "number") gs = { ...gs, rise: args[0] };
        break;
      case OPS.setTextRenderingMode:
        if (typeof args[0] === "number") gs = { ...gs, renderMode: args[0] };
        break;
      case OPS.showText:
        if (Array.isArray(args[0])) showText(args[0] as unknown[]);
        break;
      case OPS.clip:
      case OPS.eoClip:
        // The path that follows (pdf.js sends W / W* before the path it ends) is the new clip.
        clipNext = true;
        break;
      case OPS.constructPath: {
        const [op, , minMax] = args as [number, unknown, ArrayLike<number> | null];
        if (clipNext) {
          clipNext = false;
          if (minMax && minMax.length === 4) {
            const [cx0, cy0, cx1, cy1] = Array.from(minMax) as [number, number, number, number];
            if (cx1 >= cx0 && cy1 >= cy0) {
              const b = mapBox(gs.ctm, cx0, cy0, cx1, cy1);
              const c = gs.clip;
              gs = {
                ...gs,
                clip: c
                  ? [Math.max(c[0], b[0]), Math.max(c[1], b[1]), Math.min(c[2], b[2]), Math.min(c[3], b[3])]
                  : b,
              };
            }
          }
        }
        if (!FILL_PATH_OPS.has(op) || !minMax || minMax.length !== 4) break;
        const [x0, y0, x1, y1] = Array.from(minMax) as [number, number, number, number];
        if (!(x1 >= x0 && y1 >= y0)) break;
        addArea({
          kind: "fill",
          bbox: mapBox(gs.ctm, x0, y0, x1, y1),
          fill: gs.fill,
          alpha: gs.fillAlpha,
          blended: gs.blended,
        });
        break;
      }
      case OPS.paintImageXObject:
      case OPS.paintInlineImageXObject:
      case OPS.paintImageMaskXObject:
      case OPS.paintSolidColorImageMask:
        addImage(gs.ctm);
        break;
      case OPS.paintImageXObjectRepeat: {
        const [, sx, sy, positions] = args as [unknown, number, number, ArrayLike<number>];
        if (typeof sx !== "number" || typeof sy !== "number" || !positions) break;
        for (let k = 0; k + 1 < Math.min(positions.length, 2000); k += 2) {
          addImage(mul([sx, 0, 0, sy, positions[k] as number, positions[k + 1] as number], gs.ctm));
        }
        break;
      }
      case OPS.paintInlineImageXObjectGroup:
      case OPS.paintImageMaskXObjectGroup: {
        const list = (fn === OPS.paintInlineImageXObjectGroup ? args[1] : args[0]) as unknown;
        if (!Array.isArray(list)) break;
        for (const entry of list.slice(0, 2000)) {
          const t = toMatrix((entry as { transform?: unknown })?.transform);
          if (t) addImage(mul(t, gs.ctm));
        }
        break;
      }
      default:
        break;
    }
  }
  const layout: PageLayout = { box: roundBox(pageBox), runs, areas };
  if (truncated) layout.truncated = truncated;
  markHidden(layout);
  return layout;
}

function clamp(v: number, lo: number, hi: number): number {
  if (Number.isNaN(v)) return lo;
  return Math.min(hi, Math.max(lo, v));
}

// ---------------------------------------------------------------------------------------------
// Visibility
// ---------------------------------------------------------------------------------------------

/** The smallest box holding both. */
export function union(a: Box, b: Box): Box {
  return [Math.min(a[0], b[0]), Math.min(a[1], b[1]), Math.max(a[2], b[2]), Math.max(a[3], b[3])];
}

/** The smallest box holding them all (an empty list gives an empty, inverted box). */
export function unionAll(boxes: readonly Box[]): Box {
  return boxes.reduce<Box>(union, [Infinity, Infinity, -Infinity, -Infinity]);
}

export function boxArea(b: Box): number {
  return Math.max(0, b[2] - b[0]) * Math.max(0, b[3] - b[1]);
}

export function intersection(a: Box, b: Box): number {
  const w = Math.min(a[2], b[2]) - Math.max(a[0], b[0]);
  const h = Math.min(a[3], b[3]) - Math.max(a[1], b[1]);
  return w > 0 && h > 0 ? w * h : 0;
}

/** Share of `inner` covered by `outer` (0-1). */
export function coverage(inner: Box, outer: Box): number {
  const a = boxArea(inner);
  return a > 0 ? intersection(inner, outer) / a : 0;
}

/** `#rrggbb` → [r, g, b] in 0-1. */
export function rgbOf(hex: string): [number, number, number] | null {
  const m = /^#([0-9a-f]{2})([0-9a-f]{2})([0-9a-f]{2})$/i.exec(hex);
  if (!m) return null;
  return [
    parseInt(m[1] as string, 16) / 255,
    parseInt(m[2] as string, 16) / 255,
    parseInt(m[3] as string, 16) / 255,
  ];
}

/** Largest channel difference between two colours (0 = identical, 1 = black vs white). */
export function colourDistance(a: string, b: string): number {
  const x = rgbOf(a);
  const y = rgbOf(b);
  if (!x || !y) return 1;
  return Math.max(Math.abs(x[0] - y[0]), Math.abs(x[1] - y[1]), Math.abs(x[2] - y[2]));
}

/** A run is covered when an opaque area drawn later hides this much of it. */
export const COVER_SHARE = 0.6;
/** Text this close in colour to what is behind it cannot be read. */
const SAME_COLOUR = 0.08;
/** Text smaller than this (points) cannot be read in print or on screen. */
const TINY_SIZE = 1;

/** A spatial index of areas by grid cell, so each run looks only at the areas near it. */
class AreaGrid {
  private readonly cells = new Map<number, PaintedArea[]>();
  private readonly cw: number;
  private readonly ch: number;
  constructor(
    private readonly box: Box,
    areas: readonly PaintedArea[],
    private readonly n = 32,
  ) {
    this.cw = Math.max(1, (box[2] - box[0]) / n);
    this.ch = Math.max(1, (box[3] - box[1]) / n);
    for (const a of areas) for (const k of this.keys(a.bbox)) this.bucket(k).push(a);
  }
  private bucket(k: number): PaintedArea[] {
    let b = this.cells.get(k);
    if (!b) {
      b = [];
      this.cells.set(k, b);
    }
    return b;
  }
  private keys(b: Box): number[] {
    const n = this.n;
    const cx = (v: number) => clamp(Math.floor((v - this.box[0]) / this.cw), -1, n);
    const cy = (v: number) => clamp(Math.floor((v - this.box[1]) / this.ch), -1, n);
    const out: number[] = [];
    for (let i = cx(b[0]); i <= cx(b[2]); i++)
      for (let j = cy(b[1]); j <= cy(b[3]); j++) out.push((i + 1) * (n + 2) + (j + 1));
    return out;
  }
  near(b: Box): PaintedArea[] {
    const seen = new Set<PaintedArea>();
    for (const k of this.keys(b)) for (const a of this.cells.get(k) ?? []) seen.add(a);
    return [...seen];
  }
}

const opaque = (a: PaintedArea) => a.alpha >= 0.9 && !a.blended;

/** The colour behind a run: the topmost opaque filled area drawn before it under its centre, or white. */
export function backgroundOf(run: TextRun, near: readonly PaintedArea[]): string | null {
  const cx = (run.bbox[0] + run.bbox[2]) / 2;
  const cy = (run.bbox[1] + run.bbox[3]) / 2;
  let best: PaintedArea | undefined;
  for (const a of near) {
    if (a.order > run.order || !opaque(a)) continue;
    if (cx < a.bbox[0] || cx > a.bbox[2] || cy < a.bbox[1] || cy > a.bbox[3]) continue;
    if (!best || a.order > best.order) best = a;
  }
  if (!best) return "#ffffff";
  return best.kind === "fill" ? best.fill : null;
}

/** Sets `hidden` on every run a reader cannot see. */
export function markHidden(layout: PageLayout): void {
  const grid = new AreaGrid(layout.box, layout.areas);
  const [px0, py0, px1, py1] = layout.box;
  for (const run of layout.runs) {
    delete run.hidden;
    delete run.coveredBy;
    const [x0, y0, x1, y1] = run.bbox;
    if (run.renderMode === 3 || run.renderMode === 7) run.hidden = "render_mode_invisible";
    else if (run.alpha < 0.05) run.hidden = "transparent";
    else if (x1 < px0 - 1 || x0 > px1 + 1 || y1 < py0 - 1 || y0 > py1 + 1) run.hidden = "outside_page";
    else if (run.size < TINY_SIZE) run.hidden = "tiny";
    if (run.hidden) continue;
    const near = grid.near(run.bbox);
    const cover = near
      .filter((a) => a.order > run.order && opaque(a) && coverage(run.bbox, a.bbox) >= COVER_SHARE)
      .sort((a, b) => a.order - b.order)[0];
    if (cover) {
      run.hidden = "covered";
      run.coveredBy = cover.order;
      continue;
    }
    const fillOnly = run.renderMode === 0 || run.renderMode === 4;
    if (fillOnly && run.fill && !run.clippedOut) {
      const bg = backgroundOf(run, near);
      if (bg && colourDistance(run.fill, bg) < SAME_COLOUR) run.hidden = "same_colour_as_background";
    }
  }
}
