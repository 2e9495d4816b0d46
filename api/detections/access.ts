import { createHash } from "node:crypto";
import { readArchivedDetection } from "../../core/archive.js";
import type { Detection } from "../../core/detection.js";
import { LABELS, labelValue } from "../../core/resource.js";
import type { ApiDeps, Principal } from "../deps.js";
import { detectionNotFound } from "../errors.js";

export const sha256Hex = (s: string) => createHash("sha256").update(s).digest("hex");

/** The `docverify.io/client` label value of a client id. */
export const clientLabel = (clientId: string) => labelValue(clientId, sha256Hex);

/** True when the caller may see `d`: its own, and not being deleted. */
export const visibleTo = (d: Detection, p: Principal) =>
  d.spec.submittedBy === p.clientId &&
  d.metadata.labels?.[LABELS.client] === clientLabel(p.clientId) &&
  !d.metadata.deletionTimestamp;

/** Where a visible detection was found: the resource store, or the archive (core/archive.ts). */
export interface FoundDetection {
  detection: Detection;
  archived: boolean;
}

/**
 * The caller's detection `id`, wherever it is: the resource first, then the archive (a finished
 * detection's record in the object store, once its resource is deleted). 404 when unknown, another
 * client's or being deleted: a resource that exists but is not the caller's, or is being deleted, is 404
 * without looking further. The one access lookup of every route that reads one detection.
 */
export async function locateVisibleDetection(
  deps: ApiDeps,
  p: Principal,
  id: string,
): Promise<FoundDetection> {
  const live = await deps.detections.get(id);
  if (live) {
    if (!visibleTo(live, p)) throw detectionNotFound();
    return { detection: live, archived: false };
  }
  const archived = await readArchivedDetection(deps.objects, deps.bucket, p.clientId, id);
  if (!archived || !visibleTo(archived, p)) throw detectionNotFound();
  return { detection: archived, archived: true };
}

/** The caller's detection `id` (resource first, then the archive); 404 when unknown, another client's or being deleted. */
export async function findVisibleDetection(deps: ApiDeps, p: Principal, id: string): Promise<Detection> {
  return (await locateVisibleDetection(deps, p, id)).detection;
}

/** The former name of findVisibleDetection, kept for callers written before the archive. */
export const loadOwnDetection = findVisibleDetection;
