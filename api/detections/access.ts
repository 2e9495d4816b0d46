import { createHash } from "node:crypto";
import { readArchivedDetection } from "../../core/archive.js";
import type { Detection } from "../../core/detection.js";
import { LABELS, labelValue } from "../../core/resource.js";
import type { ApiDeps, Principal } from "../deps.js";
import { detectionNotFound } from "../errors.js";

export const sha256Hex = (s: string) => createHash("sha256").update(s).digest("hex");

/** The `docverify.io/client` label value of a client id. */
export const clientLabel = (clientId: string) => labelValue(clientId, sha256Hex);

/** True when client `clientId` may see `d`: its own, and not being deleted. */
export const visibleToClient = (d: Detection, clientId: string) =>
  d.spec.submittedBy === clientId &&
  d.metadata.labels?.[LABELS.client] === clientLabel(clientId) &&
  !d.metadata.deletionTimestamp;

/** True when the caller may see `d`: its own, and not being deleted. */
export const visibleTo = (d: Detection, p: Principal) => visibleToClient(d, p.clientId);

/** Where a visible detection was found: the resource store, or the archive (core/archive.ts). */
export interface FoundDetection {
  detection: Detection;
  archived: boolean;
}

/**
 * Client `clientId`'s detection `id`, wherever it is: the resource first, then the archive (a finished
 * detection's record in the object store, once its resource is deleted). 404 when unknown, another
 * client's or being deleted: a resource that exists but is not the client's, or is being deleted, is 404
 * without looking further. The one access lookup of every route that reads one detection (the reviewer
 * page included, which knows the client from its signed link).
 */
export async function locateClientDetection(
  deps: ApiDeps,
  clientId: string,
  id: string,
): Promise<FoundDetection> {
  const live = await deps.detections.get(id);
  if (live) {
    if (!visibleToClient(live, clientId)) throw detectionNotFound();
    return { detection: live, archived: false };
  }
  const archived = await readArchivedDetection(deps.objects, deps.bucket, clientId, id);
  if (!archived || !visibleToClient(archived, clientId)) throw detectionNotFound();
  return { detection: archived, archived: true };
}

/** The caller's detection `id` (resource first, then the archive); 404 as locateClientDetection. */
export const locateVisibleDetection = (deps: ApiDeps, p: Principal, id: string) =>
  locateClientDetection(deps, p.clientId, id);

/** The caller's detection `id` (resource first, then the archive); 404 when unknown, another client's or being deleted. */
export async function findVisibleDetection(deps: ApiDeps, p: Principal, id: string): Promise<Detection> {
  return (await locateVisibleDetection(deps, p, id)).detection;
}
