import { StoreError } from "./ports.js";
import type { Resource } from "./resource.js";

/**
 * The size guard of the resource stores: a resource whose JSON is larger than this is refused (TooLarge)
 * before it is written, by the standalone store and by the Kubernetes adapter alike, so a detection fails
 * at exactly the same size in both runtimes, and far below etcd's own limit (1.5 MiB per request by
 * default, which the apiserver would answer with a 500 in the middle of a detection). 512 KiB leaves room
 * for what the apiserver adds (managedFields) and for everything the bounded status holds
 * (docs/decisions.md, "Bounded status").
 */
export const DEFAULT_MAX_RESOURCE_BYTES = 512 * 1024;
/** The largest guard DOCVERIFY_MAX_RESOURCE_BYTES may set: below etcd's default request limit with room to spare. */
export const MAX_RESOURCE_BYTES_LIMIT = 1024 * 1024;
/** The smallest guard: a Detection with its bounded status must always fit. */
export const MIN_RESOURCE_BYTES_LIMIT = 64 * 1024;

/** Bytes of the object's JSON (UTF-8), as a store writes it. */
export function resourceBytes(obj: unknown): number {
  return Buffer.byteLength(JSON.stringify(obj));
}

/** Throws TooLarge when `obj` is over `maxBytes`; the message names the object, its size and the limit. */
export function checkResourceSize(obj: Resource, maxBytes: number, kind: string): void {
  const bytes = resourceBytes(obj);
  if (bytes <= maxBytes) return;
  throw new StoreError(
    "TooLarge",
    `${kind} ${obj.metadata?.name ?? "(unnamed)"} would be ${bytes} bytes, over the ${maxBytes}-byte limit of one resource (DOCVERIFY_MAX_RESOURCE_BYTES); it was not written. Full results belong in the object store, not in the resource.`,
  );
}
