import type { BoxTuple } from "../../core/page-geometry.js";
import { CELL, type CellMap } from "../../document/pixels/noise.js";
import { logNfa } from "../../document/pixels/nfa.js";

/**
 * Clusters of marked cells on a page's cell map, each judged a-contrario: under the background model each
 * counted cell is marked independently with probability p (the page's own rate), so a cluster of k marked
 * among n counted cells in its box has NFA = (rectangles on the page) × P(B(n, p) ≥ k). Ink cells between
 * marked ones join a cluster (text typed on a white box) but are not counted.
 */

export interface Cluster {
  /** Cell box [cx0, cy0, cx1, cy1) and pixel box. */
  cells: BoxTuple;
  box: BoxTuple;
  /** Counted cells in the box, and marked ones among them. */
  n: number;
  k: number;
  /** Marked + joined cells over the box's area. */
  fill: number;
  logNfa: number;
  /** Share of counted cells marked in the one-cell ring around the box. */
  ringRate: number;
}

export function clusters(
  map: CellMap,
  marked: Uint8Array,
  counted: Uint8Array,
  p: number,
  minMarked: number,
): Cluster[] {
  const { cw, ch } = map;
  const join = new Uint8Array(cw * ch);
  for (let cy = 0; cy < ch; cy++)
    for (let cx = 0; cx < cw; cx++) {
      const i = cy * cw + cx;
      if (marked[i]) {
        join[i] = 1;
        continue;
      }
      if (counted[i]) continue;
      let m = 0;
      for (let dy = -1; dy <= 1; dy++)
        for (let dx = -1; dx <= 1; dx++) {
          const x = cx + dx;
          const y = cy + dy;
          if (x >= 0 && y >= 0 && x < cw && y < ch && marked[y * cw + x]) m++;
        }
      if (m >= 2) join[i] = 1;
    }
  const seen = new Uint8Array(cw * ch);
  const out: Cluster[] = [];
  const tests = Math.max(1, (cw * ch) ** 2 / 4);
  const stack: number[] = [];
  for (let s = 0; s < cw * ch; s++) {
    if (!marked[s] || seen[s]) continue;
    stack.length = 0;
    stack.push(s);
    seen[s] = 1;
    let x0 = cw;
    let y0 = ch;
    let x1 = 0;
    let y1 = 0;
    let members = 0;
    let markedMembers = 0;
    while (stack.length) {
      const i = stack.pop()!;
      const cx = i % cw;
      const cy = (i - cx) / cw;
      members++;
      if (marked[i]) markedMembers++;
      x0 = Math.min(x0, cx);
      y0 = Math.min(y0, cy);
      x1 = Math.max(x1, cx);
      y1 = Math.max(y1, cy);
      for (let dy = -1; dy <= 1; dy++)
        for (let dx = -1; dx <= 1; dx++) {
          const x = cx + dx;
          const y = cy + dy;
          if (x < 0 || y < 0 || x >= cw || y >= ch) continue;
          const j = y * cw + x;
          if (join[j] && !seen[j]) {
            seen[j] = 1;
            stack.push(j);
          }
        }
    }
    if (markedMembers < minMarked) continue;
    let n = 0;
    let k = 0;
    for (let y = y0; y <= y1; y++)
      for (let x = x0; x <= x1; x++) {
        const i = y * cw + x;
        if (!counted[i]) continue;
        n++;
        if (marked[i]) k++;
      }
    let rn = 0;
    let rk = 0;
    for (let y = y0 - 1; y <= y1 + 1; y++)
      for (let x = x0 - 1; x <= x1 + 1; x++) {
        if (y >= y0 && y <= y1 && x >= x0 && x <= x1) continue;
        if (x < 0 || y < 0 || x >= cw || y >= ch) continue;
        const i = y * cw + x;
        if (!counted[i]) continue;
        rn++;
        if (marked[i]) rk++;
      }
    const area = (x1 - x0 + 1) * (y1 - y0 + 1);
    out.push({
      cells: [x0, y0, x1 + 1, y1 + 1],
      box: [map.ox + x0 * CELL, map.oy + y0 * CELL, map.ox + (x1 + 1) * CELL, map.oy + (y1 + 1) * CELL],
      n,
      k,
      fill: members / area,
      logNfa: logNfa(tests, n, k, p),
      ringRate: rn ? rk / rn : 0,
    });
  }
  return out.sort((a, b) => a.logNfa - b.logNfa);
}
