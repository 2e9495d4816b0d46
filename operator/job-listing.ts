import type { ObjectInfo, ObjectStore } from "../core/ports.js";

/** Byte order of UTF-8 keys, as S3 (and the local object store) list them. */
export const compareKeys = (a: string, b: string): number => Buffer.compare(Buffer.from(a), Buffer.from(b));

/**
 * The prefixes a job lists, normalised: duplicates and prefixes covered by a shorter one dropped, sorted.
 * No remaining prefix is a prefix of another, so their key ranges are disjoint and ordered: listing them
 * one after the other yields every key once, in global key order.
 */
export function normalizePrefixes(prefixes: readonly string[]): string[] {
  const sorted = [...new Set(prefixes)].sort(compareKeys);
  const out: string[] = [];
  for (const p of sorted) {
    // Sorted order puts a covering prefix right before what it covers.
    const last = out[out.length - 1];
    if (last !== undefined && p.startsWith(last)) continue;
    out.push(p);
  }
  return out;
}

/** A "folder" marker object (S3 consoles create `photos/` as an empty object): not a document. */
export const isFolderMarker = (o: ObjectInfo): boolean => o.key.endsWith("/");

/**
 * The objects under `prefixes` whose keys sort after `after`, in key order, folder markers skipped.
 * Prefixes whose keys all sort at or before `after` are not listed at all.
 */
export async function* objectsAfter(
  objects: ObjectStore,
  bucket: string,
  prefixes: readonly string[],
  after?: string,
): AsyncGenerator<ObjectInfo> {
  for (const prefix of normalizePrefixes(prefixes)) {
    // Every key under `prefix` starts with it: when `after` is beyond the whole range, skip the listing.
    if (after !== undefined && compareKeys(prefix, after) < 0 && !after.startsWith(prefix)) continue;
    for await (const o of objects.list(bucket, prefix)) {
      if (after !== undefined && compareKeys(o.key, after) <= 0) continue;
      if (isFolderMarker(o)) continue;
      yield o;
    }
  }
}
