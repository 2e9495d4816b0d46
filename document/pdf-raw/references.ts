import { perRevision } from "./cache.js";
import type { RawPdf } from "./document.js";
import { isDict, isRef, isStream, type PdfValue } from "./objects.js";

/**
 * Who refers to whom in one revision: every indirect reference reachable from that revision's trailer,
 * recorded as a usage (the referring object, or the trailer, and the key path inside it). A revision
 * walker can then ask, for an object a later update overwrote, every place the document used it from —
 * the question deny-by-default review of signed documents needs ("was this appearance stream also
 * drawn somewhere else?"). References to objects that do not exist (yet) are recorded too.
 * Bounded: past the limits the index is marked incomplete rather than grown.
 */

export interface Usage {
  /** The referring object's number, or "trailer". */
  from: number | "trailer";
  /** Key path inside the referring object: "AP/N", "Annots[]", "Resources/XObject/Fm0". */
  path: string;
}

export interface ReferenceIndex {
  revision: number;
  usages: Map<number, Usage[]>;
  /** Objects reachable from the trailer. */
  reachable: Set<number>;
  /** False when a limit cut the walk short (usages may then be missing). */
  complete: boolean;
}

export interface ReferenceLimits {
  maxObjects: number;
  maxUsages: number;
}

const DEFAULT: ReferenceLimits = { maxObjects: 150_000, maxUsages: 600_000 };
const MAX_NESTING = 32;

export function buildReferenceIndex(
  raw: RawPdf,
  rev: number,
  limits: ReferenceLimits = DEFAULT,
): ReferenceIndex {
  const usages = new Map<number, Usage[]>();
  const reachable = new Set<number>();
  const queue: number[] = [];
  let count = 0;
  let complete = true;

  const record = (num: number, from: number | "trailer", path: string) => {
    if (++count > limits.maxUsages) {
      complete = false;
      return;
    }
    const list = usages.get(num);
    if (list) list.push({ from, path });
    else usages.set(num, [{ from, path }]);
    if (!reachable.has(num)) {
      if (reachable.size >= limits.maxObjects) {
        complete = false;
        return;
      }
      reachable.add(num);
      queue.push(num);
    }
  };
  const visit = (v: PdfValue | undefined, from: number | "trailer", path: string, depth: number) => {
    if (v === undefined || v === null || depth > MAX_NESTING) return;
    if (isRef(v)) record(v.num, from, path);
    else if (Array.isArray(v)) {
      const p = `${path}[]`;
      for (const x of v) visit(x, from, p, depth + 1);
    } else if (isDict(v) || isStream(v)) {
      const d = isStream(v) ? v.dict : v;
      for (const [k, x] of d.map) visit(x, from, path ? `${path}/${k}` : k, depth + 1);
    }
  };

  visit(raw.trailer(rev), "trailer", "", 0);
  for (let i = 0; i < queue.length && complete; i++) {
    const num = queue[i] as number;
    visit(raw.object(num, rev) ?? undefined, num, "", 0);
  }
  return { revision: rev, usages, reachable, complete };
}

/** buildReferenceIndex, computed once per file and revision. */
export const cachedReferenceIndex = perRevision(buildReferenceIndex);
