import { z } from "zod";

/**
 * Where a page's coordinates sit on the page as a reader sees it. Findings give their `bbox` in the page's
 * own units: PDF user-space points with the origin at the bottom left for PDFs (the page box `view` need
 * not start at 0,0), image pixels with the origin at the top left for image documents. A client drawing on
 * a rendered page wants neither: `toFraction` maps a box to fractions of the displayed page (after the
 * page's /Rotate), with the origin at the top left like image pixels.
 */

/** [x0, y0, x1, y1] with x0 ≤ x1 and y0 ≤ y1. */
export type BoxTuple = [number, number, number, number];

export const PageGeometry = z.object({
  /** 1-based. */
  number: z.number().int().positive(),
  /** The visible page box in the page's units: [x0, y0, x1, y1] (a PDF's CropBox within its MediaBox). */
  view: z.array(z.number()).length(4),
  /** Clockwise rotation of the displayed page (a PDF's /Rotate): 0, 90, 180 or 270. */
  rotate: z.union([z.literal(0), z.literal(90), z.literal(180), z.literal(270)]),
  /** `pt` (PDF points, y up) or `px` (image pixels, y down). */
  units: z.enum(["pt", "px"]),
});
export type PageGeometry = z.infer<typeof PageGeometry>;

/** The page's size as displayed, in its own units (width and height swap at 90° and 270°). */
export function displayedSize(g: PageGeometry): { width: number; height: number } {
  const w = Math.abs(g.view[2]! - g.view[0]!);
  const h = Math.abs(g.view[3]! - g.view[1]!);
  return g.rotate === 90 || g.rotate === 270 ? { width: h, height: w } : { width: w, height: h };
}

const clamp01 = (v: number) => Math.min(1, Math.max(0, v));
const round4 = (v: number) => Math.round(v * 10_000) / 10_000;

/** One point of the page's units → fractions (u right, v down) of the displayed page. */
export function pointToFraction(g: PageGeometry, x: number, y: number): [number, number] {
  const [x0, y0, x1, y1] = g.view as BoxTuple;
  const w = x1 - x0 || 1;
  const h = y1 - y0 || 1;
  // Fractions of the unrotated page, top-left origin.
  const a = (x - x0) / w;
  const b = g.units === "pt" ? (y1 - y) / h : (y - y0) / h;
  switch (g.rotate) {
    case 90:
      return [1 - b, a];
    case 180:
      return [1 - a, 1 - b];
    case 270:
      return [b, 1 - a];
    default:
      return [a, b];
  }
}

/**
 * A box in the page's units → [left, top, right, bottom] as fractions (0-1) of the displayed page, origin
 * top left, clamped to the page and rounded to 4 decimals. Undefined when the box lies wholly off the page.
 */
export function toFraction(g: PageGeometry, bbox: readonly number[]): BoxTuple | undefined {
  const [x0, y0, x1, y1] = bbox as BoxTuple;
  const corners = [
    pointToFraction(g, x0, y0),
    pointToFraction(g, x1, y0),
    pointToFraction(g, x0, y1),
    pointToFraction(g, x1, y1),
  ];
  const us = corners.map((c) => c[0]);
  const vs = corners.map((c) => c[1]);
  const raw: BoxTuple = [Math.min(...us), Math.min(...vs), Math.max(...us), Math.max(...vs)];
  if (raw[2] < 0 || raw[3] < 0 || raw[0] > 1 || raw[1] > 1) return undefined;
  return raw.map((v) => round4(clamp01(v))) as BoxTuple;
}

/** Fractions of the displayed page → pixels of an image of it `width` × `height` (rounded outwards). */
export function fractionToPixels(f: readonly number[], width: number, height: number): BoxTuple {
  return [
    Math.floor(f[0]! * width),
    Math.floor(f[1]! * height),
    Math.ceil(f[2]! * width),
    Math.ceil(f[3]! * height),
  ];
}

/** Pixels of an image of the displayed page → a box in the page's units (the inverse of the two above). */
export function pixelsToBox(g: PageGeometry, px: readonly number[], width: number, height: number): BoxTuple {
  const [x0, y0, x1, y1] = g.view as BoxTuple;
  const w = x1 - x0;
  const h = y1 - y0;
  const toPage = (u: number, v: number): [number, number] => {
    let a = u;
    let b = v;
    if (g.rotate === 90) [a, b] = [v, 1 - u];
    else if (g.rotate === 180) [a, b] = [1 - u, 1 - v];
    else if (g.rotate === 270) [a, b] = [1 - v, u];
    return [x0 + a * w, g.units === "pt" ? y1 - b * h : y0 + b * h];
  };
  const p = [toPage(px[0]! / width, px[1]! / height), toPage(px[2]! / width, px[3]! / height)];
  const round = (v: number) => Math.round(v * 100) / 100;
  return [
    round(Math.min(p[0]![0], p[1]![0])),
    round(Math.min(p[0]![1], p[1]![1])),
    round(Math.max(p[0]![0], p[1]![0])),
    round(Math.max(p[0]![1], p[1]![1])),
  ];
}
