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
    for (let x = x0; x < x0 + w; x++) dct8(grey, y * width + x, 1, out, ((y - y0) * w + (x - x0)) * 8, 128);
  return out;
}

const col = new Float64Array(8);
const tmp = new Float64Array(8);

/** The 64 coefficients (coef[v * 8 + u]) of the block at (x, y) from the row DCTs (see rowDcts). */
export function blockFromRows(
  rows: Float32Array,
  w: number,
  bx: number,
  by: number,
  coef: Float64Array,
): void {
  for (let u = 0; u < 8; u++) {
    for (let y = 0; y < 8; y++) col[y] = rows[((by + y) * w + bx) * 8 + u]!;
    dct8(col, 0, 1, tmp, 0, 0);
    for (let v = 0; v < 8; v++) coef[v * 8 + u] = tmp[v]!;
  }
}

/** The 64 coefficients of the 8 × 8 block of grey at (x, y). */
export function blockDct(grey: Uint8Array, width: number, x: number, y: number, coef: Float64Array): void {
  const rows = new Float64Array(64);
  for (let r = 0; r < 8; r++) dct8(grey, (y + r) * width + x, 1, rows, r * 8, 128);
  for (let u = 0; u < 8; u++) {
    for (let r = 0; r < 8; r++) col[r] = rows[r * 8 + u]!;
    dct8(col, 0, 1, tmp, 0, 0);
    for (let v = 0; v < 8; v++) coef[v * 8 + u] = tmp[v]!;
  }
}
