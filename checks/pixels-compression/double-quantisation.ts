import type { BoxTuple } from "../../core/page-geometry.js";
import { ZIGZAG } from "../../document/pixels/jpeg-markers.js";
import { blockDct } from "./dct.js";

/**
 * Aligned double JPEG compression, block by block (after Bianchi and Piva, "Image forgery localization via
 * block-grained analysis of JPEG artifacts", 2012, in a counting form): a capture saved at quality Q1 and
 * saved again after an edit at Q2 keeps, in every untouched block, coefficients that were first multiples
 * of Q1 — after the second quantisation they land on a lattice round(m·Q1/Q2) with gaps. Whatever was
 * painted after the first save was quantised once: its coefficients fill the gaps. Per frequency the first
 * step Q1 is estimated from the page's own histogram; per block, the nonzero coefficients off that lattice
 * are counted. The page's off-lattice rate is the background model of the region test.
 */

export interface DqModel {
  /** Frequencies (natural index) with a usable first-quantisation lattice, and their Q1 and Q2. */
  freqs: { k: number; q1: number; q2: number; density: number }[];
  /** Share of nonzero informative coefficients off the lattice over the text blocks of the page. */
  offRate: number;
  /** Blocks that gave informative coefficients. */
  blocks: number;
}

export interface DqBlocks {
  /** Block grid origin. */
  gx: number;
  gy: number;
  bw: number;
  bh: number;
  /** Per block: informative nonzero coefficients, and how many are off the lattice (-1 = not measured). */
  n: Int16Array;
  off: Int16Array;
}

const LOW_FREQS = ZIGZAG.slice(1, 22);
const RANGE = 24;

/** Integers reachable by round(m·q1/q2) for |m| up to the range, as a set. */
function lattice(q1: number, q2: number): Set<number> {
  const s = new Set<number>();
  for (let m = -200; m <= 200; m++) {
    const v = Math.round((m * q1) / q2);
    if (Math.abs(v) <= RANGE) s.add(v);
  }
  return s;
}

export function dqAnalyse(
  grey: Uint8Array,
  width: number,
  height: number,
  q2table: readonly number[],
  gx: number,
  gy: number,
  textBlock: (bx: number, by: number) => boolean,
): { model: DqModel; blocks: DqBlocks } | undefined {
  const bw = Math.floor((width - gx) / 8);
  const bh = Math.floor((height - gy) / 8);
  const coef = new Float64Array(64);
  const values: number[][] = LOW_FREQS.map(() => []);
  const perBlock: { b: number; c: number[] }[] = [];
  for (let by = 0; by < bh; by++)
    for (let bx = 0; bx < bw; bx++) {
      if (!textBlock(bx, by)) continue;
      blockDct(grey, width, gx + bx * 8, gy + by * 8, coef);
      const c: number[] = [];
      LOW_FREQS.forEach((k, i) => {
        const v = Math.round(coef[k]! / q2table[k]!);
        c.push(v);
        if (v !== 0 && Math.abs(v) <= RANGE) values[i]!.push(v);
      });
      perBlock.push({ b: by * bw + bx, c });
    }
  const freqs: DqModel["freqs"] = [];
  const lattices: (Set<number> | undefined)[] = [];
  LOW_FREQS.forEach((k, i) => {
    const q2 = q2table[k]!;
    const obs = values[i]!;
    if (obs.length < 60) {
      lattices.push(undefined);
      return;
    }
    // The observed values (nonzero, within ±RANGE) counted once: a candidate lattice's share is a sum of counts.
    const hist = new Int32Array(2 * RANGE + 1);
    for (const v of obs) hist[v + RANGE]!++;
    let best: { q1: number; score: number; density: number; set: Set<number> } | undefined;
    for (let q1 = q2 + 1; q1 <= Math.max(q2 * 4, q2 + 12); q1++) {
      const set = lattice(q1, q2);
      const density = (set.size - (set.has(0) ? 1 : 0)) / (2 * RANGE);
      if (density > 0.75) continue;
      let onCount = 0;
      for (const v of set) onCount += hist[v + RANGE]!;
      const on = onCount / obs.length;
      const score = on - density;
      if (!best || score > best.score) best = { q1, score, density, set };
    }
    if (best && best.score > 0.3) {
      freqs.push({ k, q1: best.q1, q2, density: Math.round(best.density * 100) / 100 });
      lattices.push(best.set);
    } else lattices.push(undefined);
  });
  if (freqs.length < 3) return undefined;
  const n = new Int16Array(bw * bh).fill(-1);
  const off = new Int16Array(bw * bh).fill(-1);
  let totalN = 0;
  let totalOff = 0;
  let blocks = 0;
  for (const { b, c } of perBlock) {
    let bn = 0;
    let bo = 0;
    c.forEach((v, i) => {
      const set = lattices[i];
      if (!set || v === 0 || Math.abs(v) > RANGE) return;
      bn++;
      if (!set.has(v)) bo++;
    });
    n[b] = bn;
    off[b] = bo;
    if (bn > 0) blocks++;
    totalN += bn;
    totalOff += bo;
  }
  return {
    model: { freqs, offRate: totalN ? totalOff / totalN : 0, blocks },
    blocks: { gx, gy, bw, bh, n, off },
  };
}

/** Informative and off-lattice coefficients of the blocks inside a box. */
export function countIn(b: DqBlocks, box: BoxTuple): { n: number; off: number } {
  let n = 0;
  let off = 0;
  const x0 = Math.max(0, Math.floor((box[0] - b.gx) / 8));
  const y0 = Math.max(0, Math.floor((box[1] - b.gy) / 8));
  const x1 = Math.min(b.bw, Math.ceil((box[2] - b.gx) / 8));
  const y1 = Math.min(b.bh, Math.ceil((box[3] - b.gy) / 8));
  for (let y = y0; y < y1; y++)
    for (let x = x0; x < x1; x++) {
      const i = y * b.bw + x;
      if (b.n[i]! <= 0) continue;
      n += b.n[i]!;
      off += b.off[i]!;
    }
  return { n, off };
}
