import type { TextRun } from "./content-text.js";

/**
 * Which text runs a revision removed and added on a page, paired up as before → after where a removed
 * run and an added run sit at the same place in the reading order (an edited value). LCS on the run
 * texts; pages too large for it fall back to comparing the runs as multisets.
 */

export interface TextEdit {
  before?: TextRun;
  after?: TextRun;
}

const MAX_CELLS = 4_000_000;

export function diffRuns(before: readonly TextRun[], after: readonly TextRun[]): TextEdit[] {
  const a = before.filter((r) => r.text.trim() !== "");
  const b = after.filter((r) => r.text.trim() !== "");
  if (a.length * b.length > MAX_CELLS) return multisetDiff(a, b);
  const n = a.length;
  const m = b.length;
  const dp = new Uint32Array((n + 1) * (m + 1));
  const w = m + 1;
  for (let i = n - 1; i >= 0; i--) {
    for (let j = m - 1; j >= 0; j--) {
      dp[i * w + j] =
        (a[i] as TextRun).text === (b[j] as TextRun).text
          ? (dp[(i + 1) * w + j + 1] as number) + 1
          : Math.max(dp[(i + 1) * w + j] as number, dp[i * w + j + 1] as number);
    }
  }
  const edits: TextEdit[] = [];
  let removed: TextRun[] = [];
  let added: TextRun[] = [];
  const flush = () => {
    const k = Math.max(removed.length, added.length);
    for (let x = 0; x < k; x++) {
      const e: TextEdit = {};
      if (removed[x]) e.before = removed[x];
      if (added[x]) e.after = added[x];
      edits.push(e);
    }
    removed = [];
    added = [];
  };
  let i = 0;
  let j = 0;
  while (i < n || j < m) {
    if (i < n && j < m && (a[i] as TextRun).text === (b[j] as TextRun).text) {
      flush();
      i++;
      j++;
    } else if (j < m && (i >= n || (dp[i * w + j + 1] as number) >= (dp[(i + 1) * w + j] as number))) {
      added.push(b[j++] as TextRun);
    } else {
      removed.push(a[i++] as TextRun);
    }
  }
  flush();
  return edits;
}

function multisetDiff(a: readonly TextRun[], b: readonly TextRun[]): TextEdit[] {
  const count = new Map<string, number>();
  for (const r of a) count.set(r.text, (count.get(r.text) ?? 0) + 1);
  const added: TextRun[] = [];
  for (const r of b) {
    const c = count.get(r.text) ?? 0;
    if (c > 0) count.set(r.text, c - 1);
    else added.push(r);
  }
  const removed: TextRun[] = [];
  const left = new Map(count);
  for (const r of a) {
    const c = left.get(r.text) ?? 0;
    if (c > 0) {
      removed.push(r);
      left.set(r.text, c - 1);
    }
  }
  const edits: TextEdit[] = [];
  for (let x = 0; x < Math.max(removed.length, added.length); x++) {
    const e: TextEdit = {};
    if (removed[x]) e.before = removed[x];
    if (added[x]) e.after = added[x];
    edits.push(e);
  }
  return edits;
}
