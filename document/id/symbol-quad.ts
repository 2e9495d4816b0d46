import type { GreyImage, Point } from "./geometry.js";

/**
 * Where a PDF417 is on a page, as a quadrilateral (top-left, top-right, bottom-right, bottom-left, pixels of
 * `grey`): the page's largest region dense in vertical edges (a PDF417 is bars and spaces one to a few modules
 * wide, far denser than text), its top and bottom edges fitted as lines along the region's extremes per column
 * and its left and right edges along its extremes per row (between the top and bottom edges). Each edge is
 * fitted on its own, so a symbol photographed in perspective (its top and bottom converging, its sides leaning)
 * is outlined as it is; warped to a rectangle it reads level and square. Undefined when no region stands out.
 */
export function symbolQuad(grey: GreyImage): Point[] | undefined {
  const { width: w, height: h, data } = grey;
  const step = 2;
  const W = Math.floor(w / step);
  const H = Math.floor(h / step);
  if (W < 40 || H < 20) return undefined;
  const grad = new Float32Array(W * H);
  for (let y = 0; y < H; y++)
    for (let x = 1; x < W; x++) {
      const i = y * step * w + x * step;
      grad[y * W + x] = Math.abs(data[i]! - data[i - step]!);
    }
  // Edge density: the gradient box-blurred over 25 × 25 samples (50 source pixels).
  const r = 12;
  const blur = (src: Float32Array, horizontal: boolean): Float32Array => {
    const out = new Float32Array(W * H);
    const lines = horizontal ? H : W;
    const n = horizontal ? W : H;
    for (let a = 0; a < lines; a++) {
      const at = (b: number) => (horizontal ? a * W + b : b * W + a);
      let s = 0;
      for (let b = -r; b < n + r; b++) {
        if (b + r < n) s += src[at(b + r)]!;
        if (b - r - 1 >= 0) s -= src[at(b - r - 1)]!;
        if (b >= 0 && b < n) out[at(b)] = s / (2 * r + 1);
      }
    }
    return out;
  };
  const density = blur(blur(grad, true), false);
  let max = 0;
  for (const v of density) max = Math.max(max, v);
  if (max <= 0) return undefined;
  // Half the peak density: a box blur of a region's edge passes half its value at the edge itself.
  const mask = new Uint8Array(W * H);
  for (let i = 0; i < density.length; i++) mask[i] = density[i]! > max * 0.5 ? 1 : 0;
  const seen = new Uint8Array(W * H);
  let best: number[] = [];
  for (let i = 0; i < mask.length; i++) {
    if (!mask[i] || seen[i]) continue;
    const region: number[] = [];
    const stack = [i];
    seen[i] = 1;
    while (stack.length) {
      const p = stack.pop()!;
      region.push(p);
      const x = p % W;
      const y = (p - x) / W;
      const next = [x > 0 ? p - 1 : -1, x < W - 1 ? p + 1 : -1, y > 0 ? p - W : -1, y < H - 1 ? p + W : -1];
      for (const q of next)
        if (q >= 0 && mask[q] && !seen[q]) {
          seen[q] = 1;
          stack.push(q);
        }
    }
    if (region.length > best.length) best = region;
  }
  if (best.length < 200) return undefined;
  const tops = new Map<number, number>();
  const bottoms = new Map<number, number>();
  const lefts = new Map<number, number>();
  const rights = new Map<number, number>();
  for (const p of best) {
    const x = p % W;
    const y = (p - x) / W;
    tops.set(x, Math.min(tops.get(x) ?? y, y));
    bottoms.set(x, Math.max(bottoms.get(x) ?? y, y));
    lefts.set(y, Math.min(lefts.get(y) ?? x, x));
    rights.set(y, Math.max(rights.get(y) ?? x, x));
  }
  const xs = [...tops.keys()].sort((a, b) => a - b);
  const ys = [...lefts.keys()].sort((a, b) => a - b);
  // The top and bottom edges over the inner 80 % of the columns (the corners are rounded by the blur).
  const inner = xs.slice(Math.floor(xs.length * 0.1), Math.ceil(xs.length * 0.9));
  const top = fitLine(inner.map((x) => [x * step, tops.get(x)! * step]));
  const bottom = fitLine(inner.map((x) => [x * step, bottoms.get(x)! * step]));
  if (!top || !bottom) return undefined;
  // The sides over the rows between the top and bottom edges at that side, less 15 % at each end.
  const rowsAt = (x: number) => {
    const y0 = (top.a + top.b * x * step) / step;
    const y1 = (bottom.a + bottom.b * x * step) / step;
    const m = (y1 - y0) * 0.15;
    return ys.filter((y) => y > y0 + m && y < y1 - m);
  };
  const left = fitLine(rowsAt(xs[0]!).map((y) => [y * step, lefts.get(y)! * step]));
  const right = fitLine(rowsAt(xs[xs.length - 1]!).map((y) => [y * step, rights.get(y)! * step]));
  if (!left || !right) return undefined;
  // y = a + b·x (top, bottom) meets x = a + b·y (sides).
  const meet = (across: Line, side: Line): Point => {
    const x = (side.a + side.b * across.a) / (1 - side.b * across.b);
    return [x, across.a + across.b * x];
  };
  const quad = [meet(top, left), meet(top, right), meet(bottom, right), meet(bottom, left)];
  const [tl, tr, br, bl] = quad as [Point, Point, Point, Point];
  // A PDF417 is wider than high; anything else dense (a photo's texture) is not one.
  const width = Math.hypot(tr[0] - tl[0], tr[1] - tl[1]);
  const height = Math.hypot(bl[0] - tl[0], bl[1] - tl[1]);
  if (!(width > height && height > 10 && br[1] > tr[1] && bl[1] > tl[1])) return undefined;
  return quad;
}

interface Line {
  a: number;
  b: number;
}

/** Least squares v = a + b·u through (u, v) points. */
function fitLine(points: [number, number][]): Line | undefined {
  if (points.length < 3) return undefined;
  const n = points.length;
  const mu = points.reduce((s, p) => s + p[0], 0) / n;
  const mv = points.reduce((s, p) => s + p[1], 0) / n;
  let suv = 0;
  let suu = 0;
  for (const [u, v] of points) {
    suv += (u - mu) * (v - mv);
    suu += (u - mu) ** 2;
  }
  if (suu === 0) return undefined;
  const b = suv / suu;
  return { a: mv - b * mu, b };
}

/**
 * `quad` grown by `pad` pixels on every side (along the image axes: the quiet zone a decoder wants around the
 * start and stop patterns).
 */
export function padQuad(quad: readonly Point[], pad: number): Point[] {
  const [tl, tr, br, bl] = quad as [Point, Point, Point, Point];
  return [
    [tl[0] - pad, tl[1] - pad],
    [tr[0] + pad, tr[1] - pad],
    [br[0] + pad, br[1] + pad],
    [bl[0] - pad, bl[1] + pad],
  ];
}
