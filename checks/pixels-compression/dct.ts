/**
 * The 8 × 8 DCT of JPEG (F(u,v) = ¼ C(u) C(v) Σ f(x,y) cos((2x+1)uπ/16) cos((2y+1)vπ/16)), separable:
 * rowDct computes the 8-point DCT of every horizontal run of 8 pixels once, blockDct combines 8 of them.
 */

const C = new Float64Array(64);
for (let x = 0; x < 8; x++)
  for (let u = 0; u < 8; u++)
    C[x * 8 + u] = Math.cos(((2 * x + 1) * u * Math.PI) / 16) * (u === 0 ? Math.SQRT1_2 : 1) * 0.5;

/** 8-point DCT of grey[p .. p+7] (level-shifted by 128) into out[o .. o+7]. */
function dct8(
  src: ArrayLike<number>,
  p: number,
  step: number,
  out: Float32Array | Float64Array,
  o: number,
  shift: number,
): void {
  for (let u = 0; u < 8; u++) {
    let s = 0;
    for (let x = 0; x < 8; x++) s += (src[p + x * step]! - shift) * C[x * 8 + u]!;
    out[o + u] = s;
  }
}

/**
 * Row DCTs of the rows y0..y1 (exclusive) for every x in x0..x1-8: rows[(y - y0) * w * 8 + (x - x0) * 8 + u],
 * w = x1 - x0 - 7.
 */
export function rowDcts(
  grey: Uint8Array,
  width: number,
  x0: number,
  y0: number,
  x1: number,
  y1: number,
): Float32Array {
  const w = Math.max(0, x1 - x0 - 7);
  const out = new Float32Array(Math.max(0, (y1 - y0) * w * 8));
  for (let y = y0; y < y1; y++)
    for (let x = x0; x < x0 + w; x++) rowDct8(grey, y * width + x, out, ((y - y0) * w + (x - x0)) * 8);
  return out;
}

/*
 * The loops below are dct8 specialised to their arrays (one shape per call site, each sample read once): the
 * same products summed in the same order as dct8, so the coefficients are bit for bit dct8's (dct.test.ts).
 * The grid votes spend most of their time here.
 */

/** dct8 of grey[p .. p+7], level-shifted by 128, into the Float32Array out[o .. o+7]. */
function rowDct8(grey: Uint8Array, p: number, out: Float32Array, o: number): void {
  const a0 = grey[p]! - 128;
  const a1 = grey[p + 1]! - 128;
  const a2 = grey[p + 2]! - 128;
  const a3 = grey[p + 3]! - 128;
  const a4 = grey[p + 4]! - 128;
  const a5 = grey[p + 5]! - 128;
  const a6 = grey[p + 6]! - 128;
  const a7 = grey[p + 7]! - 128;
  for (let u = 0; u < 8; u++) {
    let s = 0;
    s += a0 * C[u]!;
    s += a1 * C[8 + u]!;
    s += a2 * C[16 + u]!;
    s += a3 * C[24 + u]!;
    s += a4 * C[32 + u]!;
    s += a5 * C[40 + u]!;
    s += a6 * C[48 + u]!;
    s += a7 * C[56 + u]!;
    out[o + u] = s;
  }
}

/** dct8 of the 8 values src[p], src[p + step], … (no level shift) into coef[o + v * 8] for v = 0..7. */
function colDct8(
  src: Float32Array | Float64Array,
  p: number,
  step: number,
  coef: Float64Array,
  o: number,
): void {
  const a0 = src[p]!;
  const a1 = src[p + step]!;
  const a2 = src[p + 2 * step]!;
  const a3 = src[p + 3 * step]!;
  const a4 = src[p + 4 * step]!;
  const a5 = src[p + 5 * step]!;
  const a6 = src[p + 6 * step]!;
  const a7 = src[p + 7 * step]!;
  for (let v = 0; v < 8; v++) {
    let s = 0;
    s += a0 * C[v]!;
    s += a1 * C[8 + v]!;
    s += a2 * C[16 + v]!;
    s += a3 * C[24 + v]!;
    s += a4 * C[32 + v]!;
    s += a5 * C[40 + v]!;
    s += a6 * C[48 + v]!;
    s += a7 * C[56 + v]!;
    coef[o + v * 8] = s;
  }
}

/** The 64 coefficients (coef[v * 8 + u]) of the block at (x, y) from the row DCTs (see rowDcts). */
export function blockFromRows(
  rows: Float32Array,
  w: number,
  bx: number,
  by: number,
  coef: Float64Array,
): void {
  const p = (by * w + bx) * 8;
  for (let u = 0; u < 8; u++) colDct8(rows, p + u, w * 8, coef, u);
}

const blockRows = new Float64Array(64);

/** The 64 coefficients of the 8 × 8 block of grey at (x, y). */
export function blockDct(grey: Uint8Array, width: number, x: number, y: number, coef: Float64Array): void {
  for (let r = 0; r < 8; r++) dct8(grey, (y + r) * width + x, 1, blockRows, r * 8, 128);
  for (let u = 0; u < 8; u++) colDct8(blockRows, u, 8, coef, u);
}
