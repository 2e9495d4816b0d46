import { describe, expect, it } from "vitest";
import { blockDct, blockFromRows, rowDcts } from "./dct.js";

/** The DCT as it was written before the loops were specialised (one generic 8-point DCT), as the reference. */
const C = new Float64Array(64);
for (let x = 0; x < 8; x++)
  for (let u = 0; u < 8; u++)
    C[x * 8 + u] = Math.cos(((2 * x + 1) * u * Math.PI) / 16) * (u === 0 ? Math.SQRT1_2 : 1) * 0.5;
function dct8(
  src: ArrayLike<number>,
  p: number,
  out: Float32Array | Float64Array,
  o: number,
  shift: number,
): void {
  for (let u = 0; u < 8; u++) {
    let s = 0;
    for (let x = 0; x < 8; x++) s += (src[p + x]! - shift) * C[x * 8 + u]!;
    out[o + u] = s;
  }
}
function referenceBlock(
  rows: Float32Array | Float64Array,
  at: (y: number, u: number) => number,
): Float64Array {
  const coef = new Float64Array(64);
  const col = new Float64Array(8);
  const tmp = new Float64Array(8);
  for (let u = 0; u < 8; u++) {
    for (let y = 0; y < 8; y++) col[y] = rows[at(y, u)]!;
    dct8(col, 0, tmp, 0, 0);
    for (let v = 0; v < 8; v++) coef[v * 8 + u] = tmp[v]!;
  }
  return coef;
}

function noisyPage(width: number, height: number): Uint8Array {
  const grey = new Uint8Array(width * height);
  let s = 12345;
  for (let i = 0; i < grey.length; i++) {
    s = (s * 1103515245 + 12345) >>> 0;
    // Paper, ink strokes and flat runs: coefficients at and near the zero threshold as well as large ones.
    const x = i % width;
    grey[i] = x % 13 < 3 ? 30 + (s % 7) : (s >>> 8) % 5 === 0 ? 235 : 230 + (s % 20);
  }
  return grey;
}

describe("dct", () => {
  const width = 61;
  const height = 40;
  const grey = noisyPage(width, height);

  it("gives bit for bit the coefficients of the generic 8-point DCT (row DCTs, blocks from them, blocks)", () => {
    const [x0, y0, x1, y1] = [3, 2, 58, 37];
    const w = x1 - x0 - 7;
    const rows = rowDcts(grey, width, x0, y0, x1, y1);
    const ref = new Float32Array((y1 - y0) * w * 8);
    for (let y = y0; y < y1; y++)
      for (let x = x0; x < x0 + w; x++) dct8(grey, y * width + x, ref, ((y - y0) * w + (x - x0)) * 8, 128);
    expect(rows).toEqual(ref);
    const coef = new Float64Array(64);
    for (const [bx, by] of [
      [0, 0],
      [5, 7],
      [w - 8, y1 - y0 - 8],
      [17, 3],
    ] as const) {
      blockFromRows(rows, w, bx, by, coef);
      expect(coef).toEqual(referenceBlock(ref, (y, u) => ((by + y) * w + bx) * 8 + u));
    }
    for (const [x, y] of [
      [0, 0],
      [8, 16],
      [width - 8, height - 8],
      [21, 5],
    ] as const) {
      blockDct(grey, width, x, y, coef);
      const rows64 = new Float64Array(64);
      for (let r = 0; r < 8; r++) dct8(grey, (y + r) * width + x, rows64, r * 8, 128);
      expect(coef).toEqual(referenceBlock(rows64, (r, u) => r * 8 + u));
    }
  });
});
